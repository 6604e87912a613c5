package aaep_test

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/aaep-tools/aaepkit/protocol/aaep"
)

const (
	started   = aaep.TypeSessionStarted
	completed = aaep.TypeSessionCompleted
	streaming = aaep.TypeOutputStreaming
	medaiCtx  = "https://example.org/medai/context/v1"
)

// withMedai declares the medai extension vocabulary in @context.
var withMedai = set("@context", []string{aaep.ContextV1, medaiCtx})

// envCases are the cases of the envelope rules (catalog §1.5).
func envCases() []ruleCase {
	long := func(prefix string, n int) string { return prefix + strings.Repeat("a", n) }
	manyExt := map[string]any{}
	var names []string
	for i := 0; i < 25; i++ {
		name := fmt.Sprintf("ext%c", 'a'+i)
		names = append(names, name)
		manyExt[name] = map[string]any{}
	}
	manyCtx := set("@context", []string{aaep.ContextV1, "https://example.org/" + strings.Join(names, "-") + "/v1"})
	deep := func(levels int) any {
		var v any = map[string]any{}
		for i := 0; i < levels; i++ {
			v = map[string]any{"n": v}
		}
		return v
	}
	return []ruleCase{
		// ENV-JSON-OBJECT
		pass("ENV-JSON-OBJECT", "pretty-printed with escapes", []byte("{\n  \"@context\": \"https://aaep-protocol.org/context/v1\",\n  \"type\": \"aaep:agent.session.started\",\n  \"event_id\": \"evt_1\",\n  \"session_id\": \"sess_1\",\n  \"timestamp\": \"2026-05-24T14:22:11.342Z\",\n  \"producer\": {\"agent_id\": \"a\"},\n  \"summary_normal\": \"Say \\\"hi\\\" \\u00e9\\n\",\n  \"localization_hints\": {\"primary_language\": \"en\"}\n}\n")),
		fail("ENV-JSON-OBJECT", "truncated", []byte(`{"type":"aaep:agent.session.started","event_id":"evt_1"`)),
		fail("ENV-JSON-OBJECT", "trailing comma (JSON5)", []byte(`{"type":"aaep:agent.session.started","event_id":"evt_1",}`)),
		fail("ENV-JSON-OBJECT", "leading zero", []byte(`{"type":"aaep:agent.session.started","position":01}`)),
		fail("ENV-JSON-OBJECT", "single quotes", []byte(`{'type':'aaep:agent.session.started'}`)),
		fail("ENV-JSON-OBJECT", "an array, not an object", []byte(`[{"type":"aaep:agent.session.started"}]`)),
		fail("ENV-JSON-OBJECT", "comment (JSONC)", []byte(`{"type":"aaep:agent.session.started" /* c */}`)),
		fail("ENV-JSON-OBJECT", "raw newline in string", []byte("{\"type\":\"aaep:agent.session.started\",\"summary_normal\":\"a\nb\"}")),
		fail("ENV-JSON-OBJECT", "two objects", []byte(`{"type":"aaep:agent.session.started"}{}`)),

		// ENV-UTF8
		pass("ENV-UTF8", "non-ASCII text", event(started, set("summary_normal", "Überweisung läuft 🚀 日本語"))),
		// Every rule but ENV-UTF8 passes on these events: the encoding fault
		// is reported on the message, which is otherwise checked as usual.
		fail("ENV-UTF8", "invalid byte", swapBytes(event(started, set("summary_normal", "cafX")), "X", "\xe9")),
		fail("ENV-UTF8", "byte-order mark", append([]byte("\xef\xbb\xbf"), event(started)...)),
		fail("ENV-UTF8", "invalid byte early in a long string", swapBytes(event(started, set("summary_normal", "XThis sentence is long enough for the word-at-a-time scan.")), "X", "\xff")),
		fail("ENV-UTF8", "invalid byte in a key", swapBytes(event(started, set("xX", 1)), "xX", "x\xff"), "ENV-FORBIDDEN-FIELDS"),
		fail("ENV-UTF8", "invalid byte after valid non-ASCII text", swapBytes(event(started, set("summary_normal", "Überweisung läuft"), set("summary_terse", "Überweisung lXuft, long enough for words")), "X", "\xe4")),
		fail("ENV-UTF8", "truncated sequence at the end of a string", swapBytes(event(started, set("summary_normal", "cafX")), "X", "\xc3")),
		fail("ENV-UTF8", "invalid byte outside strings", []byte("{\"type\":\"aaep:agent.session.started\"}\xff")),

		// ENV-INT-RANGE
		pass("ENV-INT-RANGE", "exactly 2^53 and a large float", event(completed, set("tool_invocations_count", raw("9007199254740992")),
			withMedai, set("extensions", map[string]any{"medai": map[string]any{"x": raw("-9007199254740992"), "f": raw("1e300")}}))),
		fail("ENV-INT-RANGE", "2^53+1", event(completed, set("tool_invocations_count", raw("9007199254740993")))),
		fail("ENV-INT-RANGE", "nested in an extension", event(completed, withMedai,
			set("extensions", map[string]any{"medai": map[string]any{"ids": []any{raw("123456789012345678901")}}}))),

		// ENV-REQ-FIELDS
		pass("ENV-REQ-FIELDS", "minimal envelope", []byte(`{"@context":"https://aaep-protocol.org/context/v1","type":"aaep:agent.session.started","event_id":"evt_8a3f5b22","session_id":"sess_2c91a7","timestamp":"2026-05-24T14:22:11.342Z","producer":{"agent_id":"retirement-planner"},"summary_normal":"Session started.","urgency":"normal","localization_hints":{"primary_language":"en"}}`)),
		fail("ENV-REQ-FIELDS", "missing event_id (§3.11.1)", event(started, del("event_id"))),
		fail("ENV-REQ-FIELDS", "missing type", event(started, del("type"))),
		fail("ENV-REQ-FIELDS", "missing producer and @context", event(started, del("producer"), del("@context"))),

		// ENV-CONTEXT
		pass("ENV-CONTEXT", "array with an extension", event(started, withMedai)),
		fail("ENV-CONTEXT", "wrong version", event(started, set("@context", "https://aaep-protocol.org/context/v2"))),
		fail("ENV-CONTEXT", "core context not first", event(started, set("@context", []string{medaiCtx, aaep.ContextV1}))),
		fail("ENV-CONTEXT", "item not a URI", event(started, set("@context", []string{aaep.ContextV1, "medai vocabulary"}))),
		fail("ENV-CONTEXT", "empty array", event(started, set("@context", []string{}))),
		fail("ENV-CONTEXT", "a number", event(started, set("@context", 1))),
		fail("ENV-CONTEXT", "item not a string", event(started, set("@context", []any{aaep.ContextV1, 2}))),

		// ENV-TYPE-FORM
		pass("ENV-TYPE-FORM", "declared extension type", event(started, withMedai, set("type", "medai:patient.consulted"))),
		pass("ENV-TYPE-FORM", "full URI core type", event(started, set("type", "https://aaep-protocol.org/types/agent.session.started"))),
		fail("ENV-TYPE-FORM", "empty", event(started, set("type", ""))),
		fail("ENV-TYPE-FORM", "no prefix", event(started, set("type", "agent.session.started"))),
		fail("ENV-TYPE-FORM", "bad prefix", event(started, withMedai, set("type", "9medai:patient.consulted"))),
		fail("ENV-TYPE-FORM", "empty local name", event(started, withMedai, set("type", "medai:"))),
		fail("ENV-TYPE-FORM", "space inside", event(started, withMedai, set("type", "medai:patient consulted"))),

		// ENV-TYPE-CORE-KNOWN
		pass("ENV-TYPE-CORE-KNOWN", "core type in URI form", event(completed, set("type", "https://aaep-protocol.org/types/agent.session.completed"))),
		fail("ENV-TYPE-CORE-KNOWN", "purple flamingo (§3.11.3)", event(started, set("type", "aaep:agent.purple.flamingo"))),
		fail("ENV-TYPE-CORE-KNOWN", "unknown type in URI form", event(started, set("type", "https://aaep-protocol.org/types/agent.session.paused"))),

		// ENV-TYPE-EXT-DECLARED
		pass("ENV-TYPE-EXT-DECLARED", "declared compact prefix", event(started, withMedai, set("type", "medai:patient.consulted"))),
		pass("ENV-TYPE-EXT-DECLARED", "declared URI vocabulary", event(started, withMedai, set("type", "https://example.org/medai/agent.patient.consulted"))),
		fail("ENV-TYPE-EXT-DECLARED", "string @context", event(started, set("type", "medai:patient.consulted"))),
		fail("ENV-TYPE-EXT-DECLARED", "other vocabulary declared", event(started, set("@context", []string{aaep.ContextV1, "https://example.org/haptic/v1"}), set("type", "medai:patient.consulted"))),
		fail("ENV-TYPE-EXT-DECLARED", "URI type, string @context", event(started, set("type", "https://example.org/medai/agent.patient.consulted"))),

		// ENV-EVENT-ID-FORMAT
		pass("ENV-EVENT-ID-FORMAT", "64 characters", event(started, set("event_id", long("evt_", 64)))),
		fail("ENV-EVENT-ID-FORMAT", "65 characters", event(started, set("event_id", long("evt_", 65)))),
		fail("ENV-EVENT-ID-FORMAT", "dash", event(started, set("event_id", "evt-8a3f5b22"))),
		fail("ENV-EVENT-ID-FORMAT", "empty suffix", event(started, set("event_id", "evt_"))),
		fail("ENV-EVENT-ID-FORMAT", "trailing newline", event(started, set("event_id", "evt_abc\n"))),
		fail("ENV-EVENT-ID-FORMAT", "upper-case prefix", event(started, set("event_id", "EVT_abc"))),

		// ENV-SESSION-ID-FORMAT
		pass("ENV-SESSION-ID-FORMAT", "one character", event(started, set("session_id", "sess_1"))),
		fail("ENV-SESSION-ID-FORMAT", "underscore in suffix", event(started, set("session_id", "sess_2c91_a7"))),
		fail("ENV-SESSION-ID-FORMAT", "65 characters", event(started, set("session_id", long("sess_", 65)))),

		// ENV-TIMESTAMP-FORMAT
		pass("ENV-TIMESTAMP-FORMAT", "offset form", event(started, set("timestamp", "2026-05-24T15:22:11.342+01:00"))),
		pass("ENV-TIMESTAMP-FORMAT", "no fraction", event(started, set("timestamp", "2026-05-24T14:22:11Z"))),
		pass("ENV-TIMESTAMP-FORMAT", "leap second", event(started, set("timestamp", "2026-06-30T23:59:60Z"))),
		fail("ENV-TIMESTAMP-FORMAT", "prose date (§3.11.2)", event(started, set("timestamp", "May 24, 2026 14:22:11"))),
		fail("ENV-TIMESTAMP-FORMAT", "lower-case t", event(started, set("timestamp", "2026-05-24t14:22:11.342Z"))),
		fail("ENV-TIMESTAMP-FORMAT", "lower-case z", event(started, set("timestamp", "2026-05-24T14:22:11.342z"))),
		fail("ENV-TIMESTAMP-FORMAT", "no zone", event(started, set("timestamp", "2026-05-24T14:22:11.342"))),
		fail("ENV-TIMESTAMP-FORMAT", "February 30", event(started, set("timestamp", "2026-02-30T10:00:00Z"))),
		fail("ENV-TIMESTAMP-FORMAT", "hour 24", event(started, set("timestamp", "2026-05-24T24:00:00Z"))),
		fail("ENV-TIMESTAMP-FORMAT", "empty", event(started, set("timestamp", ""))),
		fail("ENV-TIMESTAMP-FORMAT", "space separator", event(started, set("timestamp", "2026-05-24 14:22:11Z"))),

		// ENV-TIMESTAMP-PRECISION
		pass("ENV-TIMESTAMP-PRECISION", "microseconds", event(started, set("timestamp", "2026-05-24T14:22:11.342123Z"))),
		fail("ENV-TIMESTAMP-PRECISION", "one digit", event(started, set("timestamp", "2026-05-24T14:22:11.3Z"))),
		fail("ENV-TIMESTAMP-PRECISION", "five digits", event(started, set("timestamp", "2026-05-24T14:22:11.34212Z"))),
		fail("ENV-TIMESTAMP-PRECISION", "nanoseconds", event(started, set("timestamp", "2026-05-24T14:22:11.342123456+02:00"))),

		// ENV-TIMESTAMP-REAL
		pass("ENV-TIMESTAMP-REAL", "a real time", event(started, set("timestamp", "2026-05-24T14:22:11.000Z"))),
		fail("ENV-TIMESTAMP-REAL", "Unix epoch", event(started, set("timestamp", "1970-01-01T00:00:00Z"))),
		fail("ENV-TIMESTAMP-REAL", "year one", event(started, set("timestamp", "0001-01-01T00:00:00Z"))),
		fail("ENV-TIMESTAMP-REAL", "sentinel", event(started, set("timestamp", "9999-12-31T23:59:59.999Z"))),

		// ENV-PRODUCER
		pass("ENV-PRODUCER", "fully populated", event(started, set("producer", map[string]any{"agent_id": "clinical-assistant", "agent_version": "2.1.0",
			"agent_name": "Clinical Assistant", "model": "claude-opus-4-7", "manifest_uri": "https://hospital.example/.well-known/aaep-manifest.json"}))),
		fail("ENV-PRODUCER", "a string", event(started, set("producer", "retirement-planner"))),
		fail("ENV-PRODUCER", "no agent_id", event(started, set("producer", map[string]any{"agent_version": "1.0"}))),
		fail("ENV-PRODUCER", "empty agent_id", event(started, set("producer.agent_id", ""))),
		fail("ENV-PRODUCER", "empty agent_name (prose)", event(started, set("producer.agent_name", ""))),
		fail("ENV-PRODUCER", "unknown key", event(started, set("producer.vendor", "acme"))),
		fail("ENV-PRODUCER", "manifest_uri not a URI", event(started, set("producer.manifest_uri", "not a uri"))),
		fail("ENV-PRODUCER", "agent_id a number", event(started, set("producer.agent_id", 7))),

		// ENV-AAEP-VERSION
		pass("ENV-AAEP-VERSION", "absent", event(started, del("aaep_version"))),
		fail("ENV-AAEP-VERSION", "not semver", event(started, set("aaep_version", "1.0"))),
		fail("ENV-AAEP-VERSION", "unpublished draft", event(started, set("aaep_version", "0.1.0-draft"))),

		// ENV-VERBOSITY-ENUM
		pass("ENV-VERBOSITY-ENUM", "detailed", event(started, set("verbosity", "detailed"))),
		fail("ENV-VERBOSITY-ENUM", "verbose", event(started, set("verbosity", "verbose"))),

		// ENV-URGENCY-ENUM
		pass("ENV-URGENCY-ENUM", "normal", event(started, set("urgency", "normal"))),
		fail("ENV-URGENCY-ENUM", "high", event(started, set("urgency", "high"))),
		fail("ENV-URGENCY-ENUM", "upper case", event(started, set("urgency", "NORMAL"))),

		// ENV-SEQNO-TYPE
		pass("ENV-SEQNO-TYPE", "zero", event(started, set("sequence_number", 0))),
		pass("ENV-SEQNO-TYPE", "integral float", event(completed, set("sequence_number", raw("3.0")))),
		fail("ENV-SEQNO-TYPE", "negative", event(completed, set("sequence_number", -1))),
		fail("ENV-SEQNO-TYPE", "a string", event(completed, set("sequence_number", "3"))),
		fail("ENV-SEQNO-TYPE", "fractional", event(completed, set("sequence_number", 1.5))),

		// ENV-CORRELATION-TYPE
		pass("ENV-CORRELATION-TYPE", "traceparent", event(started, set("correlation_id", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"))),
		fail("ENV-CORRELATION-TYPE", "a number", event(started, set("correlation_id", 42))),

		// ENV-LOCHINTS-SHAPE
		pass("ENV-LOCHINTS-SHAPE", "all six keys", event(started, set("localization_hints", map[string]any{"primary_language": "yo-NG",
			"text_direction": "auto", "available_languages": []string{"yo-NG", "en-US"}, "fallback_chain": []string{"en-NG", "en"},
			"script": "Latn", "calendar": "gregorian"}))),
		fail("ENV-LOCHINTS-SHAPE", "unknown key", event(started, set("localization_hints.locale", "en_US"))),
		fail("ENV-LOCHINTS-SHAPE", "underscore tag", event(started, set("localization_hints.primary_language", "en_US"))),
		fail("ENV-LOCHINTS-SHAPE", "bad direction", event(started, set("localization_hints.text_direction", "up"))),
		fail("ENV-LOCHINTS-SHAPE", "duplicate language", event(started, set("localization_hints.available_languages", []string{"en", "en"}))),
		fail("ENV-LOCHINTS-SHAPE", "33 languages", event(started, set("localization_hints.available_languages", langs(33)))),
		fail("ENV-LOCHINTS-SHAPE", "17 fallbacks", event(started, set("localization_hints.fallback_chain", langs(17)))),
		fail("ENV-LOCHINTS-SHAPE", "lower-case script", event(started, set("localization_hints.script", "latn"))),
		fail("ENV-LOCHINTS-SHAPE", "calendar a number", event(started, set("localization_hints.calendar", 1))),

		// ENV-LOCHINTS-PRESENT (strict profile only)
		pass("ENV-LOCHINTS-PRESENT", "lenient: not required", event(started, del("localization_hints"))),
		strict(pass("ENV-LOCHINTS-PRESENT", "strict: present", event(started))),
		strict(pass("ENV-LOCHINTS-PRESENT", "strict: no human text", event(streaming, del("localization_hints"), set("chunk", ""), set("complete", true), set("coalesce_hint", "completion")))),
		strict(fail("ENV-LOCHINTS-PRESENT", "strict: missing", event(started, del("localization_hints")))),
		strict(fail("ENV-LOCHINTS-PRESENT", "strict: no primary_language", event(started, set("localization_hints", map[string]any{"text_direction": "ltr"})))),

		// ENV-EXTENSIONS-SHAPE
		pass("ENV-EXTENSIONS-SHAPE", "one extension", event(started, withMedai, set("extensions", map[string]any{"medai": map[string]any{"patient_data_accessed": true}}))),
		fail("ENV-EXTENSIONS-SHAPE", "an array", event(started, withMedai, set("extensions", []any{}))),
		fail("ENV-EXTENSIONS-SHAPE", "value not an object", event(started, withMedai, set("extensions", map[string]any{"medai": true}))),

		// ENV-EXT-PREFIX-DECLARED
		pass("ENV-EXT-PREFIX-DECLARED", "declared", event(started, withMedai, set("extensions.medai.x", 1))),
		fail("ENV-EXT-PREFIX-DECLARED", "string @context (§3.11.4)", event(started, set("extensions.medai.patient_data_accessed", true))),
		fail("ENV-EXT-PREFIX-DECLARED", "other prefix declared", event(started, withMedai, set("extensions.azlearn.ui_language", "yo-NG"))),

		// ENV-EXT-RESERVED-PREFIX
		pass("ENV-EXT-RESERVED-PREFIX", "prefix containing aaep", event(started, set("@context", []string{aaep.ContextV1, "https://example.org/aaepx/v1"}), set("extensions.aaepx.a", 1))),
		fail("ENV-EXT-RESERVED-PREFIX", "rdf", event(started, withMedai, set("extensions.rdf.a", 1))),
		fail("ENV-EXT-RESERVED-PREFIX", "aaep", event(started, set("extensions.aaep.a", 1))),
		fail("ENV-EXT-RESERVED-PREFIX", "@-name", event(started, withMedai, set("extensions.@vocab.a", 1))),
		fail("ENV-EXT-RESERVED-PREFIX", "xsd type prefix", event(started, set("type", "xsd:thing"))),

		// ENV-FORBIDDEN-FIELDS
		pass("ENV-FORBIDDEN-FIELDS", "schema-only field irreversible", event(aaep.TypeAwaitingConfirmation, set("irreversible", false), set("risk_level", "low"))),
		// §3.3.1: the verbosity forms go "in the event's payload", whatever
		// its type; output.streaming's table (§4.3.3) lists none of them.
		pass("ENV-FORBIDDEN-FIELDS", "summary_normal on output.streaming (§3.3.1)", event(streaming, set("summary_normal", "Writing the answer."))),
		pass("ENV-FORBIDDEN-FIELDS", "all three verbosity forms on output.streaming (§3.3.1)", event(streaming, set("summary_terse", "Writing."), set("summary_normal", "Writing the answer."), set("summary_detailed", "Writing the answer to your question."))),
		strict(pass("ENV-FORBIDDEN-FIELDS", "strict: summary_terse on output.streaming (§3.3.1)", event(streaming, set("summary_terse", "Writing.")))),
		pass("ENV-FORBIDDEN-FIELDS", "summary_detailed on state.changed (§3.3.1)", event(aaep.TypeStateChanged, set("summary_detailed", "Now thinking about the route."))),
		fail("ENV-FORBIDDEN-FIELDS", "a fourth verbosity form is not one", event(streaming, set("summary_verbose", "x"))),
		pass("ENV-FORBIDDEN-FIELDS", "extension type with its own payload", event(started, withMedai, set("type", "medai:patient.consulted"), set("patient_ref", "p1"))),
		fail("ENV-FORBIDDEN-FIELDS", "custom_field (§3.11.5)", event(started, set("custom_field", "value"))),
		fail("ENV-FORBIDDEN-FIELDS", "aaep_ prefix", event(started, set("aaep_debug", true))),
		fail("ENV-FORBIDDEN-FIELDS", "@id", event(started, set("@id", "urn:x"))),
		fail("ENV-FORBIDDEN-FIELDS", "another type's field", event(started, set("tool", "fetch_balance"))),
		fail("ENV-FORBIDDEN-FIELDS", "aaep_ on extension type", event(started, withMedai, set("type", "medai:patient.consulted"), set("aaep_trace", 1))),

		// ENV-SIZE
		pass("ENV-SIZE", "16 KiB chunk and depth 8", event(streaming, set("chunk", strings.Repeat("a", 16384)), withMedai,
			set("extensions", map[string]any{"medai": deep(6)}))),
		fail("ENV-SIZE", "chunk over 16 KiB", event(streaming, set("chunk", strings.Repeat("é", 8193)))),
		fail("ENV-SIZE", "nesting 9 levels", event(started, withMedai, set("extensions", map[string]any{"medai": deep(7)}))),
		fail("ENV-SIZE", "too many extension prefixes", event(started, manyCtx, set("extensions", manyExt))),
		fail("ENV-SIZE", "over 64 KiB", event(started, withMedai, set("extensions.medai.notes", strings.Split(strings.Repeat("0123456789abcdef,", 4000), ",")))),

		// ENV-SCHEMA
		pass("ENV-SCHEMA", "all strings", event(started)),
		fail("ENV-SCHEMA", "event_id a number", event(started, set("event_id", 42))),
		fail("ENV-SCHEMA", "urgency a number", event(started, set("urgency", 1))),
		fail("ENV-SCHEMA", "timestamp a number", event(started, set("timestamp", 1779632531))),
		fail("ENV-SCHEMA", "localization_hints a string", event(started, set("localization_hints", "en-US"))),
		fail("ENV-SCHEMA", "session_id null", event(started, set("session_id", nil))),
	}
}

// langs returns n distinct language tags.
func langs(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("x-%d", i)
	}
	return out
}

// swapBytes replaces the first old in msg by new (raw bytes, so new may be
// invalid UTF-8).
func swapBytes(msg []byte, old, new string) []byte {
	return bytes.Replace(msg, []byte(old), []byte(new), 1)
}
