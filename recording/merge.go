package recording

import "container/heap"

// Stream is one ordered input of a Merge.
type Stream interface {
	// Next advances to the stream's next item and returns its time (any
	// clock shared by the streams, such as nanoseconds since the Unix
	// epoch); ok is false at the end.
	Next() (at int64, ok bool, err error)
}

// Merge interleaves streams by time: each call to Next says which stream's
// current item comes next. Items of equal time come in stream order, and
// each stream's own order is kept even when its times go backwards.
type Merge struct {
	streams []Stream
	h       mergeHeap
	primed  bool
	cur     int // stream whose item was returned last, -1 before the first
}

// NewMerge returns a merge of streams.
func NewMerge(streams []Stream) *Merge { return &Merge{streams: streams, cur: -1} }

// Next advances the stream returned by the previous call and returns the
// stream (its position in the list) holding the next item and that item's
// time; ok is false when every stream has ended.
func (m *Merge) Next() (stream int, at int64, ok bool, err error) {
	if !m.primed {
		m.primed = true
		for i, s := range m.streams {
			at, ok, err := s.Next()
			if err != nil {
				return i, 0, false, err
			}
			if ok {
				m.h = append(m.h, mergeItem{at: at, i: i})
			}
		}
		heap.Init(&m.h)
	} else if m.cur >= 0 {
		at, ok, err := m.streams[m.cur].Next()
		if err != nil {
			return m.cur, 0, false, err
		}
		if ok {
			// A stream's items keep their order even if its clock steps back.
			m.h[0].at = max(at, m.h[0].at)
			heap.Fix(&m.h, 0)
		} else {
			heap.Pop(&m.h)
		}
	}
	if len(m.h) == 0 {
		m.cur = -1
		return -1, 0, false, nil
	}
	m.cur = m.h[0].i
	return m.cur, m.h[0].at, true, nil
}

type mergeItem struct {
	at int64
	i  int
}

type mergeHeap []mergeItem

func (h mergeHeap) Len() int { return len(h) }
func (h mergeHeap) Less(a, b int) bool {
	if h[a].at != h[b].at {
		return h[a].at < h[b].at
	}
	return h[a].i < h[b].i
}
func (h mergeHeap) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *mergeHeap) Push(x any)   { *h = append(*h, x.(mergeItem)) }
func (h *mergeHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}
