// Package kahn is the protocol model of KAHN's agent transition events
// (contracts/schemas/agent_transitions.schema.json) for the protocol
// engine: JSONL objects {ts, run_id, event, …} in five variants
// (agent_run_start, agent_transition, tool_invocation, audit_checkpoint,
// agent_run_end), the agent status lifecycle, and the validator rules KA-B*
// (shape), KA-S* (lifecycle) and KA-R* (run level) of the research note
// shared/notes/asp-kahn.md §2.
//
// # Sessions
//
// A session is one agent in one run, named "<run_id>/<agent_id>" (neither
// pattern allows a slash). It opens at the agent's first event and ends at
// its agent_run_end. Audit checkpoints with agent_id null are run-scoped:
// they form the run's lane, a session named after the run_id whose only
// state is "run"; the lane ends when the run's last open agent ends. State
// is kept per open agent and run only; ended agents are remembered in a
// bounded window, to report events after agent_run_end.
//
// Each event yields one protocol.Step labelled with the event name:
// agent_transition moves from its from to its to status (Detail: the
// reason); the other events are self-loops on the agent's current status
// (Detail: the task, the tool name, "checkpoint result", the outcome).
// Before its first transition an agent is thinking.
//
// # Profiles
//
// The lenient profile is the default; the strict profile differs where the
// published text leaves a contradiction (see the rules' Profiles in
// rules.go):
//   - KA-B03W: "blocked_on_clarification" (the diagram's spelling) is read
//     as blocked-on-clarification with a warning (lenient) or rejected
//     (strict, KA-B03);
//   - KA-S02W: a move to failed from any non-terminal status is a warning
//     (lenient) or an illegal edge (strict, KA-S02), since the diagram
//     draws only thinking → failed while aborted agents fail anywhere.
//
// Run-level totals (KA-R04) are compared with the stream as warnings,
// because producers may abbreviate streams.
//
// # CI events
//
// NewCI models the sibling schema of KAHN's CI emitter
// (transitions.schema.json: run_start, node_transition, node_attempt,
// run_end) under the name "kahn-ci", with the rules KC-*: the published
// conditional rules KC-01…KC-06, the field shapes, and an [INFERRED] node
// lifecycle (KC-S01) and run_end counts (KC-R01) as warnings. Its sessions
// are nodes, "<run_id>/<node_id>", finished at the run's run_end; run_start
// and run_end are drawn on the run's lane.
package kahn
