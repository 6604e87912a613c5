package aaep

// The AAEP session state machine, declared once: the states of Appendix A
// with their kinds, and its edges, each with the core event that takes it.
// Machine() draws the table, and the sequence checker takes from it the
// state each event implies (catalog §3.3's implicit-state model):
// session.started ⇒ idle, tool.invoked ⇒ calling_tool, awaiting.* ⇒
// awaiting_input, output.streaming ⇒ writing_output, handoff.requested ⇒
// handing_off, and each terminal event its end state; agent.state.changed
// goes where its to_state says, whether or not Appendix A draws the edge
// (producers may use other states, A.2).

import (
	"strings"

	"github.com/aaep-tools/aaepkit/protocol"
)

// machineStates are the states of Appendix A: the lifecycle of A.1 around
// the internal states of A.2.
var machineStates = []protocol.State{
	{Name: StateStarted, Kind: protocol.StateInitial},
	{Name: stateIdle}, {Name: stateThinking}, {Name: stateDeciding}, {Name: stateCallingTool},
	{Name: stateWritingOutput}, {Name: stateAwaitingInput}, {Name: stateHandingOff},
	{Name: StateCompleted, Kind: protocol.StateTerminal},
	{Name: StateErrored, Kind: protocol.StateError},
	{Name: StateCancelled, Kind: protocol.StateTerminal},
}

// machineEdge is one edge of the machine: the core event on takes a
// session from from to to. label is the drawing's text when it says more
// than the event's name.
type machineEdge struct {
	from, to string
	on       string
	label    string
}

// machineEdges are the edges Appendix A draws: A.1's lifecycle, A.2's
// internal transitions, A.3–A.5's tool and confirmation flows and A.6's
// streaming, and the terminal events that may end an active session.
var machineEdges = []machineEdge{
	{StateStarted, stateIdle, TypeSessionStarted, ""},
	{stateIdle, stateThinking, TypeStateChanged, ""},
	{stateThinking, stateCallingTool, TypeStateChanged, ""},
	{stateThinking, stateDeciding, TypeStateChanged, ""},
	{stateThinking, stateWritingOutput, TypeStateChanged, ""},
	{stateDeciding, stateThinking, TypeStateChanged, ""},
	{stateDeciding, stateCallingTool, TypeStateChanged, ""},
	{stateThinking, stateCallingTool, TypeToolInvoked, ""},
	{stateDeciding, stateCallingTool, TypeToolInvoked, ""},
	{stateCallingTool, stateThinking, TypeStateChanged, ""},
	{stateCallingTool, stateWritingOutput, TypeStateChanged, ""},
	{stateCallingTool, stateDeciding, TypeStateChanged, ""},
	{stateWritingOutput, stateThinking, TypeStateChanged, ""},
	{stateWritingOutput, stateIdle, TypeStateChanged, ""},
	{stateThinking, stateAwaitingInput, TypeAwaitingConfirmation, ""},
	{stateDeciding, stateAwaitingInput, TypeAwaitingClarification, ""},
	{stateCallingTool, stateAwaitingInput, TypeStateChanged, ""},
	{stateDeciding, stateAwaitingInput, TypeStateChanged, ""},
	{stateWritingOutput, stateAwaitingInput, TypeStateChanged, ""},
	{stateAwaitingInput, stateThinking, TypeStateChanged, "reply or timeout"},
	// A.4: after an accept the producer invokes the confirmed action.
	{stateAwaitingInput, stateCallingTool, TypeToolInvoked, "accept"},
	{stateThinking, stateHandingOff, TypeHandoffRequested, ""},
	{stateHandingOff, StateCompleted, TypeSessionCompleted, ""},
	{stateHandingOff, StateCancelled, TypeSessionCancelled, ""},

	{stateIdle, StateCompleted, TypeSessionCompleted, ""},
	{stateIdle, StateErrored, TypeSessionErrored, ""},
	{stateIdle, StateCancelled, TypeSessionCancelled, ""},
	{stateThinking, StateCompleted, TypeSessionCompleted, ""},
	{stateThinking, StateErrored, TypeSessionErrored, ""},
	{stateThinking, StateCancelled, TypeSessionCancelled, ""},
	{stateDeciding, StateCompleted, TypeSessionCompleted, ""},
	{stateDeciding, StateErrored, TypeSessionErrored, ""},
	{stateDeciding, StateCancelled, TypeSessionCancelled, ""},
	{stateCallingTool, StateCompleted, TypeSessionCompleted, ""},
	{stateCallingTool, StateErrored, TypeSessionErrored, ""},
	{stateCallingTool, StateCancelled, TypeSessionCancelled, ""},
	{stateWritingOutput, StateCompleted, TypeSessionCompleted, ""},
	{stateWritingOutput, StateErrored, TypeSessionErrored, ""},
	{stateWritingOutput, StateCancelled, TypeSessionCancelled, ""},
	{stateAwaitingInput, StateCompleted, TypeSessionCompleted, ""},
	{stateAwaitingInput, StateErrored, TypeSessionErrored, ""},
	{stateAwaitingInput, StateCancelled, TypeSessionCancelled, ""},

	// A.6: chunks are streamed in writing_output; A.7.7: a tool's output
	// may be relayed right after its completion.
	{stateWritingOutput, stateWritingOutput, TypeOutputStreaming, ""},
	{stateCallingTool, stateWritingOutput, TypeOutputStreaming, ""},
}

// impliedStates maps each core event other than agent.state.changed to the
// state its edges lead to.
var impliedStates = func() map[string]string {
	m := map[string]string{}
	for _, e := range machineEdges {
		if e.on != TypeStateChanged {
			m[e.on] = e.to
		}
	}
	return m
}()

// impliedState returns the state core event implies ("" when it implies
// none: agent.state.changed, progress, tool completions).
func impliedState(core string) string { return impliedStates[core] }

// stateKinds are the machine's states by name.
var stateKinds = func() map[string]protocol.StateKind {
	m := map[string]protocol.StateKind{}
	for _, s := range machineStates {
		m[s.Name] = s.Kind
	}
	return m
}()

// isTerminal reports whether core event ends a session.
func isTerminal(core string) bool {
	to, ok := impliedStates[core]
	return ok && (stateKinds[to] == protocol.StateTerminal || stateKinds[to] == protocol.StateError)
}

// terminalState is the state terminal event core ends its session in.
func terminalState(core string) string { return impliedStates[core] }

// Machine returns the session state machine of Appendix A, drawn from the
// table: one transition per edge, labelled with its event.
func (model) Machine() protocol.Machine {
	m := protocol.Machine{States: append([]protocol.State(nil), machineStates...)}
	for _, e := range machineEdges {
		label := e.label
		if label == "" {
			label = strings.TrimPrefix(e.on, "aaep:agent.")
		}
		m.Transitions = append(m.Transitions, protocol.Transition{From: e.from, To: e.to, Label: label})
	}
	return m
}
