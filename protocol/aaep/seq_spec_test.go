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
	return runMessages(t, profile, info, build(msgs))
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
		res := runInfo(t, profile, protocol.StreamInfo{Tool: "aaep-replay/test", Sources: []protocol.SourceInfo{{ID: 0, Replay: true}}}, msgs()...)
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
	ms := build(msgs)
	edit(ms)
	return runMessages(t, "", protocol.StreamInfo{}, ms)
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

func findingsOf(res result, rule string) []protocol.Finding {
	var out []protocol.Finding
	for _, f := range res.findings {
		if f.RuleID == rule {
			out = append(out, f)
		}
	}
	return out
}

// TestConfirmedActionByName: §4.4.1 has a confirmation describe "a specific
// action" (action, and extra_context for structure); §6.1(3) lets the
// producer "continue with non-blocked work" meanwhile; §6.2.2 makes each
// accept authorize one action. So the action is the invocation the
// confirmation names, not the next one in line.
func TestConfirmedActionByName(t *testing.T) {
	transfer := func(token string) *tm { return AC(token, "reject", 300).set("action", "Transfer $500 to savings.") }
	for _, profile := range []string{"lenient", "strict"} {
		// A balance check between the accept and the transfer is not the
		// confirmed action (the catalog's SEQ-CONF-ONE-ACTION).
		res := run(t, profile, stream(preConf(), transfer("rpl_1"), CR("rpl_1", "accept"),
			SC("awaiting_input", "calling_tool"), TI("get_balance", "call_1"), TC("get_balance", "call_1", "success"),
			TIrr("transfer_funds", "call_2"), TC("transfer_funds", "call_2", "success"), SC("calling_tool", "idle"), C())...)
		for _, f := range res.findings {
			if f.Level >= protocol.Should && (strings.HasPrefix(f.RuleID, "SEQ-") || strings.HasPrefix(f.RuleID, "NEG-")) {
				t.Errorf("%s: a lookup before the approved transfer: %s %s\n%s", profile, f.Level, f.RuleID, res.describe())
			}
		}
	}

	// Two confirmations open, one accepted and one rejected: the rejected
	// action's run is blamed on its own confirmation, at its own message.
	msgs := stream(preConf(), transfer("rpl_1"),
		AC("rpl_2", "reject", 300).set("action", "Delete the old account.", "extra_context", map[string]any{"tool": "delete_account"}),
		CR("rpl_1", "accept"), CR("rpl_2", "reject"),
		SC("awaiting_input", "calling_tool"),
		TIrr("delete_account", "call_3"), TC("delete_account", "call_3", "success"),
		TIrr("transfer_funds", "call_4"), TC("transfer_funds", "call_4", "success"), SC("calling_tool", "idle"), C())
	res := run(t, "", msgs...)
	bad := findingsOf(res, "SEQ-CONF-NO-ACTION-AFTER-REJECT")
	if len(bad) != 1 || bad[0].Index != 8 || !strings.Contains(bad[0].Message, "rpl_2") || !strings.Contains(bad[0].Message, "matched by the tool") {
		t.Errorf("the rejected delete: %+v, want one SEQ-CONF-NO-ACTION-AFTER-REJECT at message 8 naming rpl_2 and the match\n%s", bad, res.describe())
	}
	if n := len(findingsOf(res, "SEQ-CONF-ONE-ACTION")); n != 0 {
		t.Errorf("the accepted transfer is blamed (%d SEQ-CONF-ONE-ACTION)\n%s", n, res.describe())
	}
	// The trace says which confirmation each run was matched to.
	var details []string
	for _, s := range res.steps {
		if s.Label == "tool.invoked" {
			details = append(details, s.Detail)
		}
	}
	if len(details) != 2 || !strings.HasSuffix(details[0], "for rpl_2") || !strings.HasSuffix(details[1], "for rpl_1") {
		t.Errorf("tool.invoked steps %q, want the delete for rpl_2 and the transfer for rpl_1", details)
	}

	// A rejected action that runs later, after the producer went back to
	// thinking (§4.5.3, §6.1: no action after a reject), named by its tool.
	res = run(t, "", stream(preConf(),
		AC("rpl_1", "reject", 60).set("action", "Email the report to the team.", "irreversible", false, "risk_level", "low", "extra_context", map[string]any{"tool": "send_email"}),
		CR("rpl_1", "reject"), SC("awaiting_input", "thinking"), SC("thinking", "calling_tool"),
		TI("send_email", "call_1"), TC("send_email", "call_1", "success"), SC("calling_tool", "idle"), C())...)
	if bad := findingsOf(res, "SEQ-CONF-NO-ACTION-AFTER-REJECT"); len(bad) != 1 || bad[0].Index != 7 {
		t.Errorf("a rejected email sent later: %+v, want SEQ-CONF-NO-ACTION-AFTER-REJECT at message 7\n%s", bad, res.describe())
	}

	// Matched by tool_call_id: the named call runs while the confirmation
	// is pending (a blocking violation), another call of the same tool is
	// not that action.
	res = run(t, "", stream(preConf(),
		AC("rpl_1", "reject", 300).set("extra_context", map[string]any{"tool_call_id": "call_9"}),
		TI("transfer_funds", "call_8"), TC("transfer_funds", "call_8", "success"),
		TI("transfer_funds", "call_9"), TC("transfer_funds", "call_9", "success"),
		CR("rpl_1", "accept"), SC("awaiting_input", "idle"), C())...)
	if bad := findingsOf(res, "SEQ-CONF-BLOCKING"); len(bad) != 1 || bad[0].Index != 6 || !strings.Contains(bad[0].Message, "tool_call_id") {
		t.Errorf("the named call while pending: %+v, want one SEQ-CONF-BLOCKING at message 6 matched by tool_call_id\n%s", bad, res.describe())
	}

	// Nothing named: order decides, and the finding says so.
	res = run(t, "", stream(preConf(), AC("rpl_1", "reject", 300).set("action", "Proceed?"), CR("rpl_1", "accept"),
		SC("awaiting_input", "calling_tool"), TIrr("wipe", "call_1"), TC("wipe", "call_1", "success"),
		TIrr("purge", "call_2"), TC("purge", "call_2", "success"), SC("calling_tool", "idle"), C())...)
	if bad := findingsOf(res, "SEQ-CONF-ONE-ACTION"); len(bad) != 1 || bad[0].Index != 8 || !strings.Contains(bad[0].Message, "by order") {
		t.Errorf("two irreversible runs on one unnamed accept: %+v, want SEQ-CONF-ONE-ACTION at message 8 matched by order\n%s", bad, res.describe())
	}
}

// TestReplayedHandshakeSeen: in a recording of a replay every message the
// subscriber sent is recorded, so a subscription.accepted that answers no
// subscription.request on its subscription is the replay re-sending a
// recorded handshake (issue 34): NEG-RESPONSE-REQUIRED, at the unsolicited
// answer. A subscriber that negotiated late gets the re-sent one and then
// its own: the first is reported, the second is its answer. A live
// recording without the request (a recorder that did not record what it
// sent) is not judged.
func TestReplayedHandshakeSeen(t *testing.T) {
	replay := protocol.StreamInfo{Tool: "aaep-replay/test", Sources: []protocol.SourceInfo{{ID: 0, Replay: true}}}
	unsolicited := func() []*tm {
		return stream(SACC("sub_peer1", caps{}), S(), SC("idle", "thinking"), SC("thinking", "idle"), C())
	}
	late := func() []*tm {
		return stream(SACC("sub_peer1", caps{}), S(), SREQ(caps{}), SACC("sub_own", caps{}), SC("idle", "thinking"), SC("thinking", "idle"), C())
	}
	for name, tc := range map[string]struct {
		info protocol.StreamInfo
		msgs []*tm
		want int // NEG-RESPONSE-REQUIRED findings
		at   int64
	}{
		"replay, no request":   {replay, unsolicited(), 1, 0},
		"replay, late request": {replay, late(), 1, 0},
		"live, no request":     {protocol.StreamInfo{Tool: "aaep-capture/test"}, unsolicited(), 0, 0},
		"replay, answered":     {replay, stream(SREQ(caps{}), SACC("sub_own", caps{}), S(), SC("idle", "thinking"), SC("thinking", "idle"), C()), 0, 0},
	} {
		res := runInfo(t, "", tc.info, tc.msgs...)
		var got []protocol.Finding
		for _, f := range res.findings {
			if f.RuleID == "NEG-RESPONSE-REQUIRED" {
				got = append(got, f)
			}
		}
		if len(got) != tc.want {
			t.Errorf("%s: %d NEG-RESPONSE-REQUIRED, want %d\n%s", name, len(got), tc.want, res.describe())
			continue
		}
		for _, f := range got {
			if f.Index != tc.at || !strings.Contains(f.Message, "answers no subscription.request") {
				t.Errorf("%s: finding at %d %q, want at %d saying it answers no request", name, f.Index, f.Message, tc.at)
			}
		}
	}
}

// TestTimeBetween: a gap longer than a duration holds is said in years,
// not as time.Time.Sub's clamp (2562047h47m16.854775807s).
func TestTimeBetween(t *testing.T) {
	a := time.Date(1, 5, 24, 0, 0, 0, 0, time.UTC)
	b := time.Date(9999, 5, 24, 0, 0, 0, 0, time.UTC)
	if got := timeBetween(a, b); got != "about 9998 years" {
		t.Errorf("timeBetween(year 1, year 9999) = %q", got)
	}
	if got := timeBetween(b.Add(-1500*time.Millisecond), b); got != "1.5s" {
		t.Errorf("timeBetween(1.5 s apart) = %q", got)
	}
}
