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

// timeline is the one shared timeline of Options.Shared. It starts when the
// first subscriber joins and runs to its end; a subscriber that arrives when
// none is running starts a new one.
//
// It keeps the events of the current pass it has broadcast lately (bounded
// like a subscriber's queue), so that an SSE subscriber reconnecting with
// Last-Event-ID gets what it missed, as from a live producer.
type timeline struct {
	srv       *Server
	mu        sync.Mutex
	subs      []*subscriber // copy-on-write
	running   bool
	ran       bool  // a run has ended (and none has started since)
	pos       int64 // record index of the last event broadcast in this pass; -1 before the first
	history   []*event
	histB     int   // payload bytes in history
	redeliver int64 // RedeliverFrom: the next joiner gets history from this record index on; -1: none
}

func newTimeline(s *Server) *timeline { return &timeline{srv: s, pos: -1, redeliver: -1} }

// resumeState is where a Last-Event-ID stands on the shared timeline.
type resumeState int

const (
	resumeUnknown resumeState = iota // not an event of the range: join live
	resumeAhead                      // still to come: skip through it, then follow
	resumeBehind                     // already broadcast: catch up from history
	resumeOver                       // the timeline is over: nothing more will come
)

// locate says where the event at record index idx stands.
func (t *timeline) locate(idx int64) resumeState {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case !t.running && t.ran:
		return resumeOver
	case t.running && idx <= t.pos:
		return resumeBehind
	default:
		return resumeAhead
	}
}

// join adds sub to the running timeline, starting one if needed.
func (t *timeline) join(sub *subscriber) { t.joinAfter(sub, -1) }

// joinAfter adds sub to the timeline resuming after the event at record
// index after (-1: live). An event already broadcast in this pass is
// followed by what the history still holds after it; one still to come is
// skipped through, so the subscriber continues right after it.
func (t *timeline) joinAfter(sub *subscriber, after int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if from := t.redeliver; from >= 0 && t.running && from <= t.pos {
		// RedeliverFrom: what was sent before the cut, again.
		t.redeliver = -1
		for _, ev := range t.history {
			if ev.Index >= from && !sub.q.tryPush(ev) {
				sub.dropped.Add(1)
			}
		}
	} else if after >= 0 {
		if t.running && after <= t.pos {
			for _, ev := range t.history {
				if ev.Index <= after {
					continue
				}
				if !sub.q.tryPush(ev) {
					sub.dropped.Add(1)
				}
			}
		} else {
			sub.skipThrough.Store(after)
		}
	}
	subs := make([]*subscriber, 0, len(t.subs)+1)
	for _, o := range t.subs {
		if o.ctx.Err() == nil {
			subs = append(subs, o)
		}
	}
	t.subs = append(subs, sub)
	if !t.running {
		t.running, t.ran, t.pos = true, false, -1
		t.clearHistory()
		t.srv.wg.Add(1)
		if t.srv.ctl != nil {
			go t.runControlled()
		} else {
			go t.run()
		}
	}
}

// record notes ev as broadcast and returns the subscribers to give it to.
func (t *timeline) record(ev *event) []*subscriber {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pos = ev.Index
	limit, maxB := t.srv.opts.QueueSize, t.srv.opts.QueueBytes
	t.history = append(t.history, ev)
	t.histB += len(ev.Payload)
	drop := 0
	for len(t.history)-drop > 1 && (len(t.history)-drop > limit || t.histB > maxB) {
		t.histB -= len(t.history[drop].Payload)
		drop++
	}
	if drop > 0 {
		clear(t.history[:drop])
		t.history = t.history[drop:]
	}
	return t.subs
}

// newPass forgets the previous pass's position and history.
func (t *timeline) newPass() {
	t.mu.Lock()
	t.pos = -1
	t.clearHistory()
	t.mu.Unlock()
}

func (t *timeline) clearHistory() {
	t.redeliver = -1
	clear(t.history)
	t.history, t.histB = t.history[:0], 0
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
	st.gap = s.announceGap
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
		t.newPass()
	}
}

// end closes the timeline: its subscribers' queues end (their writers
// finish what is queued), or, after a failure, the subscriptions stop.
func (t *timeline) end(failure error) {
	t.mu.Lock()
	subs := t.subs
	t.subs, t.running, t.ran = nil, false, true
	t.clearHistory()
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

// broadcast queues ev for every subscriber (each one's writer judges it
// under that subscriber's terms). A paced
// timeline never waits for anyone: a full queue closes that subscriber. With
// NoDelay the timeline runs as fast as its subscribers read, waiting at most
// sharedFullWait (or the write timeout, if shorter) for one whose queue is
// full before closing it.
func (t *timeline) broadcast(ev *event) {
	s := t.srv
	for _, sub := range t.record(ev) {
		if sub.ctx.Err() != nil {
			continue
		}
		if skip := sub.skipThrough.Load(); skip >= 0 {
			// Resuming after an event still to come: everything up to
			// it was delivered before the subscriber reconnected.
			if ev.Index <= skip {
				if ev.Index == skip {
					sub.skipThrough.Store(-1)
				}
				continue
			}
			sub.skipThrough.Store(-1)
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
