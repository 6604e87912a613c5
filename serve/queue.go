package serve

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
)

// errQueueClosed is returned by push on a closed queue.
var errQueueClosed = errors.New("queue closed")

// queue is a subscriber's bounded outbox. The feeder pushes events; the
// writer takes everything queued at once, so that one wake-up and one flush
// serve a whole batch. Handshake answers go in a lane of their own, ahead
// of every queued event, and do not count against the bound.
type queue struct {
	mu     sync.Mutex
	items  []*event
	events int // events in items
	bytes  int // payload bytes of those events
	limit  int // most events queued
	max    int // most payload bytes queued (one event may exceed it alone)
	closed bool
	ending bool // no more pushes; the writer ends after draining

	answers  []*answer
	answered atomic.Bool // answers is not empty (read by the writer between events)
	// waitCtx is the context the writer waits for an event's time under;
	// interruptWait cancels it when an answer comes.
	waitCtx       context.Context
	interruptWait context.CancelFunc

	wake  chan struct{} // signalled when items or answers become available, or ending
	space chan struct{} // signalled when the writer frees room
}

// answer is a handshake answer on its way to the subscriber. The writer
// sends it at the next frame boundary, ahead of every event not yet
// written (App. B.2.3: the answer is the next frame), and its terms govern
// every event written after it, none before.
type answer struct {
	// msg is the subscription.accepted or subscription.rejected message;
	// nil where the transport answers elsewhere (SSE: in the POST response).
	msg *event
	// terms are the subscription's terms from then on (nil: unchanged).
	terms *subscriptionTerms
	// rejected, when set, closes the subscription after msg (§5.7), with
	// this reason.
	rejected string
}

func newQueue(limit, maxBytes int) *queue {
	return &queue{limit: limit, max: maxBytes, wake: make(chan struct{}, 1), space: make(chan struct{}, 1)}
}

// fits reports whether ev may be added now. q.mu must be held.
func (q *queue) fits(ev *event) bool {
	if q.events == 0 {
		return true
	}
	return q.events < q.limit && q.bytes+len(ev.Payload) <= q.max
}

// add appends ev. q.mu must be held.
func (q *queue) add(ev *event) {
	q.items = append(q.items, ev)
	q.events++
	q.bytes += len(ev.Payload)
}

// pushAnswer puts a in the answers' lane and interrupts the writer if it is
// waiting for an event's time. It reports false when the queue is closed
// (the writer has stopped).
func (q *queue) pushAnswer(a *answer) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	q.answers = append(q.answers, a)
	q.answered.Store(true)
	interrupt := q.interruptWait
	q.mu.Unlock()
	if interrupt != nil {
		interrupt()
	}
	signal(q.wake)
	return true
}

// takeAnswers returns the answers waiting, oldest first.
func (q *queue) takeAnswers() []*answer {
	if !q.answered.Load() {
		return nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	as := q.answers
	q.answers = nil
	q.answered.Store(false)
	return as
}

// waitContext returns the context under which the writer waits for an
// event's time: parent's, cancelled too when an answer comes (the same one
// from wait to wait until an answer cancels it). quiet is false when an
// answer is already waiting: the writer sends it instead of waiting.
func (q *queue) waitContext(parent context.Context) (ctx context.Context, quiet bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.answers) > 0 {
		return nil, false
	}
	if q.waitCtx == nil || q.waitCtx.Err() != nil {
		q.waitCtx, q.interruptWait = context.WithCancel(parent)
	}
	return q.waitCtx, true
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// tryPush adds ev unless the queue is full or closed.
func (q *queue) tryPush(ev *event) (ok bool) {
	q.mu.Lock()
	if q.closed || q.ending || !q.fits(ev) {
		q.mu.Unlock()
		return false
	}
	q.add(ev)
	q.mu.Unlock()
	signal(q.wake)
	return true
}

// push adds ev, waiting for room until ctx ends or the queue closes.
func (q *queue) push(ctx context.Context, ev *event) error {
	for {
		q.mu.Lock()
		if q.closed || q.ending {
			q.mu.Unlock()
			return errQueueClosed
		}
		if q.fits(ev) {
			q.add(ev)
			q.mu.Unlock()
			signal(q.wake)
			return nil
		}
		q.mu.Unlock()
		select {
		case <-q.space:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// take returns every event queued, handing spare (emptied) to the queue
// for the next batch. It returns ending=true once the queue is ending (or
// closed) and empty, answers included.
func (q *queue) take(spare []*event) (batch []*event, ending bool) {
	q.mu.Lock()
	batch = q.items
	q.items = spare[:0]
	q.events, q.bytes = 0, 0
	ending = len(batch) == 0 && len(q.answers) == 0 && (q.ending || q.closed)
	q.mu.Unlock()
	if len(batch) > 0 {
		signal(q.space)
	}
	return batch, ending
}

// end marks the queue as complete: the writer drains it and stops.
func (q *queue) end() {
	q.mu.Lock()
	q.ending = true
	q.mu.Unlock()
	signal(q.wake)
}

// close drops whatever is queued and refuses further pushes. It returns the
// number of events dropped.
func (q *queue) close() int {
	q.mu.Lock()
	n := q.events
	q.closed = true
	q.items, q.answers = nil, nil
	q.events, q.bytes = 0, 0
	q.answered.Store(false)
	q.mu.Unlock()
	signal(q.wake)
	signal(q.space)
	return n
}

// depth returns the number of queued events.
func (q *queue) depth() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.events
}
