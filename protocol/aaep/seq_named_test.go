package aaep

import (
	"fmt"
	"testing"
	"time"
)

// namingMode says how invoiceConf names its action.
var namingMode = "text"

// invoiceConf is a reversible confirmation that names its action, by its
// action text "Call send_invoice" and, as namingMode says, by tool or
// tool_call_id (extra_context) too.
func invoiceConf(token, def string, timeout int) *tm {
	t := AC(token, def, timeout).set("action", "Call send_invoice for ACME.", "irreversible", false, "risk_level", "low")
	switch namingMode {
	case "tool":
		t.set("extra_context", map[string]any{"tool": "send_invoice"})
	case "call":
		t.set("extra_context", map[string]any{"tool_call_id": "call_" + token[4:]})
	}
	return t
}

// TestNamedActionDecides holds the checker to the action a confirmation
// names, reversible or not (issue 25, class 2):
//
//   - §6.1(1): "The producer MUST NOT perform the action being confirmed
//     until" a valid accept arrives or "the timeout_seconds ... elapses, AND
//     the default_decision is accept": whether or not the tool is
//     irreversible;
//   - §4.5.3 and A.8.5: after a reject, the producer emits the follow-up
//     (a state change back to thinking); the rejected action is the tool
//     the rejected confirmation named, up to the next confirmation for that
//     tool, and a later, separately confirmed use is not it;
//   - §4.3.1, §6.3.4(3): one accept authorizes the one action it names; an
//     unconfirmed irreversible tool between the accept and that action is
//     blamed at its own message.
func TestNamedActionDecides(t *testing.T) {
	tests := []struct {
		name string
		msgs func() []*tm
		want []string // sequence findings at SHOULD or above, sorted
	}{
		{"§6.1(1): a reversible named action before its default-accept timeout", func() []*tm {
			return stream(answered(), preConf(),
				invoiceConf("rpl_1", "accept", 60), SC("awaiting_input", "calling_tool").at(10*time.Second),
				TI("send_invoice", "call_1"), TC("send_invoice", "call_1", "success"), SC("calling_tool", "thinking"), C())
		},
			[]string{"SEQ-CONF-BLOCKING"}},
		{"§6.1(1) in a passive recording (no replies on the source): the action is read as an unseen accept", func() []*tm {
			return stream(preConf(),
				invoiceConf("rpl_1", "accept", 60), SC("awaiting_input", "calling_tool").at(10*time.Second),
				TI("send_invoice", "call_1"), TC("send_invoice", "call_1", "success"), SC("calling_tool", "thinking"), C())
		},
			nil},
		{"§6.1(1): the same action after the default-accept timeout", func() []*tm {
			return stream(answered(), preConf(),
				invoiceConf("rpl_1", "accept", 60), PU().at(30*time.Second), SC("awaiting_input", "calling_tool").at(61*time.Second),
				TI("send_invoice", "call_1"), TC("send_invoice", "call_1", "success"), SC("calling_tool", "thinking"), C())
		},
			nil},
		{"A.8.5: a rejected reversible action run after the follow-up", func() []*tm {
			return stream(preConf(),
				invoiceConf("rpl_1", "reject", 60), CR("rpl_1", "reject"), SC("awaiting_input", "thinking"),
				SC("thinking", "calling_tool"), TI("send_invoice", "call_1"), TC("send_invoice", "call_1", "success"), SC("calling_tool", "thinking"), C())
		},
			[]string{"SEQ-CONF-NO-ACTION-AFTER-REJECT"}},
		{"A.8.5: a later use of the tool, confirmed on its own", func() []*tm {
			return stream(preConf(),
				invoiceConf("rpl_1", "reject", 60), CR("rpl_1", "reject"), SC("awaiting_input", "thinking"),
				SC("thinking", "awaiting_input"), invoiceConf("rpl_2", "reject", 60), CR("rpl_2", "accept"),
				SC("awaiting_input", "calling_tool"), TI("send_invoice", "call_2"), TC("send_invoice", "call_2", "success"), SC("calling_tool", "thinking"), C())
		},
			nil},
		{"§4.3.1: an unconfirmed irreversible tool between an accept and the action it names", func() []*tm {
			return stream(preConf(),
				invoiceConf("rpl_1", "reject", 60), CR("rpl_1", "accept"), SC("awaiting_input", "calling_tool"),
				TIrr("issue_refund", "call_9"), TC("issue_refund", "call_9", "success"),
				TI("send_invoice", "call_1"), TC("send_invoice", "call_1", "success"), SC("calling_tool", "thinking"), C())
		},
			[]string{"SEQ-IRREV-NEEDS-CONF"}},
		{"§4.3.1: the same with an irreversible send_invoice", func() []*tm {
			return stream(preConf(),
				invoiceConf("rpl_1", "reject", 60), CR("rpl_1", "accept"), SC("awaiting_input", "calling_tool"),
				TIrr("issue_refund", "call_9"), TC("issue_refund", "call_9", "success"),
				TIrr("send_invoice", "call_1"), TC("send_invoice", "call_1", "success"), SC("calling_tool", "thinking"), C())
		},
			[]string{"SEQ-IRREV-NEEDS-CONF"}},
	}
	for _, mode := range []string{"text", "tool", "call"} {
		for _, tt := range tests {
			t.Run(mode+"/"+tt.name, func(t *testing.T) {
				namingMode = mode
				res := run(t, "", tt.msgs()...)
				var got []string
				for _, f := range partyFindings(res) {
					got = append(got, f.rule)
				}
				if fmt.Sprint(got) != fmt.Sprint(tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
					t.Errorf("findings %v, want %v\n%s", got, tt.want, res.describe())
				}
			})
		}
	}
}
