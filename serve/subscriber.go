package serve

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
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

	lat        timing.Lateness
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

// sentEvent is an event written in the current batch, waiting for its flush.
type sentEvent struct {
	ev  *event
	due time.Time // deadline, or the release time when held back by the rate limit
}

// writeLoop is the subscriber's writer: it takes batches from the queue,
// writes them, flushes once per batch and keeps the figures. It returns when
// the queue ends or the subscription stops, after closing the connection.
func (s *subscriber) writeLoop() {
	srv := s.srv
	clock := srv.clock
	var (
		spare   []*event
		pending []sentEvent
		bucket  tokenBucket
		held    time.Time // release time of the last event the rate limit held
		idle    = newIdler(srv.opts.Keepalive)
	)
	defer idle.stop()
	flush := func() bool {
		if len(pending) == 0 {
			return true
		}
		err := s.wire.flush()
		now := clock.Now()
		if err != nil {
			s.failed(err)
			s.dropped.Add(int64(len(pending)))
			pending = pending[:0]
			return false
		}
		var worst time.Duration
		for _, p := range pending {
			if p.ev.Control {
				srv.record(s, capfile.KindReceived, p.ev)
				continue
			}
			late := now.Sub(p.due)
			if !srv.opts.Timing.NoDelay {
				s.lat.Observe(late)
				worst = max(worst, late)
			}
			s.sent.Add(1)
			s.bytes.Add(int64(len(p.ev.Payload)))
			s.lastIndex.Store(p.ev.Index)
			s.lastOffset.Store(int64(p.ev.Offset))
			srv.record(s, capfile.KindReceived, p.ev)
			srv.observeSent(s, p.ev)
			s.recycle(p.ev)
		}
		pending = pending[:0]
		idle.reset()
		if srv.opts.MaxLag > 0 && worst > srv.opts.MaxLag {
			s.setClose(CloseViolation, "lagging: "+worst.Round(time.Millisecond).String()+" behind schedule", CauseLagging)
			return false
		}
		return true
	}
	for {
		batch, ending := s.q.take(spare)
		if ending && s.ctx.Err() == nil && s.getClose() == nil {
			// The replay has ended for this subscriber.
			if s.completed.Load() == 0 {
				s.completed.Store(time.Now().UnixNano())
				srv.notifyComplete(s)
			}
			if srv.opts.CloseAtEnd {
				s.setClose(CloseClean, "replay finished", CauseFinished)
				break
			}
			// Stay open, like a producer that went quiet: closing would
			// make an EventSource reconnect and replay it all again.
		} else if ending {
			break
		}
		if len(batch) == 0 {
			spare = batch
			if !s.waitIdle(idle) {
				break
			}
			continue
		}
		ok := true
		consumed := 0 // events of the batch written (or dropped by flush)
		for _, ev := range batch {
			// Events may be queued ahead of their deadlines (see feed):
			// the writer waits for each one itself, so that nothing but
			// the write lies between the deadline and the wire. What is
			// already written goes out first.
			if !ev.Control && !srv.opts.Timing.NoDelay && ev.Deadline.After(clock.Now()) {
				if ok = flush(); !ok {
					break
				}
				if err := clock.WaitUntil(s.ctx, ev.Deadline); err != nil {
					ok = false
					break
				}
			}
			// Time held back by the subscriber's own rate limit (for this
			// event or one ahead of it) is not lateness.
			due := ev.Deadline
			if held.After(due) {
				due = held
			}
			if t := s.getTerms(); t.rateLimited(ev) {
				release, wait := bucket.take(clock.Now(), t.MaxRate)
				if wait {
					if ok = flush(); !ok {
						break
					}
					if err := clock.WaitUntil(s.ctx, release); err != nil {
						ok = false
						break
					}
				}
				if release.After(due) {
					due, held = release, release
				}
			}
			if ev.Blocking != nil {
				s.reg.issue(ev.Blocking, ev.ID, ev.Session, s.pool == nil)
			}
			if err := s.wire.write(ev); err != nil {
				s.failed(err)
				ok = false
				break
			}
			pending = append(pending, sentEvent{ev: ev, due: due})
			consumed++
		}
		if ok {
			ok = flush()
		} else {
			s.dropped.Add(int64(countEvents(batch[consumed:])))
		}
		clear(batch)
		spare = batch
		if !ok || s.ctx.Err() != nil {
			break
		}
	}
	s.setClose(CloseGoingAway, "server shutting down", CauseShutdown)
	ci := s.getClose()
	s.dropped.Add(int64(s.q.close()))
	s.cancel(errors.New(ci.Reason))
	s.wire.close(ci.Code, ci.Reason)
	// Closed subscriptions stay listed in Stats for a while: keep them small.
drain:
	for s.pool != nil {
		select {
		case <-s.pool:
		default:
			break drain
		}
	}
	close(s.done)
	srv.closed(s, ci)
}

// countEvents counts the events (not control messages) in evs.
func countEvents(evs []*event) int {
	n := 0
	for _, ev := range evs {
		if !ev.Control {
			n++
		}
	}
	return n
}

// recycle hands an event back to the subscriber's own timeline for reuse;
// nothing refers to it once it has been written and recorded. Only events
// with small buffers are kept, so the pool holds at most QueueSize × 4 KiB.
func (s *subscriber) recycle(ev *event) {
	if s.pool == nil || cap(ev.Payload) > 4<<10 {
		return
	}
	select {
	case s.pool <- ev:
	default:
	}
}

// waitIdle waits for the queue to have something (true) or the
// subscription to end (false), sending keepalives while it is silent.
func (s *subscriber) waitIdle(idle *idler) bool {
	for {
		select {
		case <-s.q.wake:
			return true
		case <-s.ctx.Done():
			return false
		case <-idle.due():
			if err := s.wire.keepalive(); err != nil {
				s.failed(err)
				return false
			}
			idle.reset()
		}
	}
}

// idler times the silence on a subscriber's connection: due fires when a
// keepalive is due (never when keepalives are off).
type idler struct {
	every time.Duration
	t     *time.Timer
}

func newIdler(every time.Duration) *idler {
	i := &idler{every: every}
	if every > 0 {
		i.t = time.NewTimer(every)
	}
	return i
}

// due is the channel that fires when the connection has been silent for
// the keepalive interval (nil, which never fires, without keepalives).
func (i *idler) due() <-chan time.Time {
	if i.t == nil {
		return nil
	}
	return i.t.C
}

// reset restarts the silence: something was just written.
func (i *idler) reset() {
	if i.t != nil {
		i.t.Reset(i.every)
	}
}

func (i *idler) stop() {
	if i.t != nil {
		i.t.Stop()
	}
}

// failed records why a write failed: a timeout means the subscriber stalled.
// A reason set earlier (by stop, which interrupts the write) is kept.
func (s *subscriber) failed(err error) {
	if errors.Is(err, errUnresponsive) {
		s.setClose(CloseViolation, "unresponsive: no answer to a ping within "+s.srv.opts.Keepalive.String(), CauseUnresponsive)
		return
	}
	if isTimeout(err) {
		s.setClose(CloseViolation, "stalled: nothing written for "+s.srv.opts.WriteTimeout.String(), CauseStalled)
		return
	}
	s.setClose(CloseNormal, "connection failed: "+err.Error(), CauseDisconnected)
}

// tokenBucket holds back non-critical events to honour max_events_per_second:
// a bucket of rate tokens, refilled continuously.
type tokenBucket struct {
	tokens float64
	last   time.Time
	rate   int
}

// take spends a token at now. If none is left it returns the time one will
// be, and wait=true; the caller waits until then (the token is spent).
func (b *tokenBucket) take(now time.Time, rate int) (release time.Time, wait bool) {
	if b.rate != rate || b.last.IsZero() {
		b.rate, b.tokens, b.last = rate, float64(rate), now
	}
	if el := now.Sub(b.last); el > 0 {
		b.tokens = min(float64(rate), b.tokens+el.Seconds()*float64(rate))
		b.last = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return now, false
	}
	need := time.Duration((1 - b.tokens) / float64(rate) * float64(time.Second))
	release = now.Add(need)
	b.tokens, b.last = 0, release
	return release, true
}

func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}
