package peek

import (
	"strings"
	"testing"
)

func TestPeekFields(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Fields
	}{
		{"aaep event", `{"@context":"https://aaep-protocol.org/context/v1","type":"aaep:agent.tool.invoked","event_id":"evt_1","session_id":"sess_a","timestamp":"2026-01-01T00:00:00.000Z","producer":{"agent_id":"x","type":"nested must not win"},"urgency":"critical","payload_list":[1,{"session_id":"no"}]}`,
			Fields{Object: true, Type: "aaep:agent.tool.invoked", EventID: "evt_1", SessionID: "sess_a", Timestamp: "2026-01-01T00:00:00.000Z", Urgency: "critical"}},
		{"escaped string", `{"type":"aaep:agent.\u0073tate.changed","session_id":"sess_\"q\""}`,
			Fields{Object: true, Type: "aaep:agent.state.changed", SessionID: `sess_"q"`}},
		{"asp frame", `{"type":"message","envelope":{"performative":"PROPOSE","sessionId":"s1"}}`,
			Fields{Object: true, Type: "message", ASPHasEnvelop: true}},
		{"asp message", `{"performative":"PROPOSE","sessionId":"019478a3","messageId":"m1","timestamp":"t"}`,
			Fields{Object: true, Performative: "PROPOSE", ASPSessionID: "019478a3", ASPMessageID: "m1", Timestamp: "t"}},
		{"kahn", `{"ts":"2026-01-01T00:00:00Z","run_id":"run_1","event":"agent_transition","step":3}`,
			Fields{Object: true, TS: "2026-01-01T00:00:00Z", RunID: "run_1", Event: "agent_transition"}},
		{"non-string type ignored", `{"type":5,"session_id":null}`, Fields{Object: true}},
		{"empty object", ` {} `, Fields{Object: true}},
		{"array", `[1,2]`, Fields{Array: true}},
		{"byte-order mark skipped", "\xef\xbb\xbf{\"type\":\"a\"}", Fields{Object: true, Type: "a"}},
		{"nested past the recursion limit", `{"type":"a","x":` + strings.Repeat("[", 2000) + `{"k":"]"}` + strings.Repeat("]", 2000) + `,"session_id":"sess_1"}`,
			Fields{Object: true, Type: "a", SessionID: "sess_1"}},
		{"deep brackets that do not match", `{"type":"a","x":` + strings.Repeat("[", 2000) + strings.Repeat("}", 2000) + `}`, Fields{Type: "a"}},
		{"truncated", `{"type":"aaep:agent.session.started","session_id":"se`, Fields{Type: "aaep:agent.session.started"}},
		{"trailing garbage", `{"type":"a"} x`, Fields{Type: "a"}},
		{"not json", `hello`, Fields{}},
		{"control char in string", "{\"type\":\"a\nb\"}", Fields{}},
		{"empty", ``, Fields{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Peek([]byte(tt.in)); got != tt.want {
				t.Errorf("Peek(%q) =\n %+v, want\n %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestSessionKey(t *testing.T) {
	for _, tt := range []struct {
		f    Fields
		want string
	}{
		{Fields{SessionID: "sess_a", RunID: "r"}, "sess_a"},
		{Fields{ASPSessionID: "s"}, "s"},
		{Fields{RunID: "run_1"}, "run_1"},
		{Fields{}, ""},
	} {
		if got := tt.f.SessionKey(); got != tt.want {
			t.Errorf("%+v.SessionKey() = %q, want %q", tt.f, got, tt.want)
		}
	}
}

func TestFilterMatch(t *testing.T) {
	ev := Fields{Object: true, Type: "aaep:agent.tool.invoked", SessionID: "sess_a"}
	crit := Fields{Object: true, Type: "aaep:agent.session.errored", SessionID: "sess_b", Urgency: "critical"}
	kahn := Fields{Object: true, Event: "agent_transition", RunID: "run_1"}
	tests := []struct {
		name   string
		filter Filter
		in     Fields
		want   bool
	}{
		{"empty filter", Filter{}, ev, true},
		{"exact type", Filter{Types: []string{"aaep:agent.tool.invoked"}}, ev, true},
		{"suffix type", Filter{Types: []string{"tool.invoked"}}, ev, true},
		{"bare suffix like the reference tool", Filter{Types: []string{"invoked"}}, ev, true},
		{"other type", Filter{Types: []string{"tool.completed"}}, ev, false},
		{"any of types", Filter{Types: []string{"tool.completed", "tool.invoked"}}, ev, true},
		{"empty pattern matches nothing", Filter{Types: []string{""}}, ev, false},
		{"kahn event name", Filter{Types: []string{"agent_transition"}}, kahn, true},
		{"session", Filter{Sessions: []string{"sess_a"}}, ev, true},
		{"other session", Filter{Sessions: []string{"sess_b"}}, ev, false},
		{"kahn run as session", Filter{Sessions: []string{"run_1"}}, kahn, true},
		{"absent urgency is normal", Filter{Urgencies: []string{"normal"}}, ev, true},
		{"absent urgency is not critical", Filter{Urgencies: []string{"critical"}}, ev, false},
		{"critical", Filter{Urgencies: []string{"critical"}}, crit, true},
		{"all must hold", Filter{Types: []string{"errored"}, Sessions: []string{"sess_a"}}, crit, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.filter.Match(&tt.in); got != tt.want {
				t.Errorf("Match = %v, want %v", got, tt.want)
			}
		})
	}
}
