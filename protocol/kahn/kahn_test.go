package kahn_test

import (
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/kahn"
	"github.com/aaep-tools/aaepkit/protocol/protocoltest"
)

var update = flag.Bool("update", false, "rewrite the testdata fixtures and golden files")

// result is what one run produced.
type result = protocoltest.Result

// models makes the models of a run of the agent checker.
func models() []protocol.Model { return []protocol.Model{kahn.New()} }

// check runs in through the KAHN agent model alone (see protocoltest.Run).
func check(t testing.TB, profile string, in []string) *result {
	t.Helper()
	return protocoltest.Run(t, models(), "", profile, in)
}

const sec = time.Second

var r1 = runB{"agent-coder-1"}

// started is an agent_run_start of coder.
func started() obj { return r1.start(0, "coder", "Add /v2/health") }

// oneLoop is a started coder that went once round the loop, ending at reflect (step 3).
func oneLoop() []string { return lines(started(), r1.loop(sec, "coder", 0, "Read")) }

// ruleCases holds, for every agent rule, streams that must break it and
// close variants that must not.
func ruleCases() []protocoltest.RuleCase {
	return []protocoltest.RuleCase{
		{Rule: "KA-B01", Name: "ts without milliseconds", Fail: func() []string {
			return lines(with(started(), kv{"ts", "2026-05-05T09:00:00Z"}))
		}, Pass: func() []string { return lines(started()) }},
		{Rule: "KA-B01", Name: "run_id pattern", Fail: func() []string {
			return lines(with(started(), kv{"run_id", "run/1"}))
		}},
		{Rule: "KA-B01", Name: "not JSON", Fail: func() []string {
			return lines(started(), `{"ts":"2026-05-05T09:00:01.000Z",`)
		}},
		{Rule: "KA-B02", Name: "step written as 1.0", Fail: func() []string {
			return lines(started(), r1.trans(sec, "coder", 0, "thinking", "tool_call", ""), with(r1.tool(2*sec, "coder", 0, "Read", true), kv{"step", raw("0.0")}))
		}},
		{Rule: "KA-B02", Name: "start without task", Fail: func() []string {
			return lines(without(started(), "task"))
		}, Pass: func() []string {
			return lines(started())
		}},
		{Rule: "KA-B02", Name: "ok is a string", Fail: func() []string {
			return lines(started(), r1.trans(sec, "coder", 0, "thinking", "tool_call", ""), with(r1.tool(2*sec, "coder", 0, "Read", true), kv{"ok", "yes"}))
		}, Pass: func() []string {
			return lines(started(), r1.trans(sec, "coder", 0, "thinking", "tool_call", ""), r1.tool(2*sec, "coder", 0, "Read", false))
		}},
		{Rule: "KA-B03", Name: "unknown status", Fail: func() []string {
			return lines(started(), r1.trans(sec, "coder", 0, "thinking", "done", ""))
		}},
		{Rule: "KA-B03", Name: "unknown outcome", Fail: func() []string {
			return lines(started(), r1.end(sec, "coder", "unknown", 0, 0, 0, 0, 0, nil))
		}, Pass: func() []string {
			return lines(started(), r1.end(sec, "coder", "aborted", 0, 0, 0, 0, 0, nil))
		}},
		{Rule: "KA-B03", Name: "underscored status, strict", Profile: "strict", Fail: func() []string {
			return lines(started(), r1.trans(sec, "coder", 0, "thinking", "blocked_on_clarification", ""))
		}},
		{Rule: "KA-B03W", Name: "underscored status, lenient", Fail: func() []string {
			return lines(started(), r1.trans(sec, "coder", 0, "thinking", "blocked_on_clarification", ""),
				r1.trans(2*sec, "coder", 1, "blocked-on-clarification", "thinking", "operator:answered"))
		}, Pass: func() []string {
			return lines(started(), r1.trans(sec, "coder", 0, "thinking", "blocked-on-clarification", ""),
				r1.trans(2*sec, "coder", 1, "blocked-on-clarification", "thinking", "operator:answered"))
		}},
		{Rule: "KA-B04", Name: "upper-case agent_id", Fail: func() []string {
			return lines(r1.start(0, "Coder", "x"))
		}},
		{Rule: "KA-B04", Name: "null agent_id on a transition", Fail: func() []string {
			return lines(started(), with(r1.trans(sec, "coder", 0, "thinking", "tool_call", ""), kv{"agent_id", nil}))
		}},
		{Rule: "KA-B04", Name: "bad checkpoint_id", Fail: func() []string {
			return lines(started(), r1.audit(sec, "coder", "Audit Coverage", "pass"))
		}, Pass: func() []string {
			return lines(started(), r1.audit(sec, "coder", "audit:coverage", "pass"))
		}},
		{Rule: "KA-B05", Name: "extra field", Fail: func() []string {
			return lines(with(started(), kv{"early_stop_reason", "budget"}))
		}, Pass: func() []string { return lines(started()) }},
		{Rule: "KA-B06", Name: "output_summary too long", Fail: func() []string {
			return lines(started(), r1.trans(sec, "coder", 0, "thinking", "tool_call", ""), with(r1.tool(2*sec, "coder", 0, "Read", true), kv{"output_summary", strings.Repeat("é", 2049)}))
		}, Pass: func() []string {
			return lines(started(), r1.trans(sec, "coder", 0, "thinking", "tool_call", ""), with(r1.tool(2*sec, "coder", 0, "Read", true), kv{"output_summary", strings.Repeat("é", 2048)}))
		}},
		{Rule: "KA-B06", Name: "convergence_score above 1", Fail: func() []string {
			return lines(started(), r1.end(sec, "coder", "partial", 0, 0, 0, 0, 0, 1.5))
		}},
		{Rule: "KA-B06W", Name: "negative duration", Fail: func() []string {
			return lines(started(), r1.trans(sec, "coder", 0, "thinking", "tool_call", ""), with(r1.tool(2*sec, "coder", 0, "Read", true), kv{"duration_s", -0.5}))
		}, Pass: func() []string {
			return lines(started(), r1.trans(sec, "coder", 0, "thinking", "tool_call", ""), with(r1.tool(2*sec, "coder", 0, "Read", true), kv{"duration_s", 0}))
		}},
		{Rule: "KA-B06W", Name: "evidence over 1 KB", Fail: func() []string {
			return lines(started(), with(r1.audit(sec, "coder", "audit:coverage", "pass"), kv{"evidence", obj{{"log", strings.Repeat("x", 1100)}}}))
		}},
		{Rule: "KA-S01", Name: "step goes back", Fail: func() []string {
			return lines(oneLoop(), r1.tool(6*sec, "coder", 1, "Read", true))
		}, Pass: func() []string {
			// Steps count per agent: the reviewer starts again at 0.
			return lines(oneLoop(), r1.start(5*sec, "reviewer", "Review"), r1.loop(6*sec, "reviewer", 0, "Read"))
		}},
		{Rule: "KA-S01", Name: "negative step", Fail: func() []string {
			return lines(started(), r1.trans(sec, "coder", -1, "thinking", "tool_call", ""))
		}},
		{Rule: "KA-S01W", Name: "transitions share a step", Fail: func() []string {
			return lines(started(), r1.trans(sec, "coder", 0, "thinking", "tool_call", "tool_call:Read"), r1.tool(sec, "coder", 0, "Read", true),
				r1.trans(2*sec, "coder", 0, "tool_call", "tool_result", ""))
		}, Pass: func() []string { return oneLoop() }},
		{Rule: "KA-S02", Name: "thinking → response", Fail: func() []string {
			return lines(started(), r1.trans(sec, "coder", 0, "thinking", "response", ""))
		}, Pass: func() []string {
			return lines(oneLoop(), r1.trans(5*sec, "coder", 4, "reflect", "converged", ""))
		}},
		{Rule: "KA-S02", Name: "tool_call → failed, strict", Profile: "strict", Fail: func() []string {
			return lines(started(), r1.trans(sec, "coder", 0, "thinking", "tool_call", ""), r1.trans(2*sec, "coder", 1, "tool_call", "failed", "aborted:timeout"))
		}},
		{Rule: "KA-S02W", Name: "tool_call → failed, lenient", Fail: func() []string {
			return lines(started(), r1.trans(sec, "coder", 0, "thinking", "tool_call", ""), r1.trans(2*sec, "coder", 1, "tool_call", "failed", "aborted:timeout"))
		}, Pass: func() []string {
			return lines(started(), r1.trans(sec, "coder", 0, "thinking", "failed", "error:crash"))
		}},
		{Rule: "KA-S03", Name: "from is not the previous to", Fail: func() []string {
			return lines(oneLoop(), r1.trans(5*sec, "coder", 4, "thinking", "tool_call", ""))
		}, Pass: func() []string {
			return lines(oneLoop(), r1.trans(5*sec, "coder", 4, "reflect", "thinking", ""))
		}},
		{Rule: "KA-S03", Name: "first transition from reflect ([*] → thinking)", Fail: func() []string {
			return lines(started(), r1.trans(sec, "coder", 0, "reflect", "converged", ""))
		}, Pass: func() []string {
			return lines(started(), r1.trans(sec, "coder", 0, "thinking", "tool_call", ""))
		}},
		{Rule: "KA-S03W", Name: "first recorded transition from reflect, no agent_run_start", Fail: func() []string {
			return lines(r1.trans(sec, "coder", 0, "reflect", "converged", ""))
		}, Pass: func() []string {
			return lines(r1.trans(sec, "coder", 0, "thinking", "tool_call", ""))
		}},
		{Rule: "KA-S04", Name: "transition after converged", Fail: func() []string {
			return lines(oneLoop(), r1.trans(5*sec, "coder", 4, "reflect", "converged", ""), r1.trans(6*sec, "coder", 5, "converged", "thinking", ""))
		}, Pass: func() []string {
			return lines(oneLoop(), r1.trans(5*sec, "coder", 4, "reflect", "converged", ""), r1.end(6*sec, "coder", "converged", 5, 1, 0, 0, 0, raw("1.0")))
		}},
		{Rule: "KA-R01", Name: "no agent_run_start", Fail: func() []string {
			return lines(r1.trans(sec, "coder", 0, "thinking", "tool_call", ""))
		}},
		{Rule: "KA-R01", Name: "event after agent_run_end", Fail: func() []string {
			return lines(started(), r1.end(sec, "coder", "aborted", 0, 0, 0, 0, 0, nil), r1.trans(2*sec, "coder", 0, "thinking", "tool_call", ""))
		}, Pass: func() []string {
			return lines(started(), r1.trans(sec, "coder", 0, "thinking", "failed", "error:crash"), r1.end(2*sec, "coder", "aborted", 1, 0, 0, 0, 0, nil))
		}},
		{Rule: "KA-R01", Name: "second agent_run_start", Fail: func() []string {
			return lines(started(), r1.trans(sec, "coder", 0, "thinking", "tool_call", ""), r1.start(2*sec, "coder", "again"))
		}, Pass: func() []string {
			// The same agent in another run.
			return lines(started(), r1.trans(sec, "coder", 0, "thinking", "tool_call", ""), runB{"agent-coder-2"}.start(2*sec, "coder", "again"))
		}},
		{Rule: "KA-R02", Name: "ts goes back", Fail: func() []string {
			return lines(started(), r1.trans(5*sec, "coder", 0, "thinking", "tool_call", ""), r1.tool(4*sec, "coder", 0, "Read", true))
		}, Pass: func() []string {
			return lines(started(), r1.trans(5*sec, "coder", 0, "thinking", "tool_call", ""), r1.tool(5*sec, "coder", 0, "Read", true))
		}},
		{Rule: "KA-R03", Name: "converged outcome, reflect status", Fail: func() []string {
			return lines(oneLoop(), r1.end(5*sec, "coder", "converged", 4, 1, 0, 0, 0, nil))
		}, Pass: func() []string {
			return lines(oneLoop(), r1.trans(5*sec, "coder", 4, "reflect", "converged", ""), r1.end(6*sec, "coder", "converged", 5, 1, 0, 0, 0, raw("1.0")))
		}},
		{Rule: "KA-R03", Name: "partial with score 1", Fail: func() []string {
			return lines(oneLoop(), r1.end(5*sec, "coder", "partial", 4, 1, 0, 0, 0, 1))
		}},
		{Rule: "KA-R04", Name: "tool calls abbreviated", Fail: func() []string {
			return lines(oneLoop(), r1.trans(5*sec, "coder", 4, "reflect", "converged", ""), r1.end(6*sec, "coder", "converged", 5, 7, 0, 0, 0, nil))
		}, Pass: func() []string {
			return lines(oneLoop(), r1.trans(5*sec, "coder", 4, "reflect", "converged", ""), r1.end(6*sec, "coder", "converged", 5, 1, 0, 0, 0, raw("1.0")))
		}},
		{Rule: "KA-R04", Name: "passed and failed exceed total", Fail: func() []string {
			return lines(started(), r1.audit(sec, "coder", "audit:a", "pass"), r1.end(6*sec, "coder", "partial", 0, 0, 1, 1, 1, nil))
		}},
		{Rule: "KA-R05", Name: "tool without tool_call transition", Fail: func() []string {
			return lines(started(), r1.tool(sec, "coder", 0, "Read", true))
		}},
		{Rule: "KA-R05", Name: "tool name differs from reason", Fail: func() []string {
			return lines(started(), r1.trans(sec, "coder", 0, "thinking", "tool_call", "tool_call:Read"), r1.tool(sec, "coder", 0, "Write", true))
		}, Pass: func() []string {
			return lines(started(), r1.trans(sec, "coder", 0, "thinking", "tool_call", "tool_call:Read"), r1.tool(sec, "coder", 0, "Read", true))
		}},
		{Rule: "KA-R05", Name: "free-text reason", Fail: func() []string {
			return lines(started(), r1.trans(sec, "coder", 0, "thinking", "blocked-on-clarification", "Which endpoint?"))
		}},
		{Rule: "KA-R06", Name: "run-scoped audit", Fail: func() []string {
			return lines(started(), r1.audit(sec, nil, "audit:contract-shape", "pass"))
		}, Pass: func() []string {
			return lines(started(), r1.audit(sec, "coder", "audit:contract-shape", "pass"))
		}},
	}
}

func TestRules(t *testing.T) { protocoltest.CheckRules(t, models, ruleCases()) }

func TestEveryRuleHasCases(t *testing.T) {
	protocoltest.CheckCoverage(t, kahn.New().Rules(), ruleCases(), protocoltest.NeedFailing|protocoltest.NeedPassing)
}

func TestRecognize(t *testing.T) {
	cases := []struct {
		line string
		want bool
	}{
		{line(started()), true},
		{line(without(started(), "ts")), false},
		{line(without(started(), "run_id")), false},
		{`{"ts":"2026-05-05T09:00:00.000Z","run_id":"r","event":"node_transition","node_id":"n"}`, false},
		{`{"ts":"2026-05-05T09:00:00.000Z","run_id":"r","event":"something_else"}`, false},
		{`{"data":{"ts":"2026-05-05T09:00:00.000Z","run_id":"r","event":"agent_run_start"}}`, false},
		{`{"type":"aaep:agent.session.started","session_id":"sess_1"}`, false},
		{`{"performative":"INFORM","sessionId":"s"}`, false},
	}
	for _, tc := range cases {
		if got := protocoltest.Recognize(t, kahn.New(), tc.line); got != tc.want {
			t.Errorf("Recognize(%s) = %v, want %v", tc.line, got, tc.want)
		}
	}
}

// A run lane ends when the run's last agent ends; agents and lanes left
// open at the end of the stream are incomplete.
func TestSessions(t *testing.T) {
	r2 := runB{"fleet-2"}
	in := lines(
		r2.start(0, "a", "x"), r2.start(0, "b", "y"),
		r2.audit(sec, nil, "audit:invariant", "pass"),
		r2.end(2*sec, "a", "aborted", 0, 0, 0, 0, 0, nil),
		r2.trans(3*sec, "b", 0, "thinking", "tool_call", ""),
	)
	res := check(t, "", in)
	got := map[string]protocol.SessionSummary{}
	for _, s := range res.Sessions {
		got[s.Session] = s
	}
	if s := got["fleet-2/a"]; !s.Complete || s.Messages != 2 || s.State != "thinking" {
		t.Errorf("agent a: %+v", s)
	}
	if s := got["fleet-2/b"]; s.Complete || s.State != "tool_call" {
		t.Errorf("agent b: %+v", s)
	}
	if s := got["fleet-2"]; s.Complete || s.Messages != 1 || s.State != "run" {
		t.Errorf("lane: %+v", s)
	}
	if len(res.Sessions) != 3 {
		t.Errorf("%d sessions, want 3", len(res.Sessions))
	}
}

func TestMachine(t *testing.T) {
	m := kahn.New().Machine()
	if len(m.Transitions) != 10 {
		t.Errorf("%d transitions, want the 9 lifecycle edges and the lane loop", len(m.Transitions))
	}
	kinds := protocoltest.CheckMachine(t, m)
	if kinds["thinking"] != protocol.StateInitial || kinds["converged"] != protocol.StateTerminal || kinds["failed"] != protocol.StateError {
		t.Errorf("state kinds %v", kinds)
	}
	ci := protocoltest.CheckMachine(t, kahn.NewCI().Machine())
	if ci["pending"] != protocol.StateInitial || ci["done"] != protocol.StateTerminal || ci["failed"] != protocol.StateError || ci["run"] != protocol.StateNormal {
		t.Errorf("CI state kinds %v", ci)
	}
}

// TestUnknownEventIsKAB01 (issue 25, class 4): the event schema's base is
// {ts, run_id, event} with event one of five variants (asp-kahn.md §2.1);
// a line that has KAHN's base fields and an agent field but an event that
// is none of the five is a broken KAHN event (KA-B01, MUST), not a message
// of no known protocol. Without an agent field, such a line is not claimed.
func TestUnknownEventIsKAB01(t *testing.T) {
	start := `{"ts":"2026-05-05T09:00:00.000Z","run_id":"r1","event":"agent_run_start","agent_id":"coder","task":"t"}`
	paused := `{"ts":"2026-05-05T09:00:01.000Z","run_id":"r1","event":"agent_paused","agent_id":"coder","step":0}`
	r := protocoltest.Run(t, models(), "", "", []string{start, paused})
	if !r.Has("KA-B01") || r.Has("STREAM-UNKNOWN-PROTOCOL") {
		t.Errorf("a KAHN line with an unknown event: findings %v, want KA-B01 and no STREAM-UNKNOWN-PROTOCOL\n%s", r.Rules(), r.Dump())
	}
	for _, f := range r.Findings {
		if f.RuleID == "KA-B01" && (f.Level != protocol.Must || f.Session != "r1/coder") {
			t.Errorf("KA-B01 at %v in session %q, want MUST in the agent's session r1/coder", f.Level, f.Session)
		}
	}
	bare := `{"ts":"2026-05-05T09:00:01.000Z","run_id":"r1","event":"heartbeat"}`
	if r := protocoltest.Run(t, models(), "", "", []string{start, bare}); r.Has("KA-B01") || !r.Has("STREAM-UNKNOWN-PROTOCOL") {
		t.Errorf("a line with KAHN's base fields only and an unknown event: findings %v, want it left to STREAM-UNKNOWN-PROTOCOL\n%s", r.Rules(), r.Dump())
	}
}
