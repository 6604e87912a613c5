package serve

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/timing"
)

// recordedHandshake is a capture recorded over WebSocket by a recorder that
// negotiated: its request (sent), the producer's subscription.accepted
// (received, id sub_peer1), the events, and a renegotiation's answer in
// the middle.
func recordedHandshake() []rec {
	ms := time.Millisecond
	return []rec{
		{kind: capfile.KindSent, at: 0, payload: `{"type":"subscription.request","aaep_version":"1.0.0","subscriber_id":"rec","capabilities":{}}`},
		{kind: capfile.KindReceived, at: 1 * ms, payload: `{"type":"subscription.accepted","subscription_id":"sub_peer1","aaep_version":"1.0.0","granted_capabilities":{}}`},
		{kind: capfile.KindReceived, at: 10 * ms, payload: ev(1, "session.started", "sess_a", "")},
		{kind: capfile.KindReceived, at: 12 * ms, payload: ev(2, "state.changed", "sess_a", `,"from_state":"idle","to_state":"thinking"`)},
		{kind: capfile.KindSent, at: 13 * ms, payload: `{"type":"subscription.renegotiate","subscription_id":"sub_peer1","capabilities":{}}`},
		{kind: capfile.KindReceived, at: 14 * ms, payload: `{"type":"subscription.accepted","subscription_id":"sub_peer1","aaep_version":"1.0.0","granted_capabilities":{}}`},
		{kind: capfile.KindReceived, at: 15 * ms, payload: `{"type":"subscription.rejected","reason_code":"rate_limit","reason":"x"}`},
		{kind: capfile.KindReceived, at: 20 * ms, payload: ev(3, "session.completed", "sess_a", "")},
	}
}

// TestRecordedHandshakeNotReplayed: the producer's handshake answers in a
// capture are the recording's, never re-sent. A subscriber that does not
// negotiate (SSE, WebSocket) gets the events only; one that does gets one
// subscription.accepted, serve's own, and then the events.
func TestRecordedHandshakeNotReplayed(t *testing.T) {
	recs := recordedHandshake()
	var events [][]byte
	for _, r := range recs {
		if r.kind == capfile.KindReceived && !strings.Contains(r.payload, `"subscription.`) {
			events = append(events, []byte(r.payload))
		}
	}
	path := writeCapture(t, recs)
	_, ts := startServer(t, Options{CloseAtEnd: true, Open: OpenFile(path), Timing: timing.Config{NoDelay: true}, Grace: 50 * time.Millisecond})

	t.Run("sse", func(t *testing.T) {
		resp := getSSE(t, ts.URL+"/aaep/v1/events", nil)
		defer resp.Body.Close()
		var got [][]byte
		for _, e := range readSSE(t, resp.Body) {
			got = append(got, []byte(e.data))
		}
		sameFrames(t, got, events)
	})
	t.Run("websocket without a request", func(t *testing.T) {
		got, ce := readAll(t, dialWS(t, ts))
		if ce == nil || ce.Code != CloseClean {
			t.Fatalf("close %v", ce)
		}
		sameFrames(t, got, events)
	})
	t.Run("websocket with a request", func(t *testing.T) {
		c := dialWS(t, ts)
		if err := c.WriteMessage(websocket.TextMessage, []byte(emptyCaps)); err != nil {
			t.Fatal(err)
		}
		got, ce := readAll(t, c)
		if ce == nil || ce.Code != CloseClean {
			t.Fatalf("close %v", ce)
		}
		if len(got) == 0 {
			t.Fatal("no frames")
		}
		var acc struct {
			Type string `json:"type"`
			ID   string `json:"subscription_id"`
		}
		if err := json.Unmarshal(got[0], &acc); err != nil || acc.Type != "subscription.accepted" || acc.ID == "" || acc.ID == "sub_peer1" {
			t.Fatalf("first frame %s, want serve's own subscription.accepted", got[0])
		}
		sameFrames(t, got[1:], events)
	})
}
