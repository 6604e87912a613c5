package subtest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// wsSubscriber is a subscriber over one WebSocket connection, whichever
// side dialled: it sends a subscription.request first, reads the stream,
// and answers each prompt as the scenario's scripted user decides, on the
// same connection, with the subscription_id it was given.
type wsSubscriber struct {
	decisions map[string]Decision
	wg        sync.WaitGroup
}

func newWSSubscriber(sc *Scenario) *wsSubscriber {
	w := &wsSubscriber{decisions: map[string]Decision{}}
	for _, d := range sc.Decisions {
		w.decisions[d.Token] = d
	}
	return w
}

// serve runs the subscription on conn until the connection ends.
func (w *wsSubscriber) serve(t *testing.T, conn *websocket.Conn) {
	defer conn.Close()
	var wmu sync.Mutex
	send := func(v any) {
		wmu.Lock()
		defer wmu.Unlock()
		_ = conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
		if err := conn.WriteJSON(v); err != nil {
			t.Logf("ws subscriber: %v", err)
		}
	}
	send(map[string]any{"type": "subscription.request", "aaep_version": "1.0.0", "subscriber_id": "ws-test",
		"capabilities": map[string]any{"supports_confirmation_reply": true, "supports_clarification_reply": true}})
	subID := ""
	stop := make(chan struct{})
	defer close(stop)
	for {
		_, msg, err := conn.ReadMessage()
		if err != nil {
			return
		}
		var m struct {
			Type           string `json:"type"`
			SubscriptionID string `json:"subscription_id"`
			Token          string `json:"reply_token"`
		}
		if json.Unmarshal(msg, &m) != nil {
			continue
		}
		switch {
		case m.Type == "subscription.accepted":
			subID = m.SubscriptionID
		case strings.HasSuffix(m.Type, "awaiting.confirmation"):
			d, ok := w.decisions[m.Token]
			if !ok {
				continue
			}
			reply := map[string]any{"type": "confirmation.reply", "reply_token": m.Token, "decision": d.Decision,
				"subscription_id": subID, "timestamp": time.Now().UTC().Format(time.RFC3339)}
			w.wg.Add(1)
			go func() {
				defer w.wg.Done()
				select {
				case <-time.After(d.Delay):
					send(reply)
				case <-stop:
				}
			}()
		}
	}
}

// TestWebSocketSubscriber: a WebSocket subscriber that attaches to the
// replay (--listen) passes the WebSocket handshake scenario, and answers
// a confirmation on its connection.
func TestWebSocketSubscriber(t *testing.T) {
	for _, name := range []string{"handshake-websocket", "confirmation-default-reject"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sc := builtinT(t, name)
			ws := newWSSubscriber(sc)
			o := Options{Listen: "127.0.0.1:0", AttachTimeout: 10 * time.Second}
			o.Announce = func(_ *Scenario, base string) {
				ws.wg.Add(1)
				go func() {
					defer ws.wg.Done()
					conn, _, err := (&websocket.Dialer{Subprotocols: []string{"aaep.v1"}, HandshakeTimeout: 5 * time.Second}).
						Dial("ws"+strings.TrimPrefix(base, "http")+"/aaep/v1/ws", nil)
					if err != nil {
						t.Errorf("dial: %v", err)
						return
					}
					ws.serve(t, conn)
				}()
			}
			res, _ := run(t, sc, o)
			ws.wg.Wait()
			if !res.Passed() {
				t.Errorf("%s: %+v %s", name, res.Outcomes, ruleIDs(res))
			}
			if name == "handshake-websocket" {
				if o := outcome(t, res, ExpectRequest); !strings.Contains(o.Message, "subscription.request over websocket") {
					t.Errorf("request outcome %+v", o)
				}
			}
		})
	}
}

// TestDialsAListeningSubscriber: --to dials a subscriber that listens for
// WebSocket connections, as push does, and judges it the same way.
func TestDialsAListeningSubscriber(t *testing.T) {
	t.Parallel()
	sc := builtinT(t, "confirmation-default-reject")
	ws := newWSSubscriber(sc)
	up := websocket.Upgrader{Subprotocols: []string{"aaep.v1"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		ws.serve(t, conn)
	}))
	defer srv.Close()
	res, x := run(t, sc, Options{To: "ws" + strings.TrimPrefix(srv.URL, "http") + "/aaep"})
	ws.wg.Wait()
	if !res.Passed() {
		t.Fatalf("%+v %s", res.Outcomes, ruleIDs(res))
	}
	if got := x.transports[1]; got != "push" {
		t.Errorf("subscription 1 came over %q, want push (dialled)", got)
	}
}
