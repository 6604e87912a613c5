package aaep

// The single-message rules, each declared with its catalog ID, level and
// check: envelope rules ENV-* (catalog §1.5), payload rules EVT-* (§2.13)
// and handshake/reply rules MSG-* (§5.9). A check reports through
// checker.report, which files the finding under the rule being checked.

import "github.com/aaep-tools/aaepkit/protocol"

// envRules lists the envelope rules of catalog §1.5 (27), applied to every
// event and never to handshake or reply messages.
var envRules = []*singleRule{
	envJSONObject, envUTF8, envIntRange, envReqFields, envContext, envTypeForm,
	envTypeCoreKnown, envTypeExtDeclared, envEventIDFormat, envSessionIDFormat, envTimestampFormat, envTimestampPrecision,
	envTimestampReal, envProducer, envAAEPVersion, envVerbosityEnum, envUrgencyEnum, envSeqnoType,
	envCorrelationType, envLochintsShape, envLochintsPresent, envExtensionsShape, envExtPrefixDeclared, envExtReservedPrefix,
	envForbiddenFields, envSize, envSchema,
}

var (
	envJSONObject = &singleRule{Rule: protocol.Rule{
		ID: "ENV-JSON-OBJECT", Level: protocol.Must,
		Summary: "The message parses as strict RFC 8259 JSON and is an object.",
		Spec:    "AAEP §3.8, §3.9(1); aaep-rules.md §1.5",
	}, scope: scopeRaw, check: nil}
	envUTF8 = &singleRule{Rule: protocol.Rule{
		ID: "ENV-UTF8", Level: protocol.Must,
		Summary: "The message bytes are valid UTF-8 without a byte-order mark.",
		Spec:    "AAEP §3.8, §11.2; aaep-rules.md §1.5",
	}, scope: scopeRaw, check: nil}
	envIntRange = &singleRule{Rule: protocol.Rule{
		ID: "ENV-INT-RANGE", Level: protocol.Must,
		Summary: "No JSON integer beyond ±2^53; larger values are encoded as strings.",
		Spec:    "AAEP §3.8; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envIntRange}
	envReqFields = &singleRule{Rule: protocol.Rule{
		ID: "ENV-REQ-FIELDS", Level: protocol.Must,
		Summary: "All six required envelope fields are present: @context, type, event_id, session_id, timestamp, producer.",
		Spec:    "AAEP §3.2, §3.9(2); aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envReqFields}
	envContext = &singleRule{Rule: protocol.Rule{
		ID: "ENV-CONTEXT", Level: protocol.Must,
		Summary: "@context is the core context URL, or an array of URIs whose first element is the core context URL.",
		Spec:    "AAEP §3.2.1, §3.9(4); aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envContext}
	envTypeForm = &singleRule{Rule: protocol.Rule{
		ID: "ENV-TYPE-FORM", Level: protocol.Must,
		Summary: "type is a non-empty compact prefix:local name or a full URI.",
		Spec:    "AAEP §3.2.2; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envTypeForm}
	envTypeCoreKnown = &singleRule{Rule: protocol.Rule{
		ID: "ENV-TYPE-CORE-KNOWN", Level: protocol.Must,
		Summary: "A type in the aaep: namespace is one of the 12 core event types.",
		Spec:    "AAEP §3.2.2, §3.11.3; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envTypeCoreKnown}
	envTypeExtDeclared = &singleRule{Rule: protocol.Rule{
		ID: "ENV-TYPE-EXT-DECLARED", Level: protocol.Must,
		Summary: "A non-core type's vocabulary is declared in @context.",
		Spec:    "AAEP §3.9(5), §7.4; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envTypeExtDeclared}
	envEventIDFormat = &singleRule{Rule: protocol.Rule{
		ID: "ENV-EVENT-ID-FORMAT", Level: protocol.Must,
		Summary: "event_id matches ^evt_[A-Za-z0-9]{1,64}$.",
		Spec:    "AAEP §3.2.3; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envEventIDFormat}
	envSessionIDFormat = &singleRule{Rule: protocol.Rule{
		ID: "ENV-SESSION-ID-FORMAT", Level: protocol.Must,
		Summary: "session_id matches ^sess_[A-Za-z0-9]{1,64}$.",
		Spec:    "AAEP §3.2.4; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envSessionIDFormat}
	envTimestampFormat = &singleRule{Rule: protocol.Rule{
		ID: "ENV-TIMESTAMP-FORMAT", Level: protocol.Must,
		Summary: "timestamp has the form YYYY-MM-DDTHH:MM:SS[.fff]Z or ±HH:MM and is a real calendar instant.",
		Spec:    "AAEP §3.2.5, §3.11.2; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envTimestampFormat}
	envTimestampPrecision = &singleRule{Rule: protocol.Rule{
		ID: "ENV-TIMESTAMP-PRECISION", Level: protocol.Must,
		Summary: "timestamp fractional seconds are absent, 3 digits or 6 digits.",
		Spec:    "AAEP §3.2.5; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envTimestampPrecision}
	envTimestampReal = &singleRule{Rule: protocol.Rule{
		ID: "ENV-TIMESTAMP-REAL", Level: protocol.Must,
		Summary: "timestamp is a real instant, not a placeholder such as the Unix epoch or 9999-12-31.",
		Spec:    "AAEP §3.2.5; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envTimestampReal}
	envProducer = &singleRule{Rule: protocol.Rule{
		ID: "ENV-PRODUCER", Level: protocol.Must,
		Summary: "producer is an object with a non-empty agent_id, only the five defined keys, non-empty string values and a URI manifest_uri.",
		Spec:    "AAEP §3.2.6, schema; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envProducer}
	envAAEPVersion = &singleRule{Rule: protocol.Rule{
		ID: "ENV-AAEP-VERSION", Level: protocol.Must,
		Summary: "aaep_version, when present, is a semantic version of a published AAEP release (1.0.0).",
		Spec:    "AAEP §3.4.4; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envAAEPVersion}
	envVerbosityEnum = &singleRule{Rule: protocol.Rule{
		ID: "ENV-VERBOSITY-ENUM", Level: protocol.Must,
		Summary: "verbosity is terse, normal or detailed.",
		Spec:    "AAEP §3.3.1; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envVerbosityEnum}
	envUrgencyEnum = &singleRule{Rule: protocol.Rule{
		ID: "ENV-URGENCY-ENUM", Level: protocol.Must,
		Summary: "urgency is background, normal or critical.",
		Spec:    "AAEP §3.3.2; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envUrgencyEnum}
	envSeqnoType = &singleRule{Rule: protocol.Rule{
		ID: "ENV-SEQNO-TYPE", Level: protocol.Must,
		Summary: "sequence_number is an integer >= 0.",
		Spec:    "AAEP §3.4.1; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envSeqNoType}
	envCorrelationType = &singleRule{Rule: protocol.Rule{
		ID: "ENV-CORRELATION-TYPE", Level: protocol.Must,
		Summary: "correlation_id is a string.",
		Spec:    "AAEP §3.4.2; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envCorrelationType}
	envLochintsShape = &singleRule{Rule: protocol.Rule{
		ID: "ENV-LOCHINTS-SHAPE", Level: protocol.Must,
		Summary: "localization_hints has only its six keys, valid language tags and script, a text_direction of ltr/rtl/auto, and bounded unique lists.",
		Spec:    "AAEP §3.3.3, schema; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envLocHintsShape}
	envLochintsPresent = &singleRule{Rule: protocol.Rule{
		ID: "ENV-LOCHINTS-PRESENT", Level: protocol.Must,
		Summary:  "Events with human-readable text carry localization_hints.primary_language (Ch. 11; strict profile only, Ch. 3 only recommends it).",
		Spec:     "AAEP §11.1 vs §3.3.3; aaep-rules.md §1.5",
		Profiles: protocol.Profiles{Lenient: "not checked: Chapter 3 makes it RECOMMENDED, Chapter 11 a MUST", Strict: "reported (Chapter 11's MUST)"},
	}, scope: scopeEvent, check: (*checker).envLocHintsPresent}
	envExtensionsShape = &singleRule{Rule: protocol.Rule{
		ID: "ENV-EXTENSIONS-SHAPE", Level: protocol.Must,
		Summary: "extensions is an object whose values are all objects.",
		Spec:    "AAEP §3.4.3; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envExtensionsShape}
	envExtPrefixDeclared = &singleRule{Rule: protocol.Rule{
		ID: "ENV-EXT-PREFIX-DECLARED", Level: protocol.Must,
		Summary: "Every extensions key is a prefix declared in @context.",
		Spec:    "AAEP §3.4.3; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envExtPrefixDeclared}
	envExtReservedPrefix = &singleRule{Rule: protocol.Rule{
		ID: "ENV-EXT-RESERVED-PREFIX", Level: protocol.Must,
		Summary: "Extension prefixes are not aaep, xsd, rdf or rdfs and do not start with @.",
		Spec:    "AAEP §7.3.2; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envExtReservedPrefix}
	envForbiddenFields = &singleRule{Rule: protocol.Rule{
		ID: "ENV-FORBIDDEN-FIELDS", Level: protocol.Must,
		Summary: "Top-level keys are envelope fields, the type's payload fields or the verbosity forms summary_terse/normal/detailed (any type, §3.3.1); custom fields go inside extensions; no other aaep_* key and no @id, @graph, @base, @vocab.",
		Spec:    "AAEP §3.5, §3.11.5, §2.2.6; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envForbiddenFields}
	envSize = &singleRule{Rule: protocol.Rule{
		ID: "ENV-SIZE", Level: protocol.Should,
		Summary: "The event respects the §3.7 limits: 64 KiB, 32 envelope-level fields, payload depth 8, strings of 16 KiB.",
		Spec:    "AAEP §3.7; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envSize}
	envSchema = &singleRule{Rule: protocol.Rule{
		ID: "ENV-SCHEMA", Level: protocol.Must,
		Summary: "Envelope fields have the JSON types envelope.schema.json gives them.",
		Spec:    "AAEP §3.9(3,7), §9.3.1(8); aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envSchema}
)

// evtRules lists the single-event payload rules of catalog §2.13 (15),
// applied to events of the 12 core types.
var evtRules = []*singleRule{
	evtSchema, evtTypeConst, evtUrgencyCritical, evtUrgencyRecommended, evtSummaryNormal, evtConfDefaultDecision,
	evtConfDefaultShould, evtConfReversibilityOnly, evtConfAllowedReplies, evtClarChoices, evtClarDefaultResponse, evtProgressStepLeTotal,
	evtToolcErrorMessage, evtStreamHintComplete, evtSecrets,
}

var (
	evtSchema = &singleRule{Rule: protocol.Rule{
		ID: "EVT-SCHEMA", Level: protocol.Must,
		Summary:  "The payload validates against its core schema: required fields, types, enums, patterns and ranges.",
		Spec:     "AAEP §4.7, §9.3.1(8); aaep-rules.md §2.13",
		Profiles: protocol.Profiles{Lenient: "string maximum lengths are not enforced (the prose makes 16 KiB a soft limit, §3.7); minimum lengths are", Strict: "string maximum lengths of the schemas are enforced too"},
	}, scope: scopeCore, check: (*checker).evtSchema}
	evtTypeConst = &singleRule{Rule: protocol.Rule{
		ID: "EVT-TYPE-CONST", Level: protocol.Must,
		Summary: "type is exactly the compact core type (or its https://aaep-protocol.org/types/ URI form), not a variant spelling.",
		Spec:    "AAEP schema vs §3.2.2; aaep-rules.md §2.13",
	}, scope: scopeCore, check: (*checker).evtTypeConst}
	evtUrgencyCritical = &singleRule{Rule: protocol.Rule{
		ID: "EVT-URGENCY-CRITICAL", Level: protocol.Must,
		Summary: "session.errored, awaiting.confirmation, awaiting.clarification and handoff.requested carry urgency \"critical\" (absent means normal).",
		Spec:    "AAEP §4.1.3, §4.4.1–3, §5.5.4; aaep-rules.md §2.13",
	}, scope: scopeCore, check: (*checker).evtUrgencyCritical}
	evtUrgencyRecommended = &singleRule{Rule: protocol.Rule{
		ID: "EVT-URGENCY-RECOMMENDED", Level: protocol.Should,
		Summary: "The other core types use the urgency §3.3.2 recommends for them.",
		Spec:    "AAEP §3.3.2; aaep-rules.md §2.13",
	}, scope: scopeCore, check: (*checker).evtUrgencyRecommended}
	evtSummaryNormal = &singleRule{Rule: protocol.Rule{
		ID: "EVT-SUMMARY-NORMAL", Level: protocol.Must,
		Summary:  "Events likely to be announced carry summary_normal.",
		Spec:     "AAEP §9.3.1(9); aaep-rules.md §2.13",
		Profiles: protocol.Profiles{Lenient: "only on the types whose schema requires summary_normal", Strict: "also on state.changed, progress.updated, tool.completed, awaiting.confirmation, awaiting.clarification and handoff.requested, unless urgency is background"},
	}, scope: scopeCore, check: (*checker).evtSummaryNormal}
	evtConfDefaultDecision = &singleRule{Rule: protocol.Rule{
		ID: "EVT-CONF-DEFAULT-DECISION", Level: protocol.Must,
		Summary: "An irreversible confirmation with high or medium risk defaults to reject.",
		Spec:    "AAEP §4.4.1, §6.4.1; aaep-rules.md §2.13",
	}, scope: scopeCore, check: (*checker).evtConfDefaultDecision}
	evtConfDefaultShould = &singleRule{Rule: protocol.Rule{
		ID: "EVT-CONF-DEFAULT-SHOULD", Level: protocol.Should,
		Summary: "An irreversible low-risk, or a reversible high-risk, confirmation should default to reject.",
		Spec:    "AAEP §6.4.1; aaep-rules.md §2.13",
	}, scope: scopeCore, check: (*checker).evtConfDefaultShould}
	evtConfReversibilityOnly = &singleRule{Rule: protocol.Rule{
		ID: "EVT-CONF-REVERSIBILITY-ONLY", Level: protocol.Info,
		Summary: "reversibility \"irreversible\" on a high/medium-risk confirmation comes with irreversible:true, or the schema's safety rule is bypassed.",
		Spec:    "AAEP schema gap; aaep-rules.md §2.13",
	}, scope: scopeCore, check: (*checker).evtConfReversibilityOnly}
	evtConfAllowedReplies = &singleRule{Rule: protocol.Rule{
		ID: "EVT-CONF-ALLOWED-REPLIES", Level: protocol.Info,
		Summary: "allowed_replies holds only values a confirmation.reply can carry (accept, reject), including default_decision.",
		Spec:    "AAEP §6.3.2 schema vs §4.4.1; aaep-rules.md §2.13",
	}, scope: scopeCore, check: (*checker).evtConfAllowedReplies}
	evtClarChoices = &singleRule{Rule: protocol.Rule{
		ID: "EVT-CLAR-CHOICES", Level: protocol.Must,
		Summary: "A clarification accepting multiple_choice lists its choices.",
		Spec:    "AAEP clarification schema; aaep-rules.md §2.13",
	}, scope: scopeCore, check: (*checker).evtClarChoices}
	evtClarDefaultResponse = &singleRule{Rule: protocol.Rule{
		ID: "EVT-CLAR-DEFAULT-RESPONSE", Level: protocol.Info,
		Summary: "A multiple-choice-only clarification's default_response is one of its choices.",
		Spec:    "AAEP derived; aaep-rules.md §2.13",
	}, scope: scopeCore, check: (*checker).evtClarDefaultResponse}
	evtProgressStepLeTotal = &singleRule{Rule: protocol.Rule{
		ID: "EVT-PROGRESS-STEP-LE-TOTAL", Level: protocol.Should,
		Summary: "progress.step does not exceed progress.total_steps.",
		Spec:    "AAEP progress schema desc.; aaep-rules.md §2.13",
	}, scope: scopeCore, check: (*checker).evtProgressStepLETotal}
	evtToolcErrorMessage = &singleRule{Rule: protocol.Rule{
		ID: "EVT-TOOLC-ERROR-MESSAGE", Level: protocol.Should,
		Summary: "A tool completion with status error or timeout carries error_message.",
		Spec:    "AAEP tool.completed schema desc.; aaep-rules.md §2.13",
	}, scope: scopeCore, check: (*checker).evtToolcErrorMessage}
	evtStreamHintComplete = &singleRule{Rule: protocol.Rule{
		ID: "EVT-STREAM-HINT-COMPLETE", Level: protocol.Should,
		Summary: "coalesce_hint \"completion\" goes with complete:true, and complete:true with no hint or \"completion\".",
		Spec:    "AAEP streaming schema desc., §5.6.3; aaep-rules.md §2.13",
	}, scope: scopeCore, check: (*checker).evtStreamHintComplete}
	evtSecrets = &singleRule{Rule: protocol.Rule{
		ID: "EVT-SECRETS", Level: protocol.Must,
		Summary: "Human-readable fields carry no secrets: passwords, API keys, tokens, private keys, card or social security numbers.",
		Spec:    "AAEP §4.3.1, §10.2 T5, §10.5; aaep-rules.md §2.13",
	}, scope: scopeCore, check: (*checker).evtSecrets}
)

// msgRules lists the single-message handshake/reply rules of catalog §5.9
// (9), applied to messages that are not events. Envelope rules are never
// applied to these messages: they carry no envelope (catalog §0).
var msgRules = []*singleRule{
	msgTypeKnown, msgReqSchema, msgAccSchema, msgRejSchema, msgRenegShape, msgCloseShape,
	msgConfReplySchema, msgClarReplySchema, msgCapUnknown,
}

var (
	msgTypeKnown = &singleRule{Rule: protocol.Rule{
		ID: "MSG-TYPE-KNOWN", Level: protocol.Must,
		Summary: "A message that is not an event has one of the 7 handshake/reply types.",
		Spec:    "AAEP Ch. 5, Ch. 6; aaep-rules.md §5.9",
	}, scope: scopeMessage, check: (*checker).msgTypeKnown}
	msgReqSchema = &singleRule{Rule: protocol.Rule{
		ID: "MSG-REQ-SCHEMA", Level: protocol.Must,
		Summary: "subscription.request validates against its schema, formats asserted.",
		Spec:    "AAEP §5.2, schema; aaep-rules.md §5.9",
	}, scope: scopeMessage, check: (*checker).msgReqSchema}
	msgAccSchema = &singleRule{Rule: protocol.Rule{
		ID: "MSG-ACC-SCHEMA", Level: protocol.Must,
		Summary: "subscription.accepted validates against its schema.",
		Spec:    "AAEP §5.4, schema; aaep-rules.md §5.9",
	}, scope: scopeMessage, check: (*checker).msgAccSchema}
	msgRejSchema = &singleRule{Rule: protocol.Rule{
		ID: "MSG-REJ-SCHEMA", Level: protocol.Must,
		Summary: "subscription.rejected validates against its schema, including the reason_code enum.",
		Spec:    "AAEP §5.5, schema; aaep-rules.md §5.9",
	}, scope: scopeMessage, check: (*checker).msgRejSchema}
	msgRenegShape = &singleRule{Rule: protocol.Rule{
		ID: "MSG-RENEG-SHAPE", Level: protocol.Must,
		Summary: "subscription.renegotiate has a sub_ subscription_id and a capabilities object obeying §5.3.",
		Spec:    "AAEP §5.7.1; aaep-rules.md §5.9",
	}, scope: scopeMessage, check: (*checker).msgRenegShape}
	msgCloseShape = &singleRule{Rule: protocol.Rule{
		ID: "MSG-CLOSE-SHAPE", Level: protocol.Should,
		Summary: "subscription.close has a subscription_id; reason_code and reason_message are strings.",
		Spec:    "AAEP §5.8.1; aaep-rules.md §5.9",
	}, scope: scopeMessage, check: (*checker).msgCloseShape}
	msgConfReplySchema = &singleRule{Rule: protocol.Rule{
		ID: "MSG-CONF-REPLY-SCHEMA", Level: protocol.Must,
		Summary: "confirmation.reply validates against its schema.",
		Spec:    "AAEP §6.3, schema; aaep-rules.md §5.9",
	}, scope: scopeMessage, check: (*checker).msgConfReplySchema}
	msgClarReplySchema = &singleRule{Rule: protocol.Rule{
		ID: "MSG-CLAR-REPLY-SCHEMA", Level: protocol.Must,
		Summary: "clarification.reply validates against its schema.",
		Spec:    "AAEP §6.5, schema; aaep-rules.md §5.9",
	}, scope: scopeMessage, check: (*checker).msgClarReplySchema}
	msgCapUnknown = &singleRule{Rule: protocol.Rule{
		ID: "MSG-CAP-UNKNOWN", Level: protocol.Info,
		Summary: "Unknown capability keys hold objects (extension capabilities); others are ignored as the prose demands, though the schema rejects them.",
		Spec:    "AAEP §5.3.2 vs schema; aaep-rules.md §5.9",
	}, scope: scopeMessage, check: (*checker).msgCapUnknown}
)
