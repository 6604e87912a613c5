package protocol

// Sessions is a checker's table of open sessions, keyed by session ID, that
// keeps memory bounded by the number of sessions open at once: a closed
// session's state is dropped and only its ID is remembered, in a bounded
// first-in first-out list of recently closed IDs, so that a late message for
// a closed session (or a reused ID) can still be recognised.
type Sessions[S any] struct {
	open      map[string]*S
	closed    map[string]struct{}
	ring      []string
	next      int
	maxClosed int
}

// DefaultClosedMemory is how many closed session IDs a Sessions table remembers.
const DefaultClosedMemory = 65536

// NewSessions returns an empty table that remembers up to maxClosed closed
// session IDs (DefaultClosedMemory when maxClosed <= 0).
func NewSessions[S any](maxClosed int) *Sessions[S] {
	if maxClosed <= 0 {
		maxClosed = DefaultClosedMemory
	}
	return &Sessions[S]{open: map[string]*S{}, closed: map[string]struct{}{}, maxClosed: maxClosed}
}

// Get returns the open session id, or nil.
func (t *Sessions[S]) Get(id string) *S { return t.open[id] }

// Open adds a new open session id with state s (replacing any open one) and
// forgets that id was ever closed.
func (t *Sessions[S]) Open(id string, s *S) {
	delete(t.closed, id)
	t.open[id] = s
}

// Close drops the state of session id and remembers that it was closed.
func (t *Sessions[S]) Close(id string) {
	delete(t.open, id)
	if _, ok := t.closed[id]; ok {
		return
	}
	if len(t.ring) < t.maxClosed {
		t.ring = append(t.ring, id)
	} else {
		delete(t.closed, t.ring[t.next])
		t.ring[t.next] = id
		t.next = (t.next + 1) % t.maxClosed
	}
	t.closed[id] = struct{}{}
}

// WasClosed reports whether id was closed recently (within the remembered window).
func (t *Sessions[S]) WasClosed(id string) bool {
	_, ok := t.closed[id]
	return ok
}

// Len is the number of open sessions.
func (t *Sessions[S]) Len() int { return len(t.open) }

// Each calls fn for every open session in no particular order; use Keys
// for a deterministic order.
func (t *Sessions[S]) Each(fn func(id string, s *S)) {
	for id, s := range t.open {
		fn(id, s)
	}
}

// Keys returns the IDs of the open sessions, sorted.
func (t *Sessions[S]) Keys() []string {
	keys := make([]string, 0, len(t.open))
	for id := range t.open {
		keys = append(keys, id)
	}
	sortStrings(keys)
	return keys
}
