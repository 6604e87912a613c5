package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/gorilla/websocket"
)

// subscriptionRequest asks for every event, confirmations and
// clarifications included, without filters.
const subscriptionRequest = `{"type":"subscription.request","aaep_version":"1.0.0","subscriber_id":"bench","capabilities":{"supports_confirmation_reply":true,"supports_clarification_reply":true}}`

// Subscriber is a WebSocket subscriber of a replay server.
type Subscriber struct {
	conn *websocket.Conn
}

// Subscribe connects to ws://addr/aaep/v1/ws and sends a subscription
// request; the replay starts when the server answers it.
func Subscribe(ctx context.Context, addr string) (*Subscriber, error) {
	d := websocket.Dialer{ReadBufferSize: 64 << 10, Subprotocols: []string{"aaep.v1"}, HandshakeTimeout: 10 * time.Second}
	conn, _, err := d.DialContext(ctx, "ws://"+addr+"/aaep/v1/ws", nil)
	if err != nil {
		return nil, fmt.Errorf("subscribe to %s: %w", addr, err)
	}
	if err := conn.WriteMessage(websocket.TextMessage, []byte(subscriptionRequest)); err != nil {
		conn.Close()
		return nil, fmt.Errorf("subscribe to %s: %w", addr, err)
	}
	return &Subscriber{conn: conn}, nil
}

// Close drops the connection.
func (s *Subscriber) Close() error { return s.conn.Close() }

// ReadOptions bound and observe Read.
type ReadOptions struct {
	// Deadline ends the read with an error.
	Deadline time.Time
	// Max ends the read after this many events (0: until the close frame).
	Max int
	// OnEvent, if set, is called with the receive time of every event.
	OnEvent func(i int, at time.Time)
}

// ReadStats count what Read received.
type ReadStats struct {
	Events     int       // messages after the subscription.accepted answer
	First      time.Time // receive time of the first event
	Last       time.Time // receive time of the last event
	CloseCode  int
	CloseText  string
	Subscribed time.Time // when the subscription.accepted answer arrived
}

// Read reads the stream until the server's close frame (or Max events),
// discarding the payloads. The first message, the server's answer to the
// subscription request, is not counted.
func (s *Subscriber) Read(o ReadOptions) (ReadStats, error) {
	var st ReadStats
	if !o.Deadline.IsZero() {
		_ = s.conn.SetReadDeadline(o.Deadline)
	}
	for {
		_, r, err := s.conn.NextReader()
		if err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				st.CloseCode, st.CloseText = ce.Code, ce.Text
				return st, nil
			}
			return st, fmt.Errorf("after %d events: %w", st.Events, err)
		}
		if _, err := io.Copy(io.Discard, r); err != nil {
			return st, fmt.Errorf("after %d events: %w", st.Events, err)
		}
		if st.heard(time.Now(), o) {
			return st, nil
		}
	}
}

// heard counts a message received at now: the first is the answer to the
// subscription request, every later one an event. It reports whether Max
// events have come.
func (st *ReadStats) heard(now time.Time, o ReadOptions) (enough bool) {
	if st.Subscribed.IsZero() {
		st.Subscribed = now
		return false
	}
	if st.Events == 0 {
		st.First = now
	}
	st.Last = now
	if o.OnEvent != nil {
		o.OnEvent(st.Events, now)
	}
	st.Events++
	return o.Max > 0 && st.Events >= o.Max
}
