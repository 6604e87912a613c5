package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/recording"
)

// TestRecordedReplayReadsLikeACapture: serve --record writes the replay from
// the subscriber's side, like aaep-capture, so input (and so check and
// visualize) sees the replayed events as coming from the producer and the
// subscriber's replies as going to it.
func TestRecordedReplayReadsLikeACapture(t *testing.T) {
	record := filepath.Join(t.TempDir(), "wire.aaep")
	// At --speed 10 the client's replies have 150 ms before the sessions
	// they answer end (at 50, under load, a reply could come after it,
	// which check rightly notes as late).
	srv := startServe(t, "serve", demoCapture, "--listen", "127.0.0.1:0", "--speed", "10", "--close-at-end", "--record", record)
	addr := srv.addr
	d := websocket.Dialer{Subprotocols: []string{"aaep.v1"}, HandshakeTimeout: 10 * time.Second}
	c, _, err := d.Dial("ws://"+addr+"/aaep/v1/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := `{"type":"subscription.request","aaep_version":"1.0.0","subscriber_id":"record-test","capabilities":{"supports_confirmation_reply":true,"supports_clarification_reply":true}}`
	if err := c.WriteMessage(websocket.TextMessage, []byte(req)); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	var subID string
	events, replies := 0, 0
	for {
		_, msg, err := c.ReadMessage()
		if err != nil {
			if !websocket.IsCloseError(err, 4000) {
				t.Fatalf("read: %v", err)
			}
			break
		}
		var m struct {
			Type           string `json:"type"`
			SubscriptionID string `json:"subscription_id"`
			ReplyToken     string `json:"reply_token"`
		}
		if err := json.Unmarshal(msg, &m); err != nil {
			t.Fatalf("replayed message is not JSON: %v", err)
		}
		switch m.Type {
		case "subscription.accepted":
			subID = m.SubscriptionID
			continue
		case "aaep:agent.awaiting.confirmation":
			replies++
			reply := `{"type":"confirmation.reply","reply_token":"` + m.ReplyToken + `","decision":"accept","subscription_id":"` + subID + `","timestamp":"` + time.Now().UTC().Format("2006-01-02T15:04:05.000Z") + `"}`
			if err := c.WriteMessage(websocket.TextMessage, []byte(reply)); err != nil {
				t.Fatal(err)
			}
		}
		events++
	}
	if subID == "" || events != 102 || replies == 0 {
		t.Fatalf("subscription %q, %d events, %d replies; want an id, 102 events, some replies", subID, events, replies)
	}
	if code := srv.stop(t); code != 0 {
		t.Fatalf("serve exit %d; stderr %q", code, srv.errb.String())
	}

	var fromProducer, toProducer, repliesSeen int
	if _, err := recording.Each(context.Background(), record, func(m *protocol.Message) error {
		if m.Dir == protocol.ToProducer {
			toProducer++
			if strings.Contains(string(m.Raw), `"confirmation.reply"`) {
				repliesSeen++
			}
		} else {
			fromProducer++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// The producer sent the accepted answer and the 102 events; the
	// subscriber sent its request and the replies.
	if fromProducer != 1+102 || toProducer != 1+replies || repliesSeen != replies {
		t.Errorf("from producer %d (want 103), to producer %d (want %d), replies %d (want %d)", fromProducer, toProducer, 1+replies, repliesSeen, replies)
	}
	// The replies were recorded, so the checker judges the reply rules
	// instead of noting them as unobserved.
	_, report, _ := replay(t, "check", "--fail-on", "never", record)
	if strings.Contains(report, "SEQ-REPLY-UNOBSERVED") {
		t.Errorf("check treats the recorded replay as a passive recording:\n%s", report)
	}
	// The header says it is a replay: the live replies, decided now, are
	// timed against the replayed prompts' receive offsets, not against the
	// prompts' original timestamps, and the old timestamps are not
	// backdating.
	for _, rule := range []string{"SEQ-REPLY-NOT-EXPIRED", "SEQ-TIMESTAMP-BACKDATED", "SEQ-TIMESTAMP-NOT-FUTURE"} {
		if strings.Contains(report, rule) {
			t.Errorf("check of the recorded replay reports %s:\n%s", rule, report)
		}
	}
}
