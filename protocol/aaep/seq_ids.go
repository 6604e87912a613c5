package aaep

// Identity, time and numbering: SEQ-EVENT-ID-UNIQUE (and its companion
// SEQ-EVENT-ID-REDELIVERED), SEQ-TIMESTAMP-ORDER, SEQ-TIMESTAMP-NOT-FUTURE,
// SEQ-SEQNO-*, SEQ-DELIVERY-ORDER.
//
// event_id memory: every event_id is remembered per source (one producer
// emission stream per subscription, §9.5.2(6)) in one table keyed by
// (source, event_id) whose entries belong to open sessions: each session
// holds at most maxIDsPerSession of them (past that it forgets them all and
// starts again), and they go stale when it closes; stale entries are swept
// once they outnumber the live ones, so the table stays within about twice
// the ids of the open sessions. So a repeated id is found when it repeats within the same open
// session, and across sessions when the first session is still open on the
// same source; an id that reappears after its session closed is not
// detected. The same id on two different sources is the same event
// delivered to two subscriptions (its shape may differ, §5.9) and is legal.

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math/bits"
	"strconv"
	"time"

	"github.com/aaep-tools/aaepkit/protocol"
)

// idKey identifies an event_id on a source: key is a 64-bit hash of both,
// the key of the id tables, and check a second, independent hash of the
// id that tells the (vanishingly rare) collision of two keys apart, so no
// table keeps the id itself (no copy of it is made for every event).
type idKey struct{ key, check uint64 }

// keyOf returns the idKey of event_id id on source.
func keyOf(source int, id string) idKey {
	return idKey{
		key:   mix64(maphash.String(hashSeed, id) + uint64(source)*0x9e3779b97f4a7c15),
		check: maphash.String(checkSeed, id),
	}
}

// idKey returns the idKey of the message being checked (m, whose Event is
// ev), computed once per message.
func (s *seqChecker) idKey(m *protocol.Message, ev *Event) idKey {
	if !s.memo.keyed {
		s.memo.key, s.memo.keyed = keyOf(m.Source, ev.EventID), true
	}
	return s.memo.key
}

type idRec struct {
	sess  *session
	gen   uint32
	check uint64 // idKey.check
	hash  uint64
	at    ref
}

// lookupID finds k in the event_id table.
func (s *seqChecker) lookupID(k idKey) (idRec, bool) {
	rec, ok := s.ids[k.key]
	return rec, ok && rec.check == k.check
}

// live reports whether rec belongs to an open session's current ids.
func (s *seqChecker) live(rec idRec) bool { return !rec.sess.dead && rec.gen == rec.sess.idGen }

// idSweepSlack is how many stale event_id entries may pile up beyond twice
// the live ones before they are swept (a variable for tests).
var idSweepSlack = 4096

type idResult uint8

const (
	idNew         idResult = iota
	idRedelivered          // identical repeat on the same channel: ignore
	idCopy                 // already handled from a former primary source
)

var hashSeed, checkSeed = maphash.MakeSeed(), maphash.MakeSeed()

// contentHash hashes an event's top-level members independently of their
// order, so a re-serialised redelivery with reordered keys or other spacing
// between members still counts as identical. Values are compared as
// recorded. (Not a defence against crafted collisions: it only decides
// whether a repeated event_id is a redelivery.)
func contentHash(ev *Event) uint64 {
	var sum uint64
	for w, set := range ev.present {
		for ; set != 0; set &= set - 1 {
			k := w*64 + bits.TrailingZeros64(set)
			sum += mix64(bytesHash(ev.vals[k], uint64(k+1)*0x9e3779b97f4a7c15))
		}
	}
	for i, name := range ev.unknown {
		sum += mix64(bytesHash(ev.unknownVals[i], maphash.String(hashSeed, name)))
	}
	return sum
}

// bytesHash is a fast 64-bit hash of b, eight bytes at a time.
func bytesHash(b []byte, seed uint64) uint64 {
	const prime = 0x9e3779b97f4a7c15
	n := len(b)
	h := seed ^ uint64(n)*prime
	if n < 8 {
		var tail uint64
		for i, c := range b {
			tail |= uint64(c) << (8 * i)
		}
		return (h ^ tail) * prime
	}
	for i := 0; i+8 < n; i += 8 {
		h = (h ^ binary.LittleEndian.Uint64(b[i:])) * prime
		h ^= h >> 29
	}
	return (h ^ binary.LittleEndian.Uint64(b[n-8:])) * prime
}

// mix64 is the splitmix64 finalizer.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// messageMemo keeps what redelivery and the session rules both need of
// the message being checked: its idKey and content hash, each worked out
// once (or taken from the message's preparation).
type messageMemo struct {
	key           idKey
	hash          uint64
	keyed, hashed bool
}

// newMessage forgets the memo of the previous message; call it before the
// sequence checks of every message.
func (s *seqChecker) newMessage() { s.memo = messageMemo{} }

// prepared takes the idKey and content hash of the message being checked
// from its preparation.
func (s *seqChecker) prepared(k idKey, h uint64) {
	s.memo = messageMemo{key: k, hash: h, keyed: true, hashed: true}
}

// contentHash returns contentHash(ev) for the message being checked,
// whose Event is ev, computed once per message.
func (s *seqChecker) contentHash(ev *Event) uint64 {
	if !s.memo.hashed {
		s.memo.hash, s.memo.hashed = contentHash(ev), true
	}
	return s.memo.hash
}

func (s *seqChecker) checkEventID(ss *session, m *protocol.Message, ev *Event, primary bool) idResult {
	if ev.EventID == "" {
		return idNew
	}
	k := s.idKey(m, ev)
	h := s.contentHash(ev)
	old, found := s.lookupID(k)
	if found && s.live(old) {
		if !s.idReported {
			s.repeatedID(ss, m, ev, old, h)
		}
		if old.hash == h {
			return idRedelivered
		}
	}
	res := idNew
	if primary && !found {
		for _, f := range ss.former {
			if rec, ok := s.lookupID(keyOf(f, ev.EventID)); ok && rec.sess == ss && s.live(rec) {
				res = idCopy
			}
		}
	}
	s.store(ss, k, old, found, h, m)
	return res
}

// repeatedID reports an event_id already seen on the same channel.
func (s *seqChecker) repeatedID(ss *session, m *protocol.Message, ev *Event, rec idRec, h uint64) {
	if rec.hash == h {
		s.report(seqEventIDRedelivered, ss.id, m, "duplicate delivery",
			"event %s arrives again on the same channel with identical content (first at message %d); this is at-least-once redelivery (§8), so it is ignored",
			ev.EventID, rec.at.related())
		return
	}
	where := ""
	if rec.sess != ss {
		where = " in session " + rec.sess.id
	}
	s.report(seqEventIDUnique, ss.id, m, "event_id reused",
		"event_id %s was already used on this channel by a different event (message %d%s); two different events of one producer stream must never share an event_id",
		ev.EventID, rec.at.related(), where)
}

// rememberID records an event's id without checking it.
func (s *seqChecker) rememberID(ss *session, m *protocol.Message, ev *Event) {
	if ev.EventID != "" {
		k := s.idKey(m, ev)
		old, found := s.lookupID(k)
		s.store(ss, k, old, found, s.contentHash(ev), m)
	}
}

// store records key k for session ss, replacing old (found in the table).
// An entry of another id under the same key (a collision of the 64-bit
// keys) is replaced too: that id is forgotten early.
func (s *seqChecker) store(ss *session, k idKey, old idRec, found bool, h uint64, m *protocol.Message) {
	if !found {
		old, found = s.ids[k.key]
	}
	if found && s.live(old) {
		old.sess.idCount-- // replaced below
		s.liveIDs--
	}
	if ss.idCount >= maxIDsPerSession {
		ss.idGen++ // forget this session's ids; the sweep drops them
		s.liveIDs -= ss.idCount
		ss.idCount = 0
	}
	s.ids[k.key] = idRec{sess: ss, gen: ss.idGen, check: k.check, hash: h, at: refOf(m)}
	ss.idCount++
	s.liveIDs++
	if len(s.ids) > 2*s.liveIDs+idSweepSlack {
		for k, rec := range s.ids {
			if !s.live(rec) {
				delete(s.ids, k)
			}
		}
	}
}

// checkSeqNo applies the sequence_number rules to one channel of a session.
func (s *seqChecker) checkSeqNo(ss *session, lg *leg, m *protocol.Message, ev *Event) {
	if ev.vals[kSeqNo] != nil && !ev.HasSeqNo {
		return // not an integer: ENV-SEQNO-TYPE reports it
	}
	mode := uint8(2)
	if ev.HasSeqNo {
		mode = 1
	}
	if lg.seqMode == 0 {
		lg.seqMode = mode
		if mode == 1 {
			if ev.Core == TypeSessionStarted && ev.SeqNo != 0 {
				s.report(seqSeqnoZero, ss.id, m, "sequence_number ≠ 0",
					"session.started of %s has sequence_number %d; when sequence numbers are used, session.started carries 0", ss.id, ev.SeqNo)
			}
			lg.seqNext = ev.SeqNo + 1
		}
		return
	}
	if mode != lg.seqMode {
		if lg.seqMode != 3 {
			have, lack := "has", "the earlier events of the session have none"
			if mode == 2 {
				have, lack = "has no", "the earlier events of the session have one"
			}
			s.report(seqSeqnoAllOrNone, ss.id, m, "sequence_number on some events only",
				"this %s %s sequence_number but %s; sequence_number must appear on every event of a session or on none (later mismatches in this session are not repeated)",
				shortType(ev), have, lack)
			if lg.seqMode == 1 {
				lg.seqMode = 3 // numbered, mismatch reported: keep checking the numbers
			} else {
				lg.seqMode = 4 // unnumbered, mismatch reported
			}
		}
		if mode == 2 && (lg.seqMode == 1 || lg.seqMode == 3) {
			lg.seqNext++ // the unnumbered event takes its place in the numbering
		}
		if mode == 2 || lg.seqMode == 4 {
			return
		}
	}
	if mode == 2 {
		return
	}
	n := ev.SeqNo
	switch {
	case n == lg.seqNext:
		lg.seqNext++
	case n > lg.seqNext:
		s.gaps++
		if !s.neg.gapsExpected(m.Source) {
			lg.seqGaps = append(lg.seqGaps, seqGap{lg.seqNext, n})
			lg.seqGapAt = append(lg.seqGapAt, refOf(m))
			if len(lg.seqGaps) > maxGaps {
				s.reportGap(ss, lg.seqGaps[0], lg.seqGapAt[0])
				lg.seqGaps, lg.seqGapAt = lg.seqGaps[1:], lg.seqGapAt[1:]
			}
		}
		lg.seqNext = n + 1
	default:
		if s.fillGap(lg, n) || s.neg.gapsExpected(m.Source) {
			s.report(seqDeliveryOrder, ss.id, m, "arrived out of order",
				"event %d of session %s arrives after event %d; the transport must deliver a session's events in emission order", n, ss.id, lg.seqNext-1)
			return
		}
		s.report(seqSeqnoIncrement, ss.id, m, "sequence_number repeated",
			"sequence_number %d is used again (the last one was %d) by a different event; each event carries the previous number plus one", n, lg.seqNext-1)
	}
}

// fillGap removes n from the channel's open gaps; it reports whether n was missing.
func (s *seqChecker) fillGap(lg *leg, n int64) bool {
	for i, g := range lg.seqGaps {
		if n < g.from || n >= g.to {
			continue
		}
		switch {
		case g.to-g.from == 1:
			lg.seqGaps = append(lg.seqGaps[:i], lg.seqGaps[i+1:]...)
			lg.seqGapAt = append(lg.seqGapAt[:i], lg.seqGapAt[i+1:]...)
		case n == g.from:
			lg.seqGaps[i].from++
		case n == g.to-1:
			lg.seqGaps[i].to--
		default:
			at := lg.seqGapAt[i]
			lg.seqGaps[i].to = n
			lg.seqGaps = append(lg.seqGaps[:i+1], append([]seqGap{{n + 1, g.to}}, lg.seqGaps[i+1:]...)...)
			lg.seqGapAt = append(lg.seqGapAt[:i+1], append([]ref{at}, lg.seqGapAt[i+1:]...)...)
		}
		return true
	}
	return false
}

// flushGaps reports the gaps still open at the end of a session.
func (s *seqChecker) flushGaps(ss *session, lg *leg) {
	for i, g := range lg.seqGaps {
		s.reportGap(ss, g, lg.seqGapAt[i])
	}
	lg.seqGaps, lg.seqGapAt = nil, nil
}

func (s *seqChecker) reportGap(ss *session, g seqGap, at ref) {
	missing := "number " + itoa(g.from)
	if g.to-g.from > 1 {
		missing = "numbers " + itoa(g.from) + " to " + itoa(g.to-1)
	}
	s.report(seqSeqnoIncrement, ss.id, at.msg(), "sequence_number gap",
		"session %s skips sequence %s (never received); each event carries the previous number plus one, with no gaps", ss.id, missing)
}

// checkTime applies SEQ-TIMESTAMP-ORDER, SEQ-TIMESTAMP-NOT-FUTURE and
// SEQ-TIMESTAMP-BACKDATED.
//
// Order is checked per producer (the producer object as recorded): in a
// multi-agent session (A.9 pattern 1) each agent's clock is compared with
// itself only, since different producers' clocks may differ.
func (s *seqChecker) checkTime(ss *session, m *protocol.Message, ev *Event) {
	if !ev.TimeOK {
		return
	}
	var ph uint64 // 0 stands for the session's first producer object
	if p := ev.vals[kProducer]; len(ss.clocks) == 0 {
		ss.producer0 = string(p)
	} else if string(p) != ss.producer0 {
		ph = maphash.Bytes(hashSeed, p) | 1
	}
	found := false
	for i := range ss.clocks {
		c := &ss.clocks[i]
		if c.hash != ph {
			continue
		}
		found = true
		if ev.Time.Before(c.last) {
			s.report(seqTimestampOrder, ss.id, m, "timestamp goes back",
				"this %s is stamped %s, %s before an earlier event of the same session (%s); timestamps must not decrease within a session",
				shortType(ev), ev.Timestamp, timeBetween(ev.Time, c.last), c.last.Format("2006-01-02T15:04:05.000Z07:00"))
		} else {
			c.last = ev.Time
		}
	}
	if !found && len(ss.clocks) < 16 {
		ss.clocks = append(ss.clocks, producerClock{hash: ph, last: ev.Time})
	}
	if m.Received.IsZero() || s.replay[m.Source] {
		// A replay re-emits old events now: their timestamps are the
		// original producer's, not to be compared with the replay's clock.
		return
	}
	d := ev.Time.Sub(m.Received)
	switch {
	case d > futureSkew && !ss.reportedFuture:
		ss.reportedFuture = true
		s.report(seqTimestampNotFuture, ss.id, m, "future timestamp",
			"this %s is stamped %s, %s after it was received; events must not be future-dated (allowance %s; reported once per session)",
			shortType(ev), ev.Timestamp, d.Round(1e6), futureSkew)
	case d < -backdateLimit && !ss.reportedBackdated:
		ss.reportedBackdated = true
		s.report(seqTimestampBackdated, ss.id, m, "backdated timestamp",
			"this %s is stamped %s, %s before it was received; events should not be backdated, so a delay over %s is suspect, unless the recording replays old events (reported once per session)",
			shortType(ev), ev.Timestamp, (-d).Round(1e6), backdateLimit)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// timeBetween says how far a is before b: a duration, or in years when
// the gap is longer than a duration can hold (time.Time.Sub would clamp it
// to 2562047h47m16.854775807s).
func timeBetween(a, b time.Time) string {
	if d := b.Sub(a); a.Add(d).Equal(b) {
		return d.String()
	}
	return fmt.Sprintf("about %d years", b.Year()-a.Year())
}
