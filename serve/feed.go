package serve

import (
	"errors"
	"io"
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
	st.gap = s.announceGap
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
			if ev.matchesID(resumeAfter) {
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

// findEvent returns the record index of the event a Last-Event-ID names
// (found false when the range holds none).
func (s *Server) findEvent(id string) (index int64, found bool, err error) {
	st, err := openStream(s.opts.Open, s.opts.Range, s.opts.Filter)
	if err != nil {
		return 0, false, err
	}
	defer st.close()
	for {
		ev, err := st.next()
		if errors.Is(err, io.EOF) {
			return 0, false, nil
		}
		if err != nil {
			return 0, false, err
		}
		if ev.matchesID(id) {
			return ev.Index, true, nil
		}
	}
}

// feedLookahead is how long before its deadline an event of a subscriber's
// own timeline is queued. The writer waits for the exact deadline (with the
// precise clock if asked), so no goroutine hand-off sits between the
// deadline and the write; the feeder only needs a coarse timer. It also
// bounds how many queued events a renegotiation leaves under the old terms.
const feedLookahead = 20 * time.Millisecond

// feed plays a subscriber's own timeline: it schedules each event and
// queues it shortly before its deadline, for as many passes as asked, then
// ends the queue. The writer judges each event under the terms in force
// when it gets there (writer.go); the feeder only reads the routing fields
// when the current terms need them, and the writer reads those of an event
// queued without them if new terms come to need them. feed owns st and
// closes it.
func (s *Server) feed(sub *subscriber, st *stream, first *event) {
	defer st.close()
	st.pool = sub.pool
	// Routing fields are read only when something will use them.
	fixedNeed := sub.transport == TransportSSE || s.opts.Record != nil
	pacer := timing.NewPacer(s.clock, s.opts.Timing)
	sched := pacer.Schedule()
	sub.scheduled.Store(sched.Start().UnixNano())
	coarse := timing.Coarse()
	ev := first
	sub.pass.Store(1)
	for pass := 1; ; {
		for ev != nil {
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
