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
	items  []*Event
	events int // events (not control messages) in items
	limit  int
	closed bool
	ending bool // no more pushes; the writer ends after draining

	wake  chan struct{} // signalled when items become available or ending
	space chan struct{} // signalled when the writer frees room
}

func newQueue(limit int) *queue {
	return &queue{limit: limit, wake: make(chan struct{}, 1), space: make(chan struct{}, 1)}
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// tryPush adds ev unless the queue is full or closed.
func (q *queue) tryPush(ev *Event) (ok bool) {
	q.mu.Lock()
	if q.closed || q.ending || (!ev.Control && q.events >= q.limit) {
		q.mu.Unlock()
		return false
	}
	q.items = append(q.items, ev)
	if !ev.Control {
		q.events++
	}
	q.mu.Unlock()
	signal(q.wake)
	return true
}

// push adds ev, waiting for room until ctx ends or the queue closes.
func (q *queue) push(ctx context.Context, ev *Event) error {
	for {
		q.mu.Lock()
		if q.closed || q.ending {
			q.mu.Unlock()
			return errQueueClosed
		}
		if ev.Control || q.events < q.limit {
			q.items = append(q.items, ev)
			if !ev.Control {
				q.events++
			}
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
func (q *queue) take(spare []*Event) (batch []*Event, ending bool) {
	q.mu.Lock()
	batch = q.items
	q.items = spare[:0]
	q.events = 0
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
	q.events = 0
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
