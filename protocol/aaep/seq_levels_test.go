package aaep

import (
	"testing"

	"github.com/aaep-tools/aaepkit/protocol"
)

// TestAwaitingEnterLevels (issue 25, class 4): SEQ-STATE-AWAITING-ENTER
// rests on the informative Appendix A alone, which contradicts itself: A.4
// says the state change to awaiting_input comes at or before the
// confirmation, A.7.6 lists agent.session.started as a legal predecessor of
// agent.awaiting.confirmation, and §4.6's example goes from thinking to the
// confirmation. The lenient profile notes it (INFO), the strict profile
// warns (SHOULD); neither makes it a MUST.
func TestAwaitingEnterLevels(t *testing.T) {
	afterStart := func() []*tm {
		return stream(S(), AC("rpl_1", "reject", 300), CR("rpl_1", "reject"), SC("awaiting_input", "thinking"), C())
	}
	afterThinking := func() []*tm {
		return stream(pre(), AC("rpl_1", "reject", 300), CR("rpl_1", "reject"), SC("awaiting_input", "thinking"), C())
	}
	for _, tt := range []struct {
		name, profile string
		msgs          func() []*tm
		want          protocol.Level
	}{
		{"A.7.6: right after session.started, lenient", "", afterStart, protocol.Info},
		{"A.7.6: right after session.started, strict", "strict", afterStart, protocol.Should},
		{"§4.6: thinking → confirmation, lenient", "", afterThinking, protocol.Info},
		{"§4.6: thinking → confirmation, strict", "strict", afterThinking, protocol.Should},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, tt.profile, tt.msgs()...)
			var got []protocol.Level
			for _, f := range res.findings {
				if f.RuleID == "SEQ-STATE-AWAITING-ENTER" {
					got = append(got, f.Level)
				}
			}
			if len(got) != 1 || got[0] != tt.want {
				t.Errorf("SEQ-STATE-AWAITING-ENTER at %v, want once at %v\n%s", got, tt.want, res.describe())
			}
		})
	}
}
