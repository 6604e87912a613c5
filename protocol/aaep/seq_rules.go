package aaep

// The rule table of the sequence checker.

import "github.com/aaep-tools/aaepkit/protocol"

// The SEQ-* rules, declared with their catalog IDs and levels (the NEG-*
// and TRN-* rules are in neg_rules.go); seqRuleTable lists them all. Where
// a level differs from the catalog's leading keyword, its Doc says why.
// Companion rules that the catalog describes inside another rule have
// their own IDs, because a rule has one level: SEQ-EVENT-ID-REDELIVERED
// (the INFO half of SEQ-EVENT-ID-UNIQUE), SEQ-SESSION-INCOMPLETE (the
// "incomplete" half of SEQ-TERMINAL-PRESENT), SEQ-TIMESTAMP-BACKDATED (the
// heuristic half of SEQ-TIMESTAMP-NOT-FUTURE) and SEQ-STREAM-POSITION-BYTES
// (the certain half of SEQ-STREAM-POSITION-CONTIGUOUS).
var (
	seqStartFirst = &protocol.Rule{
		ID: "SEQ-START-FIRST", Level: protocol.Must,
		Summary: "The first event of every session is agent.session.started.",
		Spec:    "AAEP §4.1.1, §4.5.1, A.7.1; aaep-rules.md §3.1",
	}
	seqStartOnce = &protocol.Rule{
		ID: "SEQ-START-ONCE", Level: protocol.Must,
		Summary: "A session has exactly one agent.session.started.",
		Spec:    "AAEP §4.1.1, §4.5.1; aaep-rules.md §3.1",
	}
	seqTerminalPresent = &protocol.Rule{
		ID: "SEQ-TERMINAL-PRESENT", Level: protocol.Must,
		Summary:  "A session ends with a terminal event (completed, errored or cancelled); strict profile: reported when the producer closed the subscription with the session open.",
		Doc:      "Either side may close a subscription at any time (§5.8): a session cut off by a close, a disconnect or the end of the recording is unfinished (SEQ-SESSION-INCOMPLETE). Strict only: the producer closed the subscription itself while the session was open (neg.go, sessionShouldHaveEnded).",
		Spec:     "AAEP §4.1, §4.5.1, §9.3.1(2); aaep-rules.md §3.1",
		Profiles: protocol.Profiles{Lenient: "not checked: a session cut off by a close, a disconnect or the end of the recording is SEQ-SESSION-INCOMPLETE", Strict: "reported when the producer closed the subscription (its own subscription.close) with the session open"},
	}
	seqSessionIncomplete = &protocol.Rule{
		ID: "SEQ-SESSION-INCOMPLETE", Level: protocol.Info,
		Summary: "The recording ends (stream stopped, subscription closed by either side, connection dropped) before the session's terminal event: the session is unfinished, not in violation.",
		Spec:    "AAEP §4.1, §4.5.1, §5.8; aaep-rules.md §3.1 (the \"incomplete\" half of SEQ-TERMINAL-PRESENT)",
	}
	seqTerminalOnce = &protocol.Rule{
		ID: "SEQ-TERMINAL-ONCE", Level: protocol.Must,
		Summary: "A session has at most one terminal event; completed never follows errored or cancelled.",
		Spec:    "AAEP §4.1.2, §4.5.1, A.8.2; aaep-rules.md §3.1",
	}
	seqNothingAfterTerminal = &protocol.Rule{
		ID: "SEQ-NOTHING-AFTER-TERMINAL", Level: protocol.Must,
		Summary: "No event of a session follows its terminal event.",
		Spec:    "AAEP §4.5.1, A.1, A.8.3; aaep-rules.md §3.1",
	}
	seqSessionIDReuse = &protocol.Rule{
		ID: "SEQ-SESSION-ID-REUSE", Level: protocol.Must,
		Summary: "A new session.started never reuses the session_id of a finished session.",
		Spec:    "AAEP §3.2.4; aaep-rules.md §3.1",
	}
	seqHandoffEnd = &protocol.Rule{
		ID: "SEQ-HANDOFF-END", Level: protocol.Info,
		Summary: "After handoff.requested (or state handing_off) only state changes and the terminal event are expected.",
		Spec:    "AAEP §4.4.3, A.2; aaep-rules.md §3.1",
	}
	seqA7Tables = &protocol.Rule{
		ID: "SEQ-A7-TABLES", Level: protocol.Info,
		Summary:  "Events follow the predecessors of the Appendix A.7 tables (tool.invoked, output.streaming, awaiting.confirmation); strict profile only.",
		Doc:      "Strict profile only (the catalog calls it an optional strict mode).",
		Spec:     "AAEP A.7; aaep-rules.md §3.1",
		Profiles: protocol.Profiles{Lenient: "not checked (the catalog calls it an optional strict mode)", Strict: "reported"},
	}
	seqEventIDUnique = &protocol.Rule{
		ID: "SEQ-EVENT-ID-UNIQUE", Level: protocol.Must,
		Summary: "Two different events of one producer stream (one source) never share an event_id.",
		Spec:    "AAEP §3.2.3, §8, §9.5.2(6); aaep-rules.md §3.2",
	}
	seqEventIDRedelivered = &protocol.Rule{
		ID: "SEQ-EVENT-ID-REDELIVERED", Level: protocol.Info,
		Summary: "An identical repeat of an event on the same source is at-least-once redelivery: noted and ignored.",
		Spec:    "AAEP §3.2.3, §8; aaep-rules.md §3.2 (the INFO half of SEQ-EVENT-ID-UNIQUE)",
	}
	seqTimestampOrder = &protocol.Rule{
		ID: "SEQ-TIMESTAMP-ORDER", Level: protocol.Must,
		Summary: "Timestamps (as instants) do not decrease within a session, per producer.",
		Spec:    "AAEP §3.2.5; aaep-rules.md §3.2",
	}
	seqTimestampNotFuture = &protocol.Rule{
		ID: "SEQ-TIMESTAMP-NOT-FUTURE", Level: protocol.Must,
		Summary: "An event's timestamp is not after its capture time, beyond a skew allowance of 5 minutes (no future-dating).",
		Doc:     "The catalog's rule holds a MUST (future-dating) and a heuristic (backdating): the heuristic is SEQ-TIMESTAMP-BACKDATED.",
		Spec:    "AAEP §3.2.5; aaep-rules.md §3.2",
	}
	seqTimestampBackdated = &protocol.Rule{
		ID: "SEQ-TIMESTAMP-BACKDATED", Level: protocol.Should,
		Summary: "An event's timestamp is not implausibly before its capture time (more than an hour): a backdating heuristic.",
		Doc:     "A heuristic, so SHOULD: an event stamped more than an hour before it was captured is suspect of backdating (§3.2.5), but a replay of an old capture or a relay that stored events shows the same delay.",
		Spec:    "AAEP §3.2.5; aaep-rules.md §3.2 (the heuristic half of SEQ-TIMESTAMP-NOT-FUTURE)",
	}
	seqSeqnoAllOrNone = &protocol.Rule{
		ID: "SEQ-SEQNO-ALL-OR-NONE", Level: protocol.Must,
		Summary: "sequence_number appears on every event of a session or on none.",
		Spec:    "AAEP §3.4.1; aaep-rules.md §3.2",
	}
	seqSeqnoZero = &protocol.Rule{
		ID: "SEQ-SEQNO-ZERO", Level: protocol.Must,
		Summary: "When used, session.started has sequence_number 0.",
		Spec:    "AAEP §3.4.1; aaep-rules.md §3.2",
	}
	seqSeqnoIncrement = &protocol.Rule{
		ID: "SEQ-SEQNO-INCREMENT", Level: protocol.Must,
		Summary: "Each event's sequence_number is the previous one plus one: no gaps, no repeats.",
		Doc:     "Gaps on a filtered or rate-limited subscription are not reported (the specification is silent on them).",
		Spec:    "AAEP §3.4.1, §9.5.2(5); aaep-rules.md §3.2",
	}
	seqDeliveryOrder = &protocol.Rule{
		ID: "SEQ-DELIVERY-ORDER", Level: protocol.Must,
		Summary: "Events of a session arrive in emission order (sequence_number order).",
		Spec:    "AAEP §8, §3.2.5; aaep-rules.md §3.2",
	}
	seqStateFirstIdle = &protocol.Rule{
		ID: "SEQ-STATE-FIRST-IDLE", Level: protocol.Must,
		Summary:  "The first state.changed of a session leaves idle (lenient: or the implicit state of the events before it).",
		Spec:     "AAEP §4.2.1; aaep-rules.md §3.3",
		Profiles: protocol.Profiles{Lenient: "the first state.changed may leave the implicit state of the events before it (§4.2.1's escape clause)", Strict: "the first state.changed leaves idle"},
	}
	seqStateChain = &protocol.Rule{
		ID: "SEQ-STATE-CHAIN", Level: protocol.Must,
		Summary:  "Each from_state equals the previous to_state or, in the lenient profile, the implicit state of intervening events.",
		Spec:     "AAEP §4.2.1, schema desc.; aaep-rules.md §3.3",
		Profiles: protocol.Profiles{Lenient: "from_state may be the implicit state of intervening events (§4.2.1's escape clause)", Strict: "from_state is the previous to_state: the explicit chain only"},
	}
	seqStateAwaitingEnter = &protocol.Rule{
		ID: "SEQ-STATE-AWAITING-ENTER", Level: protocol.Should,
		Summary: "A state change to awaiting_input comes at or before each awaiting.confirmation or clarification.",
		Doc:     "A MUST in informative Appendix A that §4.6 and §5.11 violate: SHOULD.",
		Spec:    "AAEP A.4; aaep-rules.md §3.3",
	}
	seqStateAwaitingExit = &protocol.Rule{
		ID: "SEQ-STATE-AWAITING-EXIT", Level: protocol.Must,
		Summary:  "A resolved confirmation or clarification is followed by a follow-up event (strict: a state change from awaiting_input first).",
		Spec:     "AAEP A.4, §9.4.1(9), §6.1(2); aaep-rules.md §3.3",
		Profiles: protocol.Profiles{Lenient: "any follow-up event after the resolution (§9.4.1(9))", Strict: "a state change away from awaiting_input first (A.4)"},
	}
	seqStateCallingTool = &protocol.Rule{
		ID: "SEQ-STATE-CALLING-TOOL", Level: protocol.Should,
		Summary: "The state during tool execution is calling_tool.",
		Spec:    "AAEP A.3; aaep-rules.md §3.3",
	}
	seqStateL1Coverage = &protocol.Rule{
		ID: "SEQ-STATE-L1-COVERAGE", Level: protocol.Should,
		Summary: "Sessions that invoke tools or stream output change state to or from calling_tool and writing_output.",
		Doc:     "A heuristic for the Level 1 MUST: SHOULD.",
		Spec:    "AAEP §9.3.1(3); aaep-rules.md §3.3",
	}
	seqToolPairPreceded = &protocol.Rule{
		ID: "SEQ-TOOL-PAIR-PRECEDED", Level: protocol.Must,
		Summary: "Every tool.completed is preceded by an open matching tool.invoked.",
		Spec:    "AAEP §4.5.2, A.3, A.8.1; aaep-rules.md §3.4",
	}
	seqToolPairCompleted = &protocol.Rule{
		ID: "SEQ-TOOL-PAIR-COMPLETED", Level: protocol.Must,
		Summary: "Every tool.invoked gets a tool.completed before the terminal event.",
		Spec:    "AAEP A.3, §4.3.2, §9.3.1(5); aaep-rules.md §3.4",
	}
	seqToolCompleteOnce = &protocol.Rule{
		ID: "SEQ-TOOL-COMPLETE-ONCE", Level: protocol.Must,
		Summary: "Each invocation gets exactly one completion.",
		Spec:    "AAEP A.3; aaep-rules.md §3.4",
	}
	seqToolCallIDUnique = &protocol.Rule{
		ID: "SEQ-TOOL-CALL-ID-UNIQUE", Level: protocol.Must,
		Summary: "tool_call_id is unique among a session's invocations.",
		Spec:    "AAEP §4.3.1; aaep-rules.md §3.4",
	}
	seqToolCallIDEcho = &protocol.Rule{
		ID: "SEQ-TOOL-CALL-ID-ECHO", Level: protocol.Must,
		Summary: "A completion carries the tool_call_id of its invocation.",
		Spec:    "AAEP §4.3.1, §4.5.2; aaep-rules.md §3.4",
	}
	seqToolNameMatch = &protocol.Rule{
		ID: "SEQ-TOOL-NAME-MATCH", Level: protocol.Must,
		Summary: "A completion names the same tool as its invocation.",
		Spec:    "AAEP §4.3.2; aaep-rules.md §3.4",
	}
	seqToolIDShould = &protocol.Rule{
		ID: "SEQ-TOOL-ID-SHOULD", Level: protocol.Should,
		Summary: "Concurrent invocations of a tool carry tool_call_id.",
		Spec:    "AAEP §4.5.2; aaep-rules.md §3.4",
	}
	seqToolBeforeState = &protocol.Rule{
		ID: "SEQ-TOOL-BEFORE-STATE", Level: protocol.Must,
		Summary: "tool.completed precedes the state change that leaves calling_tool.",
		Spec:    "AAEP §4.3.2; aaep-rules.md §3.4",
	}
	seqToolAvailable = &protocol.Rule{
		ID: "SEQ-TOOL-AVAILABLE", Level: protocol.Info,
		Summary: "Invoked tools are in session.started's tools_available when that list is given.",
		Spec:    "AAEP §4.1.1; aaep-rules.md §3.4",
	}
	seqCompletedCounts = &protocol.Rule{
		ID: "SEQ-COMPLETED-COUNTS", Level: protocol.Info,
		Summary: "completed.tool_invocations_count and the duration_ms fields agree with the session's events.",
		Spec:    "AAEP schema descriptions; aaep-rules.md §3.4",
	}
	seqIrrevNeedsConf = &protocol.Rule{
		ID: "SEQ-IRREV-NEEDS-CONF", Level: protocol.Must,
		Summary: "An irreversible tool.invoked is preceded by an unused awaiting.confirmation in its session.",
		Spec:    "AAEP §4.3.1, §9.4.1(2), A.8.4; aaep-rules.md §3.5",
	}
	seqIrrevNeedsAccept = &protocol.Rule{
		ID: "SEQ-IRREV-NEEDS-ACCEPT", Level: protocol.Must,
		Summary:  "That confirmation was resolved as accept before the irreversible tool.invoked.",
		Doc:      "Lenient: a defaulted accept (§4.5.3, §6.1) authorizes; strict: only an accept reply (§4.3.1).",
		Spec:     "AAEP §4.3.1, §4.5.3, §6.1(1), A.7.4; aaep-rules.md §3.5",
		Profiles: protocol.Profiles{Lenient: "a defaulted accept (the timeout's default_decision) authorizes the action (§4.5.3, §6.1)", Strict: "only an accept reply authorizes an irreversible action (§4.3.1)"},
	}
	seqConfOneAction = &protocol.Rule{
		ID: "SEQ-CONF-ONE-ACTION", Level: protocol.Must,
		Summary: "One accepted confirmation authorizes exactly one action: the one it names (tool_call_id, tool or action text), else the next irreversible one by order.",
		Spec:    "AAEP §4.3.1, §6.2.2, §6.3.4(3); aaep-rules.md §3.5",
	}
	seqConfBlocking = &protocol.Rule{
		ID: "SEQ-CONF-BLOCKING", Level: protocol.Must,
		Summary: "No tool.invoked for the confirmed action before the confirmation is resolved.",
		Spec:    "AAEP §6.1(1,3), §4.4.1; aaep-rules.md §3.5",
	}
	seqConfNoActionAfterReject = &protocol.Rule{
		ID: "SEQ-CONF-NO-ACTION-AFTER-REJECT", Level: protocol.Must,
		Summary: "No tool.invoked for an action whose confirmation was rejected or cancelled.",
		Spec:    "AAEP §4.5.3, §6.1, A.4, A.8.5; aaep-rules.md §3.5",
	}
	seqConfRejectFollowup = &protocol.Rule{
		ID: "SEQ-CONF-REJECT-FOLLOWUP", Level: protocol.Must,
		Summary:  "A reject is followed by an event reflecting the cancelled action (strict: a state change to thinking or deciding).",
		Spec:     "AAEP §6.1(2), §4.5.3; aaep-rules.md §3.5",
		Profiles: protocol.Profiles{Lenient: "any state change, output, handoff or cancel after the reject", Strict: "a state change to thinking or deciding, or a cancel (§4.5.3, §6.1(2))"},
	}
	seqConfAcceptInvokes = &protocol.Rule{
		ID: "SEQ-CONF-ACCEPT-INVOKES", Level: protocol.Must,
		Summary: "An accept is followed by the action's tool.invoked before the terminal event.",
		Spec:    "AAEP §4.5.3, A.4; aaep-rules.md §3.5",
	}
	seqConfTimeoutDefault = &protocol.Rule{
		ID: "SEQ-CONF-TIMEOUT-DEFAULT", Level: protocol.Must,
		Summary: "Without a valid reply by the timeout, default_decision applies: no action after a default reject.",
		Spec:    "AAEP §6.4, §6.1; aaep-rules.md §3.5",
	}
	seqConfNoDupPending = &protocol.Rule{
		ID: "SEQ-CONF-NO-DUP-PENDING", Level: protocol.Must,
		Summary: "No second confirmation for the same action while the first is unresolved.",
		Spec:    "AAEP §6.1(4); aaep-rules.md §3.5",
	}
	seqReplyTokenUnique = &protocol.Rule{
		ID: "SEQ-REPLY-TOKEN-UNIQUE", Level: protocol.Must,
		Summary: "reply_token values are never reused across confirmations and clarifications.",
		Spec:    "AAEP §6.2.2, Guide §8; aaep-rules.md §3.5",
	}
	seqReplyKnownToken = &protocol.Rule{
		ID: "SEQ-REPLY-KNOWN-TOKEN", Level: protocol.Must,
		Summary: "A reply's token matches an outstanding blocking event of its kind.",
		Spec:    "AAEP §6.3.4(2,3); aaep-rules.md §3.5",
	}
	seqReplyFirstWins = &protocol.Rule{
		ID: "SEQ-REPLY-FIRST-WINS", Level: protocol.Must,
		Summary: "Only the first valid reply for a token counts, and the producer follows it.",
		Spec:    "AAEP §6.3.5, §6.7.1, §5.9; aaep-rules.md §3.5",
	}
	seqReplyNotExpired = &protocol.Rule{
		ID: "SEQ-REPLY-NOT-EXPIRED", Level: protocol.Must,
		Summary: "A reply is decided (its timestamp) after its event and before the event's timestamp plus timeout_seconds.",
		Spec:    "AAEP §6.3.4(4), §10.2 T2; aaep-rules.md §3.5",
	}
	seqReplyDecisionAllowed = &protocol.Rule{
		ID: "SEQ-REPLY-DECISION-ALLOWED", Level: protocol.Must,
		Summary: "A confirmation reply's decision is in the confirmation's allowed_replies.",
		Doc:     "Prose over schema: a custom decision listed in allowed_replies is allowed here (§6.3.4(6)); the reply schema's accept/reject enum is MSG-CONF-REPLY-SCHEMA's concern.",
		Spec:    "AAEP §6.3.4(6); aaep-rules.md §3.5",
	}
	seqReplyAfterCancel = &protocol.Rule{
		ID: "SEQ-REPLY-AFTER-CANCEL", Level: protocol.Must,
		Summary: "Replies to a cancelled (superseded) prompt are invalid.",
		Spec:    "AAEP §6.8; aaep-rules.md §3.5",
	}
	seqReplyModified = &protocol.Rule{
		ID: "SEQ-REPLY-MODIFIED", Level: protocol.Info,
		Summary: "An accept with modified_action counts as a reject for producers without support for modified actions.",
		Doc:     "The producer's support for modified_action is not recorded anywhere: INFO.",
		Spec:    "AAEP §6.3.2; aaep-rules.md §3.5",
	}
	seqReplyUnobserved = &protocol.Rule{
		ID: "SEQ-REPLY-UNOBSERVED", Level: protocol.Info,
		Summary: "A confirmation or clarification was resolved by a reply the recording does not carry (a passive recorder): the reply rules are not judged for it, and the inferred resolution is noted once per session.",
		Doc:     "Not in the catalog: a recording that carries no replies on a subscription (a passive recorder) cannot show what the rules of scope R need; the resolution inferred from the producer's behaviour is noted instead of a MUST violation (seq_unseen.go).",
		Spec:    "AAEP Ch. 6 (replies); not in the catalog: the scope-R rules of aaep-rules.md §3.5 need the replies",
	}
	seqReplyAuto = &protocol.Rule{
		ID: "SEQ-REPLY-AUTO", Level: protocol.Info,
		Summary: "Replies decided automatically (decided_by \"auto:...\") are surfaced.",
		Spec:    "AAEP §4.4.1, §10.1.3; aaep-rules.md §3.5",
	}
	seqClarResponseType = &protocol.Rule{
		ID: "SEQ-CLAR-RESPONSE-TYPE", Level: protocol.Must,
		Summary: "A clarification reply's response fits one of the accepted_response_kinds (and choices).",
		Spec:    "AAEP §6.5.2, §6.5.5; aaep-rules.md §3.5",
	}
	seqClarBlocking = &protocol.Rule{
		ID: "SEQ-CLAR-BLOCKING", Level: protocol.Must,
		Summary: "The producer leaves awaiting_input only after a valid clarification reply or the timeout.",
		Spec:    "AAEP §4.4.2, §6.1; aaep-rules.md §3.5",
	}
	seqConfCountdown = &protocol.Rule{
		ID: "SEQ-CONF-COUNTDOWN", Level: protocol.Should,
		Summary: "For timeouts over 60 s, progress.updated at about 50% and 10% of the time remaining.",
		Spec:    "AAEP §6.4.3; aaep-rules.md §3.5",
	}
	seqConfTimeoutRange = &protocol.Rule{
		ID: "SEQ-CONF-TIMEOUT-RANGE", Level: protocol.Info,
		Summary: "timeout_seconds lies within the §6.4.2 recommendations.",
		Spec:    "AAEP §6.4.2; aaep-rules.md §3.5",
	}
	seqStreamOneComplete = &protocol.Rule{
		ID: "SEQ-STREAM-ONE-COMPLETE", Level: protocol.Must,
		Summary: "Each output has exactly one complete:true chunk before the terminal event.",
		Spec:    "AAEP §4.5.4, A.6; aaep-rules.md §3.6",
	}
	seqStreamAfterComplete = &protocol.Rule{
		ID: "SEQ-STREAM-AFTER-COMPLETE", Level: protocol.Must,
		Summary: "No chunk of an output follows its complete:true chunk.",
		Spec:    "AAEP §4.5.4, A.6, A.8.6; aaep-rules.md §3.6",
	}
	seqStreamPositionMonotonic = &protocol.Rule{
		ID: "SEQ-STREAM-POSITION-MONOTONIC", Level: protocol.Must,
		Summary: "Chunk positions of an output strictly increase (equal only after an empty chunk).",
		Doc:     "Positions follow §4.3.3's normative bullet (offset since the start of the current output_id), not its table (\"within the session's total output\"); code points, not UTF-16 units.",
		Spec:    "AAEP A.6, A.8.7, schema desc.; aaep-rules.md §3.6",
	}
	seqStreamPositionBytes = &protocol.Rule{
		ID: "SEQ-STREAM-POSITION-BYTES", Level: protocol.Must,
		Summary: "Chunk positions count characters, not UTF-8 bytes: a position that is the previous one plus the previous chunk's byte length, where bytes and characters differ, is wrong.",
		Doc:     "Derived from \"total character offset\"; the catalog's default is a warning. The certain half of SEQ-STREAM-POSITION-CONTIGUOUS: positions counted in UTF-8 bytes where bytes differ from characters in every reading.",
		Spec:    "AAEP §4.3.3; aaep-rules.md §3.6 (the certain half of SEQ-STREAM-POSITION-CONTIGUOUS)",
	}
	seqStreamPositionContiguous = &protocol.Rule{
		ID: "SEQ-STREAM-POSITION-CONTIGUOUS", Level: protocol.Should,
		Summary:  "The first chunk is at position 0 and each next one at the previous position plus the previous chunk's length in code points.",
		Spec:     "AAEP §4.3.3 (\"total character offset\"), Guide §5.1; aaep-rules.md §3.6",
		Profiles: protocol.Profiles{Lenient: "a position counted in UTF-16 code units (the other reading of \"character\") is accepted", Strict: "positions count code points; UTF-16 code units are reported"},
	}
)

var seqRuleTable = []*protocol.Rule{
	seqStartFirst, seqStartOnce, seqTerminalPresent, seqSessionIncomplete, seqTerminalOnce, seqNothingAfterTerminal, seqSessionIDReuse, seqHandoffEnd, seqA7Tables, seqEventIDUnique, seqEventIDRedelivered, seqTimestampOrder, seqTimestampNotFuture, seqTimestampBackdated, seqSeqnoAllOrNone, seqSeqnoZero, seqSeqnoIncrement, seqDeliveryOrder, seqStateFirstIdle, seqStateChain, seqStateAwaitingEnter, seqStateAwaitingExit, seqStateCallingTool, seqStateL1Coverage, seqToolPairPreceded, seqToolPairCompleted, seqToolCompleteOnce, seqToolCallIDUnique, seqToolCallIDEcho, seqToolNameMatch, seqToolIDShould, seqToolBeforeState, seqToolAvailable, seqCompletedCounts, seqIrrevNeedsConf, seqIrrevNeedsAccept, seqConfOneAction, seqConfBlocking, seqConfNoActionAfterReject, seqConfRejectFollowup, seqConfAcceptInvokes, seqConfTimeoutDefault, seqConfNoDupPending, seqReplyTokenUnique, seqReplyKnownToken, seqReplyFirstWins, seqReplyNotExpired, seqReplyDecisionAllowed, seqReplyAfterCancel, seqReplyModified, seqReplyUnobserved, seqReplyAuto, seqClarResponseType, seqClarBlocking, seqConfCountdown, seqConfTimeoutRange, seqStreamOneComplete, seqStreamAfterComplete, seqStreamPositionMonotonic, seqStreamPositionBytes, seqStreamPositionContiguous,
	negTypesWithheld, negResponseRequired, negNoEventsBeforeAccept, negHonoredRate, negHonoredLanguages, negHonoredCoalesce, negHonoredFilters, negHonoredOther, negVersion, negSignedManifest, negSignedManifestContent, negL2DeclaresReply, negRate, negCriticalExempt, negFilterExclude, negFilterInclude, negCoalesceHint, negNoConfWithoutReplyCap, negVerbosity, negLanguage, negRenegResponse, negRenegApply, negRenegRejectEnds, negCloseStops, negClosePendingDefault, negSubidValid, negResolutionNotice,
	trnSSEID, trnJSONRPCMethod, trnNoFailureReason,
}

// seqRules returns the rules of the sequence checker.
func seqRules() []protocol.Rule { return protocol.Values(seqRuleTable) }
