package aaep

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/protocoltest"
)

// The machine's table (machine.go) drives both the drawing and the states
// the sequence checker follows; these tests hold the two against each other.

// TestMachine: the Appendix A machine has one initial state, the three
// terminal states, transitions only between its own states, and each event
// other than agent.state.changed leads to one state wherever it is drawn.
func TestMachine(t *testing.T) {
	m := model{}.Machine()
	kinds := protocoltest.CheckMachine(t, m)
	if kinds[StateStarted] != protocol.StateInitial || kinds[StateErrored] != protocol.StateError ||
		kinds[StateCompleted] != protocol.StateTerminal || kinds[StateCancelled] != protocol.StateTerminal {
		t.Errorf("state kinds %v", kinds)
	}
	if len(m.Transitions) != len(machineEdges) {
		t.Errorf("%d transitions drawn for %d edges", len(m.Transitions), len(machineEdges))
	}
	to := map[string]string{}
	for _, e := range machineEdges {
		if e.on == TypeStateChanged {
			continue
		}
		if prev, ok := to[e.on]; ok && prev != e.to {
			t.Errorf("%s leads to %s and to %s", e.on, prev, e.to)
		}
		to[e.on] = e.to
	}
	for _, core := range []string{TypeSessionStarted, TypeToolInvoked, TypeOutputStreaming, TypeAwaitingConfirmation,
		TypeAwaitingClarification, TypeHandoffRequested, TypeSessionCompleted, TypeSessionErrored, TypeSessionCancelled} {
		if to[core] == "" {
			t.Errorf("no edge says which state %s implies", core)
		}
	}
}

// into returns the events that leave a session in state from (nil: no
// event yet, the session is in its initial state).
func into(from string) []*tm {
	switch from {
	case StateStarted:
		return nil
	case stateIdle:
		return stream(S())
	}
	return stream(S(), SC(stateIdle, from))
}

// eventFor builds the event of core type on that takes an edge to to.
func eventFor(on, from, to string) *tm {
	switch on {
	case TypeSessionStarted:
		return S()
	case TypeStateChanged:
		return SC(from, to)
	case TypeToolInvoked:
		return TI("lookup", "call_1")
	case TypeOutputStreaming:
		return OS("out_1", 0, "Hello.", true)
	case TypeAwaitingConfirmation:
		return AC("rpl_1", "reject", 300)
	case TypeAwaitingClarification:
		return AQ("rpl_1", 300)
	case TypeHandoffRequested:
		return HR()
	case TypeSessionCompleted:
		return C()
	case TypeSessionErrored:
		return E()
	case TypeSessionCancelled:
		return X()
	}
	panic("eventFor: " + on)
}

// stepAt returns the step message index made.
func stepAt(res result, index int64) (protocol.Step, bool) {
	for _, s := range res.steps {
		if s.Index == index {
			return s, true
		}
	}
	return protocol.Step{}, false
}

// TestCheckerTakesEveryEdge: each drawn edge, built as a stream, is the
// checker's step from its state to its target, named for its event, in
// both profiles.
func TestCheckerTakesEveryEdge(t *testing.T) {
	for _, e := range machineEdges {
		for _, profile := range []string{"lenient", "strict"} {
			t.Run(fmt.Sprintf("%s/%s/%s/%s", e.from, strings.TrimPrefix(e.on, "aaep:agent."), e.to, profile), func(t *testing.T) {
				msgs := append(into(e.from), eventFor(e.on, e.from, e.to))
				res := run(t, profile, msgs...)
				st, ok := stepAt(res, int64(len(msgs)-1))
				if !ok {
					t.Fatalf("no step for the event:\n%s", res.describe())
				}
				if st.From != e.from || st.To != e.to || st.Label != strings.TrimPrefix(e.on, "aaep:agent.") {
					t.Errorf("step %s→%s %s, want %s→%s %s", st.From, st.To, st.Label, e.from, e.to, e.on)
				}
			})
		}
	}
}

// TestCheckerFollowsTheTable: from every state of the machine, an event
// that implies a state moves the checker to the state its drawn edges lead
// to; agent.state.changed goes where its to_state says, drawn or not.
func TestCheckerFollowsTheTable(t *testing.T) {
	var active []string
	for _, s := range machineStates {
		if s.Kind == protocol.StateNormal {
			active = append(active, s.Name)
		}
	}
	for _, from := range active {
		for core, to := range impliedStates {
			if core == TypeSessionStarted {
				continue // only the first event starts a session (SEQ-START-ONCE)
			}
			msgs := append(into(from), eventFor(core, from, to))
			res := run(t, "lenient", msgs...)
			if st, ok := stepAt(res, int64(len(msgs)-1)); !ok || st.From != from || st.To != to {
				t.Errorf("%s in %s: step %s→%s, want %s→%s", core, from, st.From, st.To, from, to)
			}
		}
		msgs := append(into(from), SC(from, "reviewing"))
		res := run(t, "lenient", msgs...)
		if st, _ := stepAt(res, int64(len(msgs)-1)); st.From != from || st.To != "reviewing" {
			t.Errorf("state.changed from %s to a producer's own state: step %s→%s", from, st.From, st.To)
		}
	}
}
