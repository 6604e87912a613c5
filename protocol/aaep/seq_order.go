package aaep

// Delivery order is not emission order (SEQ-DELIVERY-ORDER).
//
// §8 makes the transport deliver a session's events in emission order, and
// §3.4.1 makes sequence_number, where present, the authoritative emission
// order. A recording may still hold a session's events out of order: a
// relay that reordered them, or a recording merged from pieces. Judged in
// the order they arrived, the producer, which emitted in order, would be
// blamed for what the transport did: a tool.completed before its
// tool.invoked, a state change before the tool completes, a timestamp
// going backwards.
//
// So the checker judges a session in emission order where the numbers
// show it. When an event of the session's primary source arrives with a
// number beyond the next one expected (a gap opens, on a subscription
// that neither filters nor rate-limits, where gaps are not expected), the
// checker holds that event back, and the session's later events and the
// replies to its prompts with it, up to maxHeld messages (and maxHeldAll
// for all sessions together). When the missing
// event arrives, delivery order is reported at it (SEQ-DELIVERY-ORDER,
// whose message says the session is judged in emission order), it is
// judged, and then the held messages are, their events in sequence_number
// order (replies keep their places among them). When the missing event
// never comes (lost, not late: the held messages reach maxHeld, a
// connection comes or goes, or the stream ends), the held messages are
// judged in sequence_number order as well, and the gap is
// SEQ-SEQNO-INCREMENT's, as before. Single-message rules, event ids and the negotiated terms are
// judged as the messages arrive; only the session rules wait. Timestamps
// are judged in emission order too, so a timestamp that goes backwards
// there is still SEQ-TIMESTAMP-ORDER's.

import (
	"slices"

	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol"
)

// maxHeld bounds the messages a session's hold keeps: a gap wider than
// this, or one that stays open longer, is judged as delivered. maxHeldAll
// bounds the messages all holds keep together: past it, the oldest hold
// is judged as delivered, so a lossy recording of many sessions costs no
// more memory than a few held sessions do.
const (
	maxHeld    = 256
	maxHeldAll = 4096
)

// hold is what the checker holds back of a session while an event of its
// primary source is missing.
type hold struct {
	missing int64 // the first missing sequence_number
	last    int64 // the highest number held
	msgs    []heldMsg
}

// heldMsg is one held message: a copy of its bytes, decoded again when
// it is judged.
type heldMsg struct {
	m     protocol.Message
	event bool
	seq   int64
	token string // the reply_token of a held prompt or reply
}

// holdEvent holds back ev, an event of ss's primary source lg, when the
// session is waiting for an event that is late, or when ev opens such a
// wait; it judges the missing event and what was held when the missing
// event arrives. It reports whether it took ev.
func (s *seqChecker) holdEvent(ss *session, lg *leg, m *protocol.Message, ev *Event) bool {
	h := lg.hold
	switch {
	case h == nil:
		if s.flushing || !ev.HasSeqNo || lg.seqMode != 1 || ev.SeqNo <= lg.seqNext || ev.SeqNo-lg.seqNext > maxHeld || s.neg.gapsExpected(m.Source) {
			return false
		}
		h = &hold{missing: lg.seqNext}
		lg.hold = h
		s.holders = append(s.holders, ss)
	case ev.HasSeqNo && ev.SeqNo == h.missing:
		s.release(ss, lg)
		s.report(seqDeliveryOrder, ss.id, m, "arrived out of order",
			"event %d of session %s arrives after event %d; the transport must deliver a session's events in emission order. The session is judged in emission order (sequence_number, §3.4.1): this event first, then the %d message(s) that overtook it",
			ev.SeqNo, ss.id, h.last, len(h.msgs))
		s.checkSeqNo(ss, lg, m, ev)
		s.primaryEvent(ss, lg, m, ev)
		s.judgeHeld(ss, lg, h)
		return true
	case ev.HasSeqNo && ev.SeqNo < h.missing:
		return false // an old number again: SEQ-SEQNO-INCREMENT's
	}
	hm := heldMsg{m: copyMessage(m), event: true}
	if ev.HasSeqNo {
		hm.seq = ev.SeqNo
		h.last = max(h.last, ev.SeqNo)
	}
	if ev.Core == TypeAwaitingConfirmation || ev.Core == TypeAwaitingClarification {
		hm.token, _ = ev.Str("reply_token")
	}
	h.msgs = append(h.msgs, hm)
	s.heldAll++
	if len(h.msgs) >= maxHeld {
		s.release(ss, lg)
		s.judgeAsDelivered(ss, lg, h)
	}
	if s.heldAll > maxHeldAll && len(s.holders) > 0 {
		old := s.holders[0]
		olg := old.leg(old.primary)
		oh := olg.hold
		s.release(old, olg)
		if oh != nil {
			s.judgeAsDelivered(old, olg, oh)
		}
	}
	return true
}

// judgeAsDelivered judges what h held without holding again: the missing
// event is taken for lost, and its gap is SEQ-SEQNO-INCREMENT's.
func (s *seqChecker) judgeAsDelivered(ss *session, lg *leg, h *hold) {
	was := s.flushing
	s.flushing = true
	s.judgeHeld(ss, lg, h)
	s.flushing = was
}

// holdReply holds back a reply to a prompt of a session that is being
// held (the prompt itself may be held, or be the missing event: a token
// not issued yet, on the held session's subscription), so that it is
// judged after the events that arrived before it. It reports whether it
// took the reply.
func (s *seqChecker) holdReply(m *protocol.Message, ev *Event) bool {
	token, _ := ev.Str("reply_token")
	if token == "" {
		return false
	}
	a := s.tokens[token]
	_, retired := s.retired[token]
	for _, ss := range s.holders {
		lg := ss.leg(ss.primary)
		h := lg.hold
		if h == nil {
			continue
		}
		switch {
		case a != nil && a.sess == ss:
		case slices.ContainsFunc(h.msgs, func(hm heldMsg) bool { return hm.token == token }):
		case a == nil && !retired && ss.primary == m.Source:
			// A token no one issued yet, on the held session's own
			// subscription: it may answer the missing event.
		default:
			continue
		}
		h.msgs = append(h.msgs, heldMsg{m: copyMessage(m), token: token})
		s.heldAll++
		return true
	}
	return false
}

// release ends lg's hold (the caller judges what it held).
func (s *seqChecker) release(ss *session, lg *leg) {
	if lg.hold != nil {
		s.heldAll -= len(lg.hold.msgs)
	}
	lg.hold = nil
	s.holders = slices.DeleteFunc(s.holders, func(x *session) bool { return x == ss })
}

// judgeHeld judges what h held, its events in sequence_number order with
// the replies in their places between them. An event may open a new hold
// (another gap), which then takes the rest.
func (s *seqChecker) judgeHeld(ss *session, lg *leg, h *hold) {
	var events []heldMsg
	for _, hm := range h.msgs {
		if hm.event {
			events = append(events, hm)
		}
	}
	slices.SortStableFunc(events, func(a, b heldMsg) int {
		switch {
		case a.seq < b.seq:
			return -1
		case a.seq > b.seq:
			return 1
		}
		return 0
	})
	next := 0
	for _, hm := range h.msgs {
		if hm.event {
			hm = events[next]
			next++
		}
		var d payload.Doc
		m := hm.m
		d.Decode(m.Raw)
		m.Doc = &d
		var ev Event
		if decode(&d, &ev) != nil {
			continue // it decoded when it arrived
		}
		s.newMessage()
		if !hm.event {
			if lg.hold != nil {
				lg.hold.msgs = append(lg.hold.msgs, heldMsg{m: m, token: hm.token})
				s.heldAll++
				continue
			}
			s.replyMessage(&m, &ev)
			continue
		}
		switch {
		case ss.ended:
			s.lateEvent(ss.id, ss.endState, &m, &ev)
		case s.holdEvent(ss, lg, &m, &ev):
		default:
			s.checkSeqNo(ss, lg, &m, &ev)
			s.primaryEvent(ss, lg, &m, &ev)
		}
	}
}

// flushHolds judges every held message as it arrived, its gap left open:
// at the end of the stream, and when a connection comes or goes (the
// missing event is lost, not late).
func (s *seqChecker) flushHolds() {
	for len(s.holders) > 0 {
		ss := s.holders[0]
		lg := ss.leg(ss.primary)
		h := lg.hold
		s.release(ss, lg)
		if h != nil {
			s.judgeAsDelivered(ss, lg, h)
		}
	}
}

// copyMessage copies m with its bytes and attributes, without its
// decoding (valid only during the call that received m).
func copyMessage(m *protocol.Message) protocol.Message {
	c := *m
	c.Raw = slices.Clone(m.Raw)
	if m.Attrs != nil {
		c.Attrs = make(map[string]string, len(m.Attrs))
		for k, v := range m.Attrs {
			c.Attrs[k] = v
		}
	}
	c.Doc, c.Prep = nil, nil
	return c
}
