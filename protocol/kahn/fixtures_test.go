package kahn_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/protocol/protocoltest"
)

// coderRun is a coder agent that converges: three rounds of the loop (read,
// edit, test), two audit checkpoints that pass, and an agent_run_end whose
// totals match the stream.
func coderRun() []string {
	r := runB{"agent-coder-1"}
	return lines(
		with(r.start(0, "coder", "Add /v2/health endpoint"), kv{"model", "claude-sonnet-4"}),
		r.loop(1*sec, "coder", 0, "Read"),
		r.trans(5*sec, "coder", 4, "reflect", "thinking", "reflect:needs-edit"),
		r.loop(6*sec, "coder", 5, "Edit"),
		r.trans(10*sec, "coder", 9, "reflect", "thinking", "reflect:verify"),
		r.loop(11*sec, "coder", 10, "Bash"),
		r.audit(15*sec, "coder", "audit:test-coverage.unit", "pass"),
		r.audit(16*sec, "coder", "audit:contract-shape", "pass"),
		r.trans(17*sec, "coder", 14, "reflect", "converged", "converged:tests-green"),
		r.end(18*sec, "coder", "converged", 15, 3, 2, 2, 0, raw("1.0")),
	)
}

// fleetRun is a run of two parallel agents with a run-scoped audit: an
// explorer that blocks on a clarification and converges, and a planner
// aborted during a tool call (partial outcome, abbreviated totals).
func fleetRun() []string {
	r := runB{"fleet-7"}
	ex, pl := "claude-subagent:explore", "planner"
	s := sec
	events := []obj{
		r.start(0, pl, "Plan the v2 API migration"),
		r.start(0, ex, "Map the v1 handlers"),
		r.trans(1*s, ex, 0, "thinking", "blocked-on-clarification", "clarify:which-service"),
		r.trans(2*s, pl, 0, "thinking", "tool_call", "tool_call:Grep"),
		r.tool(2*s+s/2, pl, 0, "Grep", true),
		r.trans(3*s, pl, 1, "tool_call", "tool_result", "tool_result:Grep"),
		r.trans(20*s, ex, 1, "blocked-on-clarification", "thinking", "operator:answered"),
	}
	events = append(events, r.loop(21*s, ex, 2, "Glob")...)
	events = append(events,
		r.trans(25*s, ex, 6, "reflect", "converged", "converged:mapped"),
		r.audit(26*s, nil, "audit:no-secrets-in-logs", "pass"),
		r.end(27*s, ex, "converged", 7, 1, 0, 0, 0, raw("1.0")),
		r.trans(28*s, pl, 2, "tool_result", "response", ""),
		r.trans(29*s, pl, 3, "response", "reflect", ""),
		r.trans(30*s, pl, 4, "reflect", "thinking", "reflect:replan"),
		r.trans(31*s, pl, 5, "thinking", "tool_call", "tool_call:WebFetch"),
		r.tool(60*s, pl, 5, "WebFetch", false),
		r.trans(61*s, pl, 6, "tool_call", "failed", "aborted:timeout"),
		with(r.end(62*s, pl, "partial", 7, 4, 0, 0, 0, 0.4), kv{"early_stop_reason", "timeout"}),
	)
	// A recording is in time order.
	out := lines(events)
	sortByTS(out)
	return out
}

// seedRun is the example of the published schema card, as printed: it is
// abbreviated (1 tool call shown, 7 counted; no transition to converged).
func seedRun() []string {
	return []string{
		`{"ts":"2026-05-05T09:00:00.000Z","run_id":"agent-coder-1","event":"agent_run_start","agent_id":"coder","task":"Add /v2/health"}`,
		`{"ts":"2026-05-05T09:00:01.200Z","run_id":"agent-coder-1","event":"agent_transition","agent_id":"coder","step":0,"from":"thinking","to":"tool_call","reason":"tool_call:Read"}`,
		`{"ts":"2026-05-05T09:00:01.250Z","run_id":"agent-coder-1","event":"tool_invocation","agent_id":"coder","step":0,"tool_name":"Read","duration_s":0.04,"ok":true}`,
		`{"ts":"2026-05-05T09:01:05.000Z","run_id":"agent-coder-1","event":"agent_run_end","agent_id":"coder","outcome":"converged","total_steps":12,"total_tool_calls":7,"total_audit_checkpoints":2,"audits_passed":2,"audits_failed":0,"total_duration_s":65.0,"convergence_score":1.0}`,
	}
}

func sortByTS(ls []string) {
	ts := func(l string) string {
		var v struct{ TS string }
		_ = json.Unmarshal([]byte(l), &v)
		return v.TS
	}
	// insertion sort keeps equal timestamps in order
	for i := 1; i < len(ls); i++ {
		for j := i; j > 0 && ts(ls[j]) < ts(ls[j-1]); j-- {
			ls[j], ls[j-1] = ls[j-1], ls[j]
		}
	}
}

var fixtures = []struct {
	name  string
	gen   func() []string
	rules []string // the findings expected, in order
}{
	{"coder", coderRun, nil},
	{"fleet", fleetRun, []string{"KA-R06", "KA-S02W", "KA-B05", "KA-R04"}},
	{"seed", seedRun, []string{"KA-R03", "KA-R04"}},
}

func TestFixtures(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			in := protocoltest.Fixture(t, filepath.Join("testdata", fx.name+".jsonl"), fx.gen(), *update)
			r := check(t, "", in)
			if strings.Join(r.Rules(), " ") != strings.Join(fx.rules, " ") {
				t.Errorf("findings %v, want %v\n%s", r.Rules(), fx.rules, r.Dump())
			}
			if len(r.Steps) != len(in) {
				t.Errorf("%d steps for %d events", len(r.Steps), len(in))
			}
			protocoltest.GoldenResult(t, filepath.Join("testdata", fx.name), r, *update)
		})
	}
}

func TestCoderConverges(t *testing.T) {
	r := check(t, "", coderRun())
	if len(r.Findings) != 0 {
		t.Fatalf("coder run should be clean:\n%s", r.Dump())
	}
	if len(r.Sessions) != 1 || r.Sessions[0].State != "converged" || !r.Sessions[0].Complete || r.Sessions[0].Session != "agent-coder-1/coder" {
		t.Errorf("sessions %+v", r.Sessions)
	}
	// The strict profile agrees: nothing in the run depends on a reading.
	if s := check(t, "strict", coderRun()); len(s.Findings) != 0 {
		t.Errorf("strict:\n%s", s.Dump())
	}
	var tools []string
	for _, s := range r.Steps {
		if s.Label == "tool_invocation" {
			tools = append(tools, s.Detail)
		}
	}
	if strings.Join(tools, ",") != "Read,Edit,Bash" {
		t.Errorf("tool steps %v", tools)
	}
	_ = time.Second
}
