package kahn_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/kahn"
)

var ci = runB{"ci-2026-05-05-1"}

func ciStart() obj { return ci.ev(0, "run_start", kv{"total_nodes", 2}) }

func ciTrans(at int, node, from, to string, extra ...kv) obj {
	return ci.ev(time.Duration(at)*sec, "node_transition", append([]kv{{"node_id", node}, {"from", from}, {"to", to}}, extra...)...)
}

func ciAttempt(at int, node string, attempt int, converged bool, results []obj, extra ...kv) obj {
	return ci.ev(time.Duration(at)*sec, "node_attempt", append([]kv{{"node_id", node}, {"attempt", attempt}, {"duration_s", 3.5}, {"converged", converged}, {"done_when_results", results}}, extra...)...)
}

func ciEnd(at int, outcome string, done, failed, blocked int, extra ...kv) obj {
	return ci.ev(time.Duration(at)*sec, "run_end", append([]kv{{"outcome", outcome}, {"done", done}, {"failed", failed}, {"blocked", blocked}, {"total_duration_s", float64(at)}}, extra...)...)
}

func ok(cmd string) obj { return obj{{"cmd", cmd}, {"rc", 0}, {"duration_s", 1.2}} }
func bad(cmd, tail string) obj {
	return obj{{"cmd", cmd}, {"rc", 1}, {"duration_s", 0.9}, {"tail", tail}}
}

// ciRun is a clean CI run: node "build" passes at once; node "test"
// passes on its second attempt (a flake); node "deploy" is blocked.
func ciRunLines() []string {
	return lines(
		ci.ev(0, "run_start", kv{"total_nodes", 3}),
		ciTrans(1, "build", "pending", "ready"),
		ciTrans(1, "test", "pending", "ready"),
		ciTrans(2, "build", "ready", "running", kv{"attempt", 1}),
		ciAttempt(5, "build", 1, true, []obj{ok("go build ./...")}),
		ciTrans(5, "build", "running", "done"),
		ciTrans(6, "test", "ready", "running", kv{"attempt", 1}),
		ciAttempt(9, "test", 1, false, []obj{bad("go test ./...", "--- FAIL: TestFlaky (0.01s)")}),
		ciTrans(10, "test", "running", "running", kv{"attempt", 2}, kv{"reason", "retry:flake"}),
		ciAttempt(14, "test", 2, true, []obj{ok("go test ./...")}, kv{"backoff_s", 2}),
		ciTrans(14, "test", "running", "done"),
		ciTrans(15, "deploy", "pending", "blocked", kv{"reason", "dependency_failed:staging"}),
		ciEnd(16, "clean_with_flake", 2, 0, 1, kv{"total_attempts", 3}, kv{"flake_retries", 1}),
	)
}

func checkCI(t *testing.T, in []string) *result {
	t.Helper()
	return run(t, []protocol.Model{kahn.NewCI()}, "", "", in)
}

func ciRuleCases() []ruleCase {
	return []ruleCase{
		{rule: "KC-B01", name: "ts without milliseconds", fail: func() []string {
			return lines(with(ciStart(), kv{"ts", "2026-05-05T09:00:00Z"}))
		}, pass: func() []string { return lines(ciStart()) }},
		{rule: "KC-B02", name: "total_nodes missing", fail: func() []string { return lines(without(ciStart(), "total_nodes")) }},
		{rule: "KC-B02", name: "rc is a string", fail: func() []string {
			return lines(ciStart(), ciAttempt(1, "a", 1, true, []obj{{{"cmd", "make"}, {"rc", "0"}, {"duration_s", 1}}}))
		}},
		{rule: "KC-B03", name: "unknown status", fail: func() []string { return lines(ciStart(), ciTrans(1, "a", "pending", "queued")) }},
		{rule: "KC-B03", name: "unknown outcome", fail: func() []string { return lines(ciStart(), ciEnd(2, "green", 0, 0, 0)) }},
		{rule: "KC-01", name: "running without attempt", fail: func() []string {
			return lines(ciStart(), ciTrans(1, "a", "pending", "ready"), ciTrans(2, "a", "ready", "running"))
		}, pass: func() []string {
			return lines(ciStart(), ciTrans(1, "a", "pending", "ready"), ciTrans(2, "a", "ready", "running", kv{"attempt", 1}))
		}},
		{rule: "KC-01", name: "attempt on done", fail: func() []string {
			return lines(ciStart(), ciTrans(1, "a", "pending", "ready"), ciTrans(2, "a", "ready", "running", kv{"attempt", 1}), ciTrans(3, "a", "running", "done", kv{"attempt", 1}))
		}},
		{rule: "KC-02", name: "backoff on attempt 1", fail: func() []string {
			return lines(ciStart(), ciAttempt(1, "a", 1, true, []obj{ok("make")}, kv{"backoff_s", 1}))
		}},
		{rule: "KC-02", name: "backoff off schedule", fail: func() []string {
			return lines(ciStart(), ciAttempt(1, "a", 3, true, []obj{ok("make")}, kv{"backoff_s", 2}))
		}, pass: func() []string {
			return lines(ciStart(), ciAttempt(1, "a", 3, true, []obj{ok("make")}, kv{"backoff_s", 4}), ciAttempt(2, "a", 9, true, []obj{ok("make")}, kv{"backoff_s", 60}))
		}},
		{rule: "KC-02W", name: "retry without backoff", fail: func() []string {
			return lines(ciStart(), ciAttempt(1, "a", 2, true, []obj{ok("make")}))
		}},
		{rule: "KC-03", name: "tail with rc 0", fail: func() []string {
			return lines(ciStart(), ciAttempt(1, "a", 1, true, []obj{with(ok("make"), kv{"tail", "ok"})}))
		}},
		{rule: "KC-03", name: "tail too long", fail: func() []string {
			return lines(ciStart(), ciAttempt(1, "a", 1, false, []obj{bad("make", strings.Repeat("x", 4097))}))
		}, pass: func() []string {
			return lines(ciStart(), ciAttempt(1, "a", 1, false, []obj{with(bad("make", strings.Repeat("x", 4096)), kv{"truncated", true})}))
		}},
		{rule: "KC-04", name: "exit_code 0", fail: func() []string { return lines(ciStart(), ciEnd(2, "clean", 0, 0, 0, kv{"exit_code", 0})) }},
		{rule: "KC-04", name: "stuck without exit_code", fail: func() []string { return lines(ciStart(), ciEnd(2, "stuck", 0, 0, 0)) }, pass: func() []string {
			return lines(ciStart(), ciEnd(2, "stuck", 0, 0, 0, kv{"exit_code", 3}))
		}},
		{rule: "KC-05", name: "free-text reason", fail: func() []string {
			return lines(ciStart(), ciTrans(1, "a", "pending", "blocked", kv{"reason", "Upstream broke"}))
		}},
		{rule: "KC-06", name: "flake without retries", fail: func() []string {
			return lines(ciStart(), ciEnd(2, "clean_with_flake", 0, 0, 0, kv{"flake_retries", 0}))
		}},
		{rule: "KC-S01", name: "pending → running", fail: func() []string {
			return lines(ciStart(), ciTrans(1, "a", "pending", "running", kv{"attempt", 1}))
		}},
		{rule: "KC-S01", name: "discontinuity", fail: func() []string {
			return lines(ciStart(), ciTrans(1, "a", "pending", "ready"), ciTrans(2, "a", "running", "done"))
		}},
		{rule: "KC-R01", name: "done count differs", fail: func() []string {
			return lines(ciStart(), ciTrans(1, "a", "pending", "ready"), ciEnd(2, "clean", 1, 0, 0))
		}},
	}
}

func TestCIRules(t *testing.T) {
	for _, tc := range ciRuleCases() {
		t.Run(tc.rule+"/"+tc.name, func(t *testing.T) {
			r := checkCI(t, tc.fail())
			if !r.has(tc.rule) {
				t.Errorf("failing stream: no %s; got %v\n%s", tc.rule, r.rules(), r.dump())
			}
			if tc.pass != nil {
				if r := checkCI(t, tc.pass()); r.has(tc.rule) {
					t.Errorf("passing stream: unexpected %s\n%s", tc.rule, r.dump())
				}
			}
		})
	}
}

func TestCIEveryRuleHasCases(t *testing.T) {
	covered := map[string]bool{}
	for _, tc := range ciRuleCases() {
		covered[tc.rule] = true
	}
	for _, r := range kahn.NewCI().Rules() {
		if !covered[r.ID] {
			t.Errorf("rule %s has no failing stream in ciRuleCases", r.ID)
		}
	}
}

func TestCIFixture(t *testing.T) {
	path := filepath.Join("testdata", "ci.jsonl")
	if *update {
		writeFixture(t, path, ciRunLines())
	}
	in := readLines(t, path)
	if strings.Join(in, "\n") != strings.Join(ciRunLines(), "\n") {
		t.Fatalf("%s is out of date with its generator (run go test -update)", path)
	}
	r := checkCI(t, in)
	if len(r.findings) != 0 {
		t.Errorf("clean CI run:\n%s", r.dump())
	}
	if len(r.steps) != len(in) {
		t.Errorf("%d steps for %d events", len(r.steps), len(in))
	}
	states := map[string]string{}
	for _, s := range r.sessions {
		states[s.Session] = s.State
		if !s.Complete {
			t.Errorf("session %s incomplete", s.Session)
		}
	}
	if states["ci-2026-05-05-1/build"] != "done" || states["ci-2026-05-05-1/test"] != "done" || states["ci-2026-05-05-1/deploy"] != "blocked" || states["ci-2026-05-05-1"] != "run" {
		t.Errorf("final states %v", states)
	}
	golden(t, "ci.steps.golden", jsonLines(t, r.steps))
	golden(t, "ci.sessions.golden", jsonLines(t, r.sessions))
}

// The agent and CI models split a stream that holds both.
func TestAgentAndCIStream(t *testing.T) {
	in := append(coderRun(), ciRunLines()...)
	r := run(t, []protocol.Model{kahn.New(), kahn.NewCI()}, "", "", in)
	if len(r.findings) != 0 {
		t.Errorf("findings:\n%s", r.dump())
	}
	if r.stats.ByProtocol["kahn"] != int64(len(coderRun())) || r.stats.ByProtocol["kahn-ci"] != int64(len(ciRunLines())) {
		t.Errorf("by protocol %v", r.stats.ByProtocol)
	}
}
