// Message builders for the single-message rule tests: a valid base message
// per type plus edits that break one field.

package aaep_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/protocol/aaep"
)

// edit changes a decoded message.
type edit func(m map[string]any)

// set sets the field at a dotted path ("producer.agent_id"), creating
// objects on the way.
func set(path string, v any) edit {
	return func(m map[string]any) {
		parts := strings.Split(path, ".")
		for _, p := range parts[:len(parts)-1] {
			next, ok := m[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[p] = next
			}
			m = next
		}
		m[parts[len(parts)-1]] = v
	}
}

// del removes the field at a dotted path.
func del(path string) edit {
	return func(m map[string]any) {
		parts := strings.Split(path, ".")
		for _, p := range parts[:len(parts)-1] {
			next, ok := m[p].(map[string]any)
			if !ok {
				return
			}
			m = next
		}
		delete(m, parts[len(parts)-1])
	}
}

// raw is a JSON value written exactly as given.
func raw(s string) json.RawMessage { return json.RawMessage(s) }

// envelope is the common valid envelope of the base events.
func envelope(typ, urgency string) map[string]any {
	m := map[string]any{
		"@context":           aaep.ContextV1,
		"aaep_version":       "1.0.0",
		"type":               typ,
		"event_id":           "evt_8a3f5b22c91e4d7a",
		"session_id":         "sess_2c91a7b4d23f1e88",
		"timestamp":          "2026-05-24T14:22:11.342Z",
		"producer":           map[string]any{"agent_id": "retirement-planner", "agent_version": "1.4.2"},
		"localization_hints": map[string]any{"primary_language": "en-US"},
	}
	if urgency != "" {
		m["urgency"] = urgency
	}
	return m
}

// baseEvents are valid events of the 12 core types, after the examples of
// Chapter 4.
var baseEvents = map[string]func() map[string]any{
	aaep.TypeSessionStarted: func() map[string]any {
		m := envelope(aaep.TypeSessionStarted, "normal")
		m["summary_normal"] = "Retirement Planning Assistant is processing your request."
		m["requested_by"] = "user:folake"
		m["tools_available"] = []string{"fetch_balance", "calculate_projection"}
		return m
	},
	aaep.TypeSessionCompleted: func() map[string]any {
		m := envelope(aaep.TypeSessionCompleted, "normal")
		m["summary_normal"] = "Retirement plan complete. Ready to review."
		m["duration_ms"] = 27579
		m["tool_invocations_count"] = 4
		return m
	},
	aaep.TypeSessionErrored: func() map[string]any {
		m := envelope(aaep.TypeSessionErrored, "critical")
		m["error_category"] = "transient"
		m["error_code"] = "TOOL_TIMEOUT"
		m["summary_normal"] = "The financial data service did not respond in time."
		m["recoverable"] = true
		return m
	},
	aaep.TypeSessionCancelled: func() map[string]any {
		m := envelope(aaep.TypeSessionCancelled, "normal")
		m["cancelled_by"] = "user"
		m["cancellation_reason"] = "user_pressed_escape"
		m["summary_normal"] = "Retirement plan generation cancelled at your request."
		return m
	},
	aaep.TypeStateChanged: func() map[string]any {
		m := envelope(aaep.TypeStateChanged, "background")
		m["from_state"] = "idle"
		m["to_state"] = "thinking"
		m["summary_normal"] = "Analyzing your retirement planning question."
		return m
	},
	aaep.TypeProgressUpdated: func() map[string]any {
		m := envelope(aaep.TypeProgressUpdated, "background")
		m["progress"] = map[string]any{"percent": 60, "step": 3, "total_steps": 5, "description": "Calculating projections"}
		m["summary_normal"] = "Calculating retirement projections, 60 percent complete."
		m["eta_ms"] = 12000
		return m
	},
	aaep.TypeToolInvoked: func() map[string]any {
		m := envelope(aaep.TypeToolInvoked, "normal")
		m["tool"] = "fetch_balance"
		m["tool_call_id"] = "call_7a2b9c4e"
		m["args_summary"] = "account_id: checking-7821"
		m["summary_normal"] = "Retrieving your checking account balance."
		m["risk_level"] = "low"
		m["irreversible"] = false
		return m
	},
	aaep.TypeToolCompleted: func() map[string]any {
		m := envelope(aaep.TypeToolCompleted, "normal")
		m["tool"] = "fetch_balance"
		m["tool_call_id"] = "call_7a2b9c4e"
		m["status"] = "success"
		m["duration_ms"] = 1885
		m["summary_normal"] = "Balance: $12,500.00."
		return m
	},
	aaep.TypeOutputStreaming: func() map[string]any {
		m := envelope(aaep.TypeOutputStreaming, "normal")
		m["chunk"] = "Your retirement plan should target a monthly contribution of $1,200."
		m["position"] = 348
		m["complete"] = false
		m["coalesce_hint"] = "sentence"
		m["output_id"] = "out_3a8c2"
		m["content_type"] = "text/plain"
		return m
	},
	aaep.TypeAwaitingConfirmation: func() map[string]any {
		m := envelope(aaep.TypeAwaitingConfirmation, "critical")
		m["action"] = "Transfer $500.00 from checking-7821 to savings-3344."
		m["consequence"] = "Funds move immediately."
		m["reply_token"] = "rpl_4f8a2e7d9c1b6a3f"
		m["timeout_seconds"] = 300
		m["default_decision"] = "reject"
		m["risk_level"] = "high"
		m["irreversible"] = true
		m["summary_normal"] = "Confirmation required. Transfer $500 from checking to savings."
		return m
	},
	aaep.TypeAwaitingClarification: func() map[string]any {
		m := envelope(aaep.TypeAwaitingClarification, "critical")
		m["question"] = "Which retirement age should I plan for?"
		m["reply_token"] = "rpl_2c8e4a9f7b1d3a6e"
		m["timeout_seconds"] = 300
		m["accepted_response_kinds"] = []string{"multiple_choice", "numeric"}
		m["choices"] = []map[string]string{{"value": "60", "label": "Age 60"}, {"value": "65", "label": "Age 65"}, {"value": "67", "label": "Age 67"}}
		m["default_response"] = "65"
		m["summary_normal"] = "Which retirement age should I plan for?"
		return m
	},
	aaep.TypeHandoffRequested: func() map[string]any {
		m := envelope(aaep.TypeHandoffRequested, "critical")
		m["reason"] = "The tax situation needs a human financial advisor."
		m["target_kind"] = "human"
		m["target_uri"] = "queue://customer-service/financial-advisor"
		m["urgency_for_handoff"] = "medium"
		m["summary_normal"] = "Your situation needs review by a human financial advisor."
		return m
	},
}

// baseMessages are valid handshake and reply messages, after the examples
// of Chapters 5 and 6.
var baseMessages = map[string]func() map[string]any{
	aaep.MsgSubscriptionRequest: func() map[string]any {
		return map[string]any{"type": aaep.MsgSubscriptionRequest, "aaep_version": "1.0.0", "subscriber_id": "windows-narrator",
			"subscriber_name": "Windows Narrator 11.2", "subscriber_version": "11.2.5621.0",
			"capabilities": map[string]any{"max_events_per_second": 3, "preferred_verbosity": "normal", "languages": []string{"en-US"},
				"supports_confirmation_reply": true, "supports_clarification_reply": true, "coalesce_boundaries": []string{"sentence", "completion"},
				"event_filters":                map[string]any{"include": []string{"aaep:agent.*"}, "exclude": []string{"aaep:agent.progress.updated"}},
				"supported_conformance_levels": []int{1, 2}}}
	},
	aaep.MsgSubscriptionAccepted: func() map[string]any {
		return map[string]any{"type": aaep.MsgSubscriptionAccepted, "subscription_id": "sub_8a4f2c9d1e7b5f3a", "aaep_version": "1.0.0",
			"producer": map[string]any{"agent_id": "retirement-planner", "agent_version": "1.4.2"},
			"honored_capabilities": map[string]any{"max_events_per_second": 3, "languages": []string{"en-US"},
				"supports_confirmation_reply": true, "coalesce_boundaries": []string{"sentence", "completion"}},
			"manifest_uri": "https://example.com/.well-known/aaep-manifest.json"}
	},
	aaep.MsgSubscriptionRejected: func() map[string]any {
		return map[string]any{"type": aaep.MsgSubscriptionRejected, "reason_code": "rate_limit",
			"reason_message": "Too many active subscriptions.", "retry_after_seconds": 30}
	},
	aaep.MsgSubscriptionRenegotiate: func() map[string]any {
		return map[string]any{"type": aaep.MsgSubscriptionRenegotiate, "subscription_id": "sub_8a4f2c9d1e7b5f3a",
			"capabilities": map[string]any{"max_events_per_second": 1, "cognitive_load": "low"}}
	},
	aaep.MsgSubscriptionClose: func() map[string]any {
		return map[string]any{"type": aaep.MsgSubscriptionClose, "subscription_id": "sub_8a4f2c9d1e7b5f3a",
			"reason_code": "subscriber_shutdown", "reason_message": "Narrator is closing."}
	},
	aaep.MsgConfirmationReply: func() map[string]any {
		return map[string]any{"type": aaep.MsgConfirmationReply, "reply_token": "rpl_4f8a2e7d9c1b6a3f", "decision": "accept",
			"subscription_id": "sub_8a4f2c9d1e7b5f3a", "timestamp": "2026-05-24T14:22:24.812Z", "decided_by": "user:folake"}
	},
	aaep.MsgClarificationReply: func() map[string]any {
		return map[string]any{"type": aaep.MsgClarificationReply, "reply_token": "rpl_2c8e4a9f7b1d3a6e", "response": "67",
			"subscription_id": "sub_8a4f2c9d1e7b5f3a", "timestamp": "2026-05-24T14:22:18.121Z", "decided_by": "user:folake"}
	},
}

func build(base map[string]any, edits []edit) []byte {
	for _, e := range edits {
		e(base)
	}
	b, err := json.Marshal(base)
	if err != nil {
		panic(err)
	}
	return b
}

// event returns the base event of core type typ with edits applied.
func event(typ string, edits ...edit) []byte { return build(baseEvents[typ](), edits) }

// message returns the base handshake/reply message of type typ with edits.
func message(typ string, edits ...edit) []byte { return build(baseMessages[typ](), edits) }

// TestBasesClean: every base message is clean in both profiles.
func TestBasesClean(t *testing.T) {
	var all [][]byte
	for _, typ := range []string{aaep.TypeSessionStarted, aaep.TypeSessionCompleted, aaep.TypeSessionErrored, aaep.TypeSessionCancelled,
		aaep.TypeStateChanged, aaep.TypeProgressUpdated, aaep.TypeToolInvoked, aaep.TypeToolCompleted, aaep.TypeOutputStreaming,
		aaep.TypeAwaitingConfirmation, aaep.TypeAwaitingClarification, aaep.TypeHandoffRequested} {
		all = append(all, event(typ))
	}
	for _, typ := range []string{aaep.MsgSubscriptionRequest, aaep.MsgSubscriptionAccepted, aaep.MsgSubscriptionRejected,
		aaep.MsgSubscriptionRenegotiate, aaep.MsgSubscriptionClose, aaep.MsgConfirmationReply, aaep.MsgClarificationReply} {
		all = append(all, message(typ))
	}
	if len(baseEvents) != 12 || len(baseMessages) != 7 {
		t.Fatalf("%d base events and %d base messages, want 12 and 7", len(baseEvents), len(baseMessages))
	}
	for _, profile := range []string{"lenient", "strict"} {
		for _, m := range all {
			rep := run(t, profile, "", m)
			if got := findingsAt(rep, 0); len(got) > 0 {
				t.Errorf("%s: base %s has findings:%s", profile, m, describeFindings(got))
			}
		}
	}
}
