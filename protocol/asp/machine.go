package asp

// The ASP session state machine, declared once: the states with their
// kinds, and the edges of the normalised transition function δ(state,
// message) of asp-kahn notes §1.4 (the published transition table, rows
// 1–18, read with the allowed-performatives table and the §1.6
// contradictions). The checker takes its transitions from this table
// (transition.go), its ASP-S02 messages name the performatives it allows,
// and Machine() draws it.

import (
	"slices"
	"strings"
	"time"

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

// toPrevious is the target of the edge that resolves an escalation: the
// state the escalation left (row 14).
const toPrevious = "(previous state)"

// fallback says what becomes of a performative that no edge of the state
// takes.
type fallback uint8

const (
	refuseUnlisted  fallback = iota // ASP-S02: not allowed in this state
	adoptConversing                 // ASP-S01: the session's start was not recorded
	refuseEscalated                 // ASP-S06: only a resolution or CLOSE leaves ESCALATED
)

// stateDef is one state of the machine.
type stateDef struct {
	name      string
	kind      protocol.StateKind
	otherwise fallback
}

var states = []stateDef{
	{sIdle, protocol.StateInitial, adoptConversing},
	{sInvited, protocol.StateNormal, refuseUnlisted},
	{sIntroduced, protocol.StateNormal, refuseUnlisted},
	{sConversing, protocol.StateNormal, refuseUnlisted},
	{sAgreeing, protocol.StateNormal, refuseUnlisted},
	{sExecuting, protocol.StateNormal, refuseUnlisted},
	{sEscalated, protocol.StateNormal, refuseEscalated},
	{sClosed, protocol.StateTerminal, refuseUnlisted},
	{sFailed, protocol.StateError, refuseUnlisted},
}

// guard decides, without side effects, whether an edge applies to a
// message; of the edges a performative has in a state, the first whose
// guard holds is taken.
type guard func(s *session, e *envelope) bool

// action is an edge's checks and effects on the session. It gets the
// edge's move and returns it, or, when it refuses the message, the refusal.
type action func(c *checker, s *session, m *protocol.Message, e *envelope, mv move) move

// timer is an automatic transition's clock: expired reports the timeout
// and returns true when it ran out at t (m is nil at the end of the stream).
type timer struct {
	name    string // "invitation", "session", "escalation": the synthetic step's detail
	expired func(c *checker, s *session, m *protocol.Message, t time.Time) bool
}

var (
	invitationTimer = &timer{"invitation", (*checker).invitationExpired}
	sessionTimer    = &timer{"session", (*checker).sessionExpired}
	escalationTimer = &timer{"escalation", (*checker).escalationExpired}
)

// edge is one row of the machine. A message edge is taken by a message
// whose performative is in on (and for which guard holds); an automatic
// edge (on empty) is taken without a message: by its timer, or, when it
// has none, by a protocol violation or a hash chain break (row 18), which
// the checker reports as the synthetic step to FAILED.
type edge struct {
	from  string
	on    []string
	guard guard
	to    string
	kind  protocol.StepKind
	act   action
	timer *timer
	// lenient is why only the lenient profile takes the edge (ASP-S02W);
	// the strict profile refuses the message (ASP-S02).
	lenient string
	// unlisted marks a strict edge whose performative the published
	// allowed-performatives table does not list for the state.
	unlisted bool
	// label is the drawing's text; a message edge without one is drawn
	// with its performatives.
	label string
}

const (
	whyAnyClose    = "the transition table's rows 16–17 let WITHDRAW and CLOSE end a session from any state"
	whyAnyEscalate = "the state diagram lets ESCALATE leave any state"
	whyCounter     = "the sessions page lets the invited agent COUNTER an invitation"
)

const violationLabel = "protocol violation / hash chain break"

// edges are the rows of the machine, grouped by the state they leave. Within
// a state the performatives come in the order of the published
// allowed-performatives table, which the ASP-S02 message lists; the rows
// whose "From" is "Any" there (16–18, and the diagram's "Any state ──
// ESCALATE") are written out for each state they leave.
var edges = []edge{
	{from: sIdle, on: []string{pPropose}, guard: isInvitation, to: sInvited, kind: protocol.StepLifecycle, act: (*checker).invite, label: "PROPOSE (session-invitation)"},

	{from: sInvited, on: []string{pAccept}, to: sInvited, kind: protocol.StepReply, act: (*checker).acceptInvitation},
	{from: sInvited, on: []string{pReject}, to: sFailed, kind: protocol.StepReply},
	// Row 2 needs the identity exchange, which the allowed table omits.
	{from: sInvited, on: []string{pInform}, guard: completesIntroduction, to: sIntroduced, kind: protocol.StepHandshake, act: (*checker).identity, unlisted: true, label: "INFORM identity (both, after ACCEPT)"},
	{from: sInvited, on: []string{pInform}, to: sInvited, kind: protocol.StepHandshake, act: (*checker).identity, unlisted: true, label: "INFORM identity"},
	{from: sInvited, on: []string{pCounter}, to: sInvited, kind: protocol.StepReply, lenient: whyCounter},
	{from: sInvited, on: []string{pClose, pWithdraw}, to: sClosed, kind: protocol.StepLifecycle, act: (*checker).closeSession, lenient: whyAnyClose},
	{from: sInvited, on: []string{pEscalate}, to: sEscalated, kind: protocol.StepState, act: (*checker).escalate, lenient: whyAnyEscalate},
	{from: sInvited, to: sFailed, timer: invitationTimer, kind: protocol.StepTimeout},
	{from: sInvited, to: sFailed, kind: protocol.StepState, label: violationLabel},

	{from: sIntroduced, on: []string{pPropose, pQuery, pInform, pObserve}, to: sConversing, kind: protocol.StepState, act: (*checker).remember},
	{from: sIntroduced, on: []string{pClose, pWithdraw}, to: sClosed, kind: protocol.StepLifecycle, act: (*checker).closeSession, lenient: whyAnyClose},
	{from: sIntroduced, on: []string{pEscalate}, to: sEscalated, kind: protocol.StepState, act: (*checker).escalate, lenient: whyAnyEscalate},
	{from: sIntroduced, to: sFailed, kind: protocol.StepState, label: violationLabel},

	{from: sConversing, on: []string{pPropose}, to: sConversing, kind: protocol.StepOther, act: (*checker).remember},
	{from: sConversing, on: []string{pAccept}, to: sConversing, kind: protocol.StepReply, act: (*checker).acceptProposal},
	{from: sConversing, on: []string{pReject, pCounter}, to: sConversing, kind: protocol.StepReply, act: (*checker).remember},
	{from: sConversing, on: []string{pInform}, to: sConversing, kind: protocol.StepProgress},
	{from: sConversing, on: []string{pQuery, pClarify}, to: sConversing, kind: protocol.StepClarification},
	{from: sConversing, on: []string{pCommit}, to: sAgreeing, kind: protocol.StepState, act: (*checker).commit},
	{from: sConversing, on: []string{pDelegate}, to: sConversing, kind: protocol.StepHandoff},
	{from: sConversing, on: []string{pObserve}, to: sConversing, kind: protocol.StepOther, act: (*checker).remember},
	{from: sConversing, on: []string{pWithdraw}, to: sClosed, kind: protocol.StepLifecycle, act: (*checker).closeSession},
	{from: sConversing, on: []string{pEscalate}, to: sEscalated, kind: protocol.StepState, act: (*checker).escalate},
	{from: sConversing, on: []string{pClose}, to: sClosed, kind: protocol.StepLifecycle, act: (*checker).closeSession},
	{from: sConversing, to: sFailed, timer: sessionTimer, kind: protocol.StepTimeout},
	{from: sConversing, to: sFailed, kind: protocol.StepState, label: violationLabel},

	{from: sAgreeing, on: []string{pAccept}, to: sExecuting, kind: protocol.StepReply, act: (*checker).acceptCommitment, label: "ACCEPT (of the pending COMMIT)"},
	{from: sAgreeing, on: []string{pReject, pCounter}, to: sConversing, kind: protocol.StepReply, act: (*checker).clearCommitment},
	{from: sAgreeing, on: []string{pClarify}, to: sAgreeing, kind: protocol.StepClarification},
	{from: sAgreeing, on: []string{pEscalate}, to: sEscalated, kind: protocol.StepState, act: (*checker).escalate},
	{from: sAgreeing, on: []string{pClose}, to: sClosed, kind: protocol.StepLifecycle, act: (*checker).closeSession},
	{from: sAgreeing, on: []string{pWithdraw}, to: sClosed, kind: protocol.StepLifecycle, act: (*checker).closeSession, lenient: whyAnyClose},
	{from: sAgreeing, to: sFailed, timer: sessionTimer, kind: protocol.StepTimeout},
	{from: sAgreeing, to: sFailed, kind: protocol.StepState, label: violationLabel},

	{from: sExecuting, on: []string{pInform}, to: sExecuting, kind: protocol.StepProgress, act: (*checker).executionReport, label: "INFORM progress / result / error"},
	{from: sExecuting, on: []string{pQuery}, to: sExecuting, kind: protocol.StepClarification},
	{from: sExecuting, on: []string{pEscalate}, to: sEscalated, kind: protocol.StepState, act: (*checker).escalate},
	{from: sExecuting, on: []string{pClose}, to: sClosed, kind: protocol.StepLifecycle, act: (*checker).closeExecution},
	{from: sExecuting, on: []string{pWithdraw}, to: sClosed, kind: protocol.StepLifecycle, act: (*checker).closeSession, lenient: whyAnyClose},
	// Row 13: no message marks an unrecoverable error in a recording, so
	// the checker never takes this row; a violation takes the same edge.
	{from: sExecuting, to: sFailed, kind: protocol.StepState, label: "unrecoverable error"},
	{from: sExecuting, to: sFailed, timer: sessionTimer, kind: protocol.StepTimeout},
	{from: sExecuting, to: sFailed, kind: protocol.StepState, label: violationLabel},

	{from: sEscalated, on: []string{pInform}, to: toPrevious, kind: protocol.StepState, act: (*checker).resolve, label: "INFORM resolution (back)"},
	{from: sEscalated, on: []string{pClose}, to: sClosed, kind: protocol.StepLifecycle, act: (*checker).closeSession},
	{from: sEscalated, on: []string{pWithdraw}, to: sClosed, kind: protocol.StepLifecycle, act: (*checker).closeSession, lenient: whyAnyClose},
	{from: sEscalated, on: []string{pEscalate}, to: sEscalated, kind: protocol.StepState, act: (*checker).escalate, lenient: whyAnyEscalate},
	{from: sEscalated, to: sFailed, timer: escalationTimer, kind: protocol.StepTimeout},
	{from: sEscalated, to: sFailed, kind: protocol.StepState, label: violationLabel},
}

// machineIndex is the table arranged for the checker.
type machineIndex struct {
	kind    map[string]protocol.StateKind
	states  map[string]*stateDef
	byMsg   map[string]map[string][]*edge // from → performative → edges in table order
	timers  map[string][]*edge            // from → edges with a timer
	allowed map[string]string             // from → the performatives the allowed table lists
}

var index = buildIndex()

func buildIndex() *machineIndex {
	x := &machineIndex{kind: map[string]protocol.StateKind{}, states: map[string]*stateDef{},
		byMsg: map[string]map[string][]*edge{}, timers: map[string][]*edge{}, allowed: map[string]string{}}
	for i := range states {
		st := &states[i]
		x.kind[st.name], x.states[st.name] = st.kind, st
		x.byMsg[st.name] = map[string][]*edge{}
	}
	listed := map[string][]string{}
	for i := range edges {
		e := &edges[i]
		for _, p := range e.on {
			x.byMsg[e.from][p] = append(x.byMsg[e.from][p], e)
			if e.lenient == "" && !e.unlisted && !slices.Contains(listed[e.from], p) {
				listed[e.from] = append(listed[e.from], p)
			}
		}
		if e.timer != nil {
			x.timers[e.from] = append(x.timers[e.from], e)
		}
	}
	for st, l := range listed {
		x.allowed[st] = strings.Join(l, ", ")
	}
	return x
}

// stateNames are the nine states, for reading state names in frames.
var stateNames = func() map[string]bool {
	m := map[string]bool{}
	for _, st := range states {
		m[st.name] = true
	}
	return m
}()

// terminal reports whether state s ends a session.
func terminal(s string) bool {
	k := index.kind[s]
	return k == protocol.StateTerminal || k == protocol.StateError
}

// allowedList names the performatives the allowed table lists for state.
func allowedList(state string) string {
	if l := index.allowed[state]; l != "" {
		return l
	}
	return "none"
}

// Machine returns the state machine drawn from the table: one transition
// per (from, to) pair, labelled with its rows' labels (a message row
// without one by its performatives), the resolution of an escalation drawn
// once per state an escalation can leave.
func (*model) Machine() protocol.Machine { return machine }

var machine = drawMachine()

func drawMachine() protocol.Machine {
	m := protocol.Machine{}
	for _, st := range states {
		m.States = append(m.States, protocol.State{Name: st.name, Kind: st.kind})
	}
	// A pair's label is its rows' labels in table order, the performatives
	// of consecutive unlabelled rows joined into one.
	type pair struct{ from, to string }
	var order []pair
	parts := map[pair][]string{}
	open := map[pair]bool{} // the pair's last part lists performatives
	add := func(from, to string, r *edge) {
		k := pair{from, to}
		if !slices.Contains(order, k) {
			order = append(order, k)
		}
		label := r.label
		if label == "" && r.timer != nil {
			label = r.timer.name + " timeout"
		}
		if label == "" {
			if !open[k] {
				parts[k] = append(parts[k], "")
				open[k] = true
			}
			last := &parts[k][len(parts[k])-1]
			for _, p := range r.on {
				if *last != "" {
					*last += " / "
				}
				*last += p
			}
			return
		}
		open[k] = false
		if !slices.Contains(parts[k], label) {
			parts[k] = append(parts[k], label)
		}
	}
	for i := range edges {
		r := &edges[i]
		if r.to != toPrevious {
			add(r.from, r.to, r)
			continue
		}
		for j := range edges {
			if x := &edges[j]; x.to == sEscalated && x.from != sEscalated && len(x.on) > 0 {
				add(r.from, x.from, r)
			}
		}
	}
	for _, k := range order {
		m.Transitions = append(m.Transitions, protocol.Transition{From: k.from, To: k.to, Label: strings.Join(parts[k], "; ")})
	}
	return m
}
