package asp

import (
	"sort"
	"strings"

	"github.com/aaep-tools/aaepkit/protocol"
)

// The nine session states.
const (
	sIdle       = "IDLE"
	sInvited    = "INVITED"
	sIntroduced = "INTRODUCED"
	sConversing = "CONVERSING"
	sAgreeing   = "AGREEING"
	sExecuting  = "EXECUTING"
	sEscalated  = "ESCALATED"
	sClosed     = "CLOSED"
	sFailed     = "FAILED"
)

var stateNames = map[string]bool{
	sIdle: true, sInvited: true, sIntroduced: true, sConversing: true, sAgreeing: true,
	sExecuting: true, sEscalated: true, sClosed: true, sFailed: true,
}

func terminal(s string) bool { return s == sClosed || s == sFailed }

// allowed is the published allowed-performatives table (strict reading).
var allowed = map[string][]string{
	sIdle:       {pPropose},
	sInvited:    {pAccept, pReject},
	sIntroduced: {pPropose, pQuery, pInform, pObserve},
	sConversing: {pPropose, pAccept, pReject, pCounter, pInform, pQuery, pClarify, pCommit, pDelegate, pObserve, pWithdraw, pEscalate, pClose},
	sAgreeing:   {pAccept, pReject, pCounter, pClarify, pEscalate, pClose},
	sExecuting:  {pInform, pQuery, pEscalate, pClose},
	sEscalated:  {pInform, pClose},
}

func allowedList(state string) string {
	if l := allowed[state]; len(l) > 0 {
		return strings.Join(l, ", ")
	}
	return "none"
}

// Machine returns the published state machine: the 18 rows of the
// transition table, with "Any" expanded to the non-terminal states, the
// diagram's "Any state ── ESCALATE", and the self-loops of the allowed
// table. ESCALATED's return to the previous state is drawn as one edge per
// state an escalation can leave.
func (*model) Machine() protocol.Machine { return machine }

var machine = buildMachine()

func buildMachine() protocol.Machine {
	m := protocol.Machine{States: []protocol.State{
		{Name: sIdle, Kind: protocol.StateInitial},
		{Name: sInvited}, {Name: sIntroduced}, {Name: sConversing}, {Name: sAgreeing},
		{Name: sExecuting}, {Name: sEscalated},
		{Name: sClosed, Kind: protocol.StateTerminal},
		{Name: sFailed, Kind: protocol.StateError},
	}}
	type key struct{ from, to string }
	labels := map[key][]string{}
	var order []key
	add := func(from, to, label string) {
		k := key{from, to}
		if _, ok := labels[k]; !ok {
			order = append(order, k)
		}
		labels[k] = append(labels[k], label)
	}
	add(sIdle, sInvited, "PROPOSE (session-invitation)")
	add(sInvited, sInvited, "ACCEPT, INFORM identity")
	add(sInvited, sIntroduced, "INFORM identity (both, after ACCEPT)")
	add(sInvited, sFailed, "REJECT")
	add(sInvited, sFailed, "invitation timeout")
	add(sIntroduced, sConversing, "PROPOSE / QUERY / INFORM / OBSERVE")
	add(sConversing, sConversing, "PROPOSE / ACCEPT / REJECT / COUNTER / INFORM / QUERY / CLARIFY / DELEGATE / OBSERVE")
	add(sConversing, sAgreeing, "COMMIT")
	add(sConversing, sFailed, "session timeout")
	add(sAgreeing, sAgreeing, "CLARIFY")
	add(sAgreeing, sExecuting, "ACCEPT (of the pending COMMIT)")
	add(sAgreeing, sConversing, "REJECT / COUNTER")
	add(sExecuting, sExecuting, "INFORM progress / result / error, QUERY")
	add(sExecuting, sFailed, "unrecoverable error")
	for _, s := range []string{sInvited, sIntroduced, sConversing, sAgreeing, sExecuting, sEscalated} {
		add(s, sEscalated, "ESCALATE")
		if s != sEscalated {
			add(sEscalated, s, "INFORM resolution (back)")
		}
		add(s, sClosed, "CLOSE / WITHDRAW")
	}
	for _, s := range []string{sInvited, sIntroduced, sConversing, sAgreeing, sExecuting, sEscalated} {
		if s == sEscalated {
			add(s, sFailed, "escalation timeout")
		}
		add(s, sFailed, "protocol violation / hash chain break")
	}
	for _, k := range order {
		m.Transitions = append(m.Transitions, protocol.Transition{From: k.from, To: k.to, Label: strings.Join(labels[k], "; ")})
	}
	sort.SliceStable(m.Transitions, func(i, j int) bool { return stateRank[m.Transitions[i].From] < stateRank[m.Transitions[j].From] })
	return m
}

var stateRank = map[string]int{sIdle: 0, sInvited: 1, sIntroduced: 2, sConversing: 3, sAgreeing: 4, sExecuting: 5, sEscalated: 6, sClosed: 7, sFailed: 8}
