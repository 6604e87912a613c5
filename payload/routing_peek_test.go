package payload

import (
	"strings"
	"testing"
)

// TestRoutingPeekCases holds the cases of the deleted package peek's tests
// that still mean something: the routing fields the filters, the recorder
// and serve read, and whether the payload counts as a JSON object, on
// messages of every protocol and on damaged ones (whose fields before the
// damage are kept).
func TestRoutingPeekCases(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		object bool
		kind   Kind
		want   Routing
	}{
		{"aaep event, nested fields do not count", `{"@context":"https://aaep-protocol.org/context/v1","type":"aaep:agent.tool.invoked","event_id":"evt_1","session_id":"sess_a","timestamp":"2026-01-01T00:00:00.000Z","producer":{"agent_id":"x","type":"nested must not win"},"urgency":"critical","payload_list":[1,{"session_id":"no"}]}`,
			true, Object, Routing{Type: "aaep:agent.tool.invoked", EventID: "evt_1", SessionID: "sess_a", Timestamp: "2026-01-01T00:00:00.000Z", Urgency: "critical"}},
		{"escaped strings", `{"type":"aaep:agent.\u0073tate.changed","session_id":"sess_\"q\""}`, true, Object, Routing{Type: "aaep:agent.state.changed", SessionID: `sess_"q"`}},
		{"asp message", `{"performative":"PROPOSE","sessionId":"019478a3","messageId":"m1","timestamp":"t"}`, true, Object,
			Routing{Performative: "PROPOSE", ASPSessionID: "019478a3", ASPMessageID: "m1", Timestamp: "t"}},
		{"kahn", `{"ts":"2026-01-01T00:00:00Z","run_id":"run_1","event":"agent_transition","step":3}`, true, Object,
			Routing{TS: "2026-01-01T00:00:00Z", RunID: "run_1", Event: "agent_transition"}},
		{"non-string values ignored", `{"type":5,"session_id":null}`, true, Object, Routing{}},
		{"empty object", ` {} `, true, Object, Routing{}},
		{"array", `[1,2]`, false, Array, Routing{}},
		{"byte-order mark skipped", "\xef\xbb\xbf{\"type\":\"a\"}", true, Object, Routing{Type: "a"}},
		{"deep nesting before a field", `{"type":"a","x":` + strings.Repeat("[", 2000) + `{"k":"]"}` + strings.Repeat("]", 2000) + `,"session_id":"sess_1"}`,
			true, Object, Routing{Type: "a", SessionID: "sess_1"}},
		{"deep brackets that do not match", `{"type":"a","x":` + strings.Repeat("[", 2000) + strings.Repeat("}", 2000) + `}`, false, Object, Routing{Type: "a"}},
		{"truncated", `{"type":"aaep:agent.session.started","session_id":"se`, false, Object, Routing{Type: "aaep:agent.session.started"}},
		{"trailing garbage", `{"type":"a"} x`, false, Object, Routing{Type: "a"}},
		{"not json", `hello`, false, Invalid, Routing{}},
		{"control character in a string", "{\"type\":\"a\nb\"}", false, Object, Routing{}},
		{"empty", ``, false, Absent, Routing{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decode([]byte(tt.in))
			if d.Routing != tt.want || d.IsObject() != tt.object || d.Kind() != tt.kind {
				t.Errorf("Decode(%.80q):\n routing %+v object %v kind %v\nwant\n routing %+v object %v kind %v",
					tt.in, d.Routing, d.IsObject(), d.Kind(), tt.want, tt.object, tt.kind)
			}
		})
	}
}

// TestRoutingKeys: the session a message belongs to and the name type
// filters compare, whatever its protocol.
func TestRoutingKeys(t *testing.T) {
	for _, tt := range []struct {
		r             Routing
		session, name string
	}{
		{Routing{SessionID: "sess_a", RunID: "r", Type: "aaep:agent.session.started", Event: "e"}, "sess_a", "aaep:agent.session.started"},
		{Routing{ASPSessionID: "s", Performative: "PROPOSE"}, "s", "PROPOSE"},
		{Routing{RunID: "run_1", Event: "agent_transition"}, "run_1", "agent_transition"},
		{Routing{Type: "subscription.request", Performative: "P"}, "", "subscription.request"},
		{Routing{}, "", ""},
	} {
		if got := tt.r.SessionKey(); got != tt.session {
			t.Errorf("%+v.SessionKey() = %q, want %q", tt.r, got, tt.session)
		}
		if got := tt.r.TypeName(); got != tt.name {
			t.Errorf("%+v.TypeName() = %q, want %q", tt.r, got, tt.name)
		}
	}
}
