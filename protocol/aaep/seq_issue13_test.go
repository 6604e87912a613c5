package aaep

import (
	"strings"
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

// runRaw builds msgs, lets edit change their bytes, and checks them.
func runRaw(t testing.TB, edit func(ms []*protocol.Message), msgs ...*tm) result {
	t.Helper()
	var res result
	eng, err := protocol.NewEngine([]protocol.Model{New()}, "", nil, protocol.Sink{
		Finding:     func(f protocol.Finding) { res.findings = append(res.findings, f) },
		Step:        func(s protocol.Step) { res.steps = append(res.steps, s) },
		SessionDone: func(s protocol.SessionSummary) { res.summaries = append(res.summaries, s) },
	})
	if err != nil {
		t.Fatal(err)
	}
	ms := build(msgs)
	edit(ms)
	for _, m := range ms {
		eng.Feed(m)
	}
	eng.Finish()
	return res
}

func ruleIDs(res result) []string {
	var ids []string
	for _, f := range res.findings {
		ids = append(ids, f.RuleID)
	}
	return ids
}

// TestMalformedBytesKeepTheEvent: an encoding fault is the message's own
// (ENV-UTF8, §3.8: UTF-8 JSON, and RFC 8259 forbids a BOM); it must not
// take the event out of the sequence and so change the verdict of the good
// events around it (no SEQ-START-FIRST after a BOM, no SEQ-STATE-CHAIN after
// a bad byte).
func TestMalformedBytesKeepTheEvent(t *testing.T) {
	clean := func() []*tm {
		return stream(S(), SC("idle", "thinking"), SC("thinking", "idle"), C())
	}
	cases := []struct {
		name string
		edit func(ms []*protocol.Message)
	}{
		{"byte-order mark before the first event", func(ms []*protocol.Message) {
			ms[0].Raw = append([]byte{0xEF, 0xBB, 0xBF}, ms[0].Raw...)
		}},
		{"invalid UTF-8 in a state change", func(ms []*protocol.Message) {
			ms[1].Raw = []byte(strings.Replace(string(ms[1].Raw), "idle to thinking", "idle to thinking \xff\xfe", 1))
		}},
		{"byte-order mark and invalid UTF-8", func(ms []*protocol.Message) {
			ms[2].Raw = append([]byte{0xEF, 0xBB, 0xBF}, strings.Replace(string(ms[2].Raw), "thinking to idle", "thinking to idle \xc3", 1)...)
		}},
	}
	for _, c := range cases {
		res := runRaw(t, c.edit, clean()...)
		if ids := strings.Join(ruleIDs(res), " "); ids != "ENV-UTF8" {
			t.Errorf("%s: findings [%s], want [ENV-UTF8] only\n%s", c.name, ids, res.describe())
		}
		if len(res.summaries) != 1 || res.summaries[0].State != StateCompleted || res.summaries[0].Messages != 4 {
			t.Errorf("%s: summaries %+v, want one completed session of 4 messages", c.name, res.summaries)
		}
	}
}

// TestArrayAndDeepNesting: a JSON array where an event should be gets a
// message that says so (one event per message, §3.9(1)); an event nested
// past the decoder's recursion limit is still read, and ENV-SIZE (§3.7,
// at most 8 levels) says it is nested too deeply, not that it is not a
// JSON object.
func TestArrayAndDeepNesting(t *testing.T) {
	res := runRaw(t, func(ms []*protocol.Message) {
		ms[1].Raw = []byte("[" + string(ms[1].Raw) + "," + string(ms[1].Raw) + "]")
	}, S(), SC("idle", "thinking"), C())
	found := false
	for _, f := range res.findings {
		if f.RuleID == "ENV-JSON-OBJECT" && strings.Contains(f.Message, "JSON array") && strings.Contains(f.Message, "one per line") {
			found = true
		}
	}
	if !found {
		t.Errorf("an array of events: no ENV-JSON-OBJECT that names the array\n%s", res.describe())
	}

	deep := strings.Repeat(`{"a":`, 20000) + "1" + strings.Repeat("}", 20000)
	res = runRaw(t, func(ms []*protocol.Message) {
		ms[1].Raw = []byte(strings.Replace(string(ms[1].Raw), `"from_state"`, `"progress":`+deep+`,"from_state"`, 1))
	}, S(), SC("idle", "thinking"), SC("thinking", "idle"), C())
	var size *protocol.Finding
	for i, f := range res.findings {
		if f.RuleID == "ENV-SIZE" {
			size = &res.findings[i]
		}
		if f.RuleID == "ENV-JSON-OBJECT" || strings.HasPrefix(f.RuleID, "SEQ-STATE") {
			t.Errorf("deep nesting: %s %s", f.RuleID, f.Message)
		}
	}
	if size == nil || !strings.Contains(size.Message, "nested too deeply") || size.Index != 1 {
		t.Errorf("deep nesting: ENV-SIZE %+v, want one on message 1 saying nested too deeply\n%s", size, res.describe())
	}
}
