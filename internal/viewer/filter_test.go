package viewer

import (
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
