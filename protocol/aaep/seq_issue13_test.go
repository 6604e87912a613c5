package aaep

import (
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/protocol"
)

// runInfo is run with the stream described by info (protocol.Engine.Begin).
func runInfo(t testing.TB, profile string, info protocol.StreamInfo, msgs ...*tm) result {
	t.Helper()
	var res result
	sink := protocol.Sink{
		Finding:     func(f protocol.Finding) { res.findings = append(res.findings, f) },
		Step:        func(s protocol.Step) { res.steps = append(res.steps, s) },
		SessionDone: func(s protocol.SessionSummary) { res.summaries = append(res.summaries, s) },
	}
	eng, err := protocol.NewEngine([]protocol.Model{New()}, "", &protocol.Options{Profile: profile}, sink)
	if err != nil {
		t.Fatal(err)
	}
	eng.Begin(info)
	for _, m := range build(msgs) {
		eng.Feed(m)
	}
	eng.Finish()
	return res
}

func hasRule(res result, rule string) bool {
	for _, f := range res.findings {
		if f.RuleID == rule {
			return true
		}
	}
	return false
}

// TestReplayReplyTiming: §6.3.4(4) makes a reply expire at the originating
// event's timestamp plus timeout_seconds. A recording of a replay pairs the
// original producer's prompt (stamped ten minutes before the replay) with
// a live reply decided 1.7 s after the replayed prompt arrived: judged on
// the receive offsets it is in time. The same stream read as a live
// recording compares the reply's timestamp with the prompt's and finds it
// expired, as it should.
func TestReplayReplyTiming(t *testing.T) {
	orig := -10 * time.Minute
	msgs := func() []*tm {
		return stream(
			S().ts(orig).at(0), SC("idle", "thinking").ts(orig+time.Second).at(100*time.Millisecond),
			SC("thinking", "awaiting_input").ts(orig+2*time.Second).at(200*time.Millisecond),
			AC("rpl_1", "reject", 300).ts(orig+3*time.Second).at(300*time.Millisecond),
			CR("rpl_1", "accept").ts(2*time.Second).at(2*time.Second), // decided 1.7 s after the prompt arrived
			SC("awaiting_input", "calling_tool").ts(orig+20*time.Second).at(2100*time.Millisecond),
			TIrr("transfer", "call_1").ts(orig+21*time.Second).at(2200*time.Millisecond),
			TC("transfer", "call_1", "success").ts(orig+22*time.Second).at(2300*time.Millisecond),
			SC("calling_tool", "idle").ts(orig+23*time.Second).at(2400*time.Millisecond),
			C().ts(orig+24*time.Second).at(2500*time.Millisecond),
		)
	}
	for _, profile := range []string{"lenient", "strict"} {
		res := runInfo(t, profile, protocol.StreamInfo{Replay: true, Tool: "aaep-replay/test"}, msgs()...)
		if ids := res.seqIDs(); len(ids) != 0 {
			t.Errorf("%s replay: findings %v, want none\n%s", profile, ids, res.describe())
		}
	}
	res := runInfo(t, "", protocol.StreamInfo{Tool: "aaep-capture/test"}, msgs()...)
	if !hasRule(res, "SEQ-REPLY-NOT-EXPIRED") {
		t.Errorf("live recording: want SEQ-REPLY-NOT-EXPIRED for a reply decided 10 minutes after a 300 s prompt\n%s", res.describe())
	}
}
