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
		ID: "SEQ-START-FIRST", Level: protocol.Must, Party: protocol.Producer,
		Summary: "The first event of every session is agent.session.started.",
		Doc:     "MUST in §4.1.1 and §4.5.1. Judged once per session, at the first event its primary source (the first subscription that carried it) delivers: anything but session.started there is reported. A session seen only from its middle, e.g. a recording started late, gets this finding too, since the recording cannot tell a late start from a missing event. Not reported for a subscription whose handshake filters session.started out (NEG-TYPES-WITHHELD).",
		Spec:    "AAEP §4.1.1, §4.5.1, A.7.1; aaep-rules.md §3.1",
	}
	seqStartOnce = &protocol.Rule{
		ID: "SEQ-START-ONCE", Level: protocol.Must, Party: protocol.Producer,
		Summary: "A session has exactly one agent.session.started.",
		Doc:     "MUST in §4.1.1 and §4.5.1. A second session.started on the session's primary source while the session is open is reported; one after the session ended is SEQ-SESSION-ID-REUSE instead. An identical repeat with the same event_id is redelivery (SEQ-EVENT-ID-REDELIVERED) and is not judged again.",
		Spec:    "AAEP §4.1.1, §4.5.1; aaep-rules.md §3.1",
	}
	seqTerminalPresent = &protocol.Rule{
		ID: "SEQ-TERMINAL-PRESENT", Level: protocol.Must, Party: protocol.Producer,
		Summary:  "A session ends with a terminal event (completed, errored or cancelled); strict profile: reported when the producer closed the subscription with the session open.",
		Doc:      "Either side may close a subscription at any time (§5.8): a session cut off by a close, a disconnect or the end of the recording is unfinished (SEQ-SESSION-INCOMPLETE). Strict only: the producer closed the subscription itself while the session was open (neg.go, sessionShouldHaveEnded).",
		Spec:     "AAEP §4.1, §4.5.1, §9.3.1(2); aaep-rules.md §3.1",
		Profiles: protocol.Profiles{Lenient: "not checked: a session cut off by a close, a disconnect or the end of the recording is SEQ-SESSION-INCOMPLETE", Strict: "reported when the producer closed the subscription (its own subscription.close) with the session open"},
	}
	seqSessionIncomplete = &protocol.Rule{
		ID: "SEQ-SESSION-INCOMPLETE", Level: protocol.Info, Party: protocol.Either,
		Summary: "The recording ends (stream stopped, subscription closed by either side, connection dropped) before the session's terminal event: the session is unfinished, not in violation.",
		Doc:     "INFO, because a session without its terminal event is not by itself a violation: the catalog asks for \"incomplete\" rather than an error when the recording was cut off or either side closed the subscription (§5.8). Reported at the end of the stream for every session still open, once, with its last state; the strict profile reports SEQ-TERMINAL-PRESENT instead when the producer itself closed the subscription.",
		Spec:    "AAEP §4.1, §4.5.1, §5.8; aaep-rules.md §3.1 (the \"incomplete\" half of SEQ-TERMINAL-PRESENT)",
	}
	seqTerminalOnce = &protocol.Rule{
		ID: "SEQ-TERMINAL-ONCE", Level: protocol.Must, Party: protocol.Producer,
		Summary: "A session has at most one terminal event; completed never follows errored or cancelled.",
		Doc:     "MUST in §4.1.2 and §4.5.1. Reported when a completed, errored or cancelled event arrives for a session that already ended; the same terminal event (same event_id) arriving again, on another subscription or redelivered, is not a second one. Ended sessions are remembered by ID in a bounded list, so a terminal event long after many other sessions closed may go unnoticed.",
		Spec:    "AAEP §4.1.2, §4.5.1, A.8.2; aaep-rules.md §3.1",
	}
	seqNothingAfterTerminal = &protocol.Rule{
		ID: "SEQ-NOTHING-AFTER-TERMINAL", Level: protocol.Must, Party: protocol.Producer,
		Summary: "No event of a session follows its terminal event.",
		Doc:     "MUST in §4.5.1 and A.8.3. Reported at the first non-terminal event of a session after its terminal event on the same source; session.started after the end is SEQ-SESSION-ID-REUSE, a second terminal event SEQ-TERMINAL-ONCE. Events emitted before the end that reach another subscription late (a session carried by several sources) are not late, and ended sessions are remembered in a bounded list.",
		Spec:    "AAEP §4.5.1, A.1, A.8.3; aaep-rules.md §3.1",
	}
	seqSessionIDReuse = &protocol.Rule{
		ID: "SEQ-SESSION-ID-REUSE", Level: protocol.Must, Party: protocol.Producer,
		Summary: "A new session.started never reuses the session_id of a finished session.",
		Doc:     "MUST: §3.2.4 makes session_id unique across a producer's sessions. Reported when session.started arrives for a session_id whose session already ended (its terminal event was processed); the new session is then followed as a fresh one. A redelivered copy of the old session.started (same event_id and content) is redelivery, not reuse. Only sessions still in the bounded list of ended IDs are recognised.",
		Spec:    "AAEP §3.2.4; aaep-rules.md §3.1",
	}
	seqHandoffEnd = &protocol.Rule{
		ID: "SEQ-HANDOFF-END", Level: protocol.Info, Party: protocol.Producer,
		Summary: "After handoff.requested (or state handing_off) only state changes and the terminal event are expected.",
		Doc:     "INFO: A.2 calls handing_off terminal-equivalent and the catalog only says what to expect after it. After handoff.requested or a state change to handing_off, the first event other than a state change, progress, tool completion or terminal event is noted, once per session.",
		Spec:    "AAEP §4.4.3, A.2; aaep-rules.md §3.1",
	}
	seqA7Tables = &protocol.Rule{
		ID: "SEQ-A7-TABLES", Level: protocol.Info, Party: protocol.Producer,
		Summary:  "Events follow the predecessors of the Appendix A.7 tables (tool.invoked, output.streaming, awaiting.confirmation); strict profile only.",
		Doc:      "Strict profile only (the catalog calls it an optional strict mode).",
		Spec:     "AAEP A.7; aaep-rules.md §3.1",
		Profiles: protocol.Profiles{Lenient: "not checked (the catalog calls it an optional strict mode)", Strict: "reported"},
	}
	seqEventIDUnique = &protocol.Rule{
		ID: "SEQ-EVENT-ID-UNIQUE", Level: protocol.Must, Party: protocol.Producer,
		Summary: "Two different events of one producer stream (one source) never share an event_id.",
		Doc:     "MUST in §3.2.3. Judged per source, because each subscription is its own producer emission stream (§9.5.2(6)) and the same event on two subscriptions shares its id legally, however its shape differs (§5.9). A repeated event_id with different content (its top-level members compared in any order) is reported, whether or not the first event's session is still open; an identical repeat is redelivery (SEQ-EVENT-ID-REDELIVERED). Memory is bounded: the most recent 32768 ids per run and up to 65536 per open session, so a repeat after that many others may go unnoticed.",
		Spec:    "AAEP §3.2.3, §8, §9.5.2(6); aaep-rules.md §3.2",
	}
	seqEventIDRedelivered = &protocol.Rule{
		ID: "SEQ-EVENT-ID-REDELIVERED", Level: protocol.Info, Party: protocol.Producer,
		Summary: "An identical repeat of an event on the same source is at-least-once redelivery: noted and ignored.",
		Doc:     "INFO: §8.2.4 allows at-least-once delivery and tells subscribers to de-duplicate by event_id, and real producers re-send their recent events to every new connection. An event whose event_id and content (top-level members in any order) repeat an earlier one on the same source is counted and judged no further by any rule, so a re-sent session.started is not SEQ-SESSION-ID-REUSE. The count is reported once per connection of the source, naming the reconnect that re-sent them when the capture recorded one.",
		Spec:    "AAEP §3.2.3, §8; aaep-rules.md §3.2 (the INFO half of SEQ-EVENT-ID-UNIQUE)",
	}
	seqTimestampOrder = &protocol.Rule{
		ID: "SEQ-TIMESTAMP-ORDER", Level: protocol.Must, Party: protocol.Producer,
		Summary: "Timestamps (as instants) do not decrease within a session, per producer.",
		Doc:     "MUST in §3.2.5. Timestamps are compared as instants, so different offsets of the same moment are equal. Each producer object of a session is compared with itself only: in a multi-agent session different producers' clocks may differ, where the catalog would warn. Events with unreadable timestamps (ENV-TIMESTAMP-*) are skipped, and only the session's primary source is followed.",
		Spec:    "AAEP §3.2.5; aaep-rules.md §3.2",
	}
	seqTimestampNotFuture = &protocol.Rule{
		ID: "SEQ-TIMESTAMP-NOT-FUTURE", Level: protocol.Must, Party: protocol.Producer,
		Summary: "An event's timestamp is not after its capture time, beyond a skew allowance of 5 minutes (no future-dating).",
		Doc:     "The catalog's rule holds a MUST (future-dating) and a heuristic (backdating): the heuristic is SEQ-TIMESTAMP-BACKDATED.",
		Spec:    "AAEP §3.2.5; aaep-rules.md §3.2",
	}
	seqTimestampBackdated = &protocol.Rule{
		ID: "SEQ-TIMESTAMP-BACKDATED", Level: protocol.Should, Party: protocol.Producer,
		Summary: "An event's timestamp is not implausibly before its capture time (more than an hour): a backdating heuristic.",
		Doc:     "A heuristic, so SHOULD: an event stamped more than an hour before it was captured is suspect of backdating (§3.2.5), but a replay of an old capture or a relay that stored events shows the same delay.",
		Spec:    "AAEP §3.2.5; aaep-rules.md §3.2 (the heuristic half of SEQ-TIMESTAMP-NOT-FUTURE)",
	}
	seqSeqnoAllOrNone = &protocol.Rule{
		ID: "SEQ-SEQNO-ALL-OR-NONE", Level: protocol.Must, Party: protocol.Producer,
		Summary: "sequence_number appears on every event of a session or on none.",
		Doc:     "MUST in §3.4.1. Judged per source: the first event of the session on that source decides whether it is numbered, and the first event that differs is reported, once per session and source. A sequence_number that is not an integer is ENV-SEQNO-TYPE's and is left out here.",
		Spec:    "AAEP §3.4.1; aaep-rules.md §3.2",
	}
	seqSeqnoZero = &protocol.Rule{
		ID: "SEQ-SEQNO-ZERO", Level: protocol.Must, Party: protocol.Producer,
		Summary: "When used, session.started has sequence_number 0.",
		Doc:     "MUST in §3.4.1. Reported when the first event of a session on a source is a numbered session.started whose sequence_number is not 0. A session first seen from its middle is not judged.",
		Spec:    "AAEP §3.4.1; aaep-rules.md §3.2",
	}
	seqSeqnoIncrement = &protocol.Rule{
		ID: "SEQ-SEQNO-INCREMENT", Level: protocol.Must, Party: protocol.Producer,
		Summary: "Each event's sequence_number is the previous one plus one: no gaps, no repeats.",
		Doc:     "Gaps on a filtered or rate-limited subscription are not reported (the specification is silent on them).",
		Spec:    "AAEP §3.4.1, §9.5.2(5); aaep-rules.md §3.2",
	}
	seqDeliveryOrder = &protocol.Rule{
		ID: "SEQ-DELIVERY-ORDER", Level: protocol.Must, Party: protocol.Producer,
		Summary: "Events of a session arrive in emission order (sequence_number order).",
		Doc:     "MUST: §8 makes the transport keep a session's events in emission order. Judged per source from sequence_number: a number that fills an earlier gap arrives out of order. Where the subscription filters or rate-limits (gaps expected), any number at or below one already seen is taken as late rather than repeated. Without sequence numbers the order cannot be judged. The other session rules judge the session in emission order, not delivery order (§3.4.1 makes sequence_number authoritative): while an event of the session's primary source is missing and gaps are not expected, the session's later events (and replies to its prompts) are held, up to 256 messages, and when the missing event arrives this finding says so and the session is judged in sequence_number order, so a producer that emitted in order gets no timestamp-order, tool-pairing or tool-before-state findings for the transport's reordering, while a timestamp that goes backwards in emission order is still SEQ-TIMESTAMP-ORDER's. A missing event that never comes (the hold fills, a connection changes, the stream ends) leaves the held events judged in number order and the gap to SEQ-SEQNO-INCREMENT (seq_order.go).",
		Spec:    "AAEP §8, §3.2.5; aaep-rules.md §3.2",
	}
	seqStateFirstIdle = &protocol.Rule{
		ID: "SEQ-STATE-FIRST-IDLE", Level: protocol.Must, Party: protocol.Producer,
		Summary:  "The first state.changed of a session leaves idle (lenient: or the implicit state of the events before it).",
		Doc:      "MUST in §4.2.1. The lenient profile accepts a first from_state equal to the implicit state of the events before it (a tool.invoked implies calling_tool, and so on), the reading under which the specification's own examples pass; the strict profile wants idle. A session seen from its middle is judged like any other; not reported when the subscription filters out the events the implicit state comes from.",
		Spec:     "AAEP §4.2.1; aaep-rules.md §3.3",
		Profiles: protocol.Profiles{Lenient: "the first state.changed may leave the implicit state of the events before it (§4.2.1's escape clause)", Strict: "the first state.changed leaves idle"},
	}
	seqStateChain = &protocol.Rule{
		ID: "SEQ-STATE-CHAIN", Level: protocol.Must, Party: protocol.Producer,
		Summary:  "Each from_state equals the previous to_state or, in the lenient profile, the implicit state of intervening events.",
		Doc:      "MUST in §4.2.1 and the schema description. Every state.changed after the first is compared with the previous explicit to_state and, in the lenient profile, with the implicit state of the events since (§4.2.1's escape clause); the strict profile follows the explicit chain only and so flags §4.6's own example. A state.changed without to_state leaves the state unknown and is EVT-SCHEMA's; not reported on subscriptions that filter out the events the implicit state comes from.",
		Spec:     "AAEP §4.2.1, schema desc.; aaep-rules.md §3.3",
		Profiles: protocol.Profiles{Lenient: "from_state may be the implicit state of intervening events (§4.2.1's escape clause)", Strict: "from_state is the previous to_state: the explicit chain only"},
	}
	seqStateAwaitingEnter = &protocol.Rule{
		ID: "SEQ-STATE-AWAITING-ENTER", Level: protocol.Info, StrictLevel: protocol.Should, Party: protocol.Producer,
		Summary:  "A state change to awaiting_input comes at or before each awaiting.confirmation or clarification (strict profile: a warning; lenient: a note).",
		Doc:      "The rule rests on the informative Appendix A alone (\"In any conflict between this appendix and the normative text in Chapter 4, the normative text takes precedence\"), and Appendix A contradicts itself: A.4 says the producer MUST emit the state change at or before the confirmation, A.7.6 lists agent.session.started as a legal predecessor of agent.awaiting.confirmation, and §4.6's normative example goes from thinking straight to the confirmation. The lenient profile reads A.7.6 and §4.6 (a note, INFO), the strict profile A.4 (a warning, SHOULD: informative text makes no MUST). Reported at the blocking event when the very next event is not agent.state.changed to awaiting_input and the state was not awaiting_input already.",
		Spec:     "AAEP A.4, A.7.6, §4.6; aaep-rules.md §3.3",
		Profiles: protocol.Profiles{Lenient: "INFO: A.7.6 and §4.6 let a confirmation follow session.started or thinking directly", Strict: "SHOULD: A.4's state change to awaiting_input at or before the blocking event (informative, so not MUST)"},
	}
	seqProgressCoalesce = &protocol.Rule{
		ID: "SEQ-PROGRESS-COALESCE", Level: protocol.Should, Party: protocol.Producer,
		Summary: "Rapid successive progress updates are coalesced: not three or more updates in a row, each less than 5 percentage points and less than a second after the one before.",
		Doc:     "SHOULD in §4.2.2: \"Producers SHOULD coalesce rapid successive progress updates into less frequent emissions (e.g., emit every 5% rather than every 1%)\". The threshold is the checker's reading of the example: two successive progress.updated events of a session whose percent differs by less than 5 points and whose timestamps (receive offsets when unreadable) are less than 1 s apart are a rapid step, and two such steps in a row (three updates) are the pattern the text asks to coalesce; one close pair is not. Only updates with progress.percent are compared. Reported once per session, at the update that completes the first run.",
		Spec:    "AAEP §4.2.2; not in the catalog (aaep-rules.md §3.3 covers the state chain only): the SHOULD's own example is its threshold",
	}
	seqStateAwaitingExit = &protocol.Rule{
		ID: "SEQ-STATE-AWAITING-EXIT", Level: protocol.Must, Party: protocol.Producer,
		Summary:  "A resolved confirmation or clarification is followed by a follow-up event (strict: a state change from awaiting_input first).",
		Doc:      "MUST in §9.4.1(9) and A.4. Judged after a confirmation or clarification is resolved by reply, timeout or closed subscription. Lenient: reported only when the session's next event is completed or errored and no other follow-up rule (SEQ-CONF-REJECT-FOLLOWUP, SEQ-CONF-ACCEPT-INVOKES) already covers it; strict: reported when the next event, countdown progress aside, is not a state change from awaiting_input. A resolution by cancel needs no follow-up, and passive recordings whose resolution is inferred are not judged.",
		Spec:     "AAEP A.4, §9.4.1(9), §6.1(2); aaep-rules.md §3.3",
		Profiles: protocol.Profiles{Lenient: "any follow-up event after the resolution (§9.4.1(9))", Strict: "a state change away from awaiting_input first (A.4)"},
	}
	seqStateCallingTool = &protocol.Rule{
		ID: "SEQ-STATE-CALLING-TOOL", Level: protocol.Should, Party: protocol.Producer,
		Summary: "The state during tool execution is calling_tool.",
		Doc:     "SHOULD: A.3 describes calling_tool as the state during tool execution without a keyword of its own. Reported at a state change, while a tool invocation is open, that neither leaves nor enters calling_tool; leaving calling_tool while a tool is open is SEQ-TOOL-BEFORE-STATE instead.",
		Spec:    "AAEP A.3; aaep-rules.md §3.3",
	}
	seqStateL1Coverage = &protocol.Rule{
		ID: "SEQ-STATE-L1-COVERAGE", Level: protocol.Should, Party: protocol.Producer,
		Summary: "Sessions that invoke tools or stream output change state to or from calling_tool and writing_output.",
		Doc:     "A heuristic for the Level 1 MUST: SHOULD.",
		Spec:    "AAEP §9.3.1(3); aaep-rules.md §3.3",
	}
	seqToolPairPreceded = &protocol.Rule{
		ID: "SEQ-TOOL-PAIR-PRECEDED", Level: protocol.Must, Party: protocol.Producer,
		Summary: "Every tool.completed is preceded by an open matching tool.invoked.",
		Doc:     "MUST in §4.5.2 and A.3. A completion pairs by tool_call_id, or by tool name with the oldest open invocation that has no id. Reported when a completion matches no open invocation and no earlier completed one (a second completion is SEQ-TOOL-COMPLETE-ONCE, a wrong or missing id SEQ-TOOL-CALL-ID-ECHO). Not reported on subscriptions that filter out tool.invoked.",
		Spec:    "AAEP §4.5.2, A.3, A.8.1; aaep-rules.md §3.4",
	}
	seqToolPairCompleted = &protocol.Rule{
		ID: "SEQ-TOOL-PAIR-COMPLETED", Level: protocol.Must, Party: protocol.Producer,
		Summary: "Every tool.invoked gets a tool.completed before the terminal event.",
		Doc:     "MUST in A.3 and §9.3.1(5); an abandoned tool still needs a completion with status timeout. Reported at the session's terminal event for each invocation still open; a session that never ends (SEQ-SESSION-INCOMPLETE) is not judged, and neither are subscriptions that filter out tool.completed.",
		Spec:    "AAEP A.3, §4.3.2, §9.3.1(5); aaep-rules.md §3.4",
	}
	seqToolCompleteOnce = &protocol.Rule{
		ID: "SEQ-TOOL-COMPLETE-ONCE", Level: protocol.Must, Party: protocol.Producer,
		Summary: "Each invocation gets exactly one completion.",
		Doc:     "MUST in A.3. Reported when a completion carries the tool_call_id of an invocation already completed, or, without an id, names a tool whose id-less invocations are all completed, so name-paired invocations are covered too. Completed tool_call_ids are remembered per session up to a bound (16384).",
		Spec:    "AAEP A.3; aaep-rules.md §3.4",
	}
	seqToolCallIDUnique = &protocol.Rule{
		ID: "SEQ-TOOL-CALL-ID-UNIQUE", Level: protocol.Must, Party: protocol.Producer,
		Summary: "tool_call_id is unique among a session's invocations.",
		Doc:     "MUST in §4.3.1. Reported when a tool.invoked reuses a tool_call_id already invoked in the same session, whether or not that earlier call is still open (an open one keeps its pairing). Ids are remembered per session up to a bound (16384); the same id in another session is allowed.",
		Spec:    "AAEP §4.3.1; aaep-rules.md §3.4",
	}
	seqToolCallIDEcho = &protocol.Rule{
		ID: "SEQ-TOOL-CALL-ID-ECHO", Level: protocol.Must, Party: protocol.Producer,
		Summary: "A completion carries the tool_call_id of its invocation.",
		Doc:     "MUST in §4.3.1 and §4.5.2. When a completion carries no tool_call_id, or an unknown one, while an id-keyed invocation of the same tool is open, it pairs with that invocation and the id is reported, so the one mistake is not also an unpaired invocation and an unpaired completion.",
		Spec:    "AAEP §4.3.1, §4.5.2; aaep-rules.md §3.4",
	}
	seqToolNameMatch = &protocol.Rule{
		ID: "SEQ-TOOL-NAME-MATCH", Level: protocol.Must, Party: protocol.Producer,
		Summary: "A completion names the same tool as its invocation.",
		Doc:     "MUST in §4.3.2. Judged on completions paired by tool_call_id: a completion that names another tool than its invocation is reported. Id-less completions pair by name, so they cannot differ.",
		Spec:    "AAEP §4.3.2; aaep-rules.md §3.4",
	}
	seqToolIDShould = &protocol.Rule{
		ID: "SEQ-TOOL-ID-SHOULD", Level: protocol.Should, Party: protocol.Producer,
		Summary: "Concurrent invocations of a tool carry tool_call_id.",
		Doc:     "SHOULD in §4.5.2. Reported when a tool is invoked without tool_call_id while an earlier id-less invocation of the same tool is still open: the completions could not be paired unambiguously. A single id-less call is not reported.",
		Spec:    "AAEP §4.5.2; aaep-rules.md §3.4",
	}
	seqToolBeforeState = &protocol.Rule{
		ID: "SEQ-TOOL-BEFORE-STATE", Level: protocol.Must, Party: protocol.Producer,
		Summary: "tool.completed precedes the state change that leaves calling_tool.",
		Doc:     "MUST in §4.3.2. The post-tool state is read from a state change that leaves calling_tool for another state while an invocation is still open: the heuristic the catalog gives. Not reported on subscriptions that filter out tool.completed.",
		Spec:    "AAEP §4.3.2; aaep-rules.md §3.4",
	}
	seqToolAvailable = &protocol.Rule{
		ID: "SEQ-TOOL-AVAILABLE", Level: protocol.Info, Party: protocol.Producer,
		Summary: "Invoked tools are in session.started's tools_available when that list is given.",
		Doc:     "INFO: tools_available is informative in §4.1.1 and a producer may gain tools during a session. Reported at each tool.invoked whose tool is not in the session.started list, only when that list was given.",
		Spec:    "AAEP §4.1.1; aaep-rules.md §3.4",
	}
	seqCompletedCounts = &protocol.Rule{
		ID: "SEQ-COMPLETED-COUNTS", Level: protocol.Info, Party: protocol.Producer,
		Summary: "completed.tool_invocations_count and the duration_ms fields agree with the session's events.",
		Doc:     "INFO, because the counts come from schema descriptions, not normative prose. Compared at session.completed: tool_invocations_count with the invocations the checker saw on the primary source, duration_ms with the time since session.started (one second or 10% allowed); and at each tool.completed, its duration_ms with the time since its invocation (one second allowed). Times are on the producer's clock, the receive clock when a timestamp is unreadable. Not reported on subscriptions that filter out tool events.",
		Spec:    "AAEP schema descriptions; aaep-rules.md §3.4",
	}
	seqIrrevNeedsConf = &protocol.Rule{
		ID: "SEQ-IRREV-NEEDS-CONF", Level: protocol.Must, Party: protocol.Producer,
		Summary: "An irreversible tool.invoked is preceded by an unused awaiting.confirmation in its session.",
		Doc:     "MUST in §4.3.1, §9.4.1(2) and A.8.4. Reported when an irreversible tool.invoked finds no confirmation in its session that could authorize it: none named it, none is accepted and unused, pending or rejected. This is all an events-only recording can show, so it holds without replies too; an accept already used is SEQ-CONF-ONE-ACTION. An irreversible tool that took an accept by order, though the confirmation named another action (its action text spells another tool's name), is reported at its own message once the named action runs on that accept: it ran unconfirmed, and the named action is not blamed. Not reported on subscriptions that do not receive confirmations.",
		Spec:    "AAEP §4.3.1, §9.4.1(2), A.8.4; aaep-rules.md §3.5",
	}
	seqIrrevNeedsAccept = &protocol.Rule{
		ID: "SEQ-IRREV-NEEDS-ACCEPT", Level: protocol.Must, Party: protocol.Producer,
		Summary:  "That confirmation was resolved as accept before the irreversible tool.invoked.",
		Doc:      "Lenient: a defaulted accept (§4.5.3, §6.1) authorizes; strict: only an accept reply (§4.3.1).",
		Spec:     "AAEP §4.3.1, §4.5.3, §6.1(1), A.7.4; aaep-rules.md §3.5",
		Profiles: protocol.Profiles{Lenient: "a defaulted accept (the timeout's default_decision) authorizes the action (§4.5.3, §6.1)", Strict: "only an accept reply authorizes an irreversible action (§4.3.1)"},
	}
	seqConfOneAction = &protocol.Rule{
		ID: "SEQ-CONF-ONE-ACTION", Level: protocol.Must, Party: protocol.Producer,
		Summary: "One accepted confirmation authorizes exactly one action: the one it names (tool_call_id, tool or action text), else the next irreversible one by order.",
		Doc:     "MUST, derived from §4.3.1 and §6.2.2 (an accept is for one tool invocation; tokens are single-use). The action is the one the confirmation names (tool_call_id, tool, or an action text that spells the tool's name; for an irreversible tool, also a text sharing a word of four letters or more with its name), otherwise the next irreversible invocation in order; reported when an irreversible tool runs on an accept that an earlier action already used. A reversible tool nothing names does not use the accept up, and an accept an unnamed tool took by order goes back to the action it names when that runs (SEQ-IRREV-NEEDS-CONF blames the other tool).",
		Spec:    "AAEP §4.3.1, §6.2.2, §6.3.4(3); aaep-rules.md §3.5",
	}
	seqConfBlocking = &protocol.Rule{
		ID: "SEQ-CONF-BLOCKING", Level: protocol.Must, Party: protocol.Producer,
		Summary: "No tool.invoked for the confirmed action before the confirmation is resolved.",
		Doc:     "MUST in §6.1 and §4.4.1. Reported when the confirmed action runs while its confirmation is unresolved: an irreversible or named tool invoked while it is pending, reversible or not (§6.1(1) blocks the action being confirmed, before a default_decision accept applies as much as before a reply), or a reversible tool invoked while it is pending that runs again after the accept, or after which the accept is followed by no action at all. In a passive recording that carries no replies the flow is held and noted as SEQ-REPLY-UNOBSERVED instead, unless a reply for it turns up later.",
		Spec:    "AAEP §6.1(1,3), §4.4.1; aaep-rules.md §3.5",
	}
	seqConfNoActionAfterReject = &protocol.Rule{
		ID: "SEQ-CONF-NO-ACTION-AFTER-REJECT", Level: protocol.Must, Party: protocol.Producer,
		Summary: "No tool.invoked for an action whose confirmation was rejected or cancelled.",
		Doc:     "MUST in §4.5.3, §6.1 and A.8.5. Reported when a tool invocation follows a confirmation rejected by its first valid reply or cancelled (session.cancelled, or a state change to thinking or deciding while pending, §6.8): a tool the confirmation names, reversible or not, up to the next confirmation that names the same tool (a later, separately confirmed use is not the rejected action), an irreversible one otherwise; a reversible tool that no confirmation names is other work, which the producer MAY continue with (§6.1(3)), never blamed, even before the reject's follow-up (whose absence is SEQ-CONF-REJECT-FOLLOWUP). A default reject is SEQ-CONF-TIMEOUT-DEFAULT or NEG-CLOSE-PENDING-DEFAULT; a reject that a later accept reply overrode is SEQ-REPLY-FIRST-WINS.",
		Spec:    "AAEP §4.5.3, §6.1, A.4, A.8.5; aaep-rules.md §3.5",
	}
	seqConfRejectFollowup = &protocol.Rule{
		ID: "SEQ-CONF-REJECT-FOLLOWUP", Level: protocol.Must, Party: protocol.Producer,
		Summary:  "A reject is followed by an event reflecting the cancelled action (strict: a state change to thinking or deciding).",
		Doc:      "MUST in §6.1(2) and §4.5.3. Checked at the terminal event: a confirmation rejected by reply, timeout or closed subscription whose reject no event reflected (lenient: a state change other than to calling_tool, which starts other work, an output, handoff or cancel; strict: a state change to thinking or deciding, or a cancel). A session that ends cancelled supersedes it, a session that never ends is not judged, and neither are subscriptions that filter out state changes.",
		Spec:     "AAEP §6.1(2), §4.5.3; aaep-rules.md §3.5",
		Profiles: protocol.Profiles{Lenient: "any state change except to calling_tool, output, handoff or cancel after the reject", Strict: "a state change to thinking or deciding, or a cancel (§4.5.3, §6.1(2))"},
	}
	seqConfAcceptInvokes = &protocol.Rule{
		ID: "SEQ-CONF-ACCEPT-INVOKES", Level: protocol.Must, Party: protocol.Producer,
		Summary: "An accept is followed by the action's tool.invoked before the terminal event.",
		Doc:     "MUST in §4.5.3 and A.4. Checked at the terminal event: an accepted confirmation (reply or default) that no tool.invoked used. Not reported when a tool ran early while it was pending (SEQ-CONF-BLOCKING), when a later reject was followed (SEQ-REPLY-FIRST-WINS), for an accept with modified_action (SEQ-REPLY-MODIFIED), for a cancelled session, or for subscriptions that filter out tool.invoked; a default accept never acted on in a passive recording is held as SEQ-REPLY-UNOBSERVED.",
		Spec:    "AAEP §4.5.3, A.4; aaep-rules.md §3.5",
	}
	seqConfTimeoutDefault = &protocol.Rule{
		ID: "SEQ-CONF-TIMEOUT-DEFAULT", Level: protocol.Must, Party: protocol.Producer,
		Summary: "Without a valid reply by the timeout, default_decision applies: no action after a default reject.",
		Doc:     "MUST in §6.4 and §6.1. A confirmation with no valid reply is timed out at the session's first event stamped at or after its timestamp plus timeout_seconds; with default_decision reject (or none), a tool invocation attributed to it afterwards is reported. It needs no reply, so it holds in passive recordings too.",
		Spec:    "AAEP §6.4, §6.1; aaep-rules.md §3.5",
	}
	seqConfNoDupPending = &protocol.Rule{
		ID: "SEQ-CONF-NO-DUP-PENDING", Level: protocol.Must, Party: protocol.Producer,
		Summary: "No second confirmation for the same action while the first is unresolved.",
		Doc:     "MUST in §6.1(4). Reported when a confirmation asks for the same action text as an earlier confirmation of the session that is still pending; confirmations without action text are not compared. In a passive recording the repeat is read as the first being resolved by an unrecorded reply (SEQ-REPLY-UNOBSERVED).",
		Spec:    "AAEP §6.1(4); aaep-rules.md §3.5",
	}
	seqReplyTokenUnique = &protocol.Rule{
		ID: "SEQ-REPLY-TOKEN-UNIQUE", Level: protocol.Must, Party: protocol.Producer,
		Summary: "reply_token values are never reused across confirmations and clarifications.",
		Doc:     "MUST in §6.2.2. Confirmations and clarifications share one token pool: a reply_token issued again, in the same session or another, is reported, including tokens of ended sessions (the most recent 65536 are remembered).",
		Spec:    "AAEP §6.2.2, Guide §8; aaep-rules.md §3.5",
	}
	seqReplyKnownToken = &protocol.Rule{
		ID: "SEQ-REPLY-KNOWN-TOKEN", Level: protocol.Must, Party: protocol.Subscriber,
		Summary: "A reply echoes a reply_token that a confirmation or clarification of its own kind issued.",
		Doc:     "The subscriber's duty: §9.4.2(4) and (7) make a Level 2 subscriber echo the reply_token exactly as received, and §6.2.3 forbids it to generate or modify one, so a reply whose token no recorded prompt issued, or that answers a prompt of the other kind, is the subscriber's MUST. The producer's duty is different: it ignores such a reply (§6.3.4(2,3)), and only acting on it is the producer's violation (SEQ-REPLY-IGNORED). A reply whose token was issued but is no longer outstanding (its session ended) is late, not made up: SEQ-REPLY-NOT-EXPIRED, or SEQ-REPLY-AFTER-CANCEL when the session was cancelled with the prompt pending. Needs the replies in the recording.",
		Spec:    "AAEP §6.2.3, §6.3.4(2,3), §9.4.2(4,7); aaep-rules.md §3.5",
	}
	seqReplyFirstWins = &protocol.Rule{
		ID: "SEQ-REPLY-FIRST-WINS", Level: protocol.Must, Party: protocol.Producer,
		Summary: "Only the first valid reply for a token counts, and the producer follows it.",
		Doc:     "MUST in §6.3.5 and §6.7.1. Later replies for a resolved token are ignored; the rule is judged by what the producer does: reported when it acts after a reject although a later accept came, or never acts on an accept after a later reject came. Needs the replies in the recording.",
		Spec:    "AAEP §6.3.5, §6.7.1, §5.9; aaep-rules.md §3.5",
	}
	seqReplyNotExpired = &protocol.Rule{
		ID: "SEQ-REPLY-NOT-EXPIRED", Level: protocol.Info, Party: protocol.Subscriber,
		Summary: "A reply that comes after its prompt stopped being outstanding (decided at or after its timestamp plus timeout_seconds, or after its session ended) is late: noted, and the producer must ignore it.",
		Doc:     "INFO, reported against the subscriber: §6.3.4(4) is the producer's duty (it ignores a reply decided after the prompt's timestamp plus timeout_seconds), and the specification puts no duty on a subscriber whose user answers late; a user's late click is not a violation. A reply is decided at its own timestamp (its receive time when unreadable, and only receive offsets in a recording of a replay). Also noted: a reply to a prompt of a session that has ended (its token retired), and a reply stamped before the prompt it answers (clocks apart, or made up). An expired reply resolves nothing; the producer acting on it is SEQ-REPLY-IGNORED. Needs the replies in the recording.",
		Spec:    "AAEP §6.3.4(2,4), §10.2 T2; aaep-rules.md §3.5",
	}
	seqReplyDecisionAllowed = &protocol.Rule{
		ID: "SEQ-REPLY-DECISION-ALLOWED", Level: protocol.Must, Party: protocol.Subscriber,
		Summary: "A confirmation reply's decision is in the confirmation's allowed_replies.",
		Doc:     "The subscriber's duty: a Level 2 subscriber sends valid replies (§9.4.2(3), §9.4.4), and a decision outside the prompt's allowed_replies is not one; the producer ignores it (§6.3.4(6)), and acting on it would be SEQ-REPLY-IGNORED. Prose over schema: a custom decision listed in allowed_replies is allowed here; the reply schema's accept/reject enum is MSG-CONF-REPLY-SCHEMA's concern.",
		Spec:    "AAEP §6.3.4(6); aaep-rules.md §3.5",
	}
	seqReplyAfterCancel = &protocol.Rule{
		ID: "SEQ-REPLY-AFTER-CANCEL", Level: protocol.Should, StrictLevel: protocol.Must, Party: protocol.Subscriber,
		Summary:  "A subscriber detects a withdrawn prompt and removes it: no reply decided after the producer cancelled the confirmation or clarification.",
		Doc:      "The subscriber's duty, and the specification weighs it twice: §6.8 says subscribers SHOULD detect cancellation and remove the prompt, §9.4.2(9) makes detecting it a MUST of a Level 2 subscriber (and a subscriber that replies is one, §9.4.2(3)). The lenient profile reads §6.8 (SHOULD), the strict profile §9.4.2(9) (MUST). A prompt is withdrawn by a state change to thinking or deciding while it is pending, by session.cancelled (§6.8), or, for a clarification, when the producer leaves awaiting_input without an answer. Reported for a reply decided (its timestamp; its receive time when unreadable) at or after the withdrawal; one decided before it crossed the withdrawal in flight, which is no one's fault and is not reported. The producer's duty is to ignore the reply (§6.8); only acting on it is the producer's violation (SEQ-REPLY-IGNORED), and an action after the cancel is SEQ-CONF-NO-ACTION-AFTER-REJECT.",
		Spec:     "AAEP §6.8, §9.4.2(9); aaep-rules.md §3.5",
		Profiles: protocol.Profiles{Lenient: "SHOULD: §6.8 (subscribers SHOULD detect cancellation and remove the prompt)", Strict: "MUST: §9.4.2(9) (a Level 2 subscriber MUST detect cancellation)"},
	}
	seqReplyIgnored = &protocol.Rule{
		ID: "SEQ-REPLY-IGNORED", Level: protocol.Must, Party: protocol.Producer,
		Summary: "The producer ignores a reply that fails validation (unknown, retired, expired or withdrawn token, disallowed decision, response of the wrong kind): it does not act on it.",
		Doc:     "The producer's half of the reply rules: a reply that fails any check of §6.3.4 (or §6.5.5's type check, or comes after §6.8's cancellation) MUST be ignored. The invalid reply itself is the subscriber's concern (SEQ-REPLY-KNOWN-TOKEN, SEQ-REPLY-NOT-EXPIRED, SEQ-REPLY-AFTER-CANCEL, SEQ-REPLY-DECISION-ALLOWED, SEQ-CLAR-RESPONSE-TYPE); the producer is reported only when it acts on one: the confirmed action runs after an ignored accept while no valid reply or default allows it, or the producer leaves awaiting_input after an ignored clarification answer before a valid one or the timeout. The finding takes the place of the blocking finding the action would otherwise get (SEQ-CONF-BLOCKING, SEQ-CONF-TIMEOUT-DEFAULT, SEQ-CONF-NO-ACTION-AFTER-REJECT, SEQ-CLAR-BLOCKING) and names the reply it followed. Needs the replies in the recording.",
		Spec:    "AAEP §6.3.4, §6.5.5, §6.8; aaep-rules.md §3.5",
	}
	seqReplyModified = &protocol.Rule{
		ID: "SEQ-REPLY-MODIFIED", Level: protocol.Info, Party: protocol.Producer,
		Summary: "An accept with modified_action counts as a reject for producers without support for modified actions.",
		Doc:     "The producer's support for modified_action is not recorded anywhere: INFO.",
		Spec:    "AAEP §6.3.2; aaep-rules.md §3.5",
	}
	seqReplyUnobserved = &protocol.Rule{
		ID: "SEQ-REPLY-UNOBSERVED", Level: protocol.Info, Party: protocol.Either,
		Summary: "A confirmation or clarification was resolved by a reply the recording does not carry (a passive recorder): the reply rules are not judged for it, and the inferred resolution is noted once per session.",
		Doc:     "Not in the catalog: a recording that carries no replies on a subscription (a passive recorder) cannot show what the rules of scope R need; the resolution inferred from the producer's behaviour is noted instead of a MUST violation (seq_unseen.go).",
		Spec:    "AAEP Ch. 6 (replies); not in the catalog: the scope-R rules of aaep-rules.md §3.5 need the replies",
	}
	seqReplyAuto = &protocol.Rule{
		ID: "SEQ-REPLY-AUTO", Level: protocol.Info, Party: protocol.Subscriber,
		Summary: "Replies decided automatically (decided_by \"auto:...\") are surfaced.",
		Doc:     "INFO: an automatic reply is legal when the user configured it (§4.4.1, §10.1.3), which a recording cannot show, so it is surfaced, not judged. Reported for every reply whose decided_by starts with \"auto:\", known token or not.",
		Spec:    "AAEP §4.4.1, §10.1.3; aaep-rules.md §3.5",
	}
	seqClarResponseType = &protocol.Rule{
		ID: "SEQ-CLAR-RESPONSE-TYPE", Level: protocol.Must, Party: protocol.Subscriber,
		Summary: "A clarification reply's response fits one of the accepted_response_kinds (and choices).",
		Doc:     "The subscriber's duty (§6.5.2: the subscriber chooses one of the accepted kinds). A clarification reply's response must fit one of accepted_response_kinds (freetext a string, yes_no a boolean, numeric a number, multiple_choice one of the choices' values; all but multiple_choice when the list is absent, or when the producer's list is invalid — empty, an unknown kind, an item that is no string — which is the producer's fault, EVT-SCHEMA, §9.4.1(7), not the subscriber's). A reply that fits none counts as no reply, so the clarification stays pending (§6.5.5); the producer going on as if answered is SEQ-REPLY-IGNORED. Needs the replies in the recording.",
		Spec:    "AAEP §6.5.2, §6.5.5; aaep-rules.md §3.5",
	}
	seqClarBlocking = &protocol.Rule{
		ID: "SEQ-CLAR-BLOCKING", Level: protocol.Must, Party: protocol.Producer,
		Summary: "The producer leaves awaiting_input only after a valid clarification reply or the timeout.",
		Doc:     "MUST in §4.4.2 and §6.1. Reported when the state moves away from awaiting_input while a clarification has neither a valid reply nor a passed timeout. In a passive recording that carries no replies, leaving awaiting_input is read as an unrecorded answer (SEQ-REPLY-UNOBSERVED) instead.",
		Spec:    "AAEP §4.4.2, §6.1; aaep-rules.md §3.5",
	}
	seqConfCountdown = &protocol.Rule{
		ID: "SEQ-CONF-COUNTDOWN", Level: protocol.Should, Party: protocol.Producer,
		Summary: "For timeouts over 60 s, progress.updated at about 50% and 10% of the time remaining.",
		Doc:     "SHOULD in §6.4.3. For a confirmation with timeout over 60 s, counted at its resolution: one progress.updated is wanted if half the timeout passed, two if 90% passed. Not reported on subscriptions that filter out progress events.",
		Spec:    "AAEP §6.4.3; aaep-rules.md §3.5",
	}
	seqConfTimeoutRange = &protocol.Rule{
		ID: "SEQ-CONF-TIMEOUT-RANGE", Level: protocol.Info, Party: protocol.Producer,
		Summary: "timeout_seconds lies within the §6.4.2 recommendations.",
		Doc:     "INFO: §6.4.2 gives ranges as recommendations. Reported at the prompt when timeout_seconds lies outside the range for its kind: clarification 60–300 s, high-risk irreversible 180–600, medium-risk irreversible 60–180, low-risk (or unrated) reversible 30–90; other combinations have no range and are not judged.",
		Spec:    "AAEP §6.4.2; aaep-rules.md §3.5",
	}
	seqStreamOneComplete = &protocol.Rule{
		ID: "SEQ-STREAM-ONE-COMPLETE", Level: protocol.Must, Party: protocol.Producer,
		Summary: "Each output has exactly one complete:true chunk before the terminal event.",
		Doc:     "MUST in §4.5.4 and A.6, with no exemption for cancelled or errored sessions. Reported at the terminal event for each output (by output_id; chunks without one form one implicit output) that never sent complete:true; a session that never ends is not judged. A second complete:true is SEQ-STREAM-AFTER-COMPLETE.",
		Spec:    "AAEP §4.5.4, A.6; aaep-rules.md §3.6",
	}
	seqStreamAfterComplete = &protocol.Rule{
		ID: "SEQ-STREAM-AFTER-COMPLETE", Level: protocol.Must, Party: protocol.Producer,
		Summary: "No chunk of an output follows its complete:true chunk.",
		Doc:     "MUST in §4.5.4 and A.8.6. Reported for each chunk of an output after its complete:true chunk, the implicit output (no output_id) included. Completed outputs are remembered per session up to a bound (4096).",
		Spec:    "AAEP §4.5.4, A.6, A.8.6; aaep-rules.md §3.6",
	}
	seqStreamPositionMonotonic = &protocol.Rule{
		ID: "SEQ-STREAM-POSITION-MONOTONIC", Level: protocol.Must, Party: protocol.Producer,
		Summary: "Chunk positions of an output strictly increase (equal only after an empty chunk).",
		Doc:     "Positions follow §4.3.3's normative bullet (offset since the start of the current output_id), not its table (\"within the session's total output\"); code points, not UTF-16 units.",
		Spec:    "AAEP A.6, A.8.7, schema desc.; aaep-rules.md §3.6",
	}
	seqStreamPositionBytes = &protocol.Rule{
		ID: "SEQ-STREAM-POSITION-BYTES", Level: protocol.Must, Party: protocol.Producer,
		Summary: "Chunk positions count characters, not UTF-8 bytes: a position that is the previous one plus the previous chunk's byte length, where bytes and characters differ, is wrong.",
		Doc:     "Derived from \"total character offset\"; the catalog's default is a warning. The certain half of SEQ-STREAM-POSITION-CONTIGUOUS: positions counted in UTF-8 bytes where bytes differ from characters in every reading.",
		Spec:    "AAEP §4.3.3; aaep-rules.md §3.6 (the certain half of SEQ-STREAM-POSITION-CONTIGUOUS)",
	}
	seqStreamPositionJump = &protocol.Rule{
		ID: "SEQ-STREAM-POSITION-JUMP", Level: protocol.Must, Party: protocol.Producer,
		Summary: "A chunk's position does not jump past the end of the previous chunk: text would be lost.",
		Doc:     "MUST: \"position MUST be the total character offset since the start of the current output_id\" (§4.3.3); a position past the end of the previous chunk means characters of the output were never sent. Reported when the position exceeds the previous position plus the previous chunk's length in code points and in UTF-16 units (both readings of \"character\"), is not the offset within the session's total output (the field table's reading), and no gap is recorded in the capture between the two chunks (a lost, refused or failed connection, a reconnect, a sequence_number that skips); such a jump is SEQ-STREAM-POSITION-CONTIGUOUS (SHOULD). A jump of exactly the UTF-8 byte length is SEQ-STREAM-POSITION-BYTES.",
		Spec:    "AAEP §4.3.3; aaep-rules.md §3.6",
	}
	seqStreamPositionContiguous = &protocol.Rule{
		ID: "SEQ-STREAM-POSITION-CONTIGUOUS", Level: protocol.Should, Party: protocol.Producer,
		Summary:  "The first chunk is at position 0 and each next one at the previous position plus the previous chunk's length in code points.",
		Doc:      "SHOULD, although the catalog derives a MUST from \"total character offset\": the offset's unit is undefined, so the catalog defaults it to a warning. The first chunk of an output must be at 0 and each next one at the previous position plus the previous chunk's length in code points. A position counted in UTF-16 units is accepted by the lenient profile; one counted in UTF-8 bytes is SEQ-STREAM-POSITION-BYTES, and one that does not increase SEQ-STREAM-POSITION-MONOTONIC.",
		Spec:     "AAEP §4.3.3 (\"total character offset\"), Guide §5.1; aaep-rules.md §3.6",
		Profiles: protocol.Profiles{Lenient: "a position counted in UTF-16 code units (the other reading of \"character\") is accepted", Strict: "positions count code points; UTF-16 code units are reported"},
	}
)

var seqRuleTable = []*protocol.Rule{
	seqStartFirst, seqStartOnce, seqTerminalPresent, seqSessionIncomplete, seqTerminalOnce, seqNothingAfterTerminal, seqSessionIDReuse, seqHandoffEnd, seqA7Tables, seqEventIDUnique, seqEventIDRedelivered, seqTimestampOrder, seqTimestampNotFuture, seqTimestampBackdated, seqSeqnoAllOrNone, seqSeqnoZero, seqSeqnoIncrement, seqDeliveryOrder, seqStateFirstIdle, seqStateChain, seqStateAwaitingEnter, seqProgressCoalesce, seqStateAwaitingExit, seqStateCallingTool, seqStateL1Coverage, seqToolPairPreceded, seqToolPairCompleted, seqToolCompleteOnce, seqToolCallIDUnique, seqToolCallIDEcho, seqToolNameMatch, seqToolIDShould, seqToolBeforeState, seqToolAvailable, seqCompletedCounts, seqIrrevNeedsConf, seqIrrevNeedsAccept, seqConfOneAction, seqConfBlocking, seqConfNoActionAfterReject, seqConfRejectFollowup, seqConfAcceptInvokes, seqConfTimeoutDefault, seqConfNoDupPending, seqReplyTokenUnique, seqReplyKnownToken, seqReplyFirstWins, seqReplyNotExpired, seqReplyDecisionAllowed, seqReplyAfterCancel, seqReplyIgnored, seqReplyModified, seqReplyUnobserved, seqReplyAuto, seqClarResponseType, seqClarBlocking, seqConfCountdown, seqConfTimeoutRange, seqStreamOneComplete, seqStreamAfterComplete, seqStreamPositionMonotonic, seqStreamPositionBytes, seqStreamPositionJump, seqStreamPositionContiguous,
	negTypesWithheld, negResponseRequired, negNoEventsBeforeAccept, negHonoredRate, negHonoredLanguages, negHonoredCoalesce, negHonoredFilters, negHonoredOther, negVersion, negSignedManifest, negSignedManifestContent, negL2DeclaresReply, negRate, negCriticalExempt, negFilterExclude, negFilterInclude, negCoalesceHint, negNoConfWithoutReplyCap, negVerbosity, negLanguage, negRenegResponse, negRenegApply, negRenegRejectEnds, negCloseStops, negClosePendingDefault, negSubidValid, negReplySubIDUnissued, negResolutionNotice,
	trnSSEID, trnJSONRPCMethod, trnNoFailureReason,
}

// seqRules returns the rules of the sequence checker.
func seqRules() []protocol.Rule { return protocol.Values(seqRuleTable) }
