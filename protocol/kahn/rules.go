package kahn

import "github.com/aaep-tools/aaepkit/protocol"

// Rule IDs of the agent transition events, after the catalog of the
// research note (shared/notes/asp-kahn.md §2.3). Where a catalog rule mixes
// a published requirement with an [INFERRED] one, the inferred part has its
// own ID with a "W" suffix and the level Should, because a rule ID has one
// level.
var (
	ruleB01 = &protocol.Rule{
		ID: "KA-B01", Level: protocol.Must, Party: protocol.Producer,
		Summary: "Every event has ts (RFC 3339 with milliseconds and Z), run_id (^[a-zA-Z0-9][a-zA-Z0-9_-]{0,63}$) and event (one of the five variants).",
		Doc:     "ts (RFC 3339, milliseconds, Z), run_id (pattern) and event (one of the five variants) are present and well formed. A line with KAHN's base fields and an agent field (agent_id, step, task, tool_name, checkpoint_id, outcome, total_steps) whose event is none of the five variants, nor a CI event, is recognised as a KAHN agent event and reported here, in its agent's session: a broken KAHN event, not a message of no known protocol (STREAM-UNKNOWN-PROTOCOL).",
		Spec:    "KAHN agent events: AgentEvent base {ts, run_id, event}; asp-kahn.md §2.1, §2.3",
	}
	ruleB02 = &protocol.Rule{
		ID: "KA-B02", Level: protocol.Must, Party: protocol.Producer,
		Summary: "Each variant's required fields are present with their JSON types; step and the totals are integers and ok is a boolean.",
		Doc:     "The variant's required fields are present with their JSON types; step and the totals are integers (1.0 is not), ok is a boolean.",
		Spec:    "KAHN agent events: Event Variants; asp-kahn.md §2.1, §2.3",
	}
	ruleB03 = &protocol.Rule{
		ID: "KA-B03", Level: protocol.Must, Party: protocol.Producer,
		Summary:  "from/to are AgentStatus values, outcome is an AgentOutcome and result an AuditResult.",
		Doc:      "from/to are AgentStatus values, outcome an AgentOutcome, result an AuditResult.",
		Spec:     "KAHN agent events: Enums; asp-kahn.md §2.3",
		Profiles: protocol.Profiles{Lenient: "blocked_on_clarification is read as blocked-on-clarification and reported as KA-B03W", Strict: "blocked_on_clarification is not an AgentStatus"},
	}
	ruleB03W = &protocol.Rule{
		ID: "KA-B03W", Level: protocol.Should, Party: protocol.Producer,
		Summary:  "The status is spelled blocked-on-clarification, with hyphens (the diagram's underscores are a mermaid artefact).",
		Doc:      "The status \"blocked_on_clarification\" (underscores). Contradiction: the enum spells it blocked-on-clarification, the lifecycle diagram blocked_on_clarification (a mermaid identifier cannot hold hyphens). Lenient: read as the hyphenated status, with a warning. Strict: not an AgentStatus (KA-B03).",
		Spec:     "KAHN agent events: Enums vs Status Lifecycle; asp-kahn.md §2.3",
		Profiles: protocol.Profiles{Lenient: "reported for blocked_on_clarification, which is then read as the hyphenated status", Strict: "not checked: the underscored status breaks KA-B03"},
	}
	ruleB04 = &protocol.Rule{
		ID: "KA-B04", Level: protocol.Must, Party: protocol.Producer,
		Summary: "agent_id and checkpoint_id match their patterns, and agent_id is null only on audit_checkpoint.",
		Doc:     "agent_id and checkpoint_id match their patterns; agent_id is null only on audit_checkpoint.",
		Spec:    "KAHN agent events: ID Patterns, Special Case: Run-Scoped Audit; asp-kahn.md §2.3",
	}
	ruleB05 = &protocol.Rule{
		ID: "KA-B05", Level: protocol.Info, Party: protocol.Producer,
		Summary: "Fields outside the schema are allowed and passed through; they are noted once per agent.",
		Doc:     "Fields outside the schema are allowed (the builders never strip unknown keys); each is noted once per agent, as information.",
		Spec:    "KAHN agent events (unknown fields pass through); asp-kahn.md §2.3",
	}
	ruleB06 = &protocol.Rule{
		ID: "KA-B06", Level: protocol.Must, Party: protocol.Producer,
		Summary: "output_summary has at most 2048 characters and convergence_score lies in [0,1].",
		Doc:     "output_summary has at most 2048 characters; convergence_score is within [0,1].",
		Spec:    "KAHN agent events: Event Variants, convergence_score; asp-kahn.md §2.3",
	}
	ruleB06W = &protocol.Rule{
		ID: "KA-B06W", Level: protocol.Should, Party: protocol.Producer,
		Summary: "Durations and totals are not negative and evidence stays under 1 KB [INFERRED].",
		Doc:     "Durations and totals are not negative, evidence stays under 1 KB [INFERRED limits].",
		Spec:    "asp-kahn.md §2.3 (KA-B06, [INFERRED] limits)",
	}
	ruleS01 = &protocol.Rule{
		ID: "KA-S01", Level: protocol.Must, Party: protocol.Producer,
		Summary: "step is 0 or more and never decreases within (run_id, agent_id).",
		Doc:     "step is >= 0 and never decreases within (run_id, agent_id).",
		Spec:    "KAHN agent events: ID Patterns (step monotonic within (run_id, agent_id)); asp-kahn.md §2.3",
	}
	ruleS01W = &protocol.Rule{
		ID: "KA-S01W", Level: protocol.Should, Party: protocol.Producer,
		Summary: "Each agent_transition of an agent has a higher step than the previous one [INFERRED].",
		Doc:     "Two agent_transition events of one agent share a step [INFERRED: steps look strictly increasing across transitions, while a transition and its tool_invocation share one].",
		Spec:    "asp-kahn.md §2.3 (KA-S01, [INFERRED])",
	}
	ruleS02 = &protocol.Rule{
		ID: "KA-S02", Level: protocol.Must, Party: protocol.Producer,
		Summary:  "Each agent_transition (from, to) is an edge of the status lifecycle.",
		Doc:      "(from, to) is one of the nine edges of the status lifecycle.",
		Spec:     "KAHN agent events: Status Lifecycle; asp-kahn.md §2.2, §2.3",
		Profiles: protocol.Profiles{Lenient: "a move to failed from any status but converged is KA-S02W, not KA-S02", Strict: "only thinking → failed reaches failed; any other move to failed breaks it"},
	}
	ruleS02W = &protocol.Rule{
		ID: "KA-S02W", Level: protocol.Should, Party: protocol.Producer,
		Summary:  "A move to failed from a status other than thinking is not drawn in the lifecycle (accepted by the lenient profile).",
		Doc:      "A move to failed from a status other than thinking. The lifecycle diagram draws only thinking → failed, but the outcome \"aborted\" (timeout, kill, operator) ends agents in any status. Lenient: a warning. Strict: KA-S02.",
		Spec:     "KAHN agent events: Status Lifecycle, agent_outcome aborted; asp-kahn.md §2.2",
		Profiles: protocol.Profiles{Lenient: "reported for a move to failed from a status other than thinking", Strict: "not checked: such a move breaks KA-S02"},
	}
	ruleS03 = &protocol.Rule{
		ID: "KA-S03", Level: protocol.Must, Party: protocol.Producer,
		Summary: "Each agent_transition starts in the status the agent's previous transition ended in.",
		Doc:     "Each transition starts where the agent's previous one ended, and the first after the agent's agent_run_start at thinking (the diagram's [*] → thinking, graded like its other edges).",
		Spec:    "KAHN agent events: Status Lifecycle; asp-kahn.md §2.3",
	}
	ruleS03W = &protocol.Rule{
		ID: "KA-S03W", Level: protocol.Should, Party: protocol.Producer,
		Summary: "The first agent_transition recorded for an agent without a recorded agent_run_start starts at thinking.",
		Doc:     "The diagram's [*] → thinking, for an agent whose agent_run_start the recording does not hold: a SHOULD, weaker than KA-S03, because the recording may have begun after the agent's first transitions, so the first transition seen need not be its first. After a recorded agent_run_start a first transition from elsewhere is KA-S03 (MUST).",
		Spec:    "KAHN agent events: Status Lifecycle ([*] → thinking); asp-kahn.md §2.3",
	}
	ruleS04 = &protocol.Rule{
		ID: "KA-S04", Level: protocol.Must, Party: protocol.Producer,
		Summary: "No agent_transition follows converged or failed.",
		Doc:     "No agent_transition after converged or failed.",
		Spec:    "KAHN agent events: Status Lifecycle (converged, failed → [*]); asp-kahn.md §2.3",
	}
	ruleR01 = &protocol.Rule{
		ID: "KA-R01", Level: protocol.Should, Party: protocol.Producer,
		Summary: "An agent has one agent_run_start before its other events and one agent_run_end after them, per run [INFERRED].",
		Doc:     "One agent_run_start, first, and one agent_run_end, last, per (run_id, agent_id) [INFERRED from the names].",
		Spec:    "asp-kahn.md §2.3 ([INFERRED] from the event names)",
	}
	ruleR02 = &protocol.Rule{
		ID: "KA-R02", Level: protocol.Should, Party: protocol.Producer,
		Summary: "ts never decreases within (run_id, agent_id) [INFERRED].",
		Doc:     "ts does not go backwards within (run_id, agent_id): the emitter appends in order, so disorder means a merged or reordered file.",
		Spec:    "asp-kahn.md §2.3 ([INFERRED])",
	}
	ruleR03 = &protocol.Rule{
		ID: "KA-R03", Level: protocol.Should, Party: protocol.Producer,
		Summary: "outcome agrees with the last status and convergence_score (converged: status converged, score 1.0; partial: score below 1.0).",
		Doc:     "Outcome converged means the last status was converged and convergence_score (if given) is 1.0; partial means a score below 1.0.",
		Spec:    "KAHN agent events: convergence_score, Key Terms; asp-kahn.md §2.3",
	}
	ruleR04 = &protocol.Rule{
		ID: "KA-R04", Level: protocol.Should, Party: protocol.Producer,
		Summary: "agent_run_end totals match the tool_invocation and audit_checkpoint events of the stream [INFERRED].",
		Doc:     "agent_run_end totals match the events of the stream. Producers may abbreviate (the published example does), hence a warning; only agents whose agent_run_start was seen are counted.",
		Spec:    "KAHN agent events: agent_run_end; asp-kahn.md §2.3 ([INFERRED])",
	}
	ruleR05 = &protocol.Rule{
		ID: "KA-R05", Level: protocol.Should, Party: protocol.Producer,
		Summary: "A tool_invocation at step n follows a transition into tool_call at step n naming the same tool; reasons read <kind>[:<detail>] [INFERRED].",
		Doc:     "A tool_invocation at step n follows a transition into tool_call at step n whose reason \"tool_call:<name>\" names the same tool; reasons follow \"<kind>[:<detail>]\" [INFERRED grammar].",
		Spec:    "asp-kahn.md §2.3 ([INFERRED] from the example and the CI reason grammar)",
	}
	ruleR06 = &protocol.Rule{
		ID: "KA-R06", Level: protocol.Info, Party: protocol.Producer,
		Summary: "An audit_checkpoint with agent_id null is run-scoped: it is drawn on the run's lane and left out of the agents' counts.",
		Doc:     "An audit_checkpoint with agent_id null is run-scoped: it goes to the run's lane and stays out of the per-agent counts.",
		Spec:    "KAHN agent events: Special Case: Run-Scoped Audit; asp-kahn.md §2.3",
	}
)

var rules = []*protocol.Rule{ruleB01, ruleB02, ruleB03, ruleB03W, ruleB04, ruleB05, ruleB06, ruleB06W, ruleS01, ruleS01W, ruleS02, ruleS02W, ruleS03, ruleS03W, ruleS04, ruleR01, ruleR02, ruleR03, ruleR04, ruleR05, ruleR06}
