package serve

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/timing"
)

// openEndedRecords is the standard capture with one more event an hour
// later, so that a subscription stays open while a test talks to it.
func openEndedRecords() []rec {
	return append(standardRecords(), rec{kind: capfile.KindReceived, at: time.Hour, payload: ev(99, "session.started", "sess_z", "")})
}

// readUntil reads frames until one contains substr.
func readUntil(t *testing.T, c *websocket.Conn, substr string) [][]byte {
	t.Helper()
	var frames [][]byte
	c.SetReadDeadline(time.Now().Add(testTimeout))
	for {
		_, msg, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("read (waiting for %q): %v", substr, err)
		}
		frames = append(frames, msg)
		if bytes.Contains(msg, []byte(substr)) {
			return frames
		}
	}
}

func post(t *testing.T, url, body string) (int, []byte) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func TestReplies(t *testing.T) {
	path := writeCapture(t, openEndedRecords())
	var seen notices
	var record memRecord
	srv, ts := startServer(t, Options{CloseAtEnd: true, Open: OpenFile(path), Notify: seen.add, Record: &record})
	c := dialWS(t, ts)
	req := `{"type":"subscription.request","aaep_version":"1.0.0","subscriber_id":"replier","capabilities":{"supports_confirmation_reply":true,"supports_clarification_reply":true}}`
	if err := c.WriteMessage(websocket.TextMessage, []byte(req)); err != nil {
		t.Fatal(err)
	}
	frames := readUntil(t, c, "rpl_clar1")
	var acc struct {
		SubscriptionID string `json:"subscription_id"`
	}
	if err := json.Unmarshal(frames[0], &acc); err != nil || acc.SubscriptionID == "" {
		t.Fatalf("accepted %q: %v", frames[0], err)
	}
	sub := acc.SubscriptionID

	// A reply over the WebSocket itself.
	wsReply := `{"type":"confirmation.reply","reply_token":"rpl_conf1","decision":"accept","subscription_id":"` + sub + `","timestamp":"2026-05-24T14:22:24.812Z"}`
	if err := c.WriteMessage(websocket.TextMessage, []byte(wsReply)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return len(seen.kind(NoticeReply)) == 1 })
	if n := seen.kind(NoticeReply)[0]; n.Verdict != VerdictAccepted || n.Token != "rpl_conf1" || n.Subscription != sub || n.Transport != TransportWebSocket {
		t.Fatalf("ws reply notice %+v", n)
	}

	clar := func(token, resp, subID string) string {
		s := `{"type":"clarification.reply","reply_token":"` + token + `","response":` + resp + `,"timestamp":"2026-05-24T14:22:18.121Z"`
		if subID != "" {
			s += `,"subscription_id":"` + subID + `"`
		}
		return s + "}"
	}
	tests := []struct {
		name   string
		path   string
		body   string
		status int
		reason string
	}{
		{"not a choice", "/aaep/v1/replies", clar("rpl_clar1", `"70"`, sub), 400, "response does not fit accepted_response_kinds"},
		{"valid without subscription_id", "/messages", clar("rpl_clar1", `"67"`, ""), 204, ""},
		{"token used", "/aaep/v1/replies", clar("rpl_clar1", `"65"`, sub), 400, "reply_token already used"},
		{"unknown token", "/aaep/v1/replies", clar("rpl_nope", `"65"`, sub), 400, "unknown reply_token"},
		{"wrong kind", "/messages", `{"type":"confirmation.reply","reply_token":"rpl_clar1","decision":"accept","subscription_id":"` + sub + `"}`, 400, "reply_token belongs to an awaiting.clarification"},
		{"confirmation used", "/aaep/v1/replies", wsReply, 400, "reply_token already used"},
		{"not json", "/aaep/v1/replies", `{{{`, 400, ""},
		{"unsupported type", "/messages", `{"type":"aaep:agent.session.started"}`, 400, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(seen.kind(NoticeReply))
			status, body := post(t, ts.URL+tt.path, tt.body)
			if status != tt.status {
				t.Fatalf("status %d (%s), want %d", status, body, tt.status)
			}
			if status == 204 {
				if len(body) != 0 {
					t.Errorf("204 with body %q", body)
				}
			} else {
				var e struct{ Error, Message string }
				if err := json.Unmarshal(body, &e); err != nil || e.Error == "" || e.Message == "" {
					t.Fatalf("error body %q: %v", body, err)
				}
				if tt.reason != "" && (e.Error != "invalid_reply" || strings.Contains(string(body), tt.reason)) {
					t.Errorf("error body %s reveals the reason or has the wrong code", body)
				}
			}
			if tt.reason == "" && status != 204 {
				return
			}
			replies := seen.kind(NoticeReply)
			if len(replies) != before+1 {
				t.Fatalf("%d reply notices, want %d", len(replies), before+1)
			}
			if got := replies[len(replies)-1]; got.Reason != tt.reason || got.Subscription != sub {
				t.Errorf("notice reason %q subscription %q, want %q %q", got.Reason, got.Subscription, tt.reason, sub)
			}
		})
	}
	st := srv.Stats()
	if st.RepliesAccepted != 2 || st.RepliesIgnored != 5 {
		t.Errorf("stats accepted %d ignored %d, want 2 and 5", st.RepliesAccepted, st.RepliesIgnored)
	}
	c.Close()
	waitIdle(t, srv)

	// The recording reads like the subscriber's own capture.
	record.mu.Lock()
	defer record.mu.Unlock()
	var kinds []string
	verdicts := map[string]int{}
	for _, r := range record.recs {
		f := string(r.Payload)
		switch r.Kind {
		case capfile.KindSent:
			if v := r.Attr("verdict"); v != "" {
				verdicts[v]++
			}
			if strings.Contains(f, "subscription.request") {
				kinds = append(kinds, "request")
			}
		case capfile.KindReceived:
			if strings.Contains(f, "subscription.accepted") {
				kinds = append(kinds, "accepted")
			} else if r.Session == "" {
				t.Errorf("event record without session: %s", f)
			}
		case capfile.KindConn:
			kinds = append(kinds, "conn")
		}
		if (r.Origin != 0) != (r.Attr("subscription") != "") {
			t.Errorf("record without subscription attr: %+v", r)
		}
	}
	if strings.Join(kinds, ",") != "conn,request,accepted,conn" {
		t.Errorf("record kinds %v", kinds)
	}
	if verdicts[VerdictAccepted] != 2 || verdicts[VerdictIgnored] != 5 {
		t.Errorf("recorded verdicts %v", verdicts)
	}
}

// waitFor polls cond for up to testTimeout.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in time")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestRenegotiateAndClose(t *testing.T) {
	path := writeCapture(t, openEndedRecords())
	var record memRecord
	srv, ts := startServer(t, Options{CloseAtEnd: true, Open: OpenFile(path), Record: &record})

	t.Run("websocket renegotiation", func(t *testing.T) {
		c := dialWS(t, ts)
		c.WriteMessage(websocket.TextMessage, []byte(`{"type":"subscription.request","aaep_version":"1.0.0","subscriber_id":"r","capabilities":{"max_events_per_second":5}}`))
		frames := readUntil(t, c, "evt_0002")
		var acc struct {
			SubscriptionID string `json:"subscription_id"`
		}
		json.Unmarshal(frames[0], &acc)
		c.WriteMessage(websocket.TextMessage, []byte(`{"type":"subscription.renegotiate","subscription_id":"`+acc.SubscriptionID+`","capabilities":{"max_events_per_second":1}}`))
		frames = readUntil(t, c, "subscription.accepted")
		var re struct {
			Type    string `json:"type"`
			Honored struct {
				Rate int `json:"max_events_per_second"`
			} `json:"honored_capabilities"`
		}
		if err := json.Unmarshal(frames[len(frames)-1], &re); err != nil || re.Honored.Rate != 1 {
			t.Fatalf("renegotiation answer %s: %v", frames[len(frames)-1], err)
		}
		c.WriteMessage(websocket.TextMessage, []byte(`{"type":"subscription.close","subscription_id":"`+acc.SubscriptionID+`","reason_code":"subscriber_shutdown"}`))
		if _, ce := readAll(t, c); ce.Code != CloseSubscriber {
			t.Fatalf("close %d, want %d", ce.Code, CloseSubscriber)
		}
	})

	t.Run("sse close by POST", func(t *testing.T) {
		status, body := post(t, ts.URL+"/aaep/v1/subscriptions", `{"type":"subscription.request","aaep_version":"1.0.0","subscriber_id":"s","capabilities":{"supports_clarification_reply":true}}`)
		if status != http.StatusCreated {
			t.Fatalf("status %d %s", status, body)
		}
		var acc struct {
			SubscriptionID string `json:"subscription_id"`
		}
		json.Unmarshal(body, &acc)
		resp := getSSE(t, ts.URL+"/aaep/v1/events?subscription_id="+acc.SubscriptionID, nil)
		waitFor(t, func() bool {
			for _, s := range srv.Stats().Subscribers {
				if s.Subscription == acc.SubscriptionID && s.Sent > 0 {
					return true
				}
			}
			return false
		})
		// Renegotiation by POST keeps what it does not change.
		status, body = post(t, ts.URL+"/messages", `{"type":"subscription.renegotiate","subscription_id":"`+acc.SubscriptionID+`","capabilities":{"max_events_per_second":2}}`)
		var re struct {
			Type    string `json:"type"`
			Honored struct {
				Rate          int  `json:"max_events_per_second"`
				Clarification bool `json:"supports_clarification_reply"`
			} `json:"honored_capabilities"`
		}
		if err := json.Unmarshal(body, &re); status != http.StatusOK || err != nil || re.Type != "subscription.accepted" || re.Honored.Rate != 2 || !re.Honored.Clarification {
			t.Fatalf("renegotiate: %d %s", status, body)
		}
		if status, body := post(t, ts.URL+"/aaep/v1/replies", `{"type":"subscription.close","subscription_id":"`+acc.SubscriptionID+`"}`); status != http.StatusNoContent {
			t.Fatalf("close: %d %s", status, body)
		}
		events := readSSE(t, resp.Body) // ends when the stream closes
		if len(events) == 0 {
			t.Fatal("no events before the close")
		}
		if status, _ := post(t, ts.URL+"/aaep/v1/replies", `{"type":"subscription.close","subscription_id":"sub_unknown"}`); status != http.StatusNotFound {
			t.Errorf("closing an unknown subscription: %d", status)
		}
	})
	waitIdle(t, srv)
	if st := srv.Stats(); st.Closes[CauseSubscriber] != 2 {
		t.Fatalf("closes %v", st.Closes)
	}
	record.mu.Lock()
	defer record.mu.Unlock()
	var posted int
	for _, r := range record.recs {
		if r.Origin == 0 && r.Attr("subscription") != "" && (bytes.Contains(r.Payload, []byte("subscription.request")) || bytes.Contains(r.Payload, []byte("subscription.accepted"))) {
			posted++
		}
	}
	if posted != 2 {
		t.Errorf("POST handshake recorded %d times, want request and answer", posted)
	}
}

// TestSharedFirstReplyWins: on a shared timeline a token is one producer's
// token, so the second subscriber's reply to it is ignored (§6.7.1).
func TestSharedFirstReplyWins(t *testing.T) {
	path := writeCapture(t, openEndedRecords())
	var seen notices
	// Slowed down so that both subscribers have joined (a few ms after
	// each other) well before the confirmation (400 ms in).
	srv, ts := startServer(t, Options{CloseAtEnd: true, Open: OpenFile(path), Shared: true, Grace: time.Hour, Notify: seen.add, Timing: timing.Config{Speed: 0.05}})
	req := []byte(`{"type":"subscription.request","aaep_version":"1.0.0","subscriber_id":"s","capabilities":{"supports_confirmation_reply":true}}`)
	a, b := dialWS(t, ts), dialWS(t, ts)
	waitFor(t, func() bool { return srv.Stats().Active == 2 })
	for _, c := range []*websocket.Conn{a, b} {
		if err := c.WriteMessage(websocket.TextMessage, req); err != nil {
			t.Fatal(err)
		}
	}
	readUntil(t, a, "rpl_conf1")
	readUntil(t, b, "rpl_conf1")
	reply := []byte(`{"type":"confirmation.reply","reply_token":"rpl_conf1","decision":"accept"}`)
	a.WriteMessage(websocket.TextMessage, reply)
	waitFor(t, func() bool { return len(seen.kind(NoticeReply)) == 1 })
	b.WriteMessage(websocket.TextMessage, reply)
	waitFor(t, func() bool { return len(seen.kind(NoticeReply)) == 2 })
	r := seen.kind(NoticeReply)
	if r[0].Verdict != VerdictAccepted || r[1].Verdict != VerdictIgnored || r[1].Reason != "reply_token already used" {
		t.Fatalf("replies %+v", r)
	}
}
