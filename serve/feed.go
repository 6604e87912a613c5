package serve

import (
	"context"
	"errors"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/aaep-tools/aaepkit/timing"
)

// errResumeNotFound means a Last-Event-ID was not in the capture.
var errResumeNotFound = errors.New("resume point not found")

// openTimeline opens a stream for one subscriber and reads its first event.
// With resumeAfter set, it skips to the event after the one with that
// event_id; when that id is not in the range, it starts from the beginning
// and reports errResumeNotFound alongside the stream. first is nil when
// nothing is left to send.
func (s *Server) openTimeline(resumeAfter string) (st *stream, first *event, err error) {
	st, err = openStream(s.opts.Open, s.opts.Range, s.opts.Filter)
	if err != nil {
		return nil, nil, err
	}
	if resumeAfter != "" {
		for {
			ev, err := st.next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				st.close()
				return nil, nil, err
			}
			if ev.ID == resumeAfter {
				first, err = st.next()
				if errors.Is(err, io.EOF) {
					return st, nil, nil
				}
				if err != nil {
					st.close()
					return nil, nil, err
				}
				return st, first, nil
			}
		}
		if err := st.restart(); err != nil {
			st.close()
			return nil, nil, err
		}
		first, err = st.next()
		if err != nil && !errors.Is(err, io.EOF) {
			st.close()
			return nil, nil, err
		}
		return st, first, errResumeNotFound
	}
	first, err = st.next()
	if err != nil && !errors.Is(err, io.EOF) {
		st.close()
		return nil, nil, err
	}
	return st, first, nil
}

// feedLookahead is how long before its deadline an event of a subscriber's
// own timeline is queued. The writer waits for the exact deadline (with the
// precise clock if asked), so no goroutine hand-off sits between the
// deadline and the write; the feeder only needs a coarse timer. It also
// bounds how many queued events a renegotiation leaves under the old terms.
const feedLookahead = 20 * time.Millisecond

// feed plays a subscriber's own timeline: it schedules each event the
// subscriber's terms allow and queues it shortly before its deadline, for
// as many passes as asked, then ends the queue. It owns st and closes it.
func (s *Server) feed(sub *subscriber, st *stream, first *event) {
	defer st.close()
	st.pool = sub.pool
	// Routing fields are read only when something will use them.
	fixedNeed := sub.transport == TransportSSE || s.opts.Record != nil
	pacer := timing.NewPacer(s.clock, s.opts.Timing)
	sched := pacer.Schedule()
	coarse := timing.System()
	ev := first
	sub.pass.Store(1)
	for pass := 1; ; {
		for ev != nil {
			if sub.getTerms().Allows(ev) {
				deadline := sched.Deadline(ev.Offset)
				if !s.opts.Timing.NoDelay {
					if err := coarse.WaitUntil(sub.ctx, deadline.Add(-feedLookahead)); err != nil {
						return
					}
				}
				ev.Deadline = deadline
				if err := sub.q.push(sub.ctx, ev); err != nil {
					return
				}
			} else {
				sub.filtered.Add(1)
			}
			st.lazy = !fixedNeed && !sub.getTerms().needsFields()
			next, err := st.next()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					sub.stop(CloseInternal, "capture read error", CauseCaptureError)
					s.notify(Notice{Kind: NoticeMessage, Subscription: sub.id, Transport: sub.transport, Reason: err.Error()})
					return
				}
				next = nil
			}
			ev = next
		}
		if s.opts.Passes > 0 && pass >= s.opts.Passes {
			break
		}
		if err := st.restart(); err != nil {
			sub.stop(CloseInternal, "capture read error", CauseCaptureError)
			return
		}
		pacer.Restart()
		pass++
		sub.pass.Store(int64(pass))
		var err error
		if ev, err = st.next(); err != nil {
			if !errors.Is(err, io.EOF) {
				sub.stop(CloseInternal, "capture read error", CauseCaptureError)
			}
			// An empty range: nothing to loop over.
			break
		}
	}
	sub.q.end()
}

// timeline is the one shared timeline of Options.Shared. It starts when the
// first subscriber joins and runs to its end; a subscriber that arrives when
// none is running starts a new one.
type timeline struct {
	srv     *Server
	mu      sync.Mutex
	subs    []*subscriber // copy-on-write
	running bool
}

// join adds sub to the running timeline, starting one if needed.
func (t *timeline) join(sub *subscriber) {
	t.mu.Lock()
	defer t.mu.Unlock()
	subs := make([]*subscriber, 0, len(t.subs)+1)
	for _, o := range t.subs {
		if o.ctx.Err() == nil {
			subs = append(subs, o)
		}
	}
	t.subs = append(subs, sub)
	if !t.running {
		t.running = true
		t.srv.wg.Add(1)
		if t.srv.ctl != nil {
			go t.runControlled()
		} else {
			go t.run()
		}
	}
}

func (t *timeline) snapshot() []*subscriber {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.subs
}

// run plays the shared timeline.
func (t *timeline) run() {
	s := t.srv
	defer s.wg.Done()
	var failure error
	defer func() { t.end(failure) }()
	st, err := openStream(s.opts.Open, s.opts.Range, s.opts.Filter)
	if err != nil {
		failure = err
		s.notify(Notice{Kind: NoticeMessage, Reason: err.Error()})
		return
	}
	defer st.close()
	pacer := timing.NewPacer(s.clock, s.opts.Timing)
	for pass := 1; ; pass++ {
		played := 0
		for {
			ev, err := st.next()
			if errors.Is(err, io.EOF) {
				break
			}
			played++
			if err != nil {
				failure = err
				s.notify(Notice{Kind: NoticeMessage, Reason: err.Error()})
				return
			}
			deadline, err := pacer.Wait(s.ctx, ev.Offset)
			if err != nil {
				return
			}
			ev.Deadline = deadline
			t.broadcast(ev)
		}
		if played == 0 || s.opts.Passes > 0 && pass >= s.opts.Passes {
			return // done, or an empty range that would loop forever
		}
		if err := st.restart(); err != nil {
			failure = err
			return
		}
		pacer.Restart()
	}
}

// end closes the timeline: its subscribers' queues end (their writers
// finish what is queued), or, after a failure, the subscriptions stop.
func (t *timeline) end(failure error) {
	t.mu.Lock()
	subs := t.subs
	t.subs, t.running = nil, false
	t.mu.Unlock()
	for _, sub := range subs {
		if failure != nil {
			sub.stop(CloseInternal, "capture read error", CauseCaptureError)
		} else {
			sub.q.end()
		}
	}
}

// sharedFullWait is the longest a no-delay shared timeline waits for room in
// one subscriber's queue. The writer empties the whole queue whenever it
// takes a batch, so a queue that stays full this long belongs to a
// subscriber that has not finished one write in that time.
const sharedFullWait = time.Second

// broadcast queues ev for every subscriber whose terms allow it. A paced
// timeline never waits for anyone: a full queue closes that subscriber. With
// NoDelay the timeline runs as fast as its subscribers read, waiting at most
// sharedFullWait (or the write timeout, if shorter) for one whose queue is
// full before closing it.
func (t *timeline) broadcast(ev *event) {
	s := t.srv
	for _, sub := range t.snapshot() {
		if sub.ctx.Err() != nil {
			continue
		}
		if !sub.getTerms().Allows(ev) {
			sub.filtered.Add(1)
			continue
		}
		if sub.q.tryPush(ev) {
			continue
		}
		if s.opts.Timing.NoDelay {
			ctx, cancel := context.WithTimeout(sub.ctx, min(s.opts.WriteTimeout, sharedFullWait))
			err := sub.q.push(ctx, ev)
			cancel()
			if err == nil {
				continue
			}
			if sub.ctx.Err() != nil {
				continue
			}
		}
		sub.dropped.Add(1)
		sub.stop(CloseViolation, "too slow: queue full ("+strconv.Itoa(sub.q.depth())+" events)", CauseTooSlow)
	}
}
