package aaep

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/sample"
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/recording"
)

// TestCaptureTwoSubscriptions writes a real capture file: eight interleaved
// sessions recorded over two subscriptions (an SSE one that can reply and a
// WebSocket one that excludes progress events), each with its handshake and
// close, then reads it back with package recording and checks it. The stream
// is clean, so no sequence rule may fire; every session is followed once.
func TestCaptureTwoSubscriptions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "two.aaep")
	primary := writeTwoSubscriptions(t, path, false)
	res := checkFile(t, path)
	if ids := res.seqIDs(); len(ids) != 0 {
		t.Errorf("sequence findings %v in a clean two-subscription capture\n%s", ids, res.describe())
	}
	sessionSteps, handshakeSteps, replies := 0, 0, 0
	for _, s := range res.steps {
		switch {
		case strings.HasPrefix(s.Session, "subscription-"):
			handshakeSteps++
		case s.Kind == protocol.StepReply:
			replies++
		case !s.Synthetic:
			sessionSteps++
		}
	}
	if sessionSteps != primary {
		t.Errorf("%d session steps for %d events on the primary subscription (copies must not add steps)", sessionSteps, primary)
	}
	if handshakeSteps != 6 {
		t.Errorf("%d handshake steps, want 6 (request, accepted, close on each subscription)", handshakeSteps)
	}
	done := map[string]protocol.SessionSummary{}
	for _, s := range res.summaries {
		done[s.Session] = s
	}
	if len(done) != 10 {
		t.Errorf("%d summaries, want 8 sessions and 2 subscriptions: %+v", len(done), res.summaries)
	}
	for id, s := range done {
		if !s.Complete {
			t.Errorf("%s ended incomplete: %+v", id, s)
		}
	}
	if replies == 0 {
		t.Error("no reply steps: the recorded replies were not placed in their sessions")
	}

	// The same capture without the critical session.errored events on the
	// second subscription breaks NEG-CRITICAL-EXEMPT once per errored session.
	path = filepath.Join(t.TempDir(), "dropped.aaep")
	writeTwoSubscriptions(t, path, true)
	res = checkFile(t, path)
	errored := 0
	for _, s := range res.summaries {
		if s.State == StateErrored {
			errored++
		}
	}
	if ids := strings.Join(res.seqIDs(), " "); errored == 0 || ids != strings.TrimSpace(strings.Repeat("NEG-CRITICAL-EXEMPT ", errored)) {
		t.Errorf("without the errored events on one subscription: findings [%s], want NEG-CRITICAL-EXEMPT for each of %d errored sessions\n%s", ids, errored, res.describe())
	}
}

// writeTwoSubscriptions writes the capture of TestCaptureTwoSubscriptions
// and returns how many events the first subscription received; with
// dropErrored the second subscription misses the session.errored events.
func writeTwoSubscriptions(t *testing.T, path string, dropErrored bool) int {
	t.Helper()
	start := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	msgs := sample.Stream(sample.Options{Sessions: 8, Seed: 21})
	w, err := capfile.Create(path, capfile.Header{Start: start, Tool: "aaep-capture/test", Origins: []capfile.Origin{
		{ID: 0, Transport: "sse", Endpoint: "http://127.0.0.1:1/aaep/v1/events"},
		{ID: 1, Transport: "websocket", Endpoint: "ws://127.0.0.1:1/aaep", Subprotocol: "aaep.v1"},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	enc := func(v any) []byte {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var clock time.Duration // record times never go back
	appendRec := func(kind capfile.Kind, src uint16, at time.Duration, payload []byte, attrs ...capfile.Attr) {
		at = max(at, clock)
		clock = at
		if err := w.Append(&capfile.Record{Kind: kind, Origin: src, Time: int64(at), Payload: payload, Attrs: attrs}); err != nil {
			t.Fatal(err)
		}
	}
	exclude := map[string]any{"exclude": []string{"aaep:agent.progress.updated"}}
	for src, sub := range []string{"sub_demo0001", "sub_braille02"} {
		c := map[string]any{"supports_confirmation_reply": true, "supports_clarification_reply": true}
		if src == 1 {
			c["event_filters"] = exclude
		}
		appendRec(capfile.KindSent, uint16(src), time.Duration(2*src)*time.Microsecond, enc(map[string]any{"type": MsgSubscriptionRequest, "aaep_version": "1.0.0", "subscriber_id": "reader", "capabilities": c}))
		appendRec(capfile.KindReceived, uint16(src), time.Duration(2*src+1)*time.Microsecond, enc(map[string]any{"type": MsgSubscriptionAccepted, "subscription_id": sub,
			"aaep_version": "1.0.0", "producer": map[string]any{"agent_id": "travel-assistant"}, "honored_capabilities": c}))
	}
	var last time.Duration
	primary := 0
	for _, m := range msgs {
		at := m.Offset + 2*time.Millisecond
		if m.FromSubscriber {
			appendRec(capfile.KindSent, 0, at, m.JSON)
			continue
		}
		id := peekString(t, m.JSON, "event_id")
		appendRec(capfile.KindReceived, 0, at, m.JSON, capfile.Attr{Key: "id", Value: id}, capfile.Attr{Key: "event", Value: "aaep.event"})
		primary++
		if m.Type != TypeProgressUpdated && !(dropErrored && m.Type == TypeSessionErrored) {
			appendRec(capfile.KindReceived, 1, at+time.Microsecond, m.JSON)
		}
		last = at + time.Microsecond
	}
	appendRec(capfile.KindSent, 0, last+time.Second, enc(map[string]any{"type": MsgSubscriptionClose, "subscription_id": "sub_demo0001", "reason_code": "subscriber_shutdown"}))
	appendRec(capfile.KindSent, 1, last+time.Second, enc(map[string]any{"type": MsgSubscriptionClose, "subscription_id": "sub_braille02", "reason_code": "subscriber_shutdown"}))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return primary
}

// checkFile reads a capture or JSONL file with package recording and checks it.
func checkFile(t *testing.T, path string) result {
	t.Helper()
	var res result
	eng, err := protocol.NewEngine([]protocol.Model{New()}, "", nil, protocol.StreamInfo{}, protocol.Sink{
		Finding:     func(f protocol.Finding) { res.findings = append(res.findings, f) },
		Step:        func(s protocol.Step) { res.steps = append(res.steps, s) },
		SessionDone: func(s protocol.SessionSummary) { res.summaries = append(res.summaries, s) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := recording.Each(context.Background(), path, func(m *protocol.Message) error {
		eng.Feed(m)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	eng.Finish()
	return res
}

func peekString(t *testing.T, raw []byte, key string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	s, _ := m[key].(string)
	return s
}
