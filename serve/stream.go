package serve

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/grpcbind"
	"github.com/aaep-tools/aaepkit/payload"
)

// A MessageStream is a subscriber's connection that carries whole messages
// both ways, such as gRPC's Subscribe stream (Appendix B.5): ServeStream
// runs a subscription on one, as on a WebSocket. The transport itself
// lives in a package of its own (grpcbind/grpcserve), so that serve does
// not link it.
type MessageStream interface {
	// Recv returns the subscriber's next message. io.EOF means it will send
	// no more (the subscription goes on); context.Canceled that it left;
	// any other error that the connection failed.
	Recv() ([]byte, error)
	// Send writes one message whole, typ its type ("" when unknown); it may
	// block while the subscriber does not read. It is called by one
	// goroutine, the one running ServeStream.
	Send(msg []byte, typ string) error
	// Abort makes a Send in progress, or the next, fail soon (the
	// subscriber is too slow, stalled or cut). It may be called from any
	// goroutine, and more than once.
	Abort()
}

// StreamEnd says how a subscription served by ServeStream ended, in the
// terms of the WebSocket close codes of this package (CloseClean and
// CloseSubscriber: a normal end; CloseRejected: the handshake was
// rejected; CloseViolation: too slow, stalled or lagging; CloseGoingAway:
// the server is shutting down; CloseAbnormal: cut; CloseInternal: the
// capture could not be read), for the transport to map to its own status.
type StreamEnd struct {
	Code   int
	Reason string
}

// ErrNotRequest ends a stream whose first message is not a
// subscription.request: over gRPC it must be (B.5.2).
var ErrNotRequest = errors.New("the first message must be a subscription.request (Appendix B.5.2)")

// ErrNoRequest ends a stream that must open with a subscription.request
// and sent none: it ended its sending side first, or sent nothing within
// RequestWait.
var ErrNoRequest = errors.New("no subscription.request came: the first message must be one (Appendix B.5.2)")

// RequestWait is how long a stream that must open with a
// subscription.request (ServeStream's requireRequest) may take to send
// it. No event goes out before it, however loaded the machine: the
// WebSocket grace period, after which a stream starts unnegotiated, does
// not apply to such a stream.
const RequestWait = 30 * time.Second

// ServeStream runs one subscription on ms until it ends, and says how. The
// subscriber's first message is the handshake: a subscription.request is
// answered as over WebSocket (accepted, or rejected and closed); when
// requireRequest is set, any other first message ends the stream with
// ErrNotRequest (nothing is sent), and so does sending none (ErrNoRequest:
// the subscriber ended its side, or RequestWait passed); without it, a
// subscriber that sends nothing within the grace period gets the replay
// unnegotiated, as over WebSocket. Later
// messages (replies, renegotiation, subscription.close) are handled as
// over WebSocket. The events, their pacing, the control API and Options.Record
// treat the subscriber like any other.
func (s *Server) ServeStream(ctx context.Context, ms MessageStream, transport, remote string, requireRequest bool) (StreamEnd, error) {
	sw := &streamWire{ms: ms, timeout: s.opts.WriteTimeout, ctx: ctx}
	sub, err := s.newSubscriber(transport, remote, "", sw, nil)
	if err != nil {
		return StreamEnd{Code: CloseGoingAway, Reason: "server shutting down"}, nil
	}
	// Aborting the stream may end the transport's connection, and with it
	// the reading side: the stall is said first.
	sw.onStall = func() { sub.failed(errStreamStalled) }
	// A Send that fails because the subscriber cancelled its call (its
	// reader may not have seen it yet) ends the subscription as the
	// subscriber's doing, not as a failed connection.
	sw.onCancel = func() { sub.stop(CloseSubscriber, "cancelled by subscriber", CauseSubscriber) }
	g := newGreeting()
	g.require = requireRequest
	badFirst := make(chan []byte, 1)
	readerDone := make(chan struct{})
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(readerDone)
		for first := true; ; first = false {
			msg, err := ms.Recv()
			if err != nil {
				switch {
				case errors.Is(err, io.EOF) && first && requireRequest:
					// Half-closed before the request it owed.
					g.refuse(s, sub, "the subscriber ended its side before sending one")
				case errors.Is(err, io.EOF):
					// Half-closed: nothing more will come, events still go.
				case errors.Is(err, context.Canceled):
					sub.stop(CloseSubscriber, "cancelled by subscriber", CauseSubscriber)
				default:
					sub.stop(CloseNormal, "connection lost", CauseDisconnected)
				}
				return
			}
			if first && requireRequest && payload.Decode(msg).Routing.Type != "subscription.request" {
				badFirst <- msg
				s.recordMessage(sub, msg, "")
				s.notifyMessage(sub, transport, msg, "", ErrNotRequest.Error())
				sub.stop(CloseRejected, ErrNotRequest.Error(), CauseRejected)
				return
			}
			s.receive(sub, g, msg, first)
		}
	}()
	stopOnCancel := context.AfterFunc(ctx, func() {
		sub.stop(CloseSubscriber, "cancelled by subscriber", CauseSubscriber)
	})
	defer stopOnCancel()
	s.runSubscription(sub, g)
	ci := sub.getClose()
	end := StreamEnd{Code: ci.Code, Reason: ci.Reason}
	select {
	case <-badFirst:
		return end, ErrNotRequest
	default:
	}
	if g.noRequest.Load() {
		return end, ErrNoRequest
	}
	return end, nil
}

// streamWire is a MessageStream as a subscriber's wire: write queues a
// message, flush sends the queue, each Send bounded by the write timeout
// (a Send that takes longer aborts the stream: the subscriber stalled).
type streamWire struct {
	ms      MessageStream
	timeout time.Duration
	onStall func() // a Send took longer than the timeout
	// ctx is the stream's: done when the subscriber cancelled (or the
	// connection went); onCancel is told when a Send failed so.
	ctx      context.Context
	onCancel func()
	pending  []*event
	doc      payload.Doc

	mu      sync.Mutex
	aborted bool
}

func (w *streamWire) write(ev *event) error {
	w.pending = append(w.pending, ev)
	return nil
}

func (w *streamWire) flush() error {
	defer func() {
		clear(w.pending)
		w.pending = w.pending[:0]
	}()
	for _, ev := range w.pending {
		if w.isAborted() {
			return errStreamAborted
		}
		typ := ev.Type
		if ev.Control || !ev.routed {
			w.doc.DecodeOnly(ev.Payload, payload.NeedRouting)
			typ = w.doc.Routing.Type
		}
		stalled := false
		var t *time.Timer
		if w.timeout > 0 {
			t = time.AfterFunc(w.timeout, func() {
				w.mu.Lock()
				stalled = true
				w.mu.Unlock()
				if w.onStall != nil {
					w.onStall()
				}
				w.interrupt()
			})
		}
		err := w.ms.Send(ev.Payload, typ)
		if t != nil {
			t.Stop()
		}
		if err != nil {
			w.mu.Lock()
			st := stalled
			w.mu.Unlock()
			if st {
				return errStreamStalled
			}
			if w.ctx != nil && w.ctx.Err() != nil && w.onCancel != nil {
				w.onCancel()
			}
			return err
		}
	}
	return nil
}

func (w *streamWire) isAborted() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.aborted
}

func (w *streamWire) interrupt() {
	w.mu.Lock()
	w.aborted = true
	w.mu.Unlock()
	w.ms.Abort()
}

// keepalive has nothing to send: the transport keeps its connection alive.
func (w *streamWire) keepalive() error { return nil }

// close drops what was not sent; the status goes out when ServeStream
// returns.
func (w *streamWire) close(int, string) {
	clear(w.pending)
	w.pending = w.pending[:0]
}

var (
	errStreamAborted = errors.New("stream aborted")
	// errStreamStalled is a timeout: the subscriber took nothing for the
	// write timeout.
	errStreamStalled = &timeoutError{"stalled: a message was not taken within the write timeout"}
)

type timeoutError struct{ msg string }

func (e *timeoutError) Error() string { return e.msg }
func (e *timeoutError) Timeout() bool { return true }

// Manifest is the producer manifest a gRPC GetManifest is answered with:
// the one the capture holds (a gRPC capture's GetManifest record, or a
// received aaep:producer.manifest document among its first records), else
// one made from the producer the replay announces.
func (s *Server) Manifest() []byte {
	s.manifestOnce.Do(func() { s.manifest = s.findManifest() })
	return s.manifest
}

func (s *Server) findManifest() []byte {
	if cur, err := s.opts.Open(); err == nil {
		defer cur.Close()
		if cur.SeekRecord(0) == nil {
			var d payload.Doc
			for range 1024 {
				rec, err := cur.Next()
				if err != nil {
					break
				}
				if rec.Kind != capfile.KindReceived {
					continue
				}
				if rec.Attr(grpcbind.AttrMethod) == grpcbind.MethodGetManifest {
					return append([]byte(nil), rec.Payload...)
				}
				d.DecodeOnly(rec.Payload, payload.NeedRouting)
				if d.Routing.Type == "aaep:producer.manifest" {
					return append([]byte(nil), rec.Payload...)
				}
			}
		}
	}
	m := map[string]any{
		"@context":                "https://aaep-protocol.org/context/v1",
		"type":                    "aaep:producer.manifest",
		"agent_id":                "aaep-replay",
		"aaep_versions_supported": []string{"1.0.0"},
		"transports_supported":    []string{"websocket", "sse", "grpc"},
	}
	var p map[string]json.RawMessage
	if json.Unmarshal(s.producer, &p) == nil {
		for _, k := range []string{"agent_id", "agent_version", "agent_name"} {
			if v, ok := p[k]; ok {
				m[k] = v
			}
		}
	}
	b, _ := json.Marshal(m)
	return b
}
