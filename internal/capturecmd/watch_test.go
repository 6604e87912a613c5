package capturecmd

import (
	"testing"

	"github.com/aaep-tools/aaepkit/payload"
)

// TestHasType: the watcher's handshake test finds the type however it is
// written and only as the top-level type, while its quick check passes
// over messages that cannot have it.
func TestHasType(t *testing.T) {
	const typ = "subscription.accepted"
	var d payload.Doc
	for _, tc := range []struct {
		name string
		in   string
		want bool
	}{
		{"the type", `{"type":"subscription.accepted","subscription_id":"s"}`, true},
		{"escaped type", `{"type":"subscription\u002eaccepted"}`, true},
		{"escaped name", `{"t\u0079pe":"subscription.accepted"}`, true},
		{"last type wins", `{"type":"subscription.accepted","type":"aaep:agent.tool.invoked"}`, false},
		{"in another member", `{"type":"aaep:agent.tool.invoked","summary":"subscription.accepted"}`, false},
		{"nested", `{"type":"x","inner":{"type":"subscription.accepted"}}`, false},
		{"an event", `{"type":"aaep:agent.tool.invoked","session_id":"sess_1"}`, false},
		{"an event with an escape", `{"type":"aaep:agent.tool.invoked","summary":"a \"quote\""}`, false},
		{"a prefix of it", `{"type":"subscription.accepted.v2"}`, false},
		{"not JSON", `subscription.accepted`, false},
		{"empty", ``, false},
	} {
		if got := hasType(&d, []byte(tc.in), typ); got != tc.want {
			t.Errorf("%s: hasType(%s) = %v, want %v", tc.name, tc.in, got, tc.want)
		}
	}
}
