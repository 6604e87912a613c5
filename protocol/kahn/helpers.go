package kahn

// Small helpers of the checkers (the JSON readers are in protocol/jsonval):
// clip for messages and labels, and the bounded memory fifo.

// clip shortens s for a message or label.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// fifo is a bounded map that forgets its oldest keys first.
type fifo[V any] struct {
	m    map[string]V
	ring []string
	next int
	max  int
}

func newFIFO[V any](max int) *fifo[V] { return &fifo[V]{m: map[string]V{}, max: max} }

func (f *fifo[V]) get(k string) (V, bool) {
	v, ok := f.m[k]
	return v, ok
}

func (f *fifo[V]) put(k string, v V) {
	if _, ok := f.m[k]; ok {
		f.m[k] = v
		return
	}
	if len(f.ring) < f.max {
		f.ring = append(f.ring, k)
	} else {
		delete(f.m, f.ring[f.next])
		f.ring[f.next] = k
		f.next = (f.next + 1) % f.max
	}
	f.m[k] = v
}
