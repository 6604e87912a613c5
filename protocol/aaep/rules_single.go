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
		ID: "ENV-JSON-OBJECT", Level: protocol.Must, Party: protocol.Producer,
		Summary: "The message parses as strict RFC 8259 JSON and is an object.",
		Doc:     "MUST: every AAEP message is one JSON object (§3.8, §3.9(1)). Judged on the front end's strict decoding of every message recognised as AAEP, events and handshake alike, and the finding names the decoder's first error. A message that is not a JSON object is judged by no other rule; one whose bytes are not UTF-8 either is ENV-UTF8's alone.",
		Spec:    "AAEP §3.8, §3.9(1); aaep-rules.md §1.5",
	}, scope: scopeRaw, check: nil}
	envUTF8 = &singleRule{Rule: protocol.Rule{
		ID: "ENV-UTF8", Level: protocol.Must, Party: protocol.Producer,
		Summary: "The message bytes are valid UTF-8 without a byte-order mark.",
		Doc:     "MUST: §3.8 makes every AAEP message UTF-8 JSON, and RFC 8259 forbids a byte-order mark. Judged on the raw bytes of every message recognised as AAEP, events and handshake alike, from the front end's decoding; the finding says whether the bytes are invalid UTF-8, start with a BOM, or both. A message that still decodes goes on to every other rule and to the sequence checks, so one bad byte does not change the verdict on the events around it; one that does not decode at all gets this finding only, not ENV-JSON-OBJECT as well.",
		Spec:    "AAEP §3.8, §11.2; aaep-rules.md §1.5",
	}, scope: scopeRaw, check: nil}
	envIntRange = &singleRule{Rule: protocol.Rule{
		ID: "ENV-INT-RANGE", Level: protocol.Must, Party: protocol.Producer,
		Summary: "No JSON integer beyond ±2^53; larger values are encoded as strings.",
		Doc:     "MUST: §3.8 requires integers beyond ±2^53 to travel as strings, since JSON number semantics lose their precision. The front end notes the first integer literal outside -2^53..2^53 anywhere in an event, nested values included, and the finding names the top-level member it sits under; one finding per event. Numbers written with a fraction or an exponent are not integer literals and are not checked; handshake and reply messages are not judged.",
		Spec:    "AAEP §3.8; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envIntRange}
	envReqFields = &singleRule{Rule: protocol.Rule{
		ID: "ENV-REQ-FIELDS", Level: protocol.Must, Party: protocol.Producer,
		Summary: "All six required envelope fields are present: @context, type, event_id, session_id, timestamp, producer.",
		Doc:     "The six required envelope fields are present (null counts as present; its type is judged by the field's own rule).",
		Spec:    "AAEP §3.2, §3.9(2); aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envReqFields}
	envContext = &singleRule{Rule: protocol.Rule{
		ID: "ENV-CONTEXT", Level: protocol.Must, Party: protocol.Producer,
		Summary: "@context is the core context URL, or an array of URIs whose first element is the core context URL.",
		Doc:     "@context is the string \"https://aaep-protocol.org/context/v1\" or a non-empty array of strings whose first element is that string; the schema's format:uri on the array items is asserted too (catalog §2.14 item 5).",
		Spec:    "AAEP §3.2.1, §3.9(4); aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envContext}
	envTypeForm = &singleRule{Rule: protocol.Rule{
		ID: "ENV-TYPE-FORM", Level: protocol.Must, Party: protocol.Producer,
		Summary: "type is a non-empty compact prefix:local name or a full URI.",
		Doc:     "Type is a non-empty compact \"prefix:local\" name (prefix a letter or underscore then letters, digits, \"_\", \"-\", \".\"; a non-empty local part without spaces) or an absolute URI (\"scheme://...\"). A wrong JSON type is ENV-SCHEMA's.",
		Spec:    "AAEP §3.2.2; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envTypeForm}
	envTypeCoreKnown = &singleRule{Rule: protocol.Rule{
		ID: "ENV-TYPE-CORE-KNOWN", Level: protocol.Must, Party: protocol.Producer,
		Summary: "A type in the aaep: namespace is one of the 12 core event types.",
		Doc:     "A type in the aaep: namespace, compact or full URI, is one of the 12 core types. Near-misses of a core type are EVT-TYPE-CONST's.",
		Spec:    "AAEP §3.2.2, §3.11.3; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envTypeCoreKnown}
	envTypeExtDeclared = &singleRule{Rule: protocol.Rule{
		ID: "ENV-TYPE-EXT-DECLARED", Level: protocol.Must, Party: protocol.Producer,
		Summary: "A non-core type's vocabulary is declared in @context.",
		Doc:     "A non-core type's vocabulary is declared in @context. A string @context declares only the core vocabulary; with an array, see declaredInContext for the heuristic.",
		Spec:    "AAEP §3.9(5), §7.4; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envTypeExtDeclared}
	envEventIDFormat = &singleRule{Rule: protocol.Rule{
		ID: "ENV-EVENT-ID-FORMAT", Level: protocol.Must, Party: protocol.Producer,
		Summary: "event_id matches ^evt_[A-Za-z0-9]{1,64}$.",
		Doc:     "Event_id matches ^evt_[A-Za-z0-9]{1,64}$ (case-sensitive ABNF). A wrong JSON type is ENV-SCHEMA's.",
		Spec:    "AAEP §3.2.3; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envEventIDFormat}
	envSessionIDFormat = &singleRule{Rule: protocol.Rule{
		ID: "ENV-SESSION-ID-FORMAT", Level: protocol.Must, Party: protocol.Producer,
		Summary: "session_id matches ^sess_[A-Za-z0-9]{1,64}$.",
		Doc:     "Session_id matches ^sess_[A-Za-z0-9]{1,64}$.",
		Spec:    "AAEP §3.2.4; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envSessionIDFormat}
	envTimestampFormat = &singleRule{Rule: protocol.Rule{
		ID: "ENV-TIMESTAMP-FORMAT", Level: protocol.Must, Party: protocol.Producer,
		Summary: "timestamp has the form YYYY-MM-DDTHH:MM:SS[.fff]Z or ±HH:MM and is a real calendar instant.",
		Doc:     "Timestamp has the prose form YYYY-MM-DDTHH:MM:SS[.fraction] followed by Z or ±HH:MM, uppercase T and Z, and is a real calendar instant. Prose over schema: the schema's format:date-time (RFC 3339) also allows lowercase t/z, which the prose does not (catalog §2.14 item 4). The number of fraction digits is ENV-TIMESTAMP-PRECISION's.",
		Spec:    "AAEP §3.2.5, §3.11.2; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envTimestampFormat}
	envTimestampPrecision = &singleRule{Rule: protocol.Rule{
		ID: "ENV-TIMESTAMP-PRECISION", Level: protocol.Must, Party: protocol.Producer,
		Summary: "timestamp fractional seconds are absent, 3 digits or 6 digits.",
		Doc:     "Fractional seconds are absent, 3 digits or 6 digits (\"Other precisions MUST NOT be used\"). Prose over schema: format:date-time allows any precision.",
		Spec:    "AAEP §3.2.5; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envTimestampPrecision}
	envTimestampReal = &singleRule{Rule: protocol.Rule{
		ID: "ENV-TIMESTAMP-REAL", Level: protocol.Must, Party: protocol.Producer,
		Summary: "timestamp is a real instant, not a placeholder such as the Unix epoch or 9999-12-31.",
		Doc:     "The timestamp references an actual point in time, not a placeholder: nothing before 2000 (the Unix epoch, year 1 and other zero values; AAEP did not exist then) and nothing from the year 3000 on (sentinels such as 9999-12-31). Comparing the timestamp with the capture's receive time (future-dating, backdating) needs capture metadata and is left to SEQ-TIMESTAMP-NOT-FUTURE and SEQ-TIMESTAMP-BACKDATED, so that one defect yields one finding.",
		Spec:    "AAEP §3.2.5; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envTimestampReal}
	envProducer = &singleRule{Rule: protocol.Rule{
		ID: "ENV-PRODUCER", Level: protocol.Must, Party: protocol.Producer,
		Summary: "producer is an object with a non-empty agent_id, only the five defined keys, non-empty string values and a URI manifest_uri.",
		Doc:     "Producer is an object; agent_id is a non-empty string; agent_version, agent_name and model are non-empty strings when present (prose: \"any non-empty UTF-8 string\"; the schema has minLength only on agent_id, catalog §2.14 item 7 — prose wins); manifest_uri is an RFC 3986 URI; no other keys (schema additionalProperties:false).",
		Spec:    "AAEP §3.2.6, schema; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envProducer}
	envAAEPVersion = &singleRule{Rule: protocol.Rule{
		ID: "ENV-AAEP-VERSION", Level: protocol.Must, Party: protocol.Producer,
		Summary: "aaep_version, when present, is a semantic version of a published AAEP release (1.0.0).",
		Doc:     "When present, aaep_version is a semantic version (pattern of §1.2) that names a published version of the specification; only 1.0.0 is published.",
		Spec:    "AAEP §3.4.4; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envAAEPVersion}
	envVerbosityEnum = &singleRule{Rule: protocol.Rule{
		ID: "ENV-VERBOSITY-ENUM", Level: protocol.Must, Party: protocol.Producer,
		Summary: "verbosity is terse, normal or detailed.",
		Doc:     "Verbosity is terse, normal or detailed.",
		Spec:    "AAEP §3.3.1; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envVerbosityEnum}
	envUrgencyEnum = &singleRule{Rule: protocol.Rule{
		ID: "ENV-URGENCY-ENUM", Level: protocol.Must, Party: protocol.Producer,
		Summary: "urgency is background, normal or critical.",
		Doc:     "Urgency is background, normal or critical.",
		Spec:    "AAEP §3.3.2; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envUrgencyEnum}
	envSeqnoType = &singleRule{Rule: protocol.Rule{
		ID: "ENV-SEQNO-TYPE", Level: protocol.Must, Party: protocol.Producer,
		Summary: "sequence_number is an integer >= 0.",
		Doc:     "Sequence_number is an integer >= 0 (3.0 counts as an integer, as in JSON Schema).",
		Spec:    "AAEP §3.4.1; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envSeqNoType}
	envCorrelationType = &singleRule{Rule: protocol.Rule{
		ID: "ENV-CORRELATION-TYPE", Level: protocol.Must, Party: protocol.Producer,
		Summary: "correlation_id is a string.",
		Doc:     "Correlation_id is a string.",
		Spec:    "AAEP §3.4.2; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envCorrelationType}
	envLochintsShape = &singleRule{Rule: protocol.Rule{
		ID: "ENV-LOCHINTS-SHAPE", Level: protocol.Must, Party: protocol.Producer,
		Summary: "localization_hints has only its six keys, valid language tags and script, a text_direction of ltr/rtl/auto, and bounded unique lists.",
		Doc:     "Only primary_language, text_direction, available_languages, fallback_chain, script and calendar; language tags match the §1.2 pattern; text_direction is ltr, rtl or auto; available_languages has at most 32 unique tags, fallback_chain at most 16; script is an ISO 15924 code; calendar is a string. A localization_hints that is not an object is ENV-SCHEMA's.",
		Spec:    "AAEP §3.3.3, schema; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envLocHintsShape}
	envLochintsPresent = &singleRule{Rule: protocol.Rule{
		ID: "ENV-LOCHINTS-PRESENT", Level: protocol.Must, Party: protocol.Producer,
		Summary:  "Events with human-readable text carry localization_hints.primary_language (Ch. 11; strict profile only, Ch. 3 only recommends it).",
		Doc:      "An event carrying human-readable text (summary_*, description, question, a non-empty chunk, error_message, action, consequence, reason, ...) carries localization_hints.primary_language. Chapter 11 says MUST, Chapter 3 only RECOMMENDED: the specification contradicts itself, so the rule is reported in the strict profile only.",
		Spec:     "AAEP §11.1 vs §3.3.3; aaep-rules.md §1.5",
		Profiles: protocol.Profiles{Lenient: "not checked: Chapter 3 makes it RECOMMENDED, Chapter 11 a MUST", Strict: "reported (Chapter 11's MUST)"},
	}, scope: scopeEvent, check: (*checker).envLocHintsPresent}
	envExtensionsShape = &singleRule{Rule: protocol.Rule{
		ID: "ENV-EXTENSIONS-SHAPE", Level: protocol.Must, Party: protocol.Producer,
		Summary: "extensions is an object whose values are all objects.",
		Doc:     "Extensions is an object and each of its values is an object.",
		Spec:    "AAEP §3.4.3; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envExtensionsShape}
	envExtPrefixDeclared = &singleRule{Rule: protocol.Rule{
		ID: "ENV-EXT-PREFIX-DECLARED", Level: protocol.Must, Party: protocol.Producer,
		Summary: "Every extensions key is a prefix declared in @context.",
		Doc:     "Every extensions key is declared in @context. With a string @context nothing but the core vocabulary is declared; with an array the prefix must appear in one of the extension context URIs (the catalog's heuristic: context documents are not fetched).",
		Spec:    "AAEP §3.4.3; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envExtPrefixDeclared}
	envExtReservedPrefix = &singleRule{Rule: protocol.Rule{
		ID: "ENV-EXT-RESERVED-PREFIX", Level: protocol.Must, Party: protocol.Producer,
		Summary: "Extension prefixes are not aaep, xsd, rdf or rdfs and do not start with @.",
		Doc:     "No extensions key, and no compact type prefix of an extension type, is aaep, xsd, rdf, rdfs or starts with \"@\".",
		Spec:    "AAEP §7.3.2; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envExtReservedPrefix}
	envForbiddenFields = &singleRule{Rule: protocol.Rule{
		ID: "ENV-FORBIDDEN-FIELDS", Level: protocol.Must, Party: protocol.Producer,
		Summary: "Top-level keys are envelope fields, the type's payload fields or the verbosity forms summary_terse/normal/detailed (any type, §3.3.1); custom fields go inside extensions; no other aaep_* key and no @id, @graph, @base, @vocab.",
		Doc:     "Custom fields belong in extensions; no aaep_* key other than aaep_version, and no @id, @graph, @base or @vocab. Prose over schema: no schema closes the top level (catalog §2.14 item 1), so this is checked here. The allowed top-level keys are the union of what the whole specification allows, not only the per-type tables: - the envelope fields of §3.2 (required), §3.3 (recommended) and §3.4 (optional): envelopeKeys; - the payload fields of the event's core type in its Chapter 4 table (§4.1.1–§4.4.3): payloadKeys; - payload fields that only the type's schema defines (irreversible on confirmations, summary_detailed on progress, clarification and handoff; catalog §2.14 item 11): payloadKeys too, since the prose does not forbid them; - the verbosity forms summary_terse, summary_normal and summary_detailed on every type (§3.3.1, §5.9): anyPayloadKeys. Both profiles read it the same way: §3.3.1 is not contradicted anywhere, only left out of one table. For extension types only the reserved names are checked: their payload vocabulary is the extension's.",
		Spec:    "AAEP §3.5, §3.11.5, §2.2.6; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envForbiddenFields}
	envSize = &singleRule{Rule: protocol.Rule{
		ID: "ENV-SIZE", Level: protocol.Should, Party: protocol.Producer,
		Summary: "The event respects the §3.7 limits: 64 KiB, 32 envelope-level fields, payload depth 8, strings of 16 KiB.",
		Doc:     "At most 64 KiB serialized, at most 32 envelope-level fields (top-level keys plus the prefix keys inside extensions), payload nesting of at most 8 levels (the event object is level 0, so {\"progress\":{...}} nests 1 level), and no string longer than 16 KiB (UTF-8 bytes after unescaping; prose over the schemas' maxLength in characters, catalog §2.14 item 8). available_languages is ENV-LOCHINTS-SHAPE's. Receivers must handle excess gracefully, hence SHOULD.",
		Spec:    "AAEP §3.7; aaep-rules.md §1.5",
	}, scope: scopeEvent, check: (*checker).envSize}
	envSchema = &singleRule{Rule: protocol.Rule{
		ID: "ENV-SCHEMA", Level: protocol.Must, Party: protocol.Producer,
		Summary: "Envelope fields have the JSON types envelope.schema.json gives them.",
		Doc:     "): the envelope fields have the JSON types envelope.schema.json gives them. Every other envelope constraint of the schema has its own, more specific rule above (formats, enums, patterns, producer, @context, extensions, sequence_number, correlation_id), so this rule covers what is left: type, event_id, session_id, timestamp, aaep_version, verbosity and urgency must be strings and localization_hints an object. Each finding names one field.",
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
		ID: "EVT-SCHEMA", Level: protocol.Must, Party: protocol.Producer,
		Summary:  "The payload validates against its core schema: required fields, types, enums, patterns and ranges.",
		Doc:      "): the payload validates against its core schema — required fields, JSON types, enums, patterns (tool, tool_call_id, output_id, error_code, cancellation_reason, content_type, language: schema only, catalog §2.14 item 11, applied because the prose is silent), integer ranges (the *_ms maxima and the timeout_seconds maximum are schema only, applied likewise), the progress object (closed, one of percent/step/total_steps/description, step >= 1) and the choices items. Prose over schema: - string length maxima (maxLength 4096/16384 characters) are reported in the strict profile only: the prose makes 16 KiB a soft SHOULD limit that implementations MAY exceed (§3.7; catalog §2.14 item 8, and see ENV-SIZE); minimum lengths always apply; - a missing summary_normal is EVT-SUMMARY-NORMAL's; - the urgency const is EVT-URGENCY-CRITICAL's and the confirmation if/then is EVT-CONF-DEFAULT-DECISION's, so each defect is reported once.",
		Spec:     "AAEP §4.7, §9.3.1(8); aaep-rules.md §2.13",
		Profiles: protocol.Profiles{Lenient: "string maximum lengths are not enforced (the prose makes 16 KiB a soft limit, §3.7); minimum lengths are", Strict: "string maximum lengths of the schemas are enforced too"},
	}, scope: scopeCore, check: (*checker).evtSchema}
	evtTypeConst = &singleRule{Rule: protocol.Rule{
		ID: "EVT-TYPE-CONST", Level: protocol.Must, Party: protocol.Producer,
		Summary: "type is exactly the compact core type (or its https://aaep-protocol.org/types/ URI form), not a variant spelling.",
		Doc:     "Type is exactly the compact core constant, or the full-URI form https://aaep-protocol.org/types/<local>, which the prose declares equivalent — prose over schema: the schemas' const rejects the URI form (catalog §2.14 item 2), this rule accepts it. Reported: spellings that only match a core type after changing letter case, trimming spaces, switching http to https, or replacing the JSON-LD vocab expansion https://aaep-protocol.org/vocab/v1# (which context/aaep-v1.jsonld uses, contradicting §2.2.7) with the prose's types/ URI.",
		Spec:    "AAEP schema vs §3.2.2; aaep-rules.md §2.13",
	}, scope: scopeCore, check: (*checker).evtTypeConst}
	evtUrgencyCritical = &singleRule{Rule: protocol.Rule{
		ID: "EVT-URGENCY-CRITICAL", Level: protocol.Must, Party: protocol.Producer,
		Summary: "session.errored, awaiting.confirmation, awaiting.clarification and handoff.requested carry urgency \"critical\" (absent means normal).",
		Doc:     "Session.errored, awaiting.confirmation, awaiting.clarification and handoff.requested carry urgency \"critical\". A missing urgency means \"normal\" (§3.3.2) and is a violation, although the schemas' const accepts the omission (catalog §2.14 item 3: prose over schema). §3.3.2 calls critical only RECOMMENDED for these types; the per-type MUST of Chapter 4 is the specific rule and wins in both profiles.",
		Spec:    "AAEP §4.1.3, §4.4.1–3, §5.5.4; aaep-rules.md §2.13",
	}, scope: scopeCore, check: (*checker).evtUrgencyCritical}
	evtUrgencyRecommended = &singleRule{Rule: protocol.Rule{
		ID: "EVT-URGENCY-RECOMMENDED", Level: protocol.Should, Party: protocol.Producer,
		Summary: "The other core types use the urgency §3.3.2 recommends for them.",
		Doc:     "The eight types without a critical MUST use their recommended urgency (a missing urgency counts as \"normal\"); deviations \"SHOULD be documented\". Invalid urgency values are ENV-URGENCY-ENUM's.",
		Spec:    "AAEP §3.3.2; aaep-rules.md §2.13",
	}, scope: scopeCore, check: (*checker).evtUrgencyRecommended}
	evtSummaryNormal = &singleRule{Rule: protocol.Rule{
		ID: "EVT-SUMMARY-NORMAL", Level: protocol.Must, Party: protocol.Producer,
		Summary:  "Events likely to be announced carry summary_normal.",
		Doc:      "): events likely to be announced carry summary_normal. The five types whose schema requires it (session.started, .completed, .errored, .cancelled, tool.invoked) are always checked. Whether the other types are \"likely to be announced\" is a judgement the specification leaves open (the catalog says to warn); state.changed, progress.updated, tool.completed, awaiting.confirmation, awaiting.clarification and handoff.requested are therefore checked in the strict profile only, and never when urgency is \"background\". output.streaming is exempt: its chunk is the announced text.",
		Spec:     "AAEP §9.3.1(9); aaep-rules.md §2.13",
		Profiles: protocol.Profiles{Lenient: "only on the types whose schema requires summary_normal", Strict: "also on state.changed, progress.updated, tool.completed, awaiting.confirmation, awaiting.clarification and handoff.requested, unless urgency is background"},
	}, scope: scopeCore, check: (*checker).evtSummaryNormal}
	evtConfDefaultDecision = &singleRule{Rule: protocol.Rule{
		ID: "EVT-CONF-DEFAULT-DECISION", Level: protocol.Must, Party: protocol.Producer,
		Summary: "An irreversible confirmation with high or medium risk defaults to reject.",
		Doc:     "Irreversible:true with risk_level high or medium requires default_decision \"reject\". §4.4.1's prose names only the high-risk case and has no irreversible field; the normative table of §6.4.1 and the schema add medium and use irreversible (catalog §2.14 item 6) — the more specific table is followed. The action is irreversible when either irreversible:true or reversibility \"irreversible\" says so (confFacts.irrev): the schema's if/then keys on irreversible only, but §6.4.1 states a property of the action, and §4.4.1 names that property reversibility.",
		Spec:    "AAEP §4.4.1, §6.4.1; aaep-rules.md §2.13",
	}, scope: scopeCore, check: (*checker).evtConfDefaultDecision}
	evtConfDefaultShould = &singleRule{Rule: protocol.Rule{
		ID: "EVT-CONF-DEFAULT-SHOULD", Level: protocol.Should, Party: protocol.Producer,
		Summary: "An irreversible low-risk, or a reversible high-risk, confirmation should default to reject.",
		Doc:     "Default_decision should be \"reject\" for irreversible low-risk actions (a missing risk_level counts as low, as the conformance suite reads it) and for reversible high-risk actions (a missing irreversible counts as false, its tool.invoked default).",
		Spec:    "AAEP §6.4.1; aaep-rules.md §2.13",
	}, scope: scopeCore, check: (*checker).evtConfDefaultShould}
	evtConfReversibilityOnly = &singleRule{Rule: protocol.Rule{
		ID: "EVT-CONF-REVERSIBILITY-ONLY", Level: protocol.Info, Party: protocol.Producer,
		Summary: "reversibility \"irreversible\" on a high/medium-risk confirmation comes with irreversible:true, or the schema's safety rule is bypassed.",
		Doc:     "A high- or medium-risk confirmation with reversibility \"irreversible\" but without irreversible:true escapes the schema's default-decision rule, which keys on irreversible only. The §4.4.1 prose table has reversibility and no irreversible field; the checker treats such an action as irreversible (a default of \"accept\" is EVT-CONF-DEFAULT-DECISION's, a MUST) and notes the missing field.",
		Spec:    "AAEP schema gap; aaep-rules.md §2.13",
	}, scope: scopeCore, check: (*checker).evtConfReversibilityOnly}
	evtConfAllowedReplies = &singleRule{Rule: protocol.Rule{
		ID: "EVT-CONF-ALLOWED-REPLIES", Level: protocol.Info, Party: protocol.Producer,
		Summary: "allowed_replies holds only values a confirmation.reply can carry (accept, reject), including default_decision.",
		Doc:     "Allowed_replies values other than accept and reject cannot be sent, because confirmation.reply restricts decision to those two; and default_decision should be among allowed_replies.",
		Spec:    "AAEP §6.3.2 schema vs §4.4.1; aaep-rules.md §2.13",
	}, scope: scopeCore, check: (*checker).evtConfAllowedReplies}
	evtClarChoices = &singleRule{Rule: protocol.Rule{
		ID: "EVT-CLAR-CHOICES", Level: protocol.Must, Party: protocol.Producer,
		Summary: "A clarification accepting multiple_choice lists its choices.",
		Doc:     "A clarification whose accepted_response_kinds contains multiple_choice carries choices. Too few choices is EVT-SCHEMA's (minItems 2).",
		Spec:    "AAEP clarification schema; aaep-rules.md §2.13",
	}, scope: scopeCore, check: (*checker).evtClarChoices}
	evtClarDefaultResponse = &singleRule{Rule: protocol.Rule{
		ID: "EVT-CLAR-DEFAULT-RESPONSE", Level: protocol.Info, Party: protocol.Producer,
		Summary: "A multiple-choice-only clarification's default_response is one of its choices.",
		Doc:     "When multiple_choice is the only accepted kind, default_response is one of choices[].value.",
		Spec:    "AAEP derived; aaep-rules.md §2.13",
	}, scope: scopeCore, check: (*checker).evtClarDefaultResponse}
	evtProgressStepLeTotal = &singleRule{Rule: protocol.Rule{
		ID: "EVT-PROGRESS-STEP-LE-TOTAL", Level: protocol.Should, Party: protocol.Producer,
		Summary: "progress.step does not exceed progress.total_steps.",
		Doc:     "Progress.step <= progress.total_steps when both are present.",
		Spec:    "AAEP progress schema desc.; aaep-rules.md §2.13",
	}, scope: scopeCore, check: (*checker).evtProgressStepLETotal}
	evtToolcErrorMessage = &singleRule{Rule: protocol.Rule{
		ID: "EVT-TOOLC-ERROR-MESSAGE", Level: protocol.Should, Party: protocol.Producer,
		Summary: "A tool completion with status error or timeout carries error_message.",
		Doc:     "A completion with status error or timeout carries error_message.",
		Spec:    "AAEP tool.completed schema desc.; aaep-rules.md §2.13",
	}, scope: scopeCore, check: (*checker).evtToolcErrorMessage}
	evtStreamHintComplete = &singleRule{Rule: protocol.Rule{
		ID: "EVT-STREAM-HINT-COMPLETE", Level: protocol.Should, Party: protocol.Producer,
		Summary: "coalesce_hint \"completion\" goes with complete:true, and complete:true with no hint or \"completion\".",
		Doc:     "Coalesce_hint \"completion\" marks the final chunk, so it goes with complete:true, and a final chunk has no hint or \"completion\".",
		Spec:    "AAEP streaming schema desc., §5.6.3; aaep-rules.md §2.13",
	}, scope: scopeCore, check: (*checker).evtStreamHintComplete}
	evtSecrets = &singleRule{Rule: protocol.Rule{
		ID: "EVT-SECRETS", Level: protocol.Must, Party: protocol.Producer,
		Summary: "Human-readable fields carry no secrets: passwords, API keys, tokens, private keys, card or social security numbers.",
		Doc:     "Human-readable fields carry no secrets. A heuristic (see findSecret): the conformance suite's keyword list, tightened so that ordinary prose (\"reset your password\", \"risk-free\") does not match — a keyword counts only when a value is assigned to it, and token prefixes only with a token-like value after them — a password in a URL's userinfo (\"postgres://user:pw@host\"; a bare \"user@\" or a masked password is none), plus Luhn-valid card numbers and US social security numbers (§10.2 T5).",
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
		ID: "MSG-TYPE-KNOWN", Level: protocol.Must, Party: protocol.Either,
		Summary: "A message that is not an event has one of the 7 handshake/reply types.",
		Doc:     "A message without an event's form (no prefixed type, no envelope fields) has one of the 7 handshake/reply types; anything else is malformed.",
		Spec:    "AAEP Ch. 5, Ch. 6; aaep-rules.md §5.9",
	}, scope: scopeMessage, check: (*checker).msgTypeKnown}
	msgReqSchema = &singleRule{Rule: protocol.Rule{
		ID: "MSG-REQ-SCHEMA", Level: protocol.Must, Party: protocol.Subscriber,
		Summary: "subscription.request validates against its schema, formats asserted.",
		Doc:     "Aaep_version, subscriber_id and capabilities are required, the capability fields obey §5.3, and no other field is allowed. Unknown capability keys are MSG-CAP-UNKNOWN's (prose over schema).",
		Spec:    "AAEP §5.2, schema; aaep-rules.md §5.9",
	}, scope: scopeMessage, check: (*checker).msgReqSchema}
	msgAccSchema = &singleRule{Rule: protocol.Rule{
		ID: "MSG-ACC-SCHEMA", Level: protocol.Must, Party: protocol.Producer,
		Summary: "subscription.accepted validates against its schema.",
		Doc:     "Subscription_id (sub_ pattern), aaep_version, producer and honored_capabilities are required; manifest_uri is a URI, signed_manifest a JWS compact string, negotiation_notes at most 4096 characters; no other field.",
		Spec:    "AAEP §5.4, schema; aaep-rules.md §5.9",
	}, scope: scopeMessage, check: (*checker).msgAccSchema}
	msgRejSchema = &singleRule{Rule: protocol.Rule{
		ID: "MSG-REJ-SCHEMA", Level: protocol.Must, Party: protocol.Producer,
		Summary: "subscription.rejected validates against its schema, including the reason_code enum.",
		Doc:     "Reason_code from the §5.5.3 list and a reason_message of 1..4096 characters are required; retry_after_seconds is 0..86400; no other field.",
		Spec:    "AAEP §5.5, schema; aaep-rules.md §5.9",
	}, scope: scopeMessage, check: (*checker).msgRejSchema}
	msgRenegShape = &singleRule{Rule: protocol.Rule{
		ID: "MSG-RENEG-SHAPE", Level: protocol.Must, Party: protocol.Either,
		Summary: "subscription.renegotiate has a sub_ subscription_id and a capabilities object obeying §5.3.",
		Doc:     "Subscription_id matches the sub_ pattern and capabilities is an object whose fields obey §5.3. Other fields are not judged, since no schema closes the message.",
		Spec:    "AAEP §5.7.1; aaep-rules.md §5.9",
	}, scope: scopeMessage, check: (*checker).msgRenegShape}
	msgCloseShape = &singleRule{Rule: protocol.Rule{
		ID: "MSG-CLOSE-SHAPE", Level: protocol.Should, Party: protocol.Either,
		Summary: "subscription.close has a subscription_id; reason_code and reason_message are strings.",
		Doc:     "Subscription_id is present and a string; reason_code and reason_message, when present, are strings (close reason codes are not enumerated).",
		Spec:    "AAEP §5.8.1; aaep-rules.md §5.9",
	}, scope: scopeMessage, check: (*checker).msgCloseShape}
	msgConfReplySchema = &singleRule{Rule: protocol.Rule{
		ID: "MSG-CONF-REPLY-SCHEMA", Level: protocol.Must, Party: protocol.Subscriber,
		Summary: "confirmation.reply validates against its schema.",
		Doc:     "Reply_token (rpl_ pattern), decision (accept or reject), subscription_id (sub_ pattern) and timestamp (RFC 3339) are required; no other field. A missing subscription_id is this rule's once the recording shows the subscriber was issued one (a subscription.accepted naming it); from a subscriber that never was, it is NEG-REPLY-SUBID-UNISSUED's. The reply schemas have no session_id although §6.9 speaks of session validation (catalog §2.14 item 19): the schema's closed shape is followed.",
		Spec:    "AAEP §6.3, schema; aaep-rules.md §5.9",
	}, scope: scopeMessage, check: (*checker).msgConfReplySchema}
	msgClarReplySchema = &singleRule{Rule: protocol.Rule{
		ID: "MSG-CLAR-REPLY-SCHEMA", Level: protocol.Must, Party: protocol.Subscriber,
		Summary: "clarification.reply validates against its schema.",
		Doc:     "Reply_token, response (a string of 1..16384 characters, a boolean or a number), subscription_id and timestamp are required; confidence is 0..1; no other field. A missing subscription_id is this rule's once the recording shows the subscriber was issued one; from a subscriber that never was, it is NEG-REPLY-SUBID-UNISSUED's.",
		Spec:    "AAEP §6.5, schema; aaep-rules.md §5.9",
	}, scope: scopeMessage, check: (*checker).msgClarReplySchema}
	msgCapUnknown = &singleRule{Rule: protocol.Rule{
		ID: "MSG-CAP-UNKNOWN", Level: protocol.Info, Party: protocol.Either,
		Summary: "Unknown capability keys hold objects (extension capabilities); others are ignored as the prose demands, though the schema rejects them.",
		Doc:     "Capability keys not defined by §5.3 are extension capabilities, which the schema requires to be objects; prose says unknown capabilities MUST be ignored, not rejected. Prose over schema: a non-object unknown capability is noted here at INFO level instead of failing MSG-REQ-SCHEMA, MSG-ACC-SCHEMA or MSG-RENEG-SHAPE.",
		Spec:    "AAEP §5.3.2 vs schema; aaep-rules.md §5.9",
	}, scope: scopeMessage, check: (*checker).msgCapUnknown}
)
