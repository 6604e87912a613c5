package aaep

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/protocol"
)

// TestFindingsNameRelatedMessages: a finding about another message than
// its own (the invocation that never completed, the invocation a
// completion does not match) carries that
// message's position in Related, and its text names it by index as before.
func TestFindingsNameRelatedMessages(t *testing.T) {
	for _, tc := range []struct {
		name string
		msgs []*tm
		rule string
		// related are the indexes of the related messages, in order.
		related []int64
		// says is what the message says of the first of them.
		says string
	}{
		{"tool never completed", stream(S(), SC("idle", "calling_tool"), TI("fetch", "call_1"), C()),
			"SEQ-TOOL-PAIR-COMPLETED", []int64{2}, "invoked at message 2 never completed"},
		{"completion of another tool", stream(S(), SC("idle", "calling_tool"), TI("fetch", "call_1"), TC("store", "call_1", "success"), SC("calling_tool", "idle"), C()),
			"SEQ-TOOL-NAME-MATCH", []int64{2}, "the invocation (message 2) named"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ms := build(tc.msgs)
			res := runMessages(t, "", protocol.StreamInfo{}, ms)
			var found []protocol.Finding
			for _, f := range res.findings {
				if f.RuleID == tc.rule {
					found = append(found, f)
				}
			}
			if len(found) != 1 {
				t.Fatalf("%d %s findings, want 1; all: %+v", len(found), tc.rule, res.findings)
			}
			f := found[0]
			var got []int64
			for _, r := range f.Related {
				got = append(got, r.Index)
				if r.Offset != ms[r.Index].Offset {
					t.Errorf("related message %d at offset %v, want %v", r.Index, r.Offset, ms[r.Index].Offset)
				}
			}
			if !slices.Equal(got, tc.related) {
				t.Errorf("related %v, want %v (finding %+v)", got, tc.related, f)
			}
			if !strings.Contains(f.Message, tc.says) {
				t.Errorf("message %q does not say %q", f.Message, tc.says)
			}
		})
	}
	// A finding about its own message names no other.
	res := run(t, "", S(), TI("fetch", "call_1"))
	for _, f := range res.findings {
		if f.RuleID == "SEQ-TOOL-AVAILABLE" && f.Related != nil {
			t.Errorf("%s relates %v", f.RuleID, f.Related)
		}
	}
}

// TestRelatedFormatsAsIndex: a Related argument is written as its index
// whatever the verb's flags, as the index itself would be.
func TestRelatedFormatsAsIndex(t *testing.T) {
	r := protocol.Related{Index: 42, Offset: 7}
	for _, format := range []string{"message %d", "%5d|", "%-4d|", "%v"} {
		if got, want := fmt.Sprintf(format, r), fmt.Sprintf(format, int64(42)); got != want {
			t.Errorf("Sprintf(%q) = %q, want %q", format, got, want)
		}
	}
}
