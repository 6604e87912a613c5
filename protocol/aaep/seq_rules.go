package aaep

// The rule table of the sequence checker.

import "github.com/aaep-tools/aaepkit/protocol"

const (
	must   = protocol.Must
	should = protocol.Should
	info   = protocol.Info
)

// seqRuleTable lists the SEQ-*, NEG-* and TRN-* rules with their catalog IDs
// and levels. Where the level differs from the catalog's leading keyword,
// the comment says why. Companion rules that the catalog describes inside
// another rule have their own IDs, because a rule has one level:
// SEQ-EVENT-ID-REDELIVERED (the INFO half of SEQ-EVENT-ID-UNIQUE),
// SEQ-SESSION-INCOMPLETE (the "incomplete" half of SEQ-TERMINAL-PRESENT),
// SEQ-TIMESTAMP-BACKDATED (the heuristic half of SEQ-TIMESTAMP-NOT-FUTURE)
// and SEQ-STREAM-POSITION-BYTES (the certain half of
// SEQ-STREAM-POSITION-CONTIGUOUS).
var seqRuleTable = []protocol.Rule{
	// §3.1 Session lifecycle.
	{ID: "SEQ-START-FIRST", Level: must, Summary: "The first event of every session is agent.session.started."},
	{ID: "SEQ-START-ONCE", Level: must, Summary: "A session has exactly one agent.session.started."},
	// Either side may close a subscription at any time (§5.8): a session
	// cut off by a close, a disconnect or the end of the recording is
	// unfinished (SEQ-SESSION-INCOMPLETE). Strict only: the producer closed
	// the subscription itself while the session was open (neg.go,
	// sessionShouldHaveEnded).
	{ID: "SEQ-TERMINAL-PRESENT", Level: must, Summary: "A session ends with a terminal event (completed, errored or cancelled); strict profile: reported when the producer closed the subscription with the session open."},
	{ID: "SEQ-SESSION-INCOMPLETE", Level: info, Summary: "The recording ends (stream stopped, subscription closed by either side, connection dropped) before the session's terminal event: the session is unfinished, not in violation."},
	{ID: "SEQ-TERMINAL-ONCE", Level: must, Summary: "A session has at most one terminal event; completed never follows errored or cancelled."},
	{ID: "SEQ-NOTHING-AFTER-TERMINAL", Level: must, Summary: "No event of a session follows its terminal event."},
	{ID: "SEQ-SESSION-ID-REUSE", Level: must, Summary: "A new session.started never reuses the session_id of a finished session."},
	{ID: "SEQ-HANDOFF-END", Level: info, Summary: "After handoff.requested (or state handing_off) only state changes and the terminal event are expected."},
	// Strict profile only (the catalog calls it an optional strict mode).
	{ID: "SEQ-A7-TABLES", Level: info, Summary: "Events follow the predecessors of the Appendix A.7 tables (tool.invoked, output.streaming, awaiting.confirmation); strict profile only."},

	// §3.2 Identity, time and numbering.
	{ID: "SEQ-EVENT-ID-UNIQUE", Level: must, Summary: "Two different events of one producer stream (one source) never share an event_id."},
	{ID: "SEQ-EVENT-ID-REDELIVERED", Level: info, Summary: "An identical repeat of an event on the same source is at-least-once redelivery: noted and ignored."},
	{ID: "SEQ-TIMESTAMP-ORDER", Level: must, Summary: "Timestamps (as instants) do not decrease within a session, per producer."},
	// The catalog's rule holds a MUST (future-dating) and a heuristic
	// (backdating): the heuristic is SEQ-TIMESTAMP-BACKDATED.
	{ID: "SEQ-TIMESTAMP-NOT-FUTURE", Level: must, Summary: "An event's timestamp is not after its capture time, beyond a skew allowance of 5 minutes (no future-dating)."},
	// A heuristic, so SHOULD: an event stamped more than an hour before it
	// was captured is suspect of backdating (§3.2.5), but a replay of an old
	// capture or a relay that stored events shows the same delay.
	{ID: "SEQ-TIMESTAMP-BACKDATED", Level: should, Summary: "An event's timestamp is not implausibly before its capture time (more than an hour): a backdating heuristic."},
	{ID: "SEQ-SEQNO-ALL-OR-NONE", Level: must, Summary: "sequence_number appears on every event of a session or on none."},
	{ID: "SEQ-SEQNO-ZERO", Level: must, Summary: "When used, session.started has sequence_number 0."},
	// Gaps on a filtered or rate-limited subscription are not reported
	// (the specification is silent on them).
	{ID: "SEQ-SEQNO-INCREMENT", Level: must, Summary: "Each event's sequence_number is the previous one plus one: no gaps, no repeats."},
	{ID: "SEQ-DELIVERY-ORDER", Level: must, Summary: "Events of a session arrive in emission order (sequence_number order)."},

	// §3.3 Internal state chain.
	{ID: "SEQ-STATE-FIRST-IDLE", Level: must, Summary: "The first state.changed of a session leaves idle (lenient: or the implicit state of the events before it)."},
	{ID: "SEQ-STATE-CHAIN", Level: must, Summary: "Each from_state equals the previous to_state or, in the lenient profile, the implicit state of intervening events."},
	// A MUST in informative Appendix A that §4.6 and §5.11 violate: SHOULD.
	{ID: "SEQ-STATE-AWAITING-ENTER", Level: should, Summary: "A state change to awaiting_input comes at or before each awaiting.confirmation or clarification."},
	{ID: "SEQ-STATE-AWAITING-EXIT", Level: must, Summary: "A resolved confirmation or clarification is followed by a follow-up event (strict: a state change from awaiting_input first)."},
	{ID: "SEQ-STATE-CALLING-TOOL", Level: should, Summary: "The state during tool execution is calling_tool."},
	// A heuristic for the Level 1 MUST: SHOULD.
	{ID: "SEQ-STATE-L1-COVERAGE", Level: should, Summary: "Sessions that invoke tools or stream output change state to or from calling_tool and writing_output."},

	// §3.4 Tool pairing.
	{ID: "SEQ-TOOL-PAIR-PRECEDED", Level: must, Summary: "Every tool.completed is preceded by an open matching tool.invoked."},
	{ID: "SEQ-TOOL-PAIR-COMPLETED", Level: must, Summary: "Every tool.invoked gets a tool.completed before the terminal event."},
	{ID: "SEQ-TOOL-COMPLETE-ONCE", Level: must, Summary: "Each invocation gets exactly one completion."},
	{ID: "SEQ-TOOL-CALL-ID-UNIQUE", Level: must, Summary: "tool_call_id is unique among a session's invocations."},
	{ID: "SEQ-TOOL-CALL-ID-ECHO", Level: must, Summary: "A completion carries the tool_call_id of its invocation."},
	{ID: "SEQ-TOOL-NAME-MATCH", Level: must, Summary: "A completion names the same tool as its invocation."},
	{ID: "SEQ-TOOL-ID-SHOULD", Level: should, Summary: "Concurrent invocations of a tool carry tool_call_id."},
	{ID: "SEQ-TOOL-BEFORE-STATE", Level: must, Summary: "tool.completed precedes the state change that leaves calling_tool."},
	{ID: "SEQ-TOOL-AVAILABLE", Level: info, Summary: "Invoked tools are in session.started's tools_available when that list is given."},
	{ID: "SEQ-COMPLETED-COUNTS", Level: info, Summary: "completed.tool_invocations_count and the duration_ms fields agree with the session's events."},

	// §3.5 Confirmation, clarification and replies.
	{ID: "SEQ-IRREV-NEEDS-CONF", Level: must, Summary: "An irreversible tool.invoked is preceded by an unused awaiting.confirmation in its session."},
	// Lenient: a defaulted accept (§4.5.3, §6.1) authorizes; strict: only an accept reply (§4.3.1).
	{ID: "SEQ-IRREV-NEEDS-ACCEPT", Level: must, Summary: "That confirmation was resolved as accept before the irreversible tool.invoked."},
	{ID: "SEQ-CONF-ONE-ACTION", Level: must, Summary: "One accepted confirmation authorizes exactly one action: the one it names (tool_call_id, tool or action text), else the next irreversible one by order."},
	{ID: "SEQ-CONF-BLOCKING", Level: must, Summary: "No tool.invoked for the confirmed action before the confirmation is resolved."},
	{ID: "SEQ-CONF-NO-ACTION-AFTER-REJECT", Level: must, Summary: "No tool.invoked for an action whose confirmation was rejected or cancelled."},
	{ID: "SEQ-CONF-REJECT-FOLLOWUP", Level: must, Summary: "A reject is followed by an event reflecting the cancelled action (strict: a state change to thinking or deciding)."},
	{ID: "SEQ-CONF-ACCEPT-INVOKES", Level: must, Summary: "An accept is followed by the action's tool.invoked before the terminal event."},
	{ID: "SEQ-CONF-TIMEOUT-DEFAULT", Level: must, Summary: "Without a valid reply by the timeout, default_decision applies: no action after a default reject."},
	{ID: "SEQ-CONF-NO-DUP-PENDING", Level: must, Summary: "No second confirmation for the same action while the first is unresolved."},
	{ID: "SEQ-REPLY-TOKEN-UNIQUE", Level: must, Summary: "reply_token values are never reused across confirmations and clarifications."},
	{ID: "SEQ-REPLY-KNOWN-TOKEN", Level: must, Summary: "A reply's token matches an outstanding blocking event of its kind."},
	{ID: "SEQ-REPLY-FIRST-WINS", Level: must, Summary: "Only the first valid reply for a token counts, and the producer follows it."},
	{ID: "SEQ-REPLY-NOT-EXPIRED", Level: must, Summary: "A reply is decided (its timestamp) after its event and before the event's timestamp plus timeout_seconds."},
	// Prose over schema: a custom decision listed in allowed_replies is
	// allowed here (§6.3.4(6)); the reply schema's accept/reject enum is
	// MSG-CONF-REPLY-SCHEMA's concern.
	{ID: "SEQ-REPLY-DECISION-ALLOWED", Level: must, Summary: "A confirmation reply's decision is in the confirmation's allowed_replies."},
	{ID: "SEQ-REPLY-AFTER-CANCEL", Level: must, Summary: "Replies to a cancelled (superseded) prompt are invalid."},
	// The producer's support for modified_action is not recorded anywhere: INFO.
	{ID: "SEQ-REPLY-MODIFIED", Level: info, Summary: "An accept with modified_action counts as a reject for producers without support for modified actions."},
	// Not in the catalog: a recording that carries no replies on a
	// subscription (a passive recorder) cannot show what the rules of scope
	// R need; the resolution inferred from the producer's behaviour is noted
	// instead of a MUST violation (seq_unseen.go).
	{ID: "SEQ-REPLY-UNOBSERVED", Level: info, Summary: "A confirmation or clarification was resolved by a reply the recording does not carry (a passive recorder): the reply rules are not judged for it, and the inferred resolution is noted once per session."},
	{ID: "SEQ-REPLY-AUTO", Level: info, Summary: "Replies decided automatically (decided_by \"auto:...\") are surfaced."},
	{ID: "SEQ-CLAR-RESPONSE-TYPE", Level: must, Summary: "A clarification reply's response fits one of the accepted_response_kinds (and choices)."},
	{ID: "SEQ-CLAR-BLOCKING", Level: must, Summary: "The producer leaves awaiting_input only after a valid clarification reply or the timeout."},
	{ID: "SEQ-CONF-COUNTDOWN", Level: should, Summary: "For timeouts over 60 s, progress.updated at about 50% and 10% of the time remaining."},
	{ID: "SEQ-CONF-TIMEOUT-RANGE", Level: info, Summary: "timeout_seconds lies within the §6.4.2 recommendations."},

	// §3.6 Streaming output.
	{ID: "SEQ-STREAM-ONE-COMPLETE", Level: must, Summary: "Each output has exactly one complete:true chunk before the terminal event."},
	{ID: "SEQ-STREAM-AFTER-COMPLETE", Level: must, Summary: "No chunk of an output follows its complete:true chunk."},
	// Positions follow §4.3.3's normative bullet (offset since the start of
	// the current output_id), not its table ("within the session's total
	// output"); code points, not UTF-16 units.
	{ID: "SEQ-STREAM-POSITION-MONOTONIC", Level: must, Summary: "Chunk positions of an output strictly increase (equal only after an empty chunk)."},
	// Derived from "total character offset"; the catalog's default is a warning.
	// The certain half of SEQ-STREAM-POSITION-CONTIGUOUS: positions counted
	// in UTF-8 bytes where bytes differ from characters in every reading.
	{ID: "SEQ-STREAM-POSITION-BYTES", Level: must, Summary: "Chunk positions count characters, not UTF-8 bytes: a position that is the previous one plus the previous chunk's byte length, where bytes and characters differ, is wrong."},
	{ID: "SEQ-STREAM-POSITION-CONTIGUOUS", Level: should, Summary: "The first chunk is at position 0 and each next one at the previous position plus the previous chunk's length in code points."},

	// §3.7 Negotiated stream.
	// Not in the catalog: says once what a subscription withholds by its
	// handshake, whose absence the other rules then do not judge.
	{ID: "NEG-TYPES-WITHHELD", Level: info, Summary: "The handshake withholds event types (filters, or no reply support for confirmations and clarifications): their absence is not judged on that subscription."},
	{ID: "NEG-RESPONSE-REQUIRED", Level: must, Summary: "Every subscription.request gets exactly one accepted or rejected."},
	{ID: "NEG-NO-EVENTS-BEFORE-ACCEPT", Level: must, Summary: "No events on a handshaked channel before subscription.accepted or after subscription.rejected."},
	{ID: "NEG-HONORED-RATE", Level: must, Summary: "The honored max_events_per_second is not above the requested one."},
	{ID: "NEG-HONORED-LANGUAGES", Level: must, Summary: "Honored languages are a subset of the requested ones (default [en-US])."},
	{ID: "NEG-HONORED-COALESCE", Level: must, Summary: "Honored coalesce_boundaries are a subset of the requested ones (default [sentence, completion])."},
	{ID: "NEG-HONORED-FILTERS", Level: must, Summary: "Honored event_filters are at least as restrictive as the requested ones."},
	{ID: "NEG-HONORED-OTHER", Level: should, Summary: "Honored levels, extensions, reply support and signed-manifest flag are no more permissive than requested."},
	{ID: "NEG-VERSION", Level: must, Summary: "The accepted aaep_version is a published version not above the requested one."},
	// Prose over schema: a manifest_uri publishing the JWS (§10.4.1) satisfies
	// it as well as the inline signed_manifest the accepted schema describes.
	{ID: "NEG-SIGNED-MANIFEST", Level: must, Summary: "When the subscriber requires signed manifests, the accepted message carries one."},
	{ID: "NEG-SIGNED-MANIFEST-CONTENT", Level: must, Summary: "The signed manifest is a signed JWS whose claims match the accepting producer."},
	{ID: "NEG-L2-DECLARES-REPLY", Level: must, Summary: "A request claiming conformance level 2 or 3 declares supports_confirmation_reply: true."},
	{ID: "NEG-RATE", Level: must, Summary: "Non-critical events in any one-second window stay within the honored max_events_per_second."},
	{ID: "NEG-CRITICAL-EXEMPT", Level: must, Summary: "A critical event reaches every active subscription, whatever its filters and rate."},
	// Lenient: only events matching an exclude and no include (the MUST as
	// written); strict: exclude takes precedence.
	{ID: "NEG-FILTER-EXCLUDE", Level: must, Summary: "Non-critical events matching an honored exclude pattern are not emitted."},
	{ID: "NEG-FILTER-INCLUDE", Level: should, Summary: "Non-critical events matching no honored include pattern are not emitted."},
	{ID: "NEG-COALESCE-HINT", Level: should, Summary: "coalesce_hint values stay within the honored coalesce_boundaries."},
	// Contradicts §5.5.4/§6.6 (critical events go to every subscription): a warning.
	{ID: "NEG-NO-CONF-WITHOUT-REPLY-CAP", Level: should, Summary: "No confirmation or clarification on a subscription that cannot reply."},
	{ID: "NEG-VERBOSITY", Level: should, Summary: "Events use the preferred verbosity and carry the matching summary."},
	{ID: "NEG-LANGUAGE", Level: should, Summary: "Events are in a negotiated language."},
	{ID: "NEG-RENEG-RESPONSE", Level: must, Summary: "Every subscription.renegotiate gets accepted or rejected."},
	{ID: "NEG-RENEG-APPLY", Level: must, Summary: "Renegotiated terms (rate, filters) hold for events after the accepting response."},
	{ID: "NEG-RENEG-REJECT-ENDS", Level: must, Summary: "No events on a subscription after its renegotiation was rejected."},
	{ID: "NEG-CLOSE-STOPS", Level: must, Summary: "No events on a subscription after subscription.close (in-flight events aside)."},
	{ID: "NEG-CLOSE-PENDING-DEFAULT", Level: must, Summary: "A confirmation pending when its subscription closes takes its default_decision."},
	{ID: "NEG-SUBID-VALID", Level: must, Summary: "Renegotiate, close and reply messages name an accepted, open subscription: their own."},
	{ID: "NEG-RESOLUTION-NOTICE", Level: should, Summary: "Every subscription that received a confirmation gets a state change after its resolution."},

	// §3.8 Transport frames.
	{ID: "TRN-SSE-ID", Level: must, Summary: "An SSE frame's id is the event's event_id and its event name is aaep.event for core events."},
	{ID: "TRN-JSONRPC-METHOD", Level: must, Summary: "stdio JSON-RPC messages use the method of Appendix B.6.3 for their type."},
	// Judged on producer messages that answer a reply: a typed message of
	// the confirmation/clarification families, or an untyped error body
	// (B.1.4's {"error":"invalid_token",...}) that the checker claims when
	// it arrives from the producer right after a reply on the same source
	// (model.go, Claim). An error answer recorded anywhere else (after
	// other messages, on another connection) has no protocol of its own and
	// is reported as STREAM-UNKNOWN-PROTOCOL, not judged.
	{ID: "TRN-NO-FAILURE-REASON", Level: must, Summary: "A producer does not reveal why a reply failed validation."},
}

// ruleOf returns the declared rule of id (an ID missing from the tables
// gets a rule of its own, which the engine reports as missing from the rule
// table).
func ruleOf(id string) *protocol.Rule {
	if r, ok := ruleIndex[id]; ok {
		return r
	}
	return &protocol.Rule{ID: id}
}

// ruleIndex is filled in by init: the checks refer to it through ruleOf,
// and the tables refer to the checks.
var ruleIndex = map[string]*protocol.Rule{}

func init() {
	for _, r := range singleRuleTable() {
		ruleIndex[r.ID] = &r.Rule
	}
	for i := range seqRuleTable {
		ruleIndex[seqRuleTable[i].ID] = &seqRuleTable[i]
	}
}

// seqRules returns the rules of the sequence checker.
func seqRules() []protocol.Rule { return append([]protocol.Rule(nil), seqRuleTable...) }
