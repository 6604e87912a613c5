package aaep

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/sample"
	"github.com/aaep-tools/aaepkit/protocol"
)

// answered is a short clean session on source 0 whose clarification gets
// its reply: it makes the recording carry replies on that source.
func answered() []*tm {
	r := "sess_r"
	return stream(S().sess(r), SC("idle", "awaiting_input").sess(r), AQ("rpl_r", 120).sess(r), QR("rpl_r", "savings"),
		SC("awaiting_input", "thinking").sess(r), C().sess(r))
}

// booking is a confirmation flow as a passive recorder sees it: the
// producer leaves awaiting_input and runs the irreversible action with no
// reply in the recording.
func booking(sess, token string) []*tm {
	return stream(S().sess(sess), SC("idle", "thinking").sess(sess), SC("thinking", "awaiting_input").sess(sess),
		AC(token, "reject", 300).sess(sess), SC("awaiting_input", "calling_tool").sess(sess),
		TIrr("transfer", "call_"+token[4:]).sess(sess), TC("transfer", "call_"+token[4:], "success").sess(sess),
		SC("calling_tool", "thinking").sess(sess), C().sess(sess))
}

// unseenCases are the cases of recordings without replies
// (SEQ-REPLY-UNOBSERVED) and their counterparts that carry replies.
func unseenCases() []seqCase {
	unobserved := []string{"SEQ-REPLY-UNOBSERVED"}
	blocked := func() []*tm {
		return stream(preConf(), AC("rpl_1", "reject", 300), TIrr("transfer", "call_1"), TC("transfer", "call_1", "success"),
			SC("calling_tool", "thinking"), C())
	}
	return []seqCase{
		{"confirmed action, no reply recorded", "SEQ-REPLY-UNOBSERVED", "", booking(defSess, "rpl_1"), unobserved},
		{"confirmed action with its reply", "SEQ-REPLY-UNOBSERVED", "",
			stream(preConf(), AC("rpl_1", "reject", 300), CR("rpl_1", "accept"), SC("awaiting_input", "calling_tool"),
				TIrr("transfer", "call_1"), TC("transfer", "call_1", "success"), SC("calling_tool", "thinking"), C()), nil},
		{"action while blocked, no reply recorded", "SEQ-REPLY-UNOBSERVED", "", blocked(), unobserved},
		{"action while blocked on a source that carries replies", "SEQ-CONF-BLOCKING", "",
			stream(answered(), blocked()), []string{"SEQ-CONF-BLOCKING", "SEQ-IRREV-NEEDS-ACCEPT"}},
		{"action while blocked, the first reply comes later in the session", "SEQ-CONF-BLOCKING", "",
			func() []*tm {
				b := blocked()
				return stream(b[:len(b)-1], answered(), b[len(b)-1])
			}(), []string{"SEQ-CONF-BLOCKING", "SEQ-IRREV-NEEDS-ACCEPT"}},
		{"action while blocked, the first reply comes after the session", "SEQ-REPLY-UNOBSERVED", "",
			stream(blocked(), answered()), unobserved},
		{"replies on another source only", "SEQ-REPLY-UNOBSERVED", "",
			stream(func() []*tm {
				var out []*tm
				for _, m := range answered() {
					out = append(out, m.src(1))
				}
				return out
			}(), blocked()), unobserved},
		{"thinking before the action, no reply recorded", "SEQ-REPLY-UNOBSERVED", "",
			stream(preConf(), AC("rpl_1", "reject", 300), SC("awaiting_input", "thinking"), SC("thinking", "calling_tool"),
				TIrr("transfer", "call_1"), TC("transfer", "call_1", "success"), SC("calling_tool", "thinking"), C()), unobserved},
		{"action after a cancel on a source that carries replies", "SEQ-CONF-NO-ACTION-AFTER-REJECT", "",
			stream(answered(), preConf(), AC("rpl_1", "reject", 300), SC("awaiting_input", "thinking"), SC("thinking", "calling_tool"),
				TIrr("transfer", "call_1"), TC("transfer", "call_1", "success"), SC("calling_tool", "thinking"), C()),
			[]string{"SEQ-CONF-NO-ACTION-AFTER-REJECT"}},
		{"clarification left without a recorded reply", "SEQ-REPLY-UNOBSERVED", "",
			stream(preConf(), AQ("rpl_2", 300), SC("awaiting_input", "thinking").at(3*time.Second), C()), unobserved},
		{"same action asked again, no reply recorded", "SEQ-REPLY-UNOBSERVED", "",
			stream(preConf(), AC("rpl_1", "reject", 300), AC("rpl_2", "reject", 300), SC("awaiting_input", "thinking"), C()), unobserved},
		{"same action asked again on a source that carries replies", "SEQ-CONF-NO-DUP-PENDING", "",
			stream(answered(), preConf(), AC("rpl_1", "reject", 300), AC("rpl_2", "reject", 300), SC("awaiting_input", "thinking"), C()),
			[]string{"SEQ-CONF-NO-DUP-PENDING"}},
		{"defaulted accept never acted on, no reply recorded", "SEQ-REPLY-UNOBSERVED", "",
			stream(preConf(), AC("rpl_1", "accept", 30).set("risk_level", "low", "irreversible", false), PU().at(31*time.Second),
				SC("awaiting_input", "thinking"), C()), unobserved},
		{"defaulted accept never acted on, replies recorded", "SEQ-CONF-ACCEPT-INVOKES", "",
			stream(answered(), preConf(), AC("rpl_1", "accept", 30).set("risk_level", "low", "irreversible", false), PU().at(31*time.Second),
				SC("awaiting_input", "thinking"), C()), []string{"SEQ-CONF-ACCEPT-INVOKES"}},
		{"irreversible action on a defaulted accept, no reply recorded (strict)", "SEQ-REPLY-UNOBSERVED", "strict", timeoutAccept(), unobserved},
		// Judged without replies: these stay MUST in a passive recording.
		{"one accept, two actions, no reply recorded", "SEQ-CONF-ONE-ACTION", "",
			stream(preConf(), AC("rpl_1", "reject", 300), SC("awaiting_input", "calling_tool"), TIrr("transfer", "call_1"),
				TC("transfer", "call_1", "success"), TIrr("transfer", "call_2"), TC("transfer", "call_2", "success"), SC("calling_tool", "thinking"), C()),
			[]string{"SEQ-CONF-ONE-ACTION", "SEQ-REPLY-UNOBSERVED"}},
		{"irreversible action without confirmation, no reply recorded", "SEQ-IRREV-NEEDS-CONF", "",
			stream(pre(), SC("thinking", "calling_tool"), TIrr("transfer", "call_1"), TC("transfer", "call_1", "success"), SC("calling_tool", "thinking"), C()),
			[]string{"SEQ-IRREV-NEEDS-CONF"}},
		{"action after the default reject, no reply recorded", "SEQ-CONF-TIMEOUT-DEFAULT", "",
			stream(preConf(), AC("rpl_1", "reject", 60).set("risk_level", "medium"), SC("awaiting_input", "calling_tool").at(61*time.Second),
				TIrr("transfer", "call_1"), TC("transfer", "call_1", "success"), SC("calling_tool", "thinking"), C()),
			[]string{"SEQ-CONF-TIMEOUT-DEFAULT"}},
		{"unrelated work, then the end, no reply recorded", "SEQ-REPLY-UNOBSERVED", "",
			stream(preConf(), AC("rpl_1", "reject", 300), SC("awaiting_input", "calling_tool"), TI("lookup", "call_1"),
				TC("lookup", "call_1", "success"), SC("calling_tool", "thinking"), C()), nil},
	}
}

// TestUnobservedOncePerSession: one SEQ-REPLY-UNOBSERVED per session,
// naming the flow's token, what the producer did and the rules it spares,
// and the session's other flows.
func TestUnobservedOncePerSession(t *testing.T) {
	second := booking("sess_b", "rpl_b")
	second = append(second[:len(second)-1], SC("thinking", "awaiting_input").sess("sess_b"), AC("rpl_b2", "reject", 300).sess("sess_b"),
		SC("awaiting_input", "calling_tool").sess("sess_b"), TIrr("wire", "call_b2").sess("sess_b"), TC("wire", "call_b2", "success").sess("sess_b"),
		SC("calling_tool", "thinking").sess("sess_b"), C().sess("sess_b"))
	res := run(t, "", stream(booking("sess_a", "rpl_a"), second)...)
	var got []protocol.Finding
	for _, f := range res.findings {
		if strings.HasPrefix(f.RuleID, "SEQ-") || strings.HasPrefix(f.RuleID, "NEG-") {
			got = append(got, f)
		}
	}
	if len(got) != 2 {
		t.Fatalf("%d sequence findings, want one SEQ-REPLY-UNOBSERVED per session\n%s", len(got), res.describe())
	}
	for _, f := range got {
		if f.RuleID != "SEQ-REPLY-UNOBSERVED" || f.Level != protocol.Info {
			t.Errorf("finding %s at %s, want SEQ-REPLY-UNOBSERVED at INFO", f.RuleID, f.Level)
		}
	}
	a, b := got[0], got[1]
	if a.Session == b.Session {
		a, b = got[0], got[1]
		t.Fatalf("both findings filed under %s", a.Session)
	}
	if a.Session != "sess_a" {
		a, b = b, a
	}
	for _, want := range []string{"confirmation rpl_a", "acted as if it was accepted", "it invoked transfer", "SEQ-IRREV-NEEDS-ACCEPT", "SEQ-CONF-BLOCKING"} {
		if !strings.Contains(a.Message, want) {
			t.Errorf("sess_a finding %q lacks %q", a.Message, want)
		}
	}
	for _, want := range []string{"confirmation rpl_b", "so was rpl_b2"} {
		if !strings.Contains(b.Message, want) {
			t.Errorf("sess_b finding %q lacks %q", b.Message, want)
		}
	}
	// The finding sits at the action, where the MUST findings would be.
	for _, s := range res.steps {
		if s.Session == "sess_a" && s.Label == "tool.invoked" && s.Index != a.Index {
			t.Errorf("finding at message %d, want the action at message %d", a.Index, s.Index)
		}
	}
}

// TestCapturePassiveAndAnswering checks real capture files of the same
// eight interleaved sessions: recorded by a subscriber that answers (the
// replies are sent records), by a passive recorder (no replies), and by
// aaep-replay's own --record (written from the subscriber's side too, under
// the replayer's name). Only the passive one notes unobserved replies, once for each
// session with a confirmation or clarification, and none reports a reply
// rule at MUST.
func TestCapturePassiveAndAnswering(t *testing.T) {
	start := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	msgs := sample.Stream(sample.Options{Sessions: 8, Seed: 5})
	var passive []sample.Msg
	flows := map[string]string{} // session -> the flow's kind
	for _, m := range msgs {
		switch m.Type {
		case TypeAwaitingConfirmation:
			flows[m.Session] = "confirmation"
		case TypeAwaitingClarification:
			flows[m.Session] = "clarification"
		}
		if !m.FromSubscriber {
			passive = append(passive, m)
		}
	}
	if len(passive) == len(msgs) || len(flows) == 0 {
		t.Fatalf("the sample stream has %d replies and %d flows; the test needs both", len(msgs)-len(passive), len(flows))
	}
	dir := t.TempDir()
	answering, quiet := filepath.Join(dir, "answering.aaep"), filepath.Join(dir, "passive.aaep")
	if err := sample.WriteCapture(answering, msgs, start, "aaep-capture/test"); err != nil {
		t.Fatal(err)
	}
	if err := sample.WriteCapture(quiet, passive, start, "aaep-capture/test"); err != nil {
		t.Fatal(err)
	}
	replayRec := filepath.Join(dir, "replay-record.aaep")
	writeReplayRecord(t, replayRec, msgs, start)

	for _, path := range []string{answering, replayRec} {
		res := checkFile(t, path)
		if ids := res.seqIDs(); len(ids) != 0 {
			t.Errorf("%s: sequence findings %v, want none\n%s", filepath.Base(path), ids, res.describe())
		}
	}

	res := checkFile(t, quiet)
	seen := map[string]bool{}
	for _, f := range res.findings {
		if !strings.HasPrefix(f.RuleID, "SEQ-") && !strings.HasPrefix(f.RuleID, "NEG-") {
			continue
		}
		if f.RuleID != "SEQ-REPLY-UNOBSERVED" {
			t.Errorf("passive recording: %s %s at message %d: %s", f.Level, f.RuleID, f.Index, f.Message)
			continue
		}
		if seen[f.Session] {
			t.Errorf("passive recording: second SEQ-REPLY-UNOBSERVED for %s", f.Session)
		}
		seen[f.Session] = true
		want := "acted as if it was accepted (it invoked charge_card"
		if flows[f.Session] == "clarification" {
			want = "went on as if it was answered"
		}
		if !strings.Contains(f.Message, flows[f.Session]+" rpl_") || !strings.Contains(f.Message, want) {
			t.Errorf("passive recording, %s: %q does not say %q about its %s", f.Session, f.Message, want, flows[f.Session])
		}
	}
	for s := range flows {
		if !seen[s] {
			t.Errorf("passive recording: no SEQ-REPLY-UNOBSERVED for %s, which has a %s", s, flows[s])
		}
	}
}

// writeReplayRecord writes msgs as aaep-replay's --record does: from the
// subscriber's side, like any capture (the replayed events are received
// records, the subscriber's replies sent ones), under the replayer's name.
func writeReplayRecord(t *testing.T, path string, msgs []sample.Msg, start time.Time) {
	t.Helper()
	w, err := capfile.Create(path, capfile.Header{Start: start, Tool: "aaep-replay serve (test)",
		Origins: []capfile.Origin{{ID: 0, Transport: "websocket", Endpoint: "ws://127.0.0.1:1/aaep/v1/ws"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		kind := capfile.KindReceived
		if m.FromSubscriber {
			kind = capfile.KindSent
		}
		if err := w.Append(&capfile.Record{Kind: kind, Time: int64(m.Offset), Payload: m.JSON}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestErrorAnswerClaim: an untyped error body is AAEP only right after a
// reply on its source, from the producer, and with the error body's shape;
// otherwise it stays a message of no known protocol.
func TestErrorAnswerClaim(t *testing.T) {
	reveal := func() *tm {
		return errorAnswer("error", "invalid_token", "message", "Reply token does not match any outstanding confirmation.")
	}
	tests := []struct {
		name    string
		msgs    []*tm
		claimed bool
	}{
		{"right after a reply", stream(preConf(), AC("rpl_1", "reject", 300), CR("rpl_9", "accept"), reveal()), true},
		{"without a reply", stream(preConf(), AC("rpl_1", "reject", 300), reveal()), false},
		{"after an event that followed the reply", stream(preConf(), AC("rpl_1", "reject", 300), CR("rpl_9", "accept"), PU(), reveal()), false},
		{"on another source", stream(preConf(), AC("rpl_1", "reject", 300), CR("rpl_9", "accept"), reveal().src(1)), false},
		{"from the subscriber", stream(preConf(), AC("rpl_1", "reject", 300), CR("rpl_9", "accept"), reveal().dirn(protocol.ToProducer)), false},
		{"with other members", stream(preConf(), AC("rpl_1", "reject", 300), CR("rpl_9", "accept"), reveal().set("items", 3)), false},
		{"a second answer", stream(preConf(), AC("rpl_1", "reject", 300), CR("rpl_9", "accept"), errorAnswer("error", "rejected"), reveal()), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, "", append(tt.msgs, C())...)
			last := int64(len(tt.msgs) - 1)
			var unknown, trn bool
			for _, f := range res.findings {
				if f.Index != last {
					continue
				}
				unknown = unknown || f.RuleID == "STREAM-UNKNOWN-PROTOCOL"
				trn = trn || f.RuleID == "TRN-NO-FAILURE-REASON"
			}
			if trn != tt.claimed || unknown == tt.claimed {
				t.Errorf("TRN-NO-FAILURE-REASON %v, STREAM-UNKNOWN-PROTOCOL %v; want claimed %v\n%s", trn, unknown, tt.claimed, res.describe())
			}
		})
	}
}

// TestUnobservedBeforeSummary: the session's SEQ-REPLY-UNOBSERVED comes
// before its summary, so a report written as sessions end holds it in the
// session's own section.
func TestUnobservedBeforeSummary(t *testing.T) {
	var order []string
	eng, err := protocol.NewEngine([]protocol.Model{New()}, "", nil, protocol.StreamInfo{}, protocol.Sink{
		Finding: func(f protocol.Finding) {
			if f.RuleID == "SEQ-REPLY-UNOBSERVED" {
				order = append(order, "finding "+f.Session)
			}
		},
		SessionDone: func(s protocol.SessionSummary) { order = append(order, "done "+s.Session) },
	})
	if err != nil {
		t.Fatal(err)
	}
	// sess_b is cut off: it ends with the stream.
	b := booking("sess_b", "rpl_b")
	for _, m := range build(stream(booking("sess_a", "rpl_a"), b[:len(b)-1])) {
		eng.Feed(m)
	}
	eng.Finish()
	if got, want := strings.Join(order, ", "), "finding sess_a, done sess_a, finding sess_b, done sess_b"; got != want {
		t.Errorf("order %q, want %q", got, want)
	}
}
