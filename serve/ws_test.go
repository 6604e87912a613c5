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

func TestWebSocketHandshakeByteExact(t *testing.T) {
	recs := standardRecords()
	path := writeCapture(t, recs)
	var seen notices
	srv, ts := startServer(t, Options{CloseAtEnd: true, Open: OpenFile(path), Timing: timing.Config{Speed: 100}, Notify: seen.add})
	c := dialWS(t, ts)
	req := `{"type":"subscription.request","aaep_version":"1.0.0","subscriber_id":"test-sub","capabilities":{"supports_confirmation_reply":true,"supports_clarification_reply":true,"event_filters":{"include":["aaep:agent.*"]}}}`
	if err := c.WriteMessage(websocket.TextMessage, []byte(req)); err != nil {
		t.Fatal(err)
	}
	frames, ce := readAll(t, c)
	if ce.Code != CloseClean {
		t.Errorf("close code %d (%q), want %d", ce.Code, ce.Text, CloseClean)
	}
	if len(frames) == 0 {
		t.Fatal("no frames")
	}
	var acc struct {
		Type           string `json:"type"`
		SubscriptionID string `json:"subscription_id"`
		AAEPVersion    string `json:"aaep_version"`
		Producer       struct {
			AgentID string `json:"agent_id"`
		} `json:"producer"`
		Honored map[string]any `json:"honored_capabilities"`
	}
	if err := json.Unmarshal(frames[0], &acc); err != nil {
		t.Fatalf("first frame %q: %v", frames[0], err)
	}
	if acc.Type != "subscription.accepted" || len(acc.SubscriptionID) < 5 || acc.AAEPVersion != "1.0.0" || acc.Producer.AgentID != "test-agent" {
		t.Fatalf("accepted = %+v", acc)
	}
	if acc.Honored["supports_confirmation_reply"] != true {
		t.Errorf("honored = %v", acc.Honored)
	}
	sameFrames(t, frames[1:], received(recs))
	waitIdle(t, srv)
	if n := seen.kind(NoticeClosed); len(n) != 1 || n[0].Stats.Sent != int64(len(received(recs))) || n[0].Stats.Close.Cause != CauseFinished {
		t.Fatalf("closed notices = %+v", n)
	}
}

func TestWebSocketGraceWithoutRequest(t *testing.T) {
	recs := standardRecords()
	path := writeCapture(t, recs)
	_, ts := startServer(t, Options{CloseAtEnd: true, Open: OpenFile(path), Timing: timing.Config{NoDelay: true}, Grace: 20 * time.Millisecond})
	c := dialWS(t, ts)
	frames, ce := readAll(t, c)
	if ce.Code != CloseClean {
		t.Errorf("close code %d, want %d", ce.Code, CloseClean)
	}
	// Unnegotiated: every event, including the awaiting ones, no accepted message.
	sameFrames(t, frames, received(recs))
}

func TestWebSocketHandshakeTerms(t *testing.T) {
	recs := standardRecords()
	path := writeCapture(t, recs)
	all := received(recs)
	tests := []struct {
		name  string
		req   string
		close int
		want  []int // indexes into all
	}{
		{
			name:  "defaults withhold awaiting events",
			req:   `{"type":"subscription.request","aaep_version":"1.0.0","subscriber_id":"s","capabilities":{}}`,
			close: CloseClean,
			want:  []int{0, 1, 2, 3, 4, 7, 8, 9},
		},
		{
			name:  "exclude keeps critical events",
			req:   `{"type":"subscription.request","aaep_version":"1.0.0","subscriber_id":"s","capabilities":{"supports_confirmation_reply":true,"event_filters":{"include":["aaep:agent.*"],"exclude":["aaep:agent.session.*","aaep:agent.awaiting.*"]}}}`,
			close: CloseClean,
			want:  []int{1, 3, 4, 5, 7},
		},
		{
			name:  "version unsupported",
			req:   `{"type":"subscription.request","aaep_version":"2.0.0","subscriber_id":"s","capabilities":{}}`,
			close: CloseRejected,
		},
		{
			name:  "signed manifest required",
			req:   `{"type":"subscription.request","aaep_version":"1.0.0","subscriber_id":"s","capabilities":{"accept_signed_manifests_only":true}}`,
			close: CloseRejected,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ts := startServer(t, Options{CloseAtEnd: true, Open: OpenFile(path), Timing: timing.Config{NoDelay: true}})
			c := dialWS(t, ts)
			if err := c.WriteMessage(websocket.TextMessage, []byte(tt.req)); err != nil {
				t.Fatal(err)
			}
			frames, ce := readAll(t, c)
			if ce.Code != tt.close {
				t.Fatalf("close %d %q, want %d", ce.Code, ce.Text, tt.close)
			}
			var first struct{ Type string }
			_ = json.Unmarshal(frames[0], &first)
			if tt.close == CloseRejected {
				if first.Type != "subscription.rejected" || len(frames) != 1 {
					t.Fatalf("frames %q, want one subscription.rejected", frames)
				}
				return
			}
			var want [][]byte
			for _, i := range tt.want {
				want = append(want, all[i])
			}
			sameFrames(t, frames[1:], want)
		})
	}
}

// TestWebSocketLateFirstMessage: a message sent after the grace period is
// handled as usual, not taken for a handshake.
func TestWebSocketLateFirstMessage(t *testing.T) {
	path := writeCapture(t, openEndedRecords())
	var seen notices
	srv, ts := startServer(t, Options{CloseAtEnd: true, Open: OpenFile(path), Grace: time.Millisecond, Notify: seen.add})
	c := dialWS(t, ts)
	readUntil(t, c, "rpl_conf1") // the stream started unnegotiated
	c.WriteMessage(websocket.TextMessage, []byte(`{"type":"confirmation.reply","reply_token":"rpl_conf1","decision":"accept"}`))
	waitFor(t, func() bool { return len(seen.kind(NoticeReply)) == 1 })
	if n := seen.kind(NoticeReply)[0]; n.Verdict != VerdictAccepted {
		t.Fatalf("late first message: %+v", n)
	}
	c.Close()
	waitIdle(t, srv)
}

// TestWebSocketFrameSizes sends payloads around each frame-length encoding
// boundary, and one flagged as invalid UTF-8 (a binary frame).
func TestWebSocketFrameSizes(t *testing.T) {
	var recs []rec
	for i, n := range []int{1, 125, 126, 127, 65535, 65536, 200000} {
		recs = append(recs, rec{kind: capfile.KindReceived, at: time.Duration(i), payload: strings.Repeat("a", n)})
	}
	recs = append(recs, rec{kind: capfile.KindReceived, at: 10, payload: "{\"x\":\"\xff\xfe\"}", flags: capfile.FlagInvalidUTF8})
	path := writeCapture(t, recs)
	_, ts := startServer(t, Options{CloseAtEnd: true, Open: OpenFile(path), Timing: timing.Config{NoDelay: true}, Grace: time.Millisecond})
	c := dialWS(t, ts)
	c.SetReadDeadline(time.Now().Add(testTimeout))
	for i, want := range received(recs) {
		typ, msg, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		wantType := websocket.TextMessage
		if i == len(recs)-1 {
			wantType = websocket.BinaryMessage
		}
		if typ != wantType || digest(msg) != digest(want) {
			t.Fatalf("frame %d: type %d, %d bytes; want type %d, %d bytes", i, typ, len(msg), wantType, len(want))
		}
	}
	if _, ce := readAll(t, c); ce.Code != CloseClean {
		t.Fatalf("close %d", ce.Code)
	}
}
