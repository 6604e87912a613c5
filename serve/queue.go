package serve

import (
	"context"
	"errors"
	"sync"
)

// errQueueClosed is returned by push on a closed queue.
var errQueueClosed = errors.New("queue closed")

// queue is a subscriber's bounded outbox. The feeder pushes events; the
// writer takes everything queued at once, so that one wake-up and one flush
// serve a whole batch. Control messages (handshake answers) do not count
// against the bound.
type queue struct {
	mu     sync.Mutex
	items  []*event
	events int // events (not control messages) in items
	bytes  int // payload bytes of those events
	limit  int // most events queued
	max    int // most payload bytes queued (one event may exceed it alone)
	closed bool
	ending bool // no more pushes; the writer ends after draining

	wake  chan struct{} // signalled when items become available or ending
	space chan struct{} // signalled when the writer frees room
}

func newQueue(limit, maxBytes int) *queue {
	return &queue{limit: limit, max: maxBytes, wake: make(chan struct{}, 1), space: make(chan struct{}, 1)}
}

// fits reports whether ev may be added now. q.mu must be held.
func (q *queue) fits(ev *event) bool {
	if ev.Control || q.events == 0 {
		return true
	}
	return q.events < q.limit && q.bytes+len(ev.Payload) <= q.max
}

// add appends ev. q.mu must be held.
func (q *queue) add(ev *event) {
	q.items = append(q.items, ev)
	if !ev.Control {
		q.events++
		q.bytes += len(ev.Payload)
	}
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

// take returns everything queued, handing spare (emptied) to the queue for
// the next batch. It returns ending=true once the queue is ending (or
// closed) and empty.
func (q *queue) take(spare []*event) (batch []*event, ending bool) {
	q.mu.Lock()
	batch = q.items
	q.items = spare[:0]
	q.events, q.bytes = 0, 0
	ending = len(batch) == 0 && (q.ending || q.closed)
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
	q.items = nil
	q.events, q.bytes = 0, 0
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
