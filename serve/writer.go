package serve

import (
	"errors"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/timing"
)

// A subscriber's writer is the one place where what the subscriber receives
// is put in order: it takes the events its timeline queued, holds each one
// until its time, and writes it if the subscription's terms allow it. The
// terms are the writer's own: a handshake answer (subscription.accepted or
// rejected) waits in the queue's answer lane, and the writer sends it at the
// next frame boundary, ahead of every event not yet written, then judges
// every later event under the terms it grants. The timelines filter nothing
// themselves, so a change of terms can neither lose an event that the new
// terms allow nor let through one they refuse, whenever it comes.

// sentEvent is a message written in the current batch, waiting for its flush.
type sentEvent struct {
	ev  *event
	due time.Time // deadline, or the release time when held back by the rate limit
}

// writer is the state of a subscriber's writing goroutine.
type writer struct {
	s       *subscriber
	clock   timing.Clock
	noDelay bool
	pending []sentEvent
	bucket  tokenBucket
	held    time.Time // release time of the last event the rate limit held
	idle    *idler
	doc     payload.Doc // reads the routing fields of events read without them
}

// writeLoop is the subscriber's writer: it takes batches from the queue,
// writes them, flushes once per batch and keeps the figures. It returns when
// the queue ends or the subscription stops, after closing the connection.
func (s *subscriber) writeLoop() {
	srv := s.srv
	w := &writer{s: s, clock: srv.clock, noDelay: srv.opts.Timing.NoDelay, idle: newIdler(srv.opts.Keepalive)}
	defer w.idle.stop()
	var spare []*event
	for {
		if ok, _ := w.putAnswers(); !ok {
			break
		}
		batch, ending := s.q.take(spare)
		// An answer goes out with the events queued behind it, in one
		// flush (a subscription that joins the shared timeline with
		// events already queued gets them with its handshake answer, so
		// nothing the subscriber sends after reading the answer can be
		// recorded before them); alone, it goes out at once.
		if len(batch) == 0 && !w.flush() {
			break
		}
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
			if !s.waitIdle(w.idle) {
				break
			}
			continue
		}
		done, ok := w.writeBatch(batch)
		if ok {
			ok = w.flush()
		} else {
			s.dropped.Add(int64(len(batch) - done))
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

// writeBatch writes the events of batch as their time comes, answers going
// out ahead of any event not yet written. It returns how many events it is
// done with (written or filtered out), and false when the subscription
// ends (the rest of the batch is then dropped).
func (w *writer) writeBatch(batch []*event) (done int, ok bool) {
	s := w.s
	for done < len(batch) {
		if !w.answer() {
			return done, false
		}
		ev := batch[done]
		t := s.getTerms()
		if t.needsFields() {
			ev.route(&w.doc)
		}
		if !t.Allows(ev) {
			s.filtered.Add(1)
			s.recycle(ev)
			done++
			continue
		}
		// Events may be queued ahead of their deadlines (see feed): the
		// writer waits for each one itself, so that nothing but the write
		// lies between the deadline and the wire. What is already written
		// goes out first.
		if !w.noDelay && ev.Deadline.After(w.clock.Now()) {
			reached, ok := w.waitUntil(ev.Deadline)
			if !ok {
				return done, false
			}
			if !reached {
				continue // an answer came first: it goes out, and its terms judge this event
			}
		}
		// Time held back by the subscriber's own rate limit (for this event
		// or one ahead of it) is not lateness.
		due := ev.Deadline
		if w.held.After(due) {
			due = w.held
		}
		if t.rateLimited(ev) {
			now := w.clock.Now()
			if release := w.bucket.ready(now, t.MaxRate); release.After(now) {
				reached, ok := w.waitUntil(release)
				if !ok {
					return done, false
				}
				if !reached {
					continue
				}
				if release.After(due) {
					due, w.held = release, release
				}
			}
			w.bucket.spend(w.clock.Now(), t.MaxRate)
		}
		if ev.Blocking != nil {
			s.reg.issue(ev.Blocking, ev.ID, ev.Session, s.pool == nil)
			s.mu.Lock()
			if s.prompted == nil {
				s.prompted = map[string]bool{}
			}
			s.prompted[ev.Blocking.Token] = true
			s.mu.Unlock()
		}
		if !w.put(ev, due) {
			return done, false
		}
		done++
	}
	return done, true
}

// answer sends the answers waiting, in the order they came (with what the
// batch wrote before them), and makes the terms each one grants the
// subscription's. It reports false when the subscription ends: an answer
// rejected it (§5.7: it closes after the answer), or a write failed.
func (w *writer) answer() bool {
	ok, wrote := w.putAnswers()
	if !ok || !wrote {
		return ok
	}
	return w.flush()
}

// putAnswers is answer without the flush at the end (a rejection is
// flushed at once, before the subscription closes); wrote reports whether
// there was an answer to write.
func (w *writer) putAnswers() (ok, wrote bool) {
	s := w.s
	as := s.q.takeAnswers()
	if len(as) == 0 {
		return true, false
	}
	for _, a := range as {
		if a.msg != nil && !w.put(a.msg, time.Time{}) {
			return false, true
		}
		if a.terms != nil {
			s.terms.Store(a.terms)
		}
		if a.rejected != "" {
			if w.flush() {
				s.setClose(CloseRejected, a.rejected, CauseRejected)
			}
			return false, true
		}
	}
	return true, true
}

// put writes one message. It is recorded (Options.Record) and logged (the
// control log) first: the wire may send it before the flush (a batch sends
// what fills its buffer), and a subscriber's answer to it must never come
// ahead of it in either.
func (w *writer) put(ev *event, due time.Time) bool {
	s := w.s
	s.srv.record(s, capfile.KindReceived, ev)
	s.srv.observeSent(s, ev)
	if err := s.wire.write(ev); err != nil {
		s.failed(err)
		return false
	}
	w.pending = append(w.pending, sentEvent{ev: ev, due: due})
	return true
}

// waitUntil flushes what is written and waits until t. reached is false
// when an answer came first; ok is false when the subscription ended (or
// the flush failed).
func (w *writer) waitUntil(t time.Time) (reached, ok bool) {
	if !w.flush() {
		return false, false
	}
	ctx, quiet := w.s.q.waitContext(w.s.ctx)
	if !quiet {
		return false, true
	}
	if err := w.clock.WaitUntil(ctx, t); err != nil {
		return false, w.s.ctx.Err() == nil
	}
	return true, true
}

// flush sends what the batch wrote and keeps the figures of its events.
func (w *writer) flush() bool {
	if len(w.pending) == 0 {
		return true
	}
	s := w.s
	srv := s.srv
	start := w.clock.Now()
	err := s.wire.flush()
	now := w.clock.Now()
	s.write.Observe(now.Sub(start))
	if err != nil {
		s.failed(err)
		for _, p := range w.pending {
			if !p.ev.Control {
				s.dropped.Add(1)
			}
		}
		w.pending = w.pending[:0]
		return false
	}
	var worst time.Duration
	for _, p := range w.pending {
		if p.ev.Control {
			continue
		}
		late := now.Sub(p.due)
		if !w.noDelay {
			s.lat.Observe(late)
			worst = max(worst, late)
		}
		s.sent.Add(1)
		s.bytes.Add(int64(len(p.ev.Payload)))
		s.lastIndex.Store(p.ev.Index)
		s.lastOffset.Store(int64(p.ev.Offset))
		s.recycle(p.ev)
	}
	clear(w.pending)
	w.pending = w.pending[:0]
	w.idle.reset()
	if srv.opts.MaxLag > 0 && worst > srv.opts.MaxLag {
		s.setClose(CloseViolation, "lagging: "+worst.Round(time.Millisecond).String()+" behind schedule", CauseLagging)
		return false
	}
	return true
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

// tokenBucket holds back non-critical events to honour max_events_per_second:
// a bucket of rate tokens, refilled continuously.
type tokenBucket struct {
	tokens float64
	last   time.Time
	rate   int
}

// refill brings the bucket to now (a new rate starts it full).
func (b *tokenBucket) refill(now time.Time, rate int) {
	if b.rate != rate || b.last.IsZero() {
		b.rate, b.tokens, b.last = rate, float64(rate), now
		return
	}
	if el := now.Sub(b.last); el > 0 {
		b.tokens = min(float64(rate), b.tokens+el.Seconds()*float64(rate))
		b.last = now
	}
}

// ready returns when a token is there to spend: now, or the time one will be.
func (b *tokenBucket) ready(now time.Time, rate int) time.Time {
	b.refill(now, rate)
	if b.tokens >= 1 {
		return now
	}
	return now.Add(time.Duration((1 - b.tokens) / float64(rate) * float64(time.Second)))
}

// spend takes a token at now (at or after the time ready gave).
func (b *tokenBucket) spend(now time.Time, rate int) {
	b.refill(now, rate)
	b.tokens = max(b.tokens-1, 0)
}
