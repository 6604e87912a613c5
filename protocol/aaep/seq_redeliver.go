package aaep

// Redelivery (SEQ-EVENT-ID-REDELIVERED, INFO): §8.2.4 allows a producer to
// deliver an event more than once and tells subscribers to de-duplicate by
// event_id. Real producers do: the TypeScript reference producer re-sends
// its last 1000 events to every new connection, so a recorder that
// reconnects records them twice. An event whose event_id was already seen
// on the same source with the same content (the same members, in any order: a relay may re-serialise) is such a redelivery: it is
// counted and judged no further (no envelope, payload or sequence rule sees
// it again, so no finding is counted twice and a re-sent session.started is
// not SEQ-SESSION-ID-REUSE). The count is reported once per connection of
// the source: after a recorded reconnect the finding says which reconnect
// re-sent how many events. The same event_id with different bytes on the
// same source stays SEQ-EVENT-ID-UNIQUE (MUST), whether or not its first
// session is still open.
//
// Memory: the ids are remembered independently of sessions (a producer
// re-sends events of sessions that ended long ago), the most recent
// maxRedeliveryIDs of them across all sources; the oldest are forgotten
// first. That is 32 times what the reference producer re-sends.

import (
	"slices"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/protocol"
)

// maxRedeliveryIDs bounds the event_ids remembered for redelivery.
const maxRedeliveryIDs = 1 << 15

// redeliveries detects identical repeats of events per source.
type redeliveries struct {
	// seen maps the idKey.key of (source, event_id) to the id's check hash
	// and its content hash. A fixed-size key keeps the lookups of every
	// event cheap; the check tells the (vanishingly rare) collision of two
	// ids apart, in which case the older one is forgotten early.
	seen  map[uint64]seenID
	order []uint64 // the keys of seen, in a ring, oldest at next
	next  int
	srcs  map[int]*sourceConns
}

// seenID is an event_id remembered for redelivery.
type seenID struct {
	check   uint64 // idKey.check
	content uint64 // contentHash
}

// sourceConns is what a source's connection records said, and the
// redeliveries counted on its current connection.
type sourceConns struct {
	connects  int // "connected" records so far
	reconnect ref // the latest "connected" record after the first
	n         int // redelivered events on the current connection
	first     ref
	firstID   string
	lastID    string
}

func (r *redeliveries) source(src int) *sourceConns {
	if r.srcs == nil {
		r.srcs = map[int]*sourceConns{}
	}
	sc := r.srcs[src]
	if sc == nil {
		sc = &sourceConns{}
		r.srcs[src] = sc
	}
	return sc
}

// redelivery checks an event against the ids seen on its source. It
// returns true for an identical repeat (to be judged no further), and
// reports SEQ-EVENT-ID-UNIQUE for a different event under a known id,
// setting s.idReported so that the session rules do not report it again.
func (s *seqChecker) redelivery(m *protocol.Message, ev *Event) bool {
	s.idReported = false
	if !ev.IsEvent || ev.EventID == "" {
		return false
	}
	r := &s.redeliver
	if r.seen == nil {
		r.seen = make(map[uint64]seenID, 1024)
	}
	key := s.idKey(m, ev)
	k := key.key
	h := s.contentHash(ev)
	old, found := r.seen[k]
	found = found && old.check == key.check
	switch {
	case found && old.content == h:
		sc := r.source(m.Source)
		if sc.n == 0 {
			sc.first, sc.firstID = refOf(m), ev.EventID
		}
		sc.n++
		sc.lastID = ev.EventID
		return true
	case found:
		session := ev.SessionID
		s.report(seqEventIDUnique, session, m, "event_id reused",
			"event_id %s was already used on this channel by a different event (the content differs); two different events of one producer stream must never share an event_id (§3.2.3)", ev.EventID)
		s.idReported = true
		r.seen[k] = seenID{check: key.check, content: h}
		return false
	}
	if len(r.order) < maxRedeliveryIDs {
		r.order = append(r.order, k)
	} else {
		delete(r.seen, r.order[r.next])
		r.order[r.next] = k
		r.next = (r.next + 1) % len(r.order)
	}
	r.seen[k] = seenID{check: key.check, content: h}
	return false
}

// connection takes a capture's connection record.
func (s *seqChecker) connection(c *protocol.Conn) {
	s.flushHolds() // a late event does not cross a connection's change (seq_order.go)
	if c.Event != capfile.ConnConnected {
		if c.Event != capfile.ConnClosed {
			s.gaps++ // disconnected, refused, failed: something may be missing
		}
		return
	}
	sc := s.redeliver.source(c.Source)
	s.flushRedelivered(c.Source, sc)
	sc.connects++
	if sc.connects > 1 {
		s.gaps++
		sc.reconnect = ref{index: c.Index, offset: c.Offset}
	}
}

// flushRedelivered reports the redeliveries counted on a source's
// connection, once.
func (s *seqChecker) flushRedelivered(src int, sc *sourceConns) {
	if sc.n == 0 {
		return
	}
	span := sc.firstID
	if sc.n > 1 {
		span += " … " + sc.lastID
	}
	events := plural(sc.n, "event", "events")
	key := s.neg.key(src)
	s.neg.sub(src)
	if sc.connects > 1 {
		s.report(seqEventIDRedelivered, key, sc.first.msg(), "redelivered after reconnect",
			"after reconnect %d of source %d (record %d) the producer re-sent %s it had already delivered on this source (%s), identical; this is at-least-once redelivery (§8.2.4), so they are not judged again",
			sc.connects-1, src, sc.reconnect.related(), events, span)
	} else {
		s.report(seqEventIDRedelivered, key, sc.first.msg(), "redelivered",
			"source %d delivered %s a second time, identical, without a recorded reconnect (%s); this is at-least-once redelivery (§8.2.4), so they are not judged again",
			src, events, span)
	}
	sc.n = 0
}

// finishRedelivered reports what is still counted at the end of the stream.
func (s *seqChecker) finishRedelivered() {
	srcs := make([]int, 0, len(s.redeliver.srcs))
	for src := range s.redeliver.srcs {
		srcs = append(srcs, src)
	}
	slices.Sort(srcs)
	for _, src := range srcs {
		s.flushRedelivered(src, s.redeliver.srcs[src])
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return itoa(int64(n)) + " " + many
}
