package serve

import (
	"context"
	"net"
	"time"

	"github.com/gorilla/websocket"

	"github.com/aaep-tools/aaepkit/internal/wsdial"
)

// Cut ends a subscription's connection at once, as a network failure
// would (no close frame is waited for; an SSE stream just ends), so that a
// test can see whether the subscriber comes back. It reports whether the
// subscription was active.
func (s *Server) Cut(id string) bool {
	sub := s.lookup(id)
	if sub == nil {
		return false
	}
	sub.stop(CloseAbnormal, "connection cut", CauseCut)
	return true
}

// RedeliverFrom makes the next subscription to join the shared timeline
// get again, as soon as it joins, the events of the current pass from
// record index from on that the timeline has already broadcast (those its
// history still holds), whatever Last-Event-ID it resumes from: a producer
// that sends a subscriber coming back after a cut what it had sent before.
// They are in the subscription's queue before it is on the timeline, so
// they follow its handshake answer at once, ahead of anything the
// subscriber may send after reading that answer. It does nothing without a
// shared timeline, or once the timeline is over or seeks (a new pass).
func (s *Server) RedeliverFrom(from int64) {
	t := s.shared
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.running {
		t.redeliver = from
	}
}

// CloseAbnormal is the code a cut connection is recorded with (RFC 6455's
// "closed without a close frame").
const CloseAbnormal = 1006

// Active returns the ids of the active subscriptions.
func (s *Server) Active() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]string, 0, len(s.subs))
	for id := range s.subs {
		ids = append(ids, id)
	}
	return ids
}

// DialWebSocket connects to a subscriber listening for WebSocket
// connections at url, offering the aaep.v1 subprotocol, and runs the
// subscription in the background, as if the subscriber had connected
// (Push is the one-shot form). It returns once connected; Shutdown ends
// the subscription.
func (s *Server) DialWebSocket(ctx context.Context, url string, popts PushOptions) error {
	conn, bc, err := dialSubscriber(ctx, url, popts)
	if err != nil {
		return err
	}
	go s.runWebSocket(conn, bc, TransportPush, url)
	return nil
}

// dialSubscriber opens a WebSocket connection to a listening subscriber.
func dialSubscriber(ctx context.Context, url string, popts PushOptions) (*websocket.Conn, *batchConn, error) {
	if popts.DialTimeout <= 0 {
		popts.DialTimeout = 10 * time.Second
	}
	var bc *batchConn
	dialer := websocket.Dialer{
		Subprotocols:     []string{Subprotocol},
		HandshakeTimeout: popts.DialTimeout,
		NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{Timeout: popts.DialTimeout}).DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			limitUnsent(c)
			bc = &batchConn{Conn: c}
			return bc, nil
		},
	}
	dctx, cancel := context.WithTimeout(ctx, popts.DialTimeout)
	defer cancel()
	// A signal ends the handshake at once, not at DialTimeout (wsdial).
	conn, resp, err := wsdial.Dial(dctx, &dialer, url, popts.Header)
	if err != nil {
		ce := &ConnectError{URL: url, Err: err}
		if resp != nil {
			ce.Status = resp.Status
		}
		return nil, nil, ce
	}
	return conn, bc, nil
}

// OnTimeline reports whether the subscription id follows the shared
// timeline yet (it has been registered and joined it); false without one.
func (s *Server) OnTimeline(id string) bool {
	t := s.shared
	if t == nil {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, sub := range t.subs {
		if sub.id == id && sub.ctx.Err() == nil {
			return true
		}
	}
	return false
}
