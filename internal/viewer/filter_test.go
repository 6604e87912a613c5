package viewer

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol"
)

func TestFilterExpressions(t *testing.T) {
	doc := payload.Decode([]byte(`{"type":"aaep:agent.tool.invoked","session_id":"sess_1","urgency":"critical","tool_name":"search_flights","producer":{"agent_id":"travel-assistant"},"sequence_number":7}`))
	rec := &filterRecord{index: 12, kind: "recv", source: 2, session: "sess_1", doc: doc, rules: []string{"SEQ-TOOL-ORDER", "EVT-X"}, worst: protocol.Must}
	quiet := &filterRecord{index: 3, kind: "sent", source: 0, session: "sess_2", doc: payload.Decode([]byte(`{"type":"confirmation.reply"}`))}
	for _, c := range []struct {
		expr       string
		rec, quiet bool
	}{
		{`type == "tool.invoked" && level >= MUST`, true, false},
		{`type == aaep:agent.tool.invoked`, true, false},
		{`type ~ TOOL`, true, false},
		{`session == sess_1 || direction == sent`, true, true},
		{`!(direction == recv)`, false, true},
		{`urgency == critical`, true, false},
		{`urgency != critical`, false, true},
		{`source >= 2 && index < 13`, true, false},
		{`rule ~ SEQ-`, true, false},
		{`rule != EVT-X`, false, true},
		{`level == NONE`, false, true},
		{`level >= INFO`, true, false},
		{`tool_name == search_flights`, true, false},
		{`producer.agent_id ~ travel`, true, false},
		{`sequence_number > 5`, true, false},
		{`missing_field == x`, false, false},
		{`missing_field != x`, true, true},
		{`(type == "tool.invoked" || type == "confirmation.reply") && !(level >= SHOULD)`, false, true},
	} {
		e, err := parseFilterExpr(c.expr)
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		if got := e.eval(rec); got != c.rec {
			t.Errorf("%s on the tool call: %v, want %v", c.expr, got, c.rec)
		}
		if got := e.eval(quiet); got != c.quiet {
			t.Errorf("%s on the reply: %v, want %v", c.expr, got, c.quiet)
		}
	}
	for _, c := range []struct{ expr, want string }{
		{`type ==`, "value is missing"},
		{`type "x"`, "want an operator"},
		{`level >= HIGH`, "level: want"},
		{`source == two`, "source: want a number"},
		{`(type == x`, "missing )"},
		{`type == "x`, "unterminated string"},
		{`type == x &&`, "comparison is missing"},
		{`type == x y`, `unexpected "y" at character 11`},
	} {
		if _, err := parseFilterExpr(c.expr); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.expr, err, c.want)
		}
	}
}

// TestTextMatch: the search finds q in any ASCII case, at the start, the
// end and between, and nothing else; a random check against lowering both.
func TestTextMatch(t *testing.T) {
	for _, c := range []struct {
		raw, q string
		want   bool
	}{
		{`{"tool_name":"SEARCH_flights"}`, "search_FLIGHTS", true},
		{`{"a":1}`, `{"A"`, true},
		{`{"a":1}`, `1}`, true},
		{`abc`, `abcd`, false},
		{`aaaab`, `AAB`, true},
		{`xyz`, ``, true},
		{`Ünïcode`, `ünïcode`, false},   // ASCII case only
		{"\xc3\x9c", "\xe3\x9c", false}, // no folding of other bytes
		{`sess_1 sess_2`, `SESS_2`, true},
		{`sess_1`, `sess_2`, false},
	} {
		if got := textMatch([]byte(c.raw), []byte(c.q)); got != c.want {
			t.Errorf("textMatch(%q, %q) = %v, want %v", c.raw, c.q, got, c.want)
		}
	}
	lower := func(b []byte) []byte {
		out := make([]byte, len(b))
		for i, c := range b {
			out[i] = lowerASCII(c)
		}
		return out
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "aAbB_1"
	for range 20000 {
		raw, q := make([]byte, rng.IntN(12)), make([]byte, 1+rng.IntN(3))
		for i := range raw {
			raw[i] = alphabet[rng.IntN(len(alphabet))]
		}
		for i := range q {
			q[i] = alphabet[rng.IntN(len(alphabet))]
		}
		if got, want := textMatch(raw, q), bytes.Contains(lower(raw), lower(q)); got != want {
			t.Fatalf("textMatch(%q, %q) = %v, want %v", raw, q, got, want)
		}
	}
}

// BenchmarkTextMatch: a search that finds nothing in a typical payload
// (the whole-capture search's inner loop).
func BenchmarkTextMatch(b *testing.B) {
	raw := []byte(`{"type":"aaep:agent.tool.invoked","session_id":"sess_0123456789abcdef","event_id":"evt_42","sequence_number":17,"timestamp":"2026-11-02T09:00:01.234Z","producer":{"agent_id":"travel-assistant","agent_version":"1.4.2"},"tool_name":"search_flights","tool_call_id":"call_321dc5a6","arguments":{"from":"LIS","to":"OSL","date":"2026-12-12","passengers":1},"urgency":"normal"}`)
	q := []byte("no-such-text-anywhere")
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if textMatch(raw, q) {
			b.Fatal("found")
		}
	}
}
