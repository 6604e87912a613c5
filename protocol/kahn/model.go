package kahn

import (
	"github.com/aaep-tools/aaepkit/protocol"
)

// New returns the model of KAHN agent transition events.
func New() protocol.Model { return model{} }

type model struct{}

// Name returns "kahn".
func (model) Name() string { return "kahn" }

// Rules lists every rule the KAHN agent checker reports.
func (model) Rules() []protocol.Rule { return protocol.Values(rules) }

// The five event variants.
const (
	evStart      = "agent_run_start"
	evTransition = "agent_transition"
	evTool       = "tool_invocation"
	evAudit      = "audit_checkpoint"
	evEnd        = "agent_run_end"
)

var events = map[string]bool{evStart: true, evTransition: true, evTool: true, evAudit: true, evEnd: true}

// Recognize reports whether m is a KAHN agent event: a top-level event
// naming one of the five variants, with run_id and ts strings; or a line
// with KAHN's base fields and an agent field (agentFields) whose event is
// none of the five (nor a CI event), which is then KA-B01's (an unknown
// event is a broken KAHN event, not a message of no protocol).
func (model) Recognize(m *protocol.Message) bool {
	f := &m.Doc.Routing
	if f.RunID == "" || f.TS == "" || f.Event == "" {
		return false
	}
	if events[f.Event] {
		return true
	}
	if ciEvents[f.Event] {
		return false
	}
	for _, k := range agentFields {
		if len(m.Doc.Get(k)) > 0 {
			return true
		}
	}
	return false
}

// agentFields are members only the agent variants have: a line with
// KAHN's base fields and one of them is an agent event.
var agentFields = []string{"agent_id", "step", "task", "tool_name", "checkpoint_id", "outcome", "total_steps"}

// NewChecker starts a run; opts.Strict() selects the strict profile.
func (model) NewChecker(r protocol.Reporter, opts *protocol.Options) protocol.Checker {
	return newChecker(r, opts.Strict())
}

// AgentStatus values.
const (
	stThinking = "thinking"
	stToolCall = "tool_call"
	stToolRes  = "tool_result"
	stResponse = "response"
	stReflect  = "reflect"
	stBlocked  = "blocked-on-clarification"
	stConv     = "converged"
	stFailed   = "failed"
	// stRun is the pseudo-state of a run's lane, where run-scoped audit
	// checkpoints (agent_id null) are drawn.
	stRun = "run"
)

var statuses = map[string]bool{stThinking: true, stToolCall: true, stToolRes: true, stResponse: true, stReflect: true, stBlocked: true, stConv: true, stFailed: true}

var outcomes = map[string]bool{"converged": true, "partial": true, "escaped": true, "aborted": true}

var auditResults = map[string]bool{"pass": true, "fail": true, "warn": true}

// edges are the nine transitions of the published status lifecycle.
var edges = []protocol.Transition{
	{From: stThinking, To: stToolCall, Label: "agent_transition"},
	{From: stToolCall, To: stToolRes, Label: "agent_transition"},
	{From: stToolRes, To: stResponse, Label: "agent_transition"},
	{From: stResponse, To: stReflect, Label: "agent_transition"},
	{From: stReflect, To: stThinking, Label: "agent_transition"},
	{From: stReflect, To: stConv, Label: "agent_transition"},
	{From: stThinking, To: stBlocked, Label: "agent_transition"},
	{From: stBlocked, To: stThinking, Label: "operator response"},
	{From: stThinking, To: stFailed, Label: "agent_transition"},
}

var legal = edgeSet(edges)

// edgeSet indexes the edges of a lifecycle by their (from, to) pair.
func edgeSet(edges []protocol.Transition) map[[2]string]bool {
	m := map[[2]string]bool{}
	for _, e := range edges {
		m[[2]string{e.From, e.To}] = true
	}
	return m
}

// Machine returns the status lifecycle: thinking is initial (an agent's
// run starts thinking), converged terminal, failed the error end. The
// lane state "run" holds run-scoped audit checkpoints. Events that do not
// change the status (tool_invocation, audit_checkpoint, the run's start and
// end) are self-loops in traces and not drawn here.
func (model) Machine() protocol.Machine {
	return protocol.Machine{
		States: []protocol.State{
			{Name: stThinking, Kind: protocol.StateInitial},
			{Name: stToolCall}, {Name: stToolRes}, {Name: stResponse}, {Name: stReflect}, {Name: stBlocked},
			{Name: stConv, Kind: protocol.StateTerminal},
			{Name: stFailed, Kind: protocol.StateError},
			{Name: stRun},
		},
		Transitions: append(append([]protocol.Transition(nil), edges...),
			protocol.Transition{From: stRun, To: stRun, Label: "audit_checkpoint (run-scoped)"}),
	}
}
