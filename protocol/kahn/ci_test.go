package kahn_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/kahn"
	"github.com/aaep-tools/aaepkit/protocol/protocoltest"
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

// ciModels makes the models of a run of the CI checker.
func ciModels() []protocol.Model { return []protocol.Model{kahn.NewCI()} }

func checkCI(t *testing.T, in []string) *result {
	t.Helper()
	return protocoltest.Run(t, ciModels(), "", "", in)
}

// ciRuleCases holds, for every CI rule, streams that must break it and
// close variants that must not.
func ciRuleCases() []protocoltest.RuleCase {
	return []protocoltest.RuleCase{
		{Rule: "KC-B01", Name: "ts without milliseconds", Fail: func() []string {
			return lines(with(ciStart(), kv{"ts", "2026-05-05T09:00:00Z"}))
		}, Pass: func() []string { return lines(ciStart()) }},
		{Rule: "KC-B02", Name: "total_nodes missing", Fail: func() []string { return lines(without(ciStart(), "total_nodes")) }},
		{Rule: "KC-B02", Name: "rc is a string", Fail: func() []string {
			return lines(ciStart(), ciAttempt(1, "a", 1, true, []obj{{{"cmd", "make"}, {"rc", "0"}, {"duration_s", 1}}}))
		}, Pass: func() []string {
			return lines(ciStart(), ciAttempt(1, "a", 1, true, []obj{{{"cmd", "make"}, {"rc", 0}, {"duration_s", 1}}}))
		}},
		{Rule: "KC-B03", Name: "unknown status", Fail: func() []string { return lines(ciStart(), ciTrans(1, "a", "pending", "queued")) }, Pass: func() []string {
			return lines(ciStart(), ciTrans(1, "a", "pending", "ready"))
		}},
		{Rule: "KC-B03", Name: "unknown outcome", Fail: func() []string { return lines(ciStart(), ciEnd(2, "green", 0, 0, 0)) }},
		{Rule: "KC-01", Name: "running without attempt", Fail: func() []string {
			return lines(ciStart(), ciTrans(1, "a", "pending", "ready"), ciTrans(2, "a", "ready", "running"))
		}, Pass: func() []string {
			return lines(ciStart(), ciTrans(1, "a", "pending", "ready"), ciTrans(2, "a", "ready", "running", kv{"attempt", 1}))
		}},
		{Rule: "KC-01", Name: "attempt on done", Fail: func() []string {
			return lines(ciStart(), ciTrans(1, "a", "pending", "ready"), ciTrans(2, "a", "ready", "running", kv{"attempt", 1}), ciTrans(3, "a", "running", "done", kv{"attempt", 1}))
		}},
		{Rule: "KC-02", Name: "backoff on attempt 1", Fail: func() []string {
			return lines(ciStart(), ciAttempt(1, "a", 1, true, []obj{ok("make")}, kv{"backoff_s", 1}))
		}},
		{Rule: "KC-02", Name: "backoff off schedule", Fail: func() []string {
			return lines(ciStart(), ciAttempt(1, "a", 3, true, []obj{ok("make")}, kv{"backoff_s", 2}))
		}, Pass: func() []string {
			return lines(ciStart(), ciAttempt(1, "a", 3, true, []obj{ok("make")}, kv{"backoff_s", 4}), ciAttempt(2, "a", 9, true, []obj{ok("make")}, kv{"backoff_s", 60}))
		}},
		{Rule: "KC-02W", Name: "retry without backoff", Fail: func() []string {
			return lines(ciStart(), ciAttempt(1, "a", 2, true, []obj{ok("make")}))
		}, Pass: func() []string {
			return lines(ciStart(), ciAttempt(1, "a", 2, true, []obj{ok("make")}, kv{"backoff_s", 2}))
		}},
		{Rule: "KC-03", Name: "tail with rc 0", Fail: func() []string {
			return lines(ciStart(), ciAttempt(1, "a", 1, true, []obj{with(ok("make"), kv{"tail", "ok"})}))
		}},
		{Rule: "KC-03", Name: "tail too long", Fail: func() []string {
			return lines(ciStart(), ciAttempt(1, "a", 1, false, []obj{bad("make", strings.Repeat("x", 4097))}))
		}, Pass: func() []string {
			return lines(ciStart(), ciAttempt(1, "a", 1, false, []obj{with(bad("make", strings.Repeat("x", 4096)), kv{"truncated", true})}))
		}},
		{Rule: "KC-04", Name: "exit_code 0", Fail: func() []string { return lines(ciStart(), ciEnd(2, "clean", 0, 0, 0, kv{"exit_code", 0})) }},
		{Rule: "KC-04", Name: "stuck without exit_code", Fail: func() []string { return lines(ciStart(), ciEnd(2, "stuck", 0, 0, 0)) }, Pass: func() []string {
			return lines(ciStart(), ciEnd(2, "stuck", 0, 0, 0, kv{"exit_code", 3}))
		}},
		{Rule: "KC-05", Name: "free-text reason", Fail: func() []string {
			return lines(ciStart(), ciTrans(1, "a", "pending", "blocked", kv{"reason", "Upstream broke"}))
		}, Pass: func() []string {
			return lines(ciStart(), ciTrans(1, "a", "pending", "blocked", kv{"reason", "dependency_failed:upstream"}))
		}},
		{Rule: "KC-06", Name: "flake without retries", Fail: func() []string {
			return lines(ciStart(), ciEnd(2, "clean_with_flake", 0, 0, 0, kv{"flake_retries", 0}))
		}, Pass: func() []string {
			return lines(ciStart(), ciEnd(2, "clean_with_flake", 0, 0, 0, kv{"flake_retries", 1}))
		}},
		{Rule: "KC-S01", Name: "pending → running", Fail: func() []string {
			return lines(ciStart(), ciTrans(1, "a", "pending", "running", kv{"attempt", 1}))
		}, Pass: func() []string {
			return lines(ciStart(), ciTrans(1, "a", "pending", "ready"), ciTrans(2, "a", "ready", "running", kv{"attempt", 1}))
		}},
		{Rule: "KC-S01", Name: "discontinuity", Fail: func() []string {
			return lines(ciStart(), ciTrans(1, "a", "pending", "ready"), ciTrans(2, "a", "running", "done"))
		}},
		{Rule: "KC-R01", Name: "done count differs", Fail: func() []string {
			return lines(ciStart(), ciTrans(1, "a", "pending", "ready"), ciEnd(2, "clean", 1, 0, 0))
		}, Pass: func() []string {
			return lines(ciStart(), ciTrans(1, "a", "pending", "ready"), ciTrans(2, "a", "ready", "running", kv{"attempt", 1}),
				ciTrans(3, "a", "running", "done"), ciEnd(4, "clean", 1, 0, 0))
		}},
	}
}

func TestCIRules(t *testing.T) { protocoltest.CheckRules(t, ciModels, ciRuleCases()) }

func TestCIEveryRuleHasCases(t *testing.T) {
	protocoltest.CheckCoverage(t, kahn.NewCI().Rules(), ciRuleCases(), protocoltest.NeedFailing|protocoltest.NeedPassing)
}

func TestCIFixture(t *testing.T) {
	in := protocoltest.Fixture(t, filepath.Join("testdata", "ci.jsonl"), ciRunLines(), *update)
	r := checkCI(t, in)
	if len(r.Findings) != 0 {
		t.Errorf("clean CI run:\n%s", r.Dump())
	}
	if len(r.Steps) != len(in) {
		t.Errorf("%d steps for %d events", len(r.Steps), len(in))
	}
	states := map[string]string{}
	for _, s := range r.Sessions {
		states[s.Session] = s.State
		if !s.Complete {
			t.Errorf("session %s incomplete", s.Session)
		}
	}
	if states["ci-2026-05-05-1/build"] != "done" || states["ci-2026-05-05-1/test"] != "done" || states["ci-2026-05-05-1/deploy"] != "blocked" || states["ci-2026-05-05-1"] != "run" {
		t.Errorf("final states %v", states)
	}
	protocoltest.Golden(t, filepath.Join("testdata", "ci.steps.golden"), protocoltest.JSONLines(t, r.Steps), *update)
	protocoltest.Golden(t, filepath.Join("testdata", "ci.sessions.golden"), protocoltest.JSONLines(t, r.Sessions), *update)
}

// The agent and CI models split a stream that holds both.
func TestAgentAndCIStream(t *testing.T) {
	in := append(coderRun(), ciRunLines()...)
	r := protocoltest.Run(t, []protocol.Model{kahn.New(), kahn.NewCI()}, "", "", in)
	if len(r.Findings) != 0 {
		t.Errorf("findings:\n%s", r.Dump())
	}
	if r.Stats.ByProtocol["kahn"] != int64(len(coderRun())) || r.Stats.ByProtocol["kahn-ci"] != int64(len(ciRunLines())) {
		t.Errorf("by protocol %v", r.Stats.ByProtocol)
	}
}
