package kahn_test

import (
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/kahn"
)

var update = flag.Bool("update", false, "rewrite the testdata fixtures and golden files")

type result struct {
	findings []protocol.Finding
	steps    []protocol.Step
	sessions []protocol.SessionSummary
	stats    protocol.Stats
}

func (r *result) rules() []string {
	var ids []string
	for _, f := range r.findings {
		ids = append(ids, f.RuleID)
	}
	return ids
}

func (r *result) has(rule string) bool { return slices.Contains(r.rules(), rule) }

func (r *result) count(rule string) int {
	n := 0
	for _, f := range r.findings {
		if f.RuleID == rule {
			n++
		}
	}
	return n
}

func (r *result) dump() string {
	var b strings.Builder
	for _, f := range r.findings {
		fmt.Fprintf(&b, "  %s %s #%d [%s]: %s\n", f.Level, f.RuleID, f.Index, f.Session, f.Message)
	}
	for _, s := range r.steps {
		fmt.Fprintf(&b, "  step #%d %s %s → %s %s [%s]\n", s.Index, s.Session, s.From, s.To, s.Label, s.Detail)
	}
	return b.String()
}

func run(t testing.TB, models []protocol.Model, force, profile string, in []string) *result {
	t.Helper()
	r := &result{}
	e, err := protocol.NewEngine(models, force, &protocol.Options{Profile: profile}, protocol.Sink{
		Finding:     func(f protocol.Finding) { r.findings = append(r.findings, f) },
		Step:        func(s protocol.Step) { r.steps = append(r.steps, s) },
		SessionDone: func(s protocol.SessionSummary) { r.sessions = append(r.sessions, s) },
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range in {
		e.Feed(&protocol.Message{Index: int64(i), Offset: time.Duration(i) * 100 * time.Millisecond, Raw: []byte(l)})
	}
	e.Finish()
	r.stats = e.Stats()
	return r
}

func check(t testing.TB, profile string, in []string) *result {
	t.Helper()
	return run(t, []protocol.Model{kahn.New()}, "", profile, in)
}

const sec = time.Second

var r1 = runB{"agent-coder-1"}

// started is an agent_run_start of coder.
func started() obj { return r1.start(0, "coder", "Add /v2/health") }

// oneLoop is a started coder that went once round the loop, ending at reflect (step 3).
func oneLoop() []string { return lines(started(), r1.loop(sec, "coder", 0, "Read")) }

type ruleCase struct {
	rule, name, profile string
	fail, pass          func() []string
}

func ruleCases() []ruleCase {
	return []ruleCase{
		{rule: "KA-B01", name: "ts without milliseconds", fail: func() []string {
			return lines(with(started(), kv{"ts", "2026-05-05T09:00:00Z"}))
		}, pass: func() []string { return lines(started()) }},
		{rule: "KA-B01", name: "run_id pattern", fail: func() []string {
			return lines(with(started(), kv{"run_id", "run/1"}))
		}},
		{rule: "KA-B01", name: "not JSON", fail: func() []string {
			return lines(started(), `{"ts":"2026-05-05T09:00:01.000Z",`)
		}},
		{rule: "KA-B02", name: "step written as 1.0", fail: func() []string {
			return lines(started(), r1.trans(sec, "coder", 0, "thinking", "tool_call", ""), with(r1.tool(2*sec, "coder", 0, "Read", true), kv{"step", raw("0.0")}))
		}},
		{rule: "KA-B02", name: "start without task", fail: func() []string {
			return lines(without(started(), "task"))
		}},
		{rule: "KA-B02", name: "ok is a string", fail: func() []string {
			return lines(started(), r1.trans(sec, "coder", 0, "thinking", "tool_call", ""), with(r1.tool(2*sec, "coder", 0, "Read", true), kv{"ok", "yes"}))
		}},
		{rule: "KA-B03", name: "unknown status", fail: func() []string {
			return lines(started(), r1.trans(sec, "coder", 0, "thinking", "done", ""))
		}},
		{rule: "KA-B03", name: "unknown outcome", fail: func() []string {
			return lines(started(), r1.end(sec, "coder", "unknown", 0, 0, 0, 0, 0, nil))
		}},
		{rule: "KA-B03", name: "underscored status, strict", profile: "strict", fail: func() []string {
			return lines(started(), r1.trans(sec, "coder", 0, "thinking", "blocked_on_clarification", ""))
		}},
		{rule: "KA-B03W", name: "underscored status, lenient", fail: func() []string {
			return lines(started(), r1.trans(sec, "coder", 0, "thinking", "blocked_on_clarification", ""),
				r1.trans(2*sec, "coder", 1, "blocked-on-clarification", "thinking", "operator:answered"))
		}, pass: func() []string {
			return lines(started(), r1.trans(sec, "coder", 0, "thinking", "blocked-on-clarification", ""),
				r1.trans(2*sec, "coder", 1, "blocked-on-clarification", "thinking", "operator:answered"))
		}},
		{rule: "KA-B04", name: "upper-case agent_id", fail: func() []string {
			return lines(r1.start(0, "Coder", "x"))
		}},
		{rule: "KA-B04", name: "null agent_id on a transition", fail: func() []string {
			return lines(started(), with(r1.trans(sec, "coder", 0, "thinking", "tool_call", ""), kv{"agent_id", nil}))
		}},
		{rule: "KA-B04", name: "bad checkpoint_id", fail: func() []string {
			return lines(started(), r1.audit(sec, "coder", "Audit Coverage", "pass"))
		}},
		{rule: "KA-B05", name: "extra field", fail: func() []string {
			return lines(with(started(), kv{"early_stop_reason", "budget"}))
		}, pass: func() []string { return lines(started()) }},
		{rule: "KA-B06", name: "output_summary too long", fail: func() []string {
			return lines(started(), r1.trans(sec, "coder", 0, "thinking", "tool_call", ""), with(r1.tool(2*sec, "coder", 0, "Read", true), kv{"output_summary", strings.Repeat("é", 2049)}))
		}, pass: func() []string {
			return lines(started(), r1.trans(sec, "coder", 0, "thinking", "tool_call", ""), with(r1.tool(2*sec, "coder", 0, "Read", true), kv{"output_summary", strings.Repeat("é", 2048)}))
		}},
		{rule: "KA-B06", name: "convergence_score above 1", fail: func() []string {
			return lines(started(), r1.end(sec, "coder", "partial", 0, 0, 0, 0, 0, 1.5))
		}},
		{rule: "KA-B06W", name: "negative duration", fail: func() []string {
			return lines(started(), r1.trans(sec, "coder", 0, "thinking", "tool_call", ""), with(r1.tool(2*sec, "coder", 0, "Read", true), kv{"duration_s", -0.5}))
		}},
		{rule: "KA-B06W", name: "evidence over 1 KB", fail: func() []string {
			return lines(started(), with(r1.audit(sec, "coder", "audit:coverage", "pass"), kv{"evidence", obj{{"log", strings.Repeat("x", 1100)}}}))
		}},
		{rule: "KA-S01", name: "step goes back", fail: func() []string {
			return lines(oneLoop(), r1.tool(6*sec, "coder", 1, "Read", true))
		}},
		{rule: "KA-S01", name: "negative step", fail: func() []string {
			return lines(started(), r1.trans(sec, "coder", -1, "thinking", "tool_call", ""))
		}},
		{rule: "KA-S01W", name: "transitions share a step", fail: func() []string {
			return lines(started(), r1.trans(sec, "coder", 0, "thinking", "tool_call", "tool_call:Read"), r1.tool(sec, "coder", 0, "Read", true),
				r1.trans(2*sec, "coder", 0, "tool_call", "tool_result", ""))
		}, pass: func() []string { return oneLoop() }},
		{rule: "KA-S02", name: "thinking → response", fail: func() []string {
			return lines(started(), r1.trans(sec, "coder", 0, "thinking", "response", ""))
		}},
		{rule: "KA-S02", name: "tool_call → failed, strict", profile: "strict", fail: func() []string {
			return lines(started(), r1.trans(sec, "coder", 0, "thinking", "tool_call", ""), r1.trans(2*sec, "coder", 1, "tool_call", "failed", "aborted:timeout"))
		}},
		{rule: "KA-S02W", name: "tool_call → failed, lenient", fail: func() []string {
			return lines(started(), r1.trans(sec, "coder", 0, "thinking", "tool_call", ""), r1.trans(2*sec, "coder", 1, "tool_call", "failed", "aborted:timeout"))
		}, pass: func() []string {
			return lines(started(), r1.trans(sec, "coder", 0, "thinking", "failed", "error:crash"))
		}},
		{rule: "KA-S03", name: "from is not the previous to", fail: func() []string {
			return lines(oneLoop(), r1.trans(5*sec, "coder", 4, "thinking", "tool_call", ""))
		}},
		{rule: "KA-S03W", name: "first transition from reflect", fail: func() []string {
			return lines(started(), r1.trans(sec, "coder", 0, "reflect", "converged", ""))
		}},
		{rule: "KA-S04", name: "transition after converged", fail: func() []string {
			return lines(oneLoop(), r1.trans(5*sec, "coder", 4, "reflect", "converged", ""), r1.trans(6*sec, "coder", 5, "converged", "thinking", ""))
		}},
		{rule: "KA-R01", name: "no agent_run_start", fail: func() []string {
			return lines(r1.trans(sec, "coder", 0, "thinking", "tool_call", ""))
		}},
		{rule: "KA-R01", name: "event after agent_run_end", fail: func() []string {
			return lines(started(), r1.end(sec, "coder", "aborted", 0, 0, 0, 0, 0, nil), r1.trans(2*sec, "coder", 0, "thinking", "tool_call", ""))
		}},
		{rule: "KA-R01", name: "second agent_run_start", fail: func() []string {
			return lines(started(), r1.trans(sec, "coder", 0, "thinking", "tool_call", ""), r1.start(2*sec, "coder", "again"))
		}},
		{rule: "KA-R02", name: "ts goes back", fail: func() []string {
			return lines(started(), r1.trans(5*sec, "coder", 0, "thinking", "tool_call", ""), r1.tool(4*sec, "coder", 0, "Read", true))
		}},
		{rule: "KA-R03", name: "converged outcome, reflect status", fail: func() []string {
			return lines(oneLoop(), r1.end(5*sec, "coder", "converged", 4, 1, 0, 0, 0, nil))
		}, pass: func() []string {
			return lines(oneLoop(), r1.trans(5*sec, "coder", 4, "reflect", "converged", ""), r1.end(6*sec, "coder", "converged", 5, 1, 0, 0, 0, raw("1.0")))
		}},
		{rule: "KA-R03", name: "partial with score 1", fail: func() []string {
			return lines(oneLoop(), r1.end(5*sec, "coder", "partial", 4, 1, 0, 0, 0, 1))
		}},
		{rule: "KA-R04", name: "tool calls abbreviated", fail: func() []string {
			return lines(oneLoop(), r1.trans(5*sec, "coder", 4, "reflect", "converged", ""), r1.end(6*sec, "coder", "converged", 5, 7, 0, 0, 0, nil))
		}},
		{rule: "KA-R04", name: "passed and failed exceed total", fail: func() []string {
			return lines(started(), r1.audit(sec, "coder", "audit:a", "pass"), r1.end(6*sec, "coder", "partial", 0, 0, 1, 1, 1, nil))
		}},
		{rule: "KA-R05", name: "tool without tool_call transition", fail: func() []string {
			return lines(started(), r1.tool(sec, "coder", 0, "Read", true))
		}},
		{rule: "KA-R05", name: "tool name differs from reason", fail: func() []string {
			return lines(started(), r1.trans(sec, "coder", 0, "thinking", "tool_call", "tool_call:Read"), r1.tool(sec, "coder", 0, "Write", true))
		}},
		{rule: "KA-R05", name: "free-text reason", fail: func() []string {
			return lines(started(), r1.trans(sec, "coder", 0, "thinking", "blocked-on-clarification", "Which endpoint?"))
		}},
		{rule: "KA-R06", name: "run-scoped audit", fail: func() []string {
			return lines(started(), r1.audit(sec, nil, "audit:contract-shape", "pass"))
		}, pass: func() []string {
			return lines(started(), r1.audit(sec, "coder", "audit:contract-shape", "pass"))
		}},
	}
}

func TestRules(t *testing.T) {
	for _, tc := range ruleCases() {
		t.Run(tc.rule+"/"+tc.name, func(t *testing.T) {
			r := check(t, tc.profile, tc.fail())
			if !r.has(tc.rule) {
				t.Errorf("failing stream: no %s; got %v\n%s", tc.rule, r.rules(), r.dump())
			}
			if tc.pass != nil {
				r := check(t, tc.profile, tc.pass())
				if r.has(tc.rule) {
					t.Errorf("passing stream: unexpected %s\n%s", tc.rule, r.dump())
				}
			}
		})
	}
}

func TestEveryRuleHasCases(t *testing.T) {
	covered := map[string]bool{}
	for _, tc := range ruleCases() {
		covered[tc.rule] = true
	}
	known := map[string]bool{}
	for _, r := range kahn.New().Rules() {
		known[r.ID] = true
		if !covered[r.ID] {
			t.Errorf("rule %s has no failing stream in ruleCases", r.ID)
		}
	}
	for id := range covered {
		if !known[id] {
			t.Errorf("ruleCases names %s, which kahn.New().Rules() does not list", id)
		}
	}
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
		md := kahn.New()
		m := &protocol.Message{Raw: []byte(tc.line)}
		e, _ := protocol.NewEngine([]protocol.Model{md}, "", nil, protocol.Sink{})
		e.Feed(m)
		if got := md.Recognize(m); got != tc.want {
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
	for _, s := range res.sessions {
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
	if len(res.sessions) != 3 {
		t.Errorf("%d sessions, want 3", len(res.sessions))
	}
}

func TestMachine(t *testing.T) {
	m := kahn.New().Machine()
	if len(m.Transitions) != 10 {
		t.Errorf("%d transitions, want the 9 lifecycle edges and the lane loop", len(m.Transitions))
	}
	kinds := map[string]protocol.StateKind{}
	for _, s := range m.States {
		kinds[s.Name] = s.Kind
	}
	if kinds["thinking"] != protocol.StateInitial || kinds["converged"] != protocol.StateTerminal || kinds["failed"] != protocol.StateError {
		t.Errorf("state kinds %v", kinds)
	}
	for _, tr := range m.Transitions {
		if _, ok := kinds[tr.From]; !ok {
			t.Errorf("edge from unknown %s", tr.From)
		}
		if _, ok := kinds[tr.To]; !ok {
			t.Errorf("edge to unknown %s", tr.To)
		}
	}
}
