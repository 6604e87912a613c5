package protocol

// Recent is a map that holds at most a fixed number of keys and forgets the
// oldest first: the memory a checker keeps of closed sessions, message IDs or
// hashes, bounded whatever the length of the stream.
type Recent[V any] struct {
	m    map[string]V
	ring []string
	next int
	max  int
}

// NewRecent returns an empty map that remembers at most limit keys (at least one).
func NewRecent[V any](limit int) *Recent[V] {
	return &Recent[V]{m: map[string]V{}, max: max(limit, 1)}
}

// Get returns the value of k and whether k is remembered.
func (r *Recent[V]) Get(k string) (V, bool) {
	v, ok := r.m[k]
	return v, ok
}

// Put sets the value of k. A new key pushes out the oldest one when the map
// is full; setting a remembered key again does not make it younger.
func (r *Recent[V]) Put(k string, v V) {
	if _, ok := r.m[k]; ok {
		r.m[k] = v
		return
	}
	if len(r.ring) < r.max {
		r.ring = append(r.ring, k)
	} else {
		delete(r.m, r.ring[r.next])
		r.ring[r.next] = k
		r.next = (r.next + 1) % r.max
	}
	r.m[k] = v
}

// Len is the number of keys remembered.
func (r *Recent[V]) Len() int { return len(r.m) }

// Clip shortens s to at most n bytes, cut at a character boundary and
// marked with "…", for quoting input in messages and labels.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
