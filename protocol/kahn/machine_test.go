package kahn_test

import (
	"testing"

	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/kahn"
)

// One edge table drives each KAHN checker and its drawing; these tests
// hold them against each other: a transition between two statuses is
// accepted (strict profile) exactly when it is drawn.

// drawnPairs returns the drawn (from, to) pairs of m and its states.
func drawnPairs(m protocol.Machine) (map[[2]string]bool, []string) {
	pairs := map[[2]string]bool{}
	for _, tr := range m.Transitions {
		pairs[[2]string{tr.From, tr.To}] = true
	}
	var states []string
	for _, s := range m.States {
		states = append(states, s.Name)
	}
	return pairs, states
}

func TestAgentMachineIsTheCheckersTable(t *testing.T) {
	drawn, states := drawnPairs(kahn.New().Machine())
	r := runB{"machine-1"}
	for _, from := range states {
		for _, to := range states {
			if from == "run" || to == "run" {
				continue // the lane of run-scoped audits, no agent status
			}
			res := check(t, "strict", lines(r.start(0, "a", "task"), r.trans(sec, "a", 1, from, to, "")))
			if got := !res.Has("KA-S02"); got != drawn[[2]string{from, to}] {
				t.Errorf("%s → %s: accepted %v, drawn %v:\n%s", from, to, got, drawn[[2]string{from, to}], res.Dump())
			}
		}
	}
}

func TestCIMachineIsTheCheckersTable(t *testing.T) {
	drawn, states := drawnPairs(kahn.NewCI().Machine())
	for _, from := range states {
		for _, to := range states {
			if from == "run" || to == "run" {
				continue // the run's lane, no node status
			}
			var extra []kv
			if to == "running" {
				extra = append(extra, kv{"attempt", 1})
			}
			res := checkCI(t, lines(ciStart(), ciTrans(1, "build", from, to, extra...)))
			if got := !res.Has("KC-S01"); got != drawn[[2]string{from, to}] {
				t.Errorf("%s → %s: accepted %v, drawn %v:\n%s", from, to, got, drawn[[2]string{from, to}], res.Dump())
			}
		}
	}
}
