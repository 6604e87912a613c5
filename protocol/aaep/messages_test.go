package aaep_test

import (
	"strings"

	"github.com/aaep-tools/aaepkit/protocol/aaep"
)

const (
	request   = aaep.MsgSubscriptionRequest
	accepted  = aaep.MsgSubscriptionAccepted
	rejected  = aaep.MsgSubscriptionRejected
	reneg     = aaep.MsgSubscriptionRenegotiate
	closeMsg  = aaep.MsgSubscriptionClose
	confReply = aaep.MsgConfirmationReply
	clarReply = aaep.MsgClarificationReply
)

// msgCases are the cases of the handshake/reply rules (catalog §5.9).
func msgCases() []ruleCase {
	return []ruleCase{
		// MSG-TYPE-KNOWN
		pass("MSG-TYPE-KNOWN", "subscription.close", message(closeMsg)),
		fail("MSG-TYPE-KNOWN", "unknown subscription message", []byte(`{"type":"subscription.pause","subscription_id":"sub_1"}`)),
		fail("MSG-TYPE-KNOWN", "unknown reply message", []byte(`{"type":"confirmation.ack","reply_token":"rpl_1"}`)),
		forced(fail("MSG-TYPE-KNOWN", "neither envelope nor type", []byte(`{"reply_token":"rpl_1","decision":"accept"}`))),
		forced(fail("MSG-TYPE-KNOWN", "type a number", []byte(`{"type":7}`))),
		// Envelope rules never apply to messages: a reply without any
		// envelope field is clean.
		pass("MSG-TYPE-KNOWN", "reply without envelope", message(confReply)),

		// MSG-REQ-SCHEMA
		pass("MSG-REQ-SCHEMA", "every capability", message(request, set("subscriber_manifest_uri", "https://narrator.example/manifest.json"),
			set("correlation_id", "abc"), set("extensions", map[string]any{"azlearn": map[string]any{"x": 1}}),
			set("capabilities.supported_extensions", []string{"https://aaep-protocol.org/extensions/multilingual-african-languages/v1"}),
			set("capabilities.cognitive_load", "medium"), set("capabilities.pace_wpm", 180), set("capabilities.accept_signed_manifests_only", false),
			set("capabilities.azlearn", map[string]any{"tonal_marks": true}))),
		pass("MSG-REQ-SCHEMA", "empty capabilities", message(request, set("capabilities", map[string]any{}))),
		fail("MSG-REQ-SCHEMA", "missing subscriber_id", message(request, del("subscriber_id"))),
		fail("MSG-REQ-SCHEMA", "rate zero", message(request, set("capabilities.max_events_per_second", 0))),
		fail("MSG-REQ-SCHEMA", "language tag with underscore", message(request, set("capabilities.languages", []string{"en_US"}))),
		fail("MSG-REQ-SCHEMA", "no languages", message(request, set("capabilities.languages", []string{}))),
		fail("MSG-REQ-SCHEMA", "unknown coalesce boundary", message(request, set("capabilities.coalesce_boundaries", []string{"token"}))),
		fail("MSG-REQ-SCHEMA", "conformance level 4", message(request, set("capabilities.supported_conformance_levels", []int{1, 4}))),
		fail("MSG-REQ-SCHEMA", "filter with unknown key", message(request, set("capabilities.event_filters.only", []string{"x"}))),
		fail("MSG-REQ-SCHEMA", "empty filter pattern", message(request, set("capabilities.event_filters.include", []string{""}))),
		fail("MSG-REQ-SCHEMA", "pace too slow", message(request, set("capabilities.pace_wpm", 20))),
		fail("MSG-REQ-SCHEMA", "session_id not allowed", message(request, set("session_id", "sess_1"))),
		fail("MSG-REQ-SCHEMA", "aaep_version not semver", message(request, set("aaep_version", "1"))),
		fail("MSG-REQ-SCHEMA", "subscriber_id too long", message(request, set("subscriber_id", strings.Repeat("n", 257)))),
		fail("MSG-REQ-SCHEMA", "capabilities an array", message(request, set("capabilities", []any{}))),

		// MSG-ACC-SCHEMA
		pass("MSG-ACC-SCHEMA", "with signed manifest and notes", message(accepted, set("signed_manifest", "eyJhbGciOiJFUzI1NiJ9.eyJhZ2VudCI6IngifQ.c2ln"),
			set("negotiation_notes", "Rate lowered to 3 events per second."))),
		fail("MSG-ACC-SCHEMA", "subscription_id pattern", message(accepted, set("subscription_id", "sub-8a4f"))),
		fail("MSG-ACC-SCHEMA", "producer without agent_id", message(accepted, set("producer", map[string]any{"agent_name": "x"}))),
		fail("MSG-ACC-SCHEMA", "signed_manifest not JWS", message(accepted, set("signed_manifest", "not-a-jws"))),
		fail("MSG-ACC-SCHEMA", "missing honored_capabilities", message(accepted, del("honored_capabilities"))),
		fail("MSG-ACC-SCHEMA", "honored rate too high", message(accepted, set("honored_capabilities.max_events_per_second", 100001))),

		// MSG-REJ-SCHEMA
		pass("MSG-REJ-SCHEMA", "manifest signature required", message(rejected, set("reason_code", "manifest_signature_required"), del("retry_after_seconds"),
			set("alternative_manifest_uri", "https://example.com/manifest.json"))),
		fail("MSG-REJ-SCHEMA", "unknown reason_code", message(rejected, set("reason_code", "busy"))),
		fail("MSG-REJ-SCHEMA", "negative retry", message(rejected, set("retry_after_seconds", -1))),
		fail("MSG-REJ-SCHEMA", "empty reason_message", message(rejected, set("reason_message", ""))),

		// MSG-RENEG-SHAPE
		pass("MSG-RENEG-SHAPE", "partial capabilities", message(reneg, set("capabilities", map[string]any{"preferred_verbosity": "terse"}))),
		fail("MSG-RENEG-SHAPE", "pace out of range", message(reneg, set("capabilities.pace_wpm", 2000))),
		fail("MSG-RENEG-SHAPE", "no subscription_id", message(reneg, del("subscription_id"))),
		fail("MSG-RENEG-SHAPE", "no capabilities", message(reneg, del("capabilities"))),

		// MSG-CLOSE-SHAPE
		pass("MSG-CLOSE-SHAPE", "only subscription_id", message(closeMsg, del("reason_code"), del("reason_message"))),
		fail("MSG-CLOSE-SHAPE", "no subscription_id", message(closeMsg, del("subscription_id"))),
		fail("MSG-CLOSE-SHAPE", "reason_code a number", message(closeMsg, set("reason_code", 5))),

		// MSG-CONF-REPLY-SCHEMA
		pass("MSG-CONF-REPLY-SCHEMA", "reject with rationale and RFC 3339 time", message(confReply, set("decision", "reject"),
			set("decision_rationale", "Reduce the amount first."), set("timestamp", "2026-05-24t14:22:24.8123Z"))),
		fail("MSG-CONF-REPLY-SCHEMA", "decision maybe", message(confReply, set("decision", "maybe"))),
		fail("MSG-CONF-REPLY-SCHEMA", "timestamp not a date-time", message(confReply, set("timestamp", "yesterday"))),
		fail("MSG-CONF-REPLY-SCHEMA", "session_id not allowed", message(confReply, set("session_id", "sess_1"))),
		fail("MSG-CONF-REPLY-SCHEMA", "missing reply_token", message(confReply, del("reply_token"))),
		fail("MSG-CONF-REPLY-SCHEMA", "modified_action a string", message(confReply, set("modified_action", "half"))),

		// MSG-CLAR-REPLY-SCHEMA
		pass("MSG-CLAR-REPLY-SCHEMA", "numeric response with confidence", message(clarReply, set("response", 67), set("confidence", 0.92))),
		pass("MSG-CLAR-REPLY-SCHEMA", "yes/no response", message(clarReply, set("response", true))),
		fail("MSG-CLAR-REPLY-SCHEMA", "object response", message(clarReply, set("response", map[string]any{"age": 67}))),
		fail("MSG-CLAR-REPLY-SCHEMA", "empty response", message(clarReply, set("response", ""))),
		fail("MSG-CLAR-REPLY-SCHEMA", "confidence above 1", message(clarReply, set("confidence", 1.5))),
		// A missing subscription_id is judged in sequence, with the
		// handshake in view (NEG-REPLY-SUBID-UNISSUED, seq_cases_neg_test.go).
		pass("MSG-CLAR-REPLY-SCHEMA", "subscription_id missing, judged in sequence", message(clarReply, del("subscription_id"))),
		pass("MSG-CONF-REPLY-SCHEMA", "subscription_id missing, judged in sequence", message(confReply, del("subscription_id"))),

		// MSG-CAP-UNKNOWN
		pass("MSG-CAP-UNKNOWN", "extension capability object", message(request, set("capabilities.haptic", map[string]any{"patterns_supported": []string{"pulse"}}))),
		fail("MSG-CAP-UNKNOWN", "unknown scalar capability", message(request, set("capabilities.foo", 1))),
		fail("MSG-CAP-UNKNOWN", "unknown honored capability", message(accepted, set("honored_capabilities.turbo", true))),
	}
}
