package aaep

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/protocol"
)

// partyFinding is one finding as TestWhoseDuty expects it: the rule, the
// party it is reported against and the level.
type partyFinding struct {
	rule  string
	party protocol.Party
	level protocol.Level
}

func (p partyFinding) String() string { return fmt.Sprintf("%s %s %s", p.level, p.party, p.rule) }

// partyFindings lists res's sequence findings (SEQ, NEG, TRN) at or
// above SHOULD as partyFindings.
func partyFindings(res result) []partyFinding {
	var out []partyFinding
	for _, f := range res.findings {
		if f.Level >= protocol.Should && isSeqRule(f.RuleID) {
			out = append(out, partyFinding{f.RuleID, f.Party, f.Level})
		}
	}
	return out
}

// TestWhoseDuty holds the checker to the party the specification puts each
// duty on (issue 25, class 1). A stream holds both parties' messages:
//
//   - §6.3.4: "A reply that fails any check MUST be ignored" is the
//     producer's duty; a producer that ignores a late or withdrawn reply
//     breaks nothing, and neither does a user who answers late;
//   - §6.8: "Subscribers SHOULD detect cancellation and update their UI to
//     remove the no-longer-relevant confirmation prompt"; §9.4.2(9): a
//     Level 2 subscriber MUST "Detect cancellation of pending
//     confirmations": the lenient profile reads §6.8, the strict one
//     §9.4.2(9);
//   - §9.4.2(4): a subscriber MUST "Echo the reply_token exactly as
//     received".
//
// The producer is reported (MUST) only when it acts on a reply it had to
// ignore.
func TestWhoseDuty(t *testing.T) {
	must, should, info := protocol.Must, protocol.Should, protocol.Info
	prod, sub := protocol.Producer, protocol.Subscriber
	tests := []struct {
		name    string
		profile string
		msgs    []*tm
		want    []partyFinding // findings at SHOULD or MUST
		notes   []string       // INFO findings wanted too
	}{
		{"§6.3.4(4): a late reply the producer ignores", "",
			stream(preConf(), AC("rpl_1", "reject", 200), PU().at(100*time.Second), PU().at(180*time.Second),
				SC("awaiting_input", "thinking").at(201*time.Second), CR("rpl_1", "accept").at(230*time.Second), C().at(231*time.Second)),
			nil, []string{"SEQ-REPLY-NOT-EXPIRED"}},
		{"§6.3.4(2): a reply after the session ended, which the producer ignores", "",
			stream(preConf(), AC("rpl_1", "reject", 300), CR("rpl_1", "reject"), SC("awaiting_input", "thinking"), C(), CR("rpl_1", "accept")),
			nil, []string{"SEQ-REPLY-NOT-EXPIRED"}},
		{"§6.8: a reply to a withdrawn confirmation, which the producer ignores (lenient: SHOULD)", "",
			stream(preConf(), AC("rpl_1", "reject", 300), SC("awaiting_input", "thinking"), CR("rpl_1", "accept"), C()),
			[]partyFinding{{"SEQ-REPLY-AFTER-CANCEL", sub, should}}, nil},
		{"§9.4.2(9): the same reply in the strict profile (MUST)", "strict",
			stream(preConf(), AC("rpl_1", "reject", 300), SC("awaiting_input", "thinking"), CR("rpl_1", "accept"), C()),
			[]partyFinding{{"SEQ-REPLY-AFTER-CANCEL", sub, must}}, nil},
		{"§6.8: a reply after session.cancelled withdrew the prompt", "",
			stream(preConf(), AC("rpl_1", "reject", 300), X(), CR("rpl_1", "accept")),
			[]partyFinding{{"SEQ-REPLY-AFTER-CANCEL", sub, should}}, nil},
		{"§9.4.2(4): a reply_token the subscriber made up", "",
			stream(preConf(), AC("rpl_1", "reject", 300), CR("rpl_1x", "accept"), CR("rpl_1", "reject"), SC("awaiting_input", "thinking"), C()),
			[]partyFinding{{"SEQ-REPLY-KNOWN-TOKEN", sub, must}}, nil},
		{"§6.3.4: the producer acts on an expired accept", "",
			stream(preConf(), AC("rpl_1", "reject", 200), PU().at(100*time.Second), PU().at(180*time.Second),
				CR("rpl_1", "accept").at(250*time.Second), SC("awaiting_input", "calling_tool").at(251*time.Second),
				TIrr("transfer", "call_1"), TC("transfer", "call_1", "success"), SC("calling_tool", "thinking"), C()),
			[]partyFinding{{"SEQ-REPLY-IGNORED", prod, must}}, []string{"SEQ-REPLY-NOT-EXPIRED"}},
		{"§6.8: the producer acts on an accept to the confirmation it withdrew", "",
			stream(preConf(), AC("rpl_1", "reject", 300), SC("awaiting_input", "thinking"), CR("rpl_1", "accept"),
				SC("thinking", "calling_tool"), TIrr("transfer", "call_1"), TC("transfer", "call_1", "success"), SC("calling_tool", "thinking"), C()),
			[]partyFinding{{"SEQ-REPLY-AFTER-CANCEL", sub, should}, {"SEQ-REPLY-IGNORED", prod, must}}, nil},
		{"§6.5.5: the producer goes on after an answer of the wrong kind", "",
			stream(preConf(), AQ("rpl_2", 300, "yes_no"), QR("rpl_2", "maybe"), SC("awaiting_input", "thinking"), C()),
			[]partyFinding{{"SEQ-CLAR-RESPONSE-TYPE", sub, must}, {"SEQ-REPLY-IGNORED", prod, must}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, tt.profile, tt.msgs...)
			got := fmt.Sprint(partyFindings(res))
			if want := fmt.Sprint(tt.want); got != want && !(len(tt.want) == 0 && got == "[]") {
				t.Errorf("findings %s, want %s\n%s", got, want, res.describe())
			}
			for _, n := range tt.notes {
				found := false
				for _, f := range res.findings {
					found = found || (f.RuleID == n && f.Level == info && f.Party == sub)
				}
				if !found {
					t.Errorf("no INFO finding %s against the subscriber\n%s", n, res.describe())
				}
			}
			for _, f := range res.findings {
				if f.Party == prod && f.Level == must && strings.HasPrefix(f.RuleID, "SEQ-REPLY-") && f.RuleID != "SEQ-REPLY-IGNORED" && f.RuleID != "SEQ-REPLY-FIRST-WINS" {
					t.Errorf("a reply rule %s is reported against the producer", f.RuleID)
				}
			}
		})
	}
}
