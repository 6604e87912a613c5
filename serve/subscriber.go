package serve

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aaep-tools/aaepkit/timing"
)

// AAEP WebSocket close codes (Appendix B.2.6) and the standard ones used.
const (
	CloseNormal     = 1000 // transport-level normal closure
	CloseGoingAway  = 1001 // server shutting down
	CloseInternal   = 1011 // the capture could not be read
	CloseClean      = 4000 // subscription closed cleanly: the replay finished
	CloseRejected   = 4001 // subscription rejected during the handshake
	CloseViolation  = 4004 // terminated by the producer: too slow, stalled
	CloseSubscriber = 4005 // terminated by the subscriber (subscription.close)
)

// Close causes, as counted in Stats.Closes.
const (
	CauseFinished     = "finished"      // the replay reached its end
	CauseTooSlow      = "too_slow"      // queue full on a shared timeline
	CauseStalled      = "stalled"       // a write blocked past the write timeout
	CauseLagging      = "lagging"       // fell more than MaxLag behind schedule
	CauseSubscriber   = "subscriber"    // subscription.close or the peer closed
	CauseDisconnected = "disconnected"  // the connection failed
	CauseRejected     = "rejected"      // the handshake was rejected
	CauseShutdown     = "shutdown"      // the server is shutting down
	CauseCaptureError = "capture_error" // the capture could not be read
	CauseUnresponsive = "unresponsive"  // a WebSocket peer left a ping unanswered
	CauseCut          = "cut"           // cut on purpose (Server.Cut), as a network failure would
)

// errUnresponsive is a keepalive's error for a WebSocket peer that did not
// answer the previous ping.
var errUnresponsive = errors.New("no answer to the last ping")

// wire is one subscriber's connection as the writer sees it.
type wire interface {
	// write buffers one message.
	write(ev *event) error
	// flush sends everything buffered; it gives up when the peer accepts
	// nothing for the write timeout, or when interrupted.
	flush() error
	// interrupt makes a blocked flush fail at once (from any goroutine).
	interrupt()
	// keepalive tells a silent subscriber the stream is alive: an SSE
	// comment, a WebSocket ping. It returns errUnresponsive when the peer
	// did not answer the previous one.
	keepalive() error
	// close ends the connection with code and reason (where the transport
	// can say so). It is called once, by the writer.
	close(code int, reason string)
}

// CloseInfo says how a subscription ended.
type CloseInfo struct {
	Code   int       `json:"code"`
	Reason string    `json:"reason"`
	Cause  string    `json:"cause"`
	Time   time.Time `json:"time"`
}

// subscriber is one subscription: its queue, its writer and its figures.
type subscriber struct {
	srv       *Server
	num       uint16 // source id in recordings
	id        string // subscription id
	transport string
	remote    string
	started   time.Time

	wire   wire
	q      *queue
	pool   chan *event // events to recycle on the subscriber's own timeline (nil when shared)
	terms  atomic.Pointer[subscriptionTerms]
	reg    *registry
	ctx    context.Context
	cancel context.CancelCauseFunc
	done   chan struct{} // closed when the writer has finished

	mu         sync.Mutex
	caps       map[string]json.RawMessage // requested capabilities (for renegotiation)
	subscriber string                     // subscriber_id from the request
	closeInfo  *CloseInfo
	// prompted are the reply tokens written to this subscriber, so that
	// a reply that comes after it was cut is recorded as its own.
	prompted map[string]bool

	lat        timing.Lateness
	write      timing.Lateness // how long each flush took
	sent       atomic.Int64
	bytes      atomic.Int64
	filtered   atomic.Int64
	dropped    atomic.Int64
	replies    atomic.Int64
	lastIndex  atomic.Int64
	lastOffset atomic.Int64
	pass       atomic.Int64
	// skipThrough, when not -1, is the record index of the event a shared
	// timeline subscriber resumed after (Last-Event-ID) before it came.
	skipThrough atomic.Int64
	// completed is when the subscriber had received the whole replay (0: not yet).
	completed atomic.Int64
	// scheduled is when the first event of the subscriber's own timeline
	// was due, as a Unix time in nanoseconds (0: no own timeline yet).
	scheduled atomic.Int64
}

func (s *subscriber) getTerms() *subscriptionTerms { return s.terms.Load() }

// stop ends the subscription from outside the writer: it records why (the
// first reason wins), drops what is queued and wakes the writer, which then
// closes the connection. A write in progress is cut short only when the
// subscriber is too slow or gone; otherwise it completes (within the write
// timeout), so that the close frame follows whole frames.
func (s *subscriber) stop(code int, reason, cause string) {
	if !s.setClose(code, reason, cause) {
		return
	}
	s.dropped.Add(int64(s.q.close()))
	s.cancel(errors.New(reason))
	if cause == CauseTooSlow || cause == CauseDisconnected || cause == CauseCut {
		s.wire.interrupt()
	}
}

// setClose records the close reason once; it reports whether this call set it.
func (s *subscriber) setClose(code int, reason, cause string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closeInfo != nil {
		return false
	}
	s.closeInfo = &CloseInfo{Code: code, Reason: reason, Cause: cause, Time: time.Now()}
	return true
}

func (s *subscriber) getClose() *CloseInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closeInfo == nil {
		return nil
	}
	c := *s.closeInfo
	return &c
}

// failed records why a write failed: a timeout means the subscriber stalled.
// A reason set earlier (by stop, which interrupts the write) is kept.
func (s *subscriber) failed(err error) {
	if errors.Is(err, errUnresponsive) {
		s.setClose(CloseViolation, "unresponsive: no answer to a ping within "+s.srv.opts.PongWait.String(), CauseUnresponsive)
		return
	}
	if isTimeout(err) {
		s.setClose(CloseViolation, "stalled: nothing written for "+s.srv.opts.WriteTimeout.String(), CauseStalled)
		return
	}
	s.setClose(CloseNormal, "connection failed: "+err.Error(), CauseDisconnected)
}

func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}
