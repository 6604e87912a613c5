package aaep

// The NEG-* rules of the negotiated stream (catalog §3.7) and the TRN-*
// rules of transport frames (§3.8), declared with their catalog IDs and
// levels; seqRuleTable (seq_rules.go) lists them with the SEQ-* rules.

import "github.com/aaep-tools/aaepkit/protocol"

var (
	negTypesWithheld = &protocol.Rule{
		ID: "NEG-TYPES-WITHHELD", Level: protocol.Info, Party: protocol.Either,
		Summary: "The handshake withholds event types (filters, or no reply support for confirmations and clarifications): their absence is not judged on that subscription.",
		Doc:     "Not in the catalog: says once what a subscription withholds by its handshake, whose absence the other rules then do not judge.",
		Spec:    "AAEP §5.3.1.4–5, §5.3.1.7, §5.5.4; not in the catalog: the rules of aaep-rules.md §3.7 need the handshake",
	}
	negResponseRequired = &protocol.Rule{
		ID: "NEG-RESPONSE-REQUIRED", Level: protocol.Must, Party: protocol.Producer,
		Summary: "Every subscription.request gets exactly one accepted or rejected.",
		Doc:     "MUST in §9.5.1(3). Reported when a subscription.request is followed by another request, or the stream ends, with no accepted or rejected on its source, and when a second response answers a request already answered. Only sources whose recording holds the request are judged; in a recording of a replay, which holds every message its subscribers sent, an accepted or rejected that answers no request is reported too.",
		Spec:    "AAEP §9.5.1(3), rejected schema desc.; aaep-rules.md §3.7",
	}
	negNoEventsBeforeAccept = &protocol.Rule{
		ID: "NEG-NO-EVENTS-BEFORE-ACCEPT", Level: protocol.Must, Party: protocol.Producer,
		Summary: "No events on a handshaked channel before subscription.accepted or after subscription.rejected.",
		Doc:     "MUST for Level 3 producers (§5.1, §9.5.1). On a source whose recording holds the handshake, an event before subscription.accepted, or after subscription.rejected, is reported once per subscription. Captures without a recorded handshake are not judged.",
		Spec:    "AAEP §5.1, §9.5.1; aaep-rules.md §3.7",
	}
	negHonoredRate = &protocol.Rule{
		ID: "NEG-HONORED-RATE", Level: protocol.Must, Party: protocol.Producer,
		Summary: "The honored max_events_per_second is not above the requested one.",
		Doc:     "MUST in §5.4.4. Reported when honored max_events_per_second exceeds the requested one; an absent request means unlimited. An honored rate left out reads as the requested value (as the conformance suite reads it), so it is not reported. Judged on accepted answers whose request is recorded.",
		Spec:    "AAEP §5.4.4; aaep-rules.md §3.7",
	}
	negHonoredLanguages = &protocol.Rule{
		ID: "NEG-HONORED-LANGUAGES", Level: protocol.Must, Party: protocol.Producer,
		Summary: "Honored languages are a subset of the requested ones (default [en-US]).",
		Doc:     "MUST in §5.4.4. Every honored language must be among the requested ones (default [en-US] when the request names none); a bare tag and its regional form match each other (Ch. 11), where the catalog would warn. Judged on accepted answers whose request is recorded; at most 64 languages are looked at.",
		Spec:    "AAEP §5.4.4, §11; aaep-rules.md §3.7",
	}
	negHonoredCoalesce = &protocol.Rule{
		ID: "NEG-HONORED-COALESCE", Level: protocol.Must, Party: protocol.Producer,
		Summary: "Honored coalesce_boundaries are a subset of the requested ones (default [sentence, completion]).",
		Doc:     "MUST in §5.4.4. Every honored coalesce boundary must be among the requested ones (default [sentence, completion]). Judged on accepted answers whose request is recorded.",
		Spec:    "AAEP §5.4.4; aaep-rules.md §3.7",
	}
	negHonoredFilters = &protocol.Rule{
		ID: "NEG-HONORED-FILTERS", Level: protocol.Must, Party: protocol.Producer,
		Summary: "Honored event_filters are at least as restrictive as the requested ones.",
		Doc:     "MUST in §5.4.4. Every honored include pattern must be covered by a requested include (default aaep:agent.*), and every requested exclude that the honored includes still reach must stay excluded. Judged on accepted answers whose request is recorded; at most 8 findings per answer.",
		Spec:    "AAEP §5.4.4; aaep-rules.md §3.7",
	}
	negHonoredOther = &protocol.Rule{
		ID: "NEG-HONORED-OTHER", Level: protocol.Should, Party: protocol.Producer,
		Summary: "Honored levels, extensions, reply support and signed-manifest flag are no more permissive than requested.",
		Doc:     "SHOULD: the conformance suite's check (L3-HS-004) rather than a keyword of the prose. Reported when honored conformance levels or extensions were not requested, a reply-support flag is true where the request said false or left it out, or accept_signed_manifests_only is dropped. Fields left out of honored_capabilities read as requested and are not reported.",
		Spec:    "AAEP suite L3-HS-004; aaep-rules.md §3.7",
	}
	negVersion = &protocol.Rule{
		ID: "NEG-VERSION", Level: protocol.Must, Party: protocol.Producer,
		Summary: "The accepted aaep_version is a published version not above the requested one.",
		Doc:     "MUST in §5.5.3 and the accepted schema description. Reported when the accepted aaep_version is not a published version, or is higher than the requested one; a lower version is allowed. Judged on the first accepted answer of a recorded request, not on renegotiations.",
		Spec:    "AAEP accepted schema desc., §5.5.3; aaep-rules.md §3.7",
	}
	negSignedManifest = &protocol.Rule{
		ID: "NEG-SIGNED-MANIFEST", Level: protocol.Must, Party: protocol.Producer,
		Summary: "When the subscriber requires signed manifests, the accepted message carries one.",
		Doc:     "Prose over schema: a manifest_uri publishing the JWS (§10.4.1) satisfies it as well as the inline signed_manifest the accepted schema describes.",
		Spec:    "AAEP §5.3.1.12, §10.4; aaep-rules.md §3.7",
	}
	negSignedManifestContent = &protocol.Rule{
		ID: "NEG-SIGNED-MANIFEST-CONTENT", Level: protocol.Must, Party: protocol.Producer,
		Summary: "The signed manifest is a signed JWS whose claims match the accepting producer.",
		Doc:     "MUST in §10.4.2. The signed_manifest must be a compact JWS with a readable header whose alg is not none, a JSON payload whose agent_id (when given) is the accepting producer's, and whose aaep_versions_supported (when given) holds the accepted version. The signature itself is not verified: that needs keys a recording does not hold.",
		Spec:    "AAEP §10.4.2; aaep-rules.md §3.7",
	}
	negL2DeclaresReply = &protocol.Rule{
		ID: "NEG-L2-DECLARES-REPLY", Level: protocol.Must, Party: protocol.Subscriber,
		Summary: "A request claiming conformance level 2 or 3 declares supports_confirmation_reply: true.",
		Doc:     "MUST in §5.3.1.4 and §9.4.2(2). Judged on the request alone, so also for sources without an accepted answer: a subscription.request or renegotiation (merged with the request) whose supported_conformance_levels include 2 or 3 without supports_confirmation_reply: true is reported.",
		Spec:    "AAEP §5.3.1.4, §9.4.2(2); aaep-rules.md §3.7",
	}
	negRate = &protocol.Rule{
		ID: "NEG-RATE", Level: protocol.Must, Party: protocol.Producer,
		Summary: "Non-critical events in any one-second window stay within the honored max_events_per_second.",
		Doc:     "MUST in §5.3.1.1 and §5.6.1. Non-critical events are counted in a sliding one-second window of receive time per subscription; a burst over the honored max_events_per_second is reported once, until the rate drops back. Only handshaked subscriptions with a rate are judged; rates beyond 100000 are not, and a rate set by a renegotiation is NEG-RENEG-APPLY's.",
		Spec:    "AAEP §5.3.1.1, §5.6.1, §10.2 T4; aaep-rules.md §3.7",
	}
	negCriticalExempt = &protocol.Rule{
		ID: "NEG-CRITICAL-EXEMPT", Level: protocol.Must, Party: protocol.Producer,
		Summary: "A critical event reaches every active subscription, whatever its filters and rate.",
		Doc:     "MUST in §5.5.4 and §5.6.1(3). Judged when a session closes, in captures with at least two accepted subscriptions: a critical event that reached some subscriptions but not another that was active when it was sent (accepted before it and not closed or rejected by then, a second's grace allowed) is reported. Up to 1024 critical events per session are remembered.",
		Spec:    "AAEP §5.5.4, §5.6.1(3); aaep-rules.md §3.7",
	}
	negFilterExclude = &protocol.Rule{
		ID: "NEG-FILTER-EXCLUDE", Level: protocol.Must, Party: protocol.Producer,
		Summary:  "Non-critical events matching an honored exclude pattern are not emitted.",
		Doc:      "Lenient: only events matching an exclude and no include (the MUST as written); strict: exclude takes precedence.",
		Spec:     "AAEP §5.3.1.7; aaep-rules.md §3.7",
		Profiles: protocol.Profiles{Lenient: "an excluded event is reported unless an include pattern names it at least as specifically as the exclude (the MUST as written)", Strict: "exclude takes precedence over include (§5.3.1.7)"},
	}
	negFilterInclude = &protocol.Rule{
		ID: "NEG-FILTER-INCLUDE", Level: protocol.Should, Party: protocol.Producer,
		Summary: "Non-critical events matching no honored include pattern are not emitted.",
		Doc:     "SHOULD in §5.3.1.7. Reported for a non-critical event on a handshaked subscription whose type matches none of the effective include patterns; the default aaep:agent.* does not match extension types. Critical events bypass filters and are never reported.",
		Spec:    "AAEP §5.3.1.7; aaep-rules.md §3.7",
	}
	negCoalesceHint = &protocol.Rule{
		ID: "NEG-COALESCE-HINT", Level: protocol.Should, Party: protocol.Producer,
		Summary: "coalesce_hint values stay within the honored coalesce_boundaries.",
		Doc:     "SHOULD in §5.3.1.6. Reported once per subscription for the first output chunk whose coalesce_hint is not among the effective coalesce boundaries (default [sentence, completion]) on a handshaked subscription.",
		Spec:    "AAEP §5.3.1.6; aaep-rules.md §3.7",
	}
	negNoConfWithoutReplyCap = &protocol.Rule{
		ID: "NEG-NO-CONF-WITHOUT-REPLY-CAP", Level: protocol.Should, Party: protocol.Producer,
		Summary: "No confirmation or clarification on a subscription that cannot reply.",
		Doc:     "Contradicts §5.5.4/§6.6 (critical events go to every subscription): a warning.",
		Spec:    "AAEP §5.3.1.4–5; aaep-rules.md §3.7",
	}
	negVerbosity = &protocol.Rule{
		ID: "NEG-VERBOSITY", Level: protocol.Should, Party: protocol.Producer,
		Summary: "Events use the preferred verbosity and carry the matching summary.",
		Doc:     "SHOULD in §5.3.1.2. On a handshaked subscription, an event whose verbosity differs from the preferred one, or (preferred terse or detailed) that carries summaries but not the preferred summary_*, is reported once per subscription; output chunks need no summary.",
		Spec:    "AAEP §5.3.1.2; aaep-rules.md §3.7",
	}
	negLanguage = &protocol.Rule{
		ID: "NEG-LANGUAGE", Level: protocol.Should, Party: protocol.Producer,
		Summary: "Events are in a negotiated language.",
		Doc:     "SHOULD in §5.3.1.3 and §11.3. An event's language (or localization_hints.primary_language) must be a negotiated language, bare and regional tags matching each other; the first mismatch per handshaked subscription is reported.",
		Spec:    "AAEP §5.3.1.3, §11.3; aaep-rules.md §3.7",
	}
	negRenegResponse = &protocol.Rule{
		ID: "NEG-RENEG-RESPONSE", Level: protocol.Must, Party: protocol.Producer,
		Summary: "Every subscription.renegotiate gets accepted or rejected.",
		Doc:     "MUST in §5.7. Reported when a subscription.renegotiate is followed by another request or renegotiation, or the stream ends, without an accepted or rejected on its source.",
		Spec:    "AAEP §5.7; aaep-rules.md §3.7",
	}
	negRenegApply = &protocol.Rule{
		ID: "NEG-RENEG-APPLY", Level: protocol.Must, Party: protocol.Producer,
		Summary: "Renegotiated terms (rate, filters) hold for events after the accepting response.",
		Doc:     "MUST in §5.7.1–2. Renegotiated terms apply to events received more than 500 ms after the accepting answer (events in flight may follow the old terms); a breach of a rate or an exclude filter that came from a renegotiation is reported here instead of NEG-RATE or NEG-FILTER-EXCLUDE. The merged terms are checked against NEG-HONORED-* at the accepted answer.",
		Spec:    "AAEP §5.7.1–2, §9.5.1(6); aaep-rules.md §3.7",
	}
	negRenegRejectEnds = &protocol.Rule{
		ID: "NEG-RENEG-REJECT-ENDS", Level: protocol.Must, Party: protocol.Producer,
		Summary: "No events on a subscription after its renegotiation was rejected.",
		Doc:     "MUST in §5.7: a rejected renegotiation ends the subscription. The first event on it after the rejection is reported, once per subscription.",
		Spec:    "AAEP §5.7; aaep-rules.md §3.7",
	}
	negCloseStops = &protocol.Rule{
		ID: "NEG-CLOSE-STOPS", Level: protocol.Must, Party: protocol.Producer,
		Summary: "No events on a subscription after subscription.close (in-flight events aside).",
		Doc:     "MUST in §5.8.2. After a subscription.close on a source, the first event that follows is reported, once per subscription; after a close the subscriber sent, events within one second are taken to be in flight and are not reported.",
		Spec:    "AAEP §5.8.2; aaep-rules.md §3.7",
	}
	negClosePendingDefault = &protocol.Rule{
		ID: "NEG-CLOSE-PENDING-DEFAULT", Level: protocol.Must, Party: protocol.Producer,
		Summary: "A confirmation pending when its subscription closes takes its default_decision.",
		Doc:     "MUST in §5.8.2 and §9.5.1(7). When a subscription closes while a confirmation it received awaits a reply, and no other open subscription that can reply received it, the confirmation takes its default_decision; a tool invocation attributed to it after a default reject is reported.",
		Spec:    "AAEP §5.8.2, §9.5.1(7); aaep-rules.md §3.7",
	}
	negSubidValid = &protocol.Rule{
		ID: "NEG-SUBID-VALID", Level: protocol.Must, Party: protocol.Either,
		Summary: "Renegotiate, close and reply messages name an accepted, open subscription: their own.",
		Doc:     "MUST by the reply schema's description and §10.2. A renegotiate, close or reply that names a subscription_id no recorded accepted answer created, one already closed or rejected, or another channel's, is reported. Judged only once the capture holds at least one accepted answer with a subscription_id, and only for messages that carry one.",
		Spec:    "AAEP reply schema desc., §10.2 T1/T8; aaep-rules.md §3.7",
	}
	// negReplySubIDUnissued takes one case from MSG-CONF-REPLY-SCHEMA and
	// MSG-CLAR-REPLY-SCHEMA: it is judged with the handshake in view, so
	// the sequence checker reports it (and their missing subscription_id).
	negReplySubIDUnissued = &protocol.Rule{
		ID: "NEG-REPLY-SUBID-UNISSUED", Level: protocol.Should, StrictLevel: protocol.Must, Party: protocol.Subscriber,
		Summary: "A reply from a subscriber that was never issued a subscription_id still carries one.",
		Doc: "The specification contradicts itself: §6.3.1 and the reply schemas require subscription_id (\"the subscription on which this reply is sent\"), but §9.3.3 lets a subscriber receive events \"without ever sending\" a subscription.request and §9.5.2(2) makes the handshake a Level 3 duty, so a Level 2 subscriber that never subscribed has no id to send. " +
			"Reported for a confirmation.reply or clarification.reply without subscription_id when no subscription.accepted naming a subscription_id precedes it in its stream; once one does, the missing field is MSG-CONF-REPLY-SCHEMA's or MSG-CLAR-REPLY-SCHEMA's MUST. A profile reading: SHOULD in the lenient profile (the conformance levels), MUST in the strict one (the schema).",
		Spec:     "AAEP §6.3.1, §6.5, reply schemas vs §9.3.3, §9.5.2(2)",
		Profiles: protocol.Profiles{Lenient: "SHOULD: a subscriber \"MAY receive events without ever sending\" a subscription.request (§9.3.3), which only Level 3 must send (§9.5.2(2)): below Level 3 there may be no id to send", Strict: "MUST: subscription_id is a required field, \"the subscription on which this reply is sent\" (§6.3.1, the reply schemas)"},
	}
	negResolutionNotice = &protocol.Rule{
		ID: "NEG-RESOLUTION-NOTICE", Level: protocol.Should, Party: protocol.Producer,
		Summary: "Every subscription that received a confirmation gets a state change after its resolution.",
		Doc:     "SHOULD in §6.7.2. When a session closes, every handshaked subscription still open that received a resolved confirmation but no state change after its resolution is reported. Confirmations superseded, ended with the session or resolved by an unrecorded reply are not judged, and neither are subscriptions that filter out state changes.",
		Spec:    "AAEP §6.7.2, §5.9; aaep-rules.md §3.7",
	}
	trnSSEID = &protocol.Rule{
		ID: "TRN-SSE-ID", Level: protocol.Must, Party: protocol.Producer,
		Summary: "An SSE frame's id is the event's event_id and its event name is aaep.event for core events.",
		Doc:     "MUST by the SSE binding (B.1.3), so Last-Event-ID resumption works. Judged only when the capture kept the frame's attributes: an id field that differs from the event's event_id, or an event field other than aaep.event on a core event, is reported; extension types may use other event names.",
		Spec:    "AAEP App. B.1.3; aaep-rules.md §3.8",
	}
	trnJSONRPCMethod = &protocol.Rule{
		ID: "TRN-JSONRPC-METHOD", Level: protocol.Must, Party: protocol.Either,
		Summary: "stdio JSON-RPC messages use the method of Appendix B.6.3 for their type.",
		Doc:     "MUST by the stdio binding (B.6.3). Judged only when the capture kept the JSON-RPC method with the record: events travel as aaep.event, requests as aaep.subscribe, renegotiations as aaep.renegotiate, replies as aaep.reply, closes as aaep.close; messages sent as responses (no method) are not judged.",
		Spec:    "AAEP App. B.6; aaep-rules.md §3.8",
	}
	trnNoFailureReason = &protocol.Rule{
		ID: "TRN-NO-FAILURE-REASON", Level: protocol.Must, Party: protocol.Producer,
		Summary: "A producer does not reveal why a reply failed validation.",
		Doc:     "Judged on producer messages that answer a reply: a typed message of the confirmation/clarification families, or an untyped error body (B.1.4's {\"error\":\"invalid_token\",...}) that the checker claims when it arrives from the producer right after a reply on the same source (model.go, Claim). An error answer recorded anywhere else (after other messages, on another connection) has no protocol of its own and is reported as STREAM-UNKNOWN-PROTOCOL, not judged.",
		Spec:    "AAEP §6.3.4; aaep-rules.md §3.8",
	}
)
