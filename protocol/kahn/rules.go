package kahn

import "github.com/aaep-tools/aaepkit/protocol"

// Rule IDs of the agent transition events, after the catalog of the
// research note (shared/notes/asp-kahn.md §2.3). Where a catalog rule mixes
// a published requirement with an [INFERRED] one, the inferred part has its
// own ID with a "W" suffix and the level Should, because a rule ID has one
// level.
const (
	// ruleB01: ts (RFC 3339, milliseconds, Z), run_id (pattern) and event
	// (one of the five variants) are present and well formed.
	ruleB01 = "KA-B01"
	// ruleB02: the variant's required fields are present with their JSON
	// types; step and the totals are integers (1.0 is not), ok is a boolean.
	ruleB02 = "KA-B02"
	// ruleB03: from/to are AgentStatus values, outcome an AgentOutcome,
	// result an AuditResult.
	ruleB03 = "KA-B03"
	// ruleB03W: the status "blocked_on_clarification" (underscores).
	// Contradiction: the enum spells it blocked-on-clarification, the
	// lifecycle diagram blocked_on_clarification (a mermaid identifier
	// cannot hold hyphens). Lenient: read as the hyphenated status, with a
	// warning. Strict: not an AgentStatus (KA-B03).
	ruleB03W = "KA-B03W"
	// ruleB04: agent_id and checkpoint_id match their patterns; agent_id is
	// null only on audit_checkpoint.
	ruleB04 = "KA-B04"
	// ruleB05: fields outside the schema are allowed (the builders never
	// strip unknown keys); each is noted once per agent, as information.
	ruleB05 = "KA-B05"
	// ruleB06: output_summary has at most 2048 characters; convergence_score
	// is within [0,1].
	ruleB06 = "KA-B06"
	// ruleB06W: durations and totals are not negative, evidence stays under
	// 1 KB [INFERRED limits].
	ruleB06W = "KA-B06W"
	// ruleS01: step is >= 0 and never decreases within (run_id, agent_id).
	ruleS01 = "KA-S01"
	// ruleS01W: two agent_transition events of one agent share a step
	// [INFERRED: steps look strictly increasing across transitions, while a
	// transition and its tool_invocation share one].
	ruleS01W = "KA-S01W"
	// ruleS02: (from, to) is one of the nine edges of the status lifecycle.
	ruleS02 = "KA-S02"
	// ruleS02W: a move to failed from a status other than thinking. The
	// lifecycle diagram draws only thinking → failed, but the outcome
	// "aborted" (timeout, kill, operator) ends agents in any status.
	// Lenient: a warning. Strict: KA-S02.
	ruleS02W = "KA-S02W"
	// ruleS03: each transition starts where the agent's previous one ended.
	ruleS03 = "KA-S03"
	// ruleS03W: an agent's first transition starts at thinking [INFERRED
	// from the diagram's [*] → thinking].
	ruleS03W = "KA-S03W"
	// ruleS04: no agent_transition after converged or failed.
	ruleS04 = "KA-S04"
	// ruleR01: one agent_run_start, first, and one agent_run_end, last, per
	// (run_id, agent_id) [INFERRED from the names].
	ruleR01 = "KA-R01"
	// ruleR02: ts does not go backwards within (run_id, agent_id): the
	// emitter appends in order, so disorder means a merged or reordered file.
	ruleR02 = "KA-R02"
	// ruleR03: outcome converged means the last status was converged and
	// convergence_score (if given) is 1.0; partial means a score below 1.0.
	ruleR03 = "KA-R03"
	// ruleR04: agent_run_end totals match the events of the stream. Producers
	// may abbreviate (the published example does), hence a warning; only
	// agents whose agent_run_start was seen are counted.
	ruleR04 = "KA-R04"
	// ruleR05: a tool_invocation at step n follows a transition into
	// tool_call at step n whose reason "tool_call:<name>" names the same
	// tool; reasons follow "<kind>[:<detail>]" [INFERRED grammar].
	ruleR05 = "KA-R05"
	// ruleR06: an audit_checkpoint with agent_id null is run-scoped: it goes
	// to the run's lane and stays out of the per-agent counts.
	ruleR06 = "KA-R06"
)

var rules = []protocol.Rule{
	{ID: ruleB01, Level: protocol.Must, Summary: "Every event has ts (RFC 3339 with milliseconds and Z), run_id (^[a-zA-Z0-9][a-zA-Z0-9_-]{0,63}$) and event (one of the five variants)."},
	{ID: ruleB02, Level: protocol.Must, Summary: "Each variant's required fields are present with their JSON types; step and the totals are integers and ok is a boolean."},
	{ID: ruleB03, Level: protocol.Must, Summary: "from/to are AgentStatus values, outcome is an AgentOutcome and result an AuditResult."},
	{ID: ruleB03W, Level: protocol.Should, Summary: "The status is spelled blocked-on-clarification, with hyphens (the diagram's underscores are a mermaid artefact)."},
	{ID: ruleB04, Level: protocol.Must, Summary: "agent_id and checkpoint_id match their patterns, and agent_id is null only on audit_checkpoint."},
	{ID: ruleB05, Level: protocol.Info, Summary: "Fields outside the schema are allowed and passed through; they are noted once per agent."},
	{ID: ruleB06, Level: protocol.Must, Summary: "output_summary has at most 2048 characters and convergence_score lies in [0,1]."},
	{ID: ruleB06W, Level: protocol.Should, Summary: "Durations and totals are not negative and evidence stays under 1 KB [INFERRED]."},
	{ID: ruleS01, Level: protocol.Must, Summary: "step is 0 or more and never decreases within (run_id, agent_id)."},
	{ID: ruleS01W, Level: protocol.Should, Summary: "Each agent_transition of an agent has a higher step than the previous one [INFERRED]."},
	{ID: ruleS02, Level: protocol.Must, Summary: "Each agent_transition (from, to) is an edge of the status lifecycle."},
	{ID: ruleS02W, Level: protocol.Should, Summary: "A move to failed from a status other than thinking is not drawn in the lifecycle (accepted by the lenient profile)."},
	{ID: ruleS03, Level: protocol.Must, Summary: "Each agent_transition starts in the status the agent's previous transition ended in."},
	{ID: ruleS03W, Level: protocol.Should, Summary: "An agent's first agent_transition starts at thinking [INFERRED]."},
	{ID: ruleS04, Level: protocol.Must, Summary: "No agent_transition follows converged or failed."},
	{ID: ruleR01, Level: protocol.Should, Summary: "An agent has one agent_run_start before its other events and one agent_run_end after them, per run [INFERRED]."},
	{ID: ruleR02, Level: protocol.Should, Summary: "ts never decreases within (run_id, agent_id) [INFERRED]."},
	{ID: ruleR03, Level: protocol.Should, Summary: "outcome agrees with the last status and convergence_score (converged: status converged, score 1.0; partial: score below 1.0)."},
	{ID: ruleR04, Level: protocol.Should, Summary: "agent_run_end totals match the tool_invocation and audit_checkpoint events of the stream [INFERRED]."},
	{ID: ruleR05, Level: protocol.Should, Summary: "A tool_invocation at step n follows a transition into tool_call at step n naming the same tool; reasons read <kind>[:<detail>] [INFERRED]."},
	{ID: ruleR06, Level: protocol.Info, Summary: "An audit_checkpoint with agent_id null is run-scoped: it is drawn on the run's lane and left out of the agents' counts."},
}
