package recdiff

import (
	"slices"
	"sync"
)

// How sessions are matched (SessionDiff.MatchedBy).
const (
	MatchID    = "id"
	MatchOrder = "order"
	// MatchStart matches by what started a session: the first
	// request_text, else the first summary_normal (and, among sessions
	// that started alike, by order).
	MatchStart = "start"
)

// autoWindow is how many sessions each side starts before the matcher,
// when not told how to match, decides: by id when an id of these is on
// both sides, by what started them when none is. Until then the sessions
// that end wait, so memory holds at most this many more.
const autoWindow = 16

// aheadLimit is how much one side may hold in sessions waiting for their
// match (bytes, as session.size counts them) beyond the other side before
// it stops reading until the other catches up (or ends): the two sides are
// read at the same time, and one that runs ahead would otherwise keep what
// it read until the other gets there. It is large enough that a side
// descheduled for a while on a busy machine does not stop the other at
// once (64 sessions made the diff of a busy machine twice as slow).
var aheadLimit = 16 << 20

// testHookWaiting, when set, is told how many sessions wait (for their
// match or for the choice of how to match) each time one is left waiting;
// called with the matcher's lock held.
var testHookWaiting func(n int)

// mkey is a session's key for a way of matching.
type mkey struct {
	stream int
	kind   byte
	s      string
	n      int
}

// matcher pairs the sessions of the two sides as they end: each side's
// reader hands it its ended sessions, and a session waits only until its
// match has ended too.
type matcher struct {
	mu sync.Mutex
	// moved is broadcast whenever what a side holds or whether it has
	// finished changes (a side that is ahead waits on it, and must see
	// the other side get ahead in turn: both never wait at once).
	moved *sync.Cond
	// by is how sessions are matched: MatchID, MatchOrder, MatchStart or
	// a member's name; "" while the automatic choice is not made.
	by, field string
	auto      bool

	seen     [2]map[string]bool
	starts   [2]int
	finished [2]bool
	pending  [2][]*session
	waiting  [2]map[mkey]*session
	// held is the size of each side's waiting and pending sessions.
	held [2]int

	// left are the sessions of each side with no match, once both sides
	// are finished.
	left [2][]*session

	pair func(a, b *session, by string)
}

func newMatcher(match string, pair func(a, b *session, by string)) *matcher {
	m := &matcher{pair: pair}
	m.moved = sync.NewCond(&m.mu)
	switch match {
	case "", "auto":
		m.auto = true
		m.seen = [2]map[string]bool{{}, {}}
	case MatchID, MatchOrder, MatchStart:
		m.by = match
	default:
		m.by, m.field = match, match
	}
	m.waiting = [2]map[mkey]*session{{}, {}}
	return m
}

// started notes that side started s (the automatic choice looks at ids).
func (m *matcher) started(side int, s *session) {
	if s.pseudo {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.auto || m.by != "" {
		return
	}
	m.starts[side]++
	if m.starts[side] <= autoWindow {
		m.seen[side][s.ref.Session] = true
		if m.seen[1-side][s.ref.Session] {
			m.decide(MatchID)
			return
		}
	}
	m.maybeDecide()
}

// maybeDecide chooses to match by what started the sessions once both
// sides have started enough (or all of theirs) with no id in common.
func (m *matcher) maybeDecide() {
	if m.by != "" {
		return
	}
	for side := range 2 {
		if m.starts[side] < autoWindow && !m.finished[side] {
			return
		}
	}
	m.decide(MatchStart)
}

// decide sets how to match and matches the sessions that waited for it.
// Called with m.mu held.
func (m *matcher) decide(by string) {
	m.by, m.seen = by, [2]map[string]bool{}
	defer m.moved.Broadcast()
	for side := range 2 {
		p := m.pending[side]
		m.pending[side] = nil
		for _, s := range p {
			m.held[side] -= s.size()
			if a, b, by := m.place(side, s); a != nil {
				m.pair(a, b, by) // under m.mu: only while deciding
			}
		}
	}
}

// key is s's key in the way of matching chosen.
func (m *matcher) key(s *session, by string) mkey {
	k := mkey{stream: s.ref.streamOrd}
	switch {
	case s.pseudo:
		k.kind, k.n = 'p', s.occ
	case by == MatchID:
		k.kind, k.s, k.n = 'i', s.ref.Session, s.occ
	case by == MatchOrder:
		k.kind, k.n = 'o', s.order
	case by == MatchStart && s.hasText:
		k.kind, k.s, k.n = 's', s.text, s.textOcc
	case by == MatchStart:
		k.kind, k.n = 'o', s.order
	case s.hasField:
		k.kind, k.s, k.n = 'f', s.field, s.fieldOcc
	default:
		k.kind, k.n = 'o', s.order
	}
	return k
}

// ended takes a session side has finished: it is paired with its match
// if that has ended, and waits for it otherwise.
func (m *matcher) ended(side int, s *session) {
	m.mu.Lock()
	if m.by == "" {
		m.pending[side] = append(m.pending[side], s)
		m.held[side] += s.size()
		m.moved.Broadcast() // the other side may no longer be ahead
		if testHookWaiting != nil {
			testHookWaiting(len(m.waiting[0]) + len(m.waiting[1]) + len(m.pending[0]) + len(m.pending[1]))
		}
		for m.ahead(side) {
			m.moved.Wait()
		}
		m.mu.Unlock()
		return
	}
	a, b, by := m.place(side, s)
	if a != nil {
		m.moved.Broadcast()
	}
	for m.ahead(side) {
		m.moved.Wait()
	}
	m.mu.Unlock()
	if a != nil {
		m.pair(a, b, by)
	}
}

// ahead reports whether side should wait for the other to catch up: it
// holds more than aheadLimit in waiting sessions, more than the other
// side, which is still reading. (Both sides cannot be ahead at once, so
// they never both wait.)
func (m *matcher) ahead(side int) bool {
	n := m.held[side]
	return n > aheadLimit && n > m.held[1-side] && !m.finished[1-side]
}

// place pairs s with the session waiting on the other side under its key,
// or leaves it waiting. Called with m.mu held; returns the pair (nil when
// s waits).
func (m *matcher) place(side int, s *session) (a, b *session, by string) {
	k := m.key(s, m.by)
	other := m.waiting[1-side]
	o, ok := other[k]
	if !ok {
		m.waiting[side][k] = s
		m.held[side] += s.size()
		m.moved.Broadcast() // the other side may no longer be ahead
		if testHookWaiting != nil {
			testHookWaiting(len(m.waiting[0]) + len(m.waiting[1]) + len(m.pending[0]) + len(m.pending[1]))
		}
		return nil, nil, ""
	}
	delete(other, k)
	m.held[1-side] -= o.size()
	a, b = s, o
	if side == 1 {
		a, b = o, s
	}
	by = m.by
	if s.pseudo {
		by = "stream"
	}
	return a, b, by
}

// finish notes that side has read everything. Once both have, the
// sessions still waiting are matched by what started them (when matching
// by id was the automatic choice) and the rest are left, unmatched, in
// m.left.
func (m *matcher) finish(side int) {
	m.mu.Lock()
	m.finished[side] = true
	m.moved.Broadcast()
	if m.auto {
		m.maybeDecide()
	}
	if !m.finished[1-side] {
		m.mu.Unlock()
		return
	}
	if m.by == "" {
		m.decide(MatchStart)
	}
	left := [2][]*session{}
	for side := range 2 {
		for _, s := range m.waiting[side] {
			left[side] = append(left[side], s)
		}
		m.waiting[side] = nil
		sortSessions(left[side])
	}
	m.mu.Unlock()
	if m.auto && m.by == MatchID {
		// Sessions whose ids are on one side only: by what started them.
		left = m.pairLeft(left, MatchStart, func(s *session, _ int) (mkey, bool) {
			return m.key(s, MatchStart), s.hasText
		})
	}
	if m.auto {
		// What is left, in each stream: by order (a session whose request
		// changed is still the one it was).
		left = m.pairLeft(left, MatchOrder, func(s *session, i int) (mkey, bool) {
			return mkey{stream: s.ref.streamOrd, kind: 'l', n: i}, true
		})
	}
	m.left = left
}

// pairLeft pairs the sessions left on the two sides (each in its side's
// order) by the key key gives (ok false: no key), i being the session's
// position among those left in its stream; it returns those still left.
func (m *matcher) pairLeft(left [2][]*session, by string, key func(s *session, i int) (mkey, bool)) [2][]*session {
	type keyed struct {
		s *session
		k mkey
	}
	var order []keyed // A's sessions with a key, in A's order
	keys := [2]map[mkey]*session{{}, {}}
	for side := range 2 {
		n := map[int]int{}
		for _, s := range left[side] {
			if s.pseudo {
				continue
			}
			i := n[s.ref.streamOrd]
			n[s.ref.streamOrd]++
			k, ok := key(s, i)
			if _, dup := keys[side][k]; !ok || dup {
				continue
			}
			keys[side][k] = s
			if side == 0 {
				order = append(order, keyed{s, k})
			}
		}
	}
	paired := map[*session]bool{}
	for _, a := range order {
		if b, ok := keys[1][a.k]; ok {
			paired[a.s], paired[b] = true, true
			m.pair(a.s, b, by)
		}
	}
	var out [2][]*session
	for side := range 2 {
		for _, s := range left[side] {
			if !paired[s] {
				out[side] = append(out[side], s)
			}
		}
	}
	return out
}

// sortSessions sorts sessions in the order their side started them.
func sortSessions(ss []*session) {
	slices.SortFunc(ss, func(a, b *session) int { return a.ref.Order - b.ref.Order })
}
