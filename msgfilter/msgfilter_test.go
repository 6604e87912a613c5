package msgfilter

import (
	"testing"

	"github.com/aaep-tools/aaepkit/payload"
)

// routing decodes a payload with the front end, as every user does.
func routing(t *testing.T, s string) *payload.Routing {
	t.Helper()
	d := payload.Decode([]byte(s))
	if !d.IsObject() {
		t.Fatalf("%s is not a JSON object: %v", s, d.Err())
	}
	return &d.Routing
}

func TestFilterMatch(t *testing.T) {
	ev := routing(t, `{"type":"aaep:agent.tool.invoked","session_id":"sess_a"}`)
	crit := routing(t, `{"type":"aaep:agent.session.errored","session_id":"sess_b","urgency":"critical"}`)
	kahn := routing(t, `{"event":"agent_transition","run_id":"run_1"}`)
	asp := routing(t, `{"performative":"PROPOSE","sessionId":"019478a3"}`)
	tests := []struct {
		name   string
		filter Filter
		in     *payload.Routing
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
		{"asp performative", Filter{Types: []string{"PROPOSE"}}, asp, true},
		{"session", Filter{Sessions: []string{"sess_a"}}, ev, true},
		{"other session", Filter{Sessions: []string{"sess_b"}}, ev, false},
		{"kahn run as session", Filter{Sessions: []string{"run_1"}}, kahn, true},
		{"asp sessionId as session", Filter{Sessions: []string{"019478a3"}}, asp, true},
		{"absent urgency is normal", Filter{Urgencies: []string{"normal"}}, ev, true},
		{"absent urgency is not critical", Filter{Urgencies: []string{"critical"}}, ev, false},
		{"critical", Filter{Urgencies: []string{"critical"}}, crit, true},
		{"all must hold", Filter{Types: []string{"errored"}, Sessions: []string{"sess_a"}}, crit, false},
		{"all hold", Filter{Types: []string{"errored"}, Sessions: []string{"sess_b"}, Urgencies: []string{"critical"}}, crit, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.filter.Match(tt.in); got != tt.want {
				t.Errorf("Match = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestFilterEmpty(t *testing.T) {
	for _, tt := range []struct {
		f    Filter
		want bool
	}{
		{Filter{}, true},
		{Filter{Types: []string{}}, true},
		{Filter{Types: []string{"x"}}, false},
		{Filter{Sessions: []string{"s"}}, false},
		{Filter{Urgencies: []string{"critical"}}, false},
	} {
		if got := tt.f.Empty(); got != tt.want {
			t.Errorf("%+v.Empty() = %v, want %v", tt.f, got, tt.want)
		}
	}
}
