package aaep

// The NEG-* rules of the negotiated stream (catalog §3.7) and the TRN-*
// rules of transport frames (§3.8), declared with their catalog IDs and
// levels; seqRuleTable (seq_rules.go) lists them with the SEQ-* rules.

import "github.com/aaep-tools/aaepkit/protocol"

var (
	negTypesWithheld = &protocol.Rule{
		ID: "NEG-TYPES-WITHHELD", Level: protocol.Info,
		Summary: "The handshake withholds event types (filters, or no reply support for confirmations and clarifications): their absence is not judged on that subscription.",
		Doc:     "Not in the catalog: says once what a subscription withholds by its handshake, whose absence the other rules then do not judge.",
		Spec:    "AAEP §5.3.1.4–5, §5.3.1.7, §5.5.4; not in the catalog: the rules of aaep-rules.md §3.7 need the handshake",
	}
	negResponseRequired = &protocol.Rule{
		ID: "NEG-RESPONSE-REQUIRED", Level: protocol.Must,
		Summary: "Every subscription.request gets exactly one accepted or rejected.",
		Spec:    "AAEP §9.5.1(3), rejected schema desc.; aaep-rules.md §3.7",
	}
	negNoEventsBeforeAccept = &protocol.Rule{
		ID: "NEG-NO-EVENTS-BEFORE-ACCEPT", Level: protocol.Must,
		Summary: "No events on a handshaked channel before subscription.accepted or after subscription.rejected.",
		Spec:    "AAEP §5.1, §9.5.1; aaep-rules.md §3.7",
	}
	negHonoredRate = &protocol.Rule{
		ID: "NEG-HONORED-RATE", Level: protocol.Must,
		Summary: "The honored max_events_per_second is not above the requested one.",
		Spec:    "AAEP §5.4.4; aaep-rules.md §3.7",
	}
	negHonoredLanguages = &protocol.Rule{
		ID: "NEG-HONORED-LANGUAGES", Level: protocol.Must,
		Summary: "Honored languages are a subset of the requested ones (default [en-US]).",
		Spec:    "AAEP §5.4.4, §11; aaep-rules.md §3.7",
	}
	negHonoredCoalesce = &protocol.Rule{
		ID: "NEG-HONORED-COALESCE", Level: protocol.Must,
		Summary: "Honored coalesce_boundaries are a subset of the requested ones (default [sentence, completion]).",
		Spec:    "AAEP §5.4.4; aaep-rules.md §3.7",
	}
	negHonoredFilters = &protocol.Rule{
		ID: "NEG-HONORED-FILTERS", Level: protocol.Must,
		Summary: "Honored event_filters are at least as restrictive as the requested ones.",
		Spec:    "AAEP §5.4.4; aaep-rules.md §3.7",
	}
	negHonoredOther = &protocol.Rule{
		ID: "NEG-HONORED-OTHER", Level: protocol.Should,
		Summary: "Honored levels, extensions, reply support and signed-manifest flag are no more permissive than requested.",
		Spec:    "AAEP suite L3-HS-004; aaep-rules.md §3.7",
	}
	negVersion = &protocol.Rule{
		ID: "NEG-VERSION", Level: protocol.Must,
		Summary: "The accepted aaep_version is a published version not above the requested one.",
		Spec:    "AAEP accepted schema desc., §5.5.3; aaep-rules.md §3.7",
	}
	negSignedManifest = &protocol.Rule{
		ID: "NEG-SIGNED-MANIFEST", Level: protocol.Must,
		Summary: "When the subscriber requires signed manifests, the accepted message carries one.",
		Doc:     "Prose over schema: a manifest_uri publishing the JWS (§10.4.1) satisfies it as well as the inline signed_manifest the accepted schema describes.",
		Spec:    "AAEP §5.3.1.12, §10.4; aaep-rules.md §3.7",
	}
	negSignedManifestContent = &protocol.Rule{
		ID: "NEG-SIGNED-MANIFEST-CONTENT", Level: protocol.Must,
		Summary: "The signed manifest is a signed JWS whose claims match the accepting producer.",
		Spec:    "AAEP §10.4.2; aaep-rules.md §3.7",
	}
	negL2DeclaresReply = &protocol.Rule{
		ID: "NEG-L2-DECLARES-REPLY", Level: protocol.Must,
		Summary: "A request claiming conformance level 2 or 3 declares supports_confirmation_reply: true.",
		Spec:    "AAEP §5.3.1.4, §9.4.2(2); aaep-rules.md §3.7",
	}
	negRate = &protocol.Rule{
		ID: "NEG-RATE", Level: protocol.Must,
		Summary: "Non-critical events in any one-second window stay within the honored max_events_per_second.",
		Spec:    "AAEP §5.3.1.1, §5.6.1, §10.2 T4; aaep-rules.md §3.7",
	}
	negCriticalExempt = &protocol.Rule{
		ID: "NEG-CRITICAL-EXEMPT", Level: protocol.Must,
		Summary: "A critical event reaches every active subscription, whatever its filters and rate.",
		Spec:    "AAEP §5.5.4, §5.6.1(3); aaep-rules.md §3.7",
	}
	negFilterExclude = &protocol.Rule{
		ID: "NEG-FILTER-EXCLUDE", Level: protocol.Must,
		Summary:  "Non-critical events matching an honored exclude pattern are not emitted.",
		Doc:      "Lenient: only events matching an exclude and no include (the MUST as written); strict: exclude takes precedence.",
		Spec:     "AAEP §5.3.1.7; aaep-rules.md §3.7",
		Profiles: protocol.Profiles{Lenient: "an excluded event is reported unless an include pattern names it at least as specifically as the exclude (the MUST as written)", Strict: "exclude takes precedence over include (§5.3.1.7)"},
	}
	negFilterInclude = &protocol.Rule{
		ID: "NEG-FILTER-INCLUDE", Level: protocol.Should,
		Summary: "Non-critical events matching no honored include pattern are not emitted.",
		Spec:    "AAEP §5.3.1.7; aaep-rules.md §3.7",
	}
	negCoalesceHint = &protocol.Rule{
		ID: "NEG-COALESCE-HINT", Level: protocol.Should,
		Summary: "coalesce_hint values stay within the honored coalesce_boundaries.",
		Spec:    "AAEP §5.3.1.6; aaep-rules.md §3.7",
	}
	negNoConfWithoutReplyCap = &protocol.Rule{
		ID: "NEG-NO-CONF-WITHOUT-REPLY-CAP", Level: protocol.Should,
		Summary: "No confirmation or clarification on a subscription that cannot reply.",
		Doc:     "Contradicts §5.5.4/§6.6 (critical events go to every subscription): a warning.",
		Spec:    "AAEP §5.3.1.4–5; aaep-rules.md §3.7",
	}
	negVerbosity = &protocol.Rule{
		ID: "NEG-VERBOSITY", Level: protocol.Should,
		Summary: "Events use the preferred verbosity and carry the matching summary.",
		Spec:    "AAEP §5.3.1.2; aaep-rules.md §3.7",
	}
	negLanguage = &protocol.Rule{
		ID: "NEG-LANGUAGE", Level: protocol.Should,
		Summary: "Events are in a negotiated language.",
		Spec:    "AAEP §5.3.1.3, §11.3; aaep-rules.md §3.7",
	}
	negRenegResponse = &protocol.Rule{
		ID: "NEG-RENEG-RESPONSE", Level: protocol.Must,
		Summary: "Every subscription.renegotiate gets accepted or rejected.",
		Spec:    "AAEP §5.7; aaep-rules.md §3.7",
	}
	negRenegApply = &protocol.Rule{
		ID: "NEG-RENEG-APPLY", Level: protocol.Must,
		Summary: "Renegotiated terms (rate, filters) hold for events after the accepting response.",
		Spec:    "AAEP §5.7.1–2, §9.5.1(6); aaep-rules.md §3.7",
	}
	negRenegRejectEnds = &protocol.Rule{
		ID: "NEG-RENEG-REJECT-ENDS", Level: protocol.Must,
		Summary: "No events on a subscription after its renegotiation was rejected.",
		Spec:    "AAEP §5.7; aaep-rules.md §3.7",
	}
	negCloseStops = &protocol.Rule{
		ID: "NEG-CLOSE-STOPS", Level: protocol.Must,
		Summary: "No events on a subscription after subscription.close (in-flight events aside).",
		Spec:    "AAEP §5.8.2; aaep-rules.md §3.7",
	}
	negClosePendingDefault = &protocol.Rule{
		ID: "NEG-CLOSE-PENDING-DEFAULT", Level: protocol.Must,
		Summary: "A confirmation pending when its subscription closes takes its default_decision.",
		Spec:    "AAEP §5.8.2, §9.5.1(7); aaep-rules.md §3.7",
	}
	negSubidValid = &protocol.Rule{
		ID: "NEG-SUBID-VALID", Level: protocol.Must,
		Summary: "Renegotiate, close and reply messages name an accepted, open subscription: their own.",
		Spec:    "AAEP reply schema desc., §10.2 T1/T8; aaep-rules.md §3.7",
	}
	negResolutionNotice = &protocol.Rule{
		ID: "NEG-RESOLUTION-NOTICE", Level: protocol.Should,
		Summary: "Every subscription that received a confirmation gets a state change after its resolution.",
		Spec:    "AAEP §6.7.2, §5.9; aaep-rules.md §3.7",
	}
	trnSSEID = &protocol.Rule{
		ID: "TRN-SSE-ID", Level: protocol.Must,
		Summary: "An SSE frame's id is the event's event_id and its event name is aaep.event for core events.",
		Spec:    "AAEP App. B.1.3; aaep-rules.md §3.8",
	}
	trnJSONRPCMethod = &protocol.Rule{
		ID: "TRN-JSONRPC-METHOD", Level: protocol.Must,
		Summary: "stdio JSON-RPC messages use the method of Appendix B.6.3 for their type.",
		Spec:    "AAEP App. B.6; aaep-rules.md §3.8",
	}
	trnNoFailureReason = &protocol.Rule{
		ID: "TRN-NO-FAILURE-REASON", Level: protocol.Must,
		Summary: "A producer does not reveal why a reply failed validation.",
		Doc:     "Judged on producer messages that answer a reply: a typed message of the confirmation/clarification families, or an untyped error body (B.1.4's {\"error\":\"invalid_token\",...}) that the checker claims when it arrives from the producer right after a reply on the same source (model.go, Claim). An error answer recorded anywhere else (after other messages, on another connection) has no protocol of its own and is reported as STREAM-UNKNOWN-PROTOCOL, not judged.",
		Spec:    "AAEP §6.3.4; aaep-rules.md §3.8",
	}
)
