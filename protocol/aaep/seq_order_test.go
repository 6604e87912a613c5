package aaep

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// numbered gives each event of msgs its place in emission order as
// sequence_number, and stamps it 100 ms after the one before, as the
// producer emitted them (the events only: replies and handshake carry
// none).
func numbered(msgs []*tm) []*tm {
	n := 0
	for _, t := range msgs {
		if t.envelope {
			t.seq(n).ts(time.Duration(n) * 100 * time.Millisecond)
			n++
		}
	}
	return msgs
}

// deliver returns msgs in the order order gives (indexes into msgs), each
// at its place's offset: what a recording holds when the transport
// delivered them in that order.
func deliver(msgs []*tm, order ...int) []*tm {
	out := make([]*tm, len(order))
	for i, j := range order {
		c := *msgs[j]
		c.hasAt = false
		out[i] = &c
	}
	return out
}

// TestDeliveryOrderIsNotEmissionOrder (issue 25, class 3): §8 makes the
// transport deliver a session's events in emission order, and §3.4.1
// makes sequence_number, where present, the authoritative emission order.
// When the recording holds a session's events out of order, the delivery
// is reported once (SEQ-DELIVERY-ORDER) and the session is judged in
// emission order: the producer, which emitted in order, gets no
// timestamp-order, tool-pairing or tool-before-state findings for it.
func TestDeliveryOrderIsNotEmissionOrder(t *testing.T) {
	session := func() []*tm {
		return numbered(stream(pre(), // 0 S, 1 SC idle→thinking
			SC("thinking", "calling_tool"),       // 2
			TI("lookup", "call_1"),               // 3
			TC("lookup", "call_1", "success"),    // 4
			SC("calling_tool", "writing_output"), // 5
			OS("out_1", 0, "Found it.", true),    // 6
			SC("writing_output", "idle"),         // 7
			C()))                                 // 8
	}
	tests := []struct {
		name  string
		order []int
		want  []string // sequence findings at SHOULD or above
		note  string   // the delivery finding says so
	}{
		{"in order", []int{0, 1, 2, 3, 4, 5, 6, 7, 8}, nil, ""},
		{"tool.invoked delivered after its completion and the state change", []int{0, 1, 2, 4, 5, 3, 6, 7, 8},
			[]string{"SEQ-DELIVERY-ORDER"}, "judged in emission order"},
		{"two events late, the later first", []int{0, 1, 4, 2, 3, 5, 6, 7, 8}, []string{"SEQ-DELIVERY-ORDER", "SEQ-DELIVERY-ORDER"}, "judged in emission order"},
		{"tool.invoked lost, not late: judged as delivered", []int{0, 1, 2, 4, 5, 6, 7, 8},
			[]string{"SEQ-TOOL-PAIR-PRECEDED", "SEQ-SEQNO-INCREMENT"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, "", deliver(session(), tt.order...)...)
			var got []string
			for _, f := range partyFindings(res) {
				got = append(got, f.rule)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
				t.Errorf("findings %v, want %v\n%s", got, tt.want, res.describe())
			}
			for _, f := range res.findings {
				if f.RuleID == "SEQ-DELIVERY-ORDER" && !strings.Contains(f.Message, tt.note) {
					t.Errorf("SEQ-DELIVERY-ORDER does not say how the session was judged (%q): %s", tt.note, f.Message)
				}
			}
		})
	}
	// §3.2.5: a timestamp that goes backwards in emission order is still
	// the producer's violation, delivered in order or not.
	backdated := session()
	backdated[3].ts(-time.Minute) // the late tool.invoked, stamped before the state change it follows
	res := run(t, "", deliver(backdated, 0, 1, 2, 4, 5, 3, 6, 7, 8)...)
	if !hasRule(res, "SEQ-TIMESTAMP-ORDER") {
		t.Errorf("a timestamp that decreases in emission order is not reported\n%s", res.describe())
	}
}

// TestDeliveryOrderInterleaved: the reordered session sits in the middle
// of another one that asks for and gets a confirmation; only the
// reordering is reported, and the other session is judged as it arrived.
func TestDeliveryOrderInterleaved(t *testing.T) {
	a := numbered(stream(pre(), SC("thinking", "calling_tool"), TI("lookup", "call_1"), TC("lookup", "call_1", "success"),
		SC("calling_tool", "idle"), C()))
	b := stream(S(), SC("idle", "thinking"), SC("thinking", "awaiting_input"), AC("rpl_b", "reject", 300),
		CR("rpl_b", "accept"), SC("awaiting_input", "calling_tool"), TIrr("transfer", "call_b"),
		TC("transfer", "call_b", "success"), SC("calling_tool", "idle"), C())
	for _, e := range b {
		if e.envelope {
			e.sess("sess_b")
		}
	}
	// a's tool.invoked (3) arrives after its completion (4) and the state
	// change (5); b's messages fill the places between.
	order := []*tm{a[0], b[0], a[1], b[1], a[2], b[2], b[3], a[4], b[4], a[5], b[5], a[3], b[6], b[7], a[6], b[8], b[9]}
	res := run(t, "", deliver(order, seqIndexes(len(order))...)...)
	var got []string
	for _, f := range partyFindings(res) {
		got = append(got, f.rule+"@"+f.party.String())
	}
	if want := "[SEQ-DELIVERY-ORDER@producer]"; fmt.Sprint(got) != want {
		t.Errorf("findings %v, want %s\n%s", got, want, res.describe())
	}
}

func seqIndexes(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// TestDeliveryOrderLatePrompt: the late event is a confirmation, and the
// subscriber's reply to it is recorded before it; the reply waits for its
// prompt with the held events (no SEQ-REPLY-KNOWN-TOKEN).
func TestDeliveryOrderLatePrompt(t *testing.T) {
	msgs := numbered(stream(preConf(), AC("rpl_1", "reject", 300), PU(), SC("awaiting_input", "calling_tool"),
		TIrr("transfer", "call_1"), TC("transfer", "call_1", "success"), SC("calling_tool", "idle"), C()))
	// events: 0 S, 1 SC, 2 SC, 3 AC, 4 PU, 5 SC, 6 TI, 7 TC, 8 SC, 9 C; the reply is message 10.
	msgs = append(msgs, CR("rpl_1", "accept"))
	res := run(t, "", deliver(msgs, 0, 1, 2, 4, 10, 3, 5, 6, 7, 8, 9)...)
	var got []string
	for _, f := range partyFindings(res) {
		got = append(got, f.rule)
	}
	if fmt.Sprint(got) != "[SEQ-DELIVERY-ORDER]" {
		t.Errorf("findings %v, want [SEQ-DELIVERY-ORDER]\n%s", got, res.describe())
	}
}
