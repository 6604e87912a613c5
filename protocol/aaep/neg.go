package aaep

// Negotiated-stream rules (NEG-*): they need the recorded subscription
// handshake and apply per source (one source is one subscription's
// channel). A source whose capture holds no subscription.request or
// subscription.accepted is not handshaked and gets none of these rules
// except NEG-L2-DECLARES-REPLY, which judges a request on its own.
//
// Effective terms (catalog §3.7): the honored capabilities, where a field
// the producer left out of honored_capabilities reads as the requested value
// (and a field the request left out as the §5.3 default: unlimited rate,
// languages ["en-US"], coalesce ["sentence","completion"], include
// ["aaep:agent.*"], no reply support, levels [1]); an accepted
// renegotiation overlays only the fields it sent. Renegotiated terms apply to
// events that arrive more than renegGrace after the accepting response
// (events in flight may follow the old terms, §5.7.2).
//
// Handshake messages are reported under a pseudo-session named after their
// source ("subscription-N"), which also gets handshake Steps and a
// SessionSummary marked Handshake: a block about the stream, not a session.

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aaep-tools/aaepkit/protocol"
)

const (
	// renegGrace is how long after an accepted renegotiation events may
	// still follow the previous terms.
	renegGrace = 500 * time.Millisecond
	// closeGrace is how long after a subscriber's close events may still
	// arrive (in flight).
	closeGrace = time.Second
	// maxRateWindow bounds the sliding-window memory for NEG-RATE.
	maxRateWindow = 100000
)

type subState uint8

const (
	subNone subState = iota
	subRequested
	subActive
	subRejected
	subClosed
)

var subStateNames = [...]string{"none", "requested", "active", "rejected", "closed"}

func (st subState) String() string { return subStateNames[st] }

// subscription is the handshake state of one source.
type subscription struct {
	source     int
	key        string
	subID      string
	state      subState
	handshaked bool

	pending   uint8 // 0 none, 1 request, 2 renegotiation
	pendingAt ref
	responses int // responses to the current request

	requested capsJSON // merged request (request overlaid by renegotiations)
	reqKnown  bool
	reqVer    string
	reneg     capsJSON // renegotiation awaiting its response

	terms      terms
	oldTerms   terms
	applyAfter time.Duration // renegotiated terms apply to events after this offset
	rateReneg  bool          // the rate limit came from a renegotiation
	filtReneg  bool          // the filters came from a renegotiation
	acceptedAt time.Duration

	window   []time.Duration // arrival offsets of recent non-critical events
	wNext    int
	inBurst  bool
	closedAt time.Duration
	bySub    bool // closed by the subscriber
	renegRej bool

	noted         map[*protocol.Rule]bool // once-per-subscription findings already reported
	withheldNoted string                  // the types NEG-TYPES-WITHHELD last named
	noting        bool                    // reporting NEG-TYPES-WITHHELD
	acceptedRef   ref                     // the accepted answer that set the current terms
	msgs          int
	first, last   time.Duration
}

func (sub *subscription) once(rule *protocol.Rule) bool {
	if sub.noted == nil {
		sub.noted = map[*protocol.Rule]bool{}
	}
	if sub.noted[rule] {
		return false
	}
	sub.noted[rule] = true
	return true
}

type negChecker struct {
	s     *seqChecker
	subs  map[int]*subscription
	byID  map[string]*subscription
	order []*subscription
	// keyed holds, by source, the findings filed under its pseudo-session
	// (subReporter), so that one without a handshake gets a summary.
	keyed map[int]*keySpan
}

func (n *negChecker) init(s *seqChecker) {
	n.s = s
	n.subs = map[int]*subscription{}
	n.byID = map[string]*subscription{}
}

func (n *negChecker) sub(source int) *subscription {
	sub := n.subs[source]
	if sub == nil {
		sub = &subscription{source: source, key: subKey(source), terms: defaultTerms()}
		n.subs[source] = sub
		n.order = append(n.order, sub)
	}
	return sub
}

// key names the pseudo-session of source's handshake findings.
func (n *negChecker) key(source int) string { return subKey(source) }

// subKey names the pseudo-session of source's handshake findings.
func subKey(source int) string { return subKeyPrefix + strconv.Itoa(source) }

// subReporter is the checker's reporter: it notes the findings filed under
// a source's pseudo-session where no handshake was recorded (a redelivery,
// a reply to no prompt of a running session), so that the pseudo-session
// gets its summary (finish), a block about the source's connection and not
// a session.
type subReporter struct {
	protocol.Reporter
	neg *negChecker
}

const subKeyPrefix = "subscription-"

func (r *subReporter) Report(rule *protocol.Rule, session string, m *protocol.Message, short, format string, args ...any) {
	if strings.HasPrefix(session, subKeyPrefix) {
		if src, err := strconv.Atoi(session[len(subKeyPrefix):]); err == nil {
			r.neg.noteKeyed(src, m)
		}
	}
	r.Reporter.Report(rule, session, m, short, format, args...)
}

// keySpan is when the findings filed under a source's pseudo-session were.
type keySpan struct{ first, last time.Duration }

// noteKeyed notes a finding filed under source's pseudo-session, at m (nil:
// at the end).
func (n *negChecker) noteKeyed(source int, m *protocol.Message) {
	if n.keyed == nil {
		n.keyed = map[int]*keySpan{}
	}
	sp := n.keyed[source]
	if sp == nil {
		sp = &keySpan{first: -1}
		n.keyed[source] = sp
	}
	if m != nil {
		if sp.first < 0 {
			sp.first = m.Offset
		}
		sp.last = max(sp.last, m.Offset)
	}
}

// connectionDone summarises source's pseudo-session where no handshake was
// recorded: a block of findings about the source's connection, no session.
func (n *negChecker) connectionDone(key string, sp *keySpan) {
	n.s.r.SessionDone(protocol.SessionSummary{Session: key, First: max(sp.first, 0), Last: sp.last, State: protocol.StateNoHandshake, Complete: true})
}

func (n *negChecker) handshaked(source int) bool {
	sub := n.subs[source]
	return sub != nil && sub.handshaked
}

// sourceClosed reports whether source's subscription was closed or rejected.
func (n *negChecker) sourceClosed(source int) bool {
	sub := n.subs[source]
	return sub != nil && (sub.state == subClosed || sub.state == subRejected)
}

// gapsExpected reports whether sequence-number gaps are legitimate on
// source: its subscription filters events or limits their rate (the
// specification is silent; gaps are then not reported).
func (n *negChecker) gapsExpected(source int) bool {
	sub := n.subs[source]
	if sub == nil || !sub.handshaked {
		return false
	}
	t := sub.terms
	return t.rate > 0 || len(t.exclude) > 0 || !(len(t.include) == 1 && t.include[0] == "aaep:agent.*")
}

// otherReplyCapable reports whether a source other than closed, among
// sources, is an active subscription able to reply to confirmations.
func (n *negChecker) otherReplyCapable(sources []int, closed int) bool {
	for _, src := range sources {
		if src == closed {
			continue
		}
		if sub := n.subs[src]; sub != nil && sub.state == subActive && sub.terms.confReply {
			return true
		}
	}
	return false
}

func (n *negChecker) step(sub *subscription, m *protocol.Message, from subState, label, detail string) {
	sub.msgs++
	if sub.msgs == 1 {
		sub.first = m.Offset
	}
	sub.last = m.Offset
	n.s.r.Step(protocol.Step{Session: sub.key, Index: m.Index, Offset: m.Offset, From: from.String(), To: sub.state.String(),
		Label: label, Detail: detail, Kind: protocol.StepHandshake})
}

// message handles the subscription.* messages.
func (n *negChecker) message(m *protocol.Message, ev *Event) {
	sub := n.sub(m.Source)
	from := sub.state
	detail := ""
	switch ev.Type {
	case MsgSubscriptionRequest:
		n.unanswered(sub)
		sub.handshaked = true
		sub.state = subRequested
		sub.pending, sub.pendingAt, sub.responses = 1, refOf(m), 0
		sub.requested = decodeCaps(ev.raw("capabilities"))
		sub.reqKnown = true
		sub.reqVer, _ = ev.Str("aaep_version")
		n.checkL2(sub, m, sub.requested)
		detail, _ = ev.Str("subscriber_id")
	case MsgSubscriptionAccepted:
		detail = n.accepted(sub, m, ev)
	case MsgSubscriptionRejected:
		sub.handshaked = true
		n.response(sub, m, "subscription.rejected")
		if sub.pending == 2 || from == subActive {
			sub.renegRej = true
		}
		sub.pending = 0
		sub.state = subRejected
		detail, _ = ev.Str("reason_code")
		n.s.subscriptionEnded(m.Source)
	case MsgSubscriptionRenegotiate:
		n.checkSubID(sub, m, ev, "subscription.renegotiate")
		n.unanswered(sub)
		sub.handshaked = true
		sub.pending, sub.pendingAt, sub.responses = 2, refOf(m), 0
		sub.reneg = decodeCaps(ev.raw("capabilities"))
		n.checkL2(sub, m, sub.requested.overlay(sub.reneg))
		detail, _ = ev.Str("subscription_id")
	case MsgSubscriptionClose:
		n.checkSubID(sub, m, ev, "subscription.close")
		if sub.state != subClosed {
			sub.state = subClosed
			sub.closedAt = m.Offset
			sub.bySub = m.Dir == protocol.ToProducer
			n.s.applyCloseDefault(m.Source, m)
			n.s.subscriptionEnded(m.Source)
		}
		detail, _ = ev.Str("reason_code")
	}
	n.step(sub, m, from, ev.Type, detail)
}

// unanswered reports a request or renegotiation superseded before any response.
func (n *negChecker) unanswered(sub *subscription) {
	switch {
	case sub.pending == 1 && sub.responses == 0:
		n.s.report(negResponseRequired, sub.key, sub.pendingAt.msg(), "request never answered",
			"the subscription.request at message %d got neither subscription.accepted nor subscription.rejected; every request gets exactly one response", sub.pendingAt.related())
	case sub.pending == 2 && sub.responses == 0:
		n.s.report(negRenegResponse, sub.key, sub.pendingAt.msg(), "renegotiation never answered",
			"the subscription.renegotiate at message %d got neither subscription.accepted nor subscription.rejected; the producer must answer every renegotiation", sub.pendingAt.related())
	}
}

// response counts a response to the outstanding request.
func (n *negChecker) response(sub *subscription, m *protocol.Message, what string) {
	if sub.pending == 0 && sub.responses == 0 && n.s.replay[m.Source] {
		// A recording of a replay holds every message its subscriber
		// sent: an answer to no request is the replay sending one of
		// its own capture's handshake messages.
		n.s.report(negResponseRequired, sub.key, m, "response to no request",
			"this %s answers no subscription.request: the subscriber sent none on this subscription, and a recording of a replay holds everything it sent (a replay that re-sends its capture's handshake?)", what)
	}
	if sub.pending == 0 && sub.responses > 0 {
		n.s.report(negResponseRequired, sub.key, m, "second response",
			"this %s answers a request that was already answered (message %d); every request gets exactly one response", what, sub.pendingAt.related())
	}
	sub.responses++
}

func (n *negChecker) accepted(sub *subscription, m *protocol.Message, ev *Event) string {
	sub.handshaked = true
	n.response(sub, m, "subscription.accepted")
	reneg := sub.pending == 2
	sub.pending = 0
	honored := decodeCaps(ev.raw("honored_capabilities"))
	request := sub.requested
	if reneg {
		request = request.overlay(sub.reneg)
		sub.requested = request
	}
	req := request.resolve(defaultTerms())
	if sub.reqKnown {
		n.checkHonored(sub, m, honored, req)
		if !reneg {
			n.checkVersion(sub, m, ev)
		}
		n.checkSignedManifest(sub, m, ev, req)
	}
	id, _ := ev.Str("subscription_id")
	if id != "" {
		sub.subID = id
		n.byID[id] = sub
	}
	newTerms := honored.resolve(req)
	if reneg && sub.state == subActive {
		sub.oldTerms = sub.terms
		sub.applyAfter = m.Offset + renegGrace
		if sub.reneg.MaxEPS != nil {
			sub.rateReneg = true
		}
		if sub.reneg.Filters != nil {
			sub.filtReneg = true
		}
	} else {
		sub.oldTerms = newTerms
		sub.applyAfter = m.Offset
		sub.acceptedAt = m.Offset
	}
	sub.terms = newTerms
	sub.state = subActive
	sub.acceptedRef = refOf(m)
	if n := int(newTerms.rate); n > 0 && n <= maxRateWindow && len(sub.window) != n {
		sub.window = make([]time.Duration, 0, n)
		sub.wNext = 0
	}
	return id
}

// sessionShouldHaveEnded reports whether a session that never got its
// terminal event is a violation (SEQ-TERMINAL-PRESENT) rather than
// unfinished (SEQ-SESSION-INCOMPLETE). Either side may close a subscription
// at any time and a connection may drop (§5.8), and a recording that stops
// is a cut-off: none of these shows that the producer ended the session
// without its terminal event, so the lenient profile never reports it. The
// strict profile reads §4.1 and §4.5.1 ("exactly one terminal event") to
// hold for what the producer itself delivered: when the producer closed the
// subscription (a subscription.close it sent) while the session was open,
// the session's terminal event is missing from its own stream.
func (n *negChecker) sessionShouldHaveEnded(ss *session) bool {
	sub := n.subs[ss.primary]
	return n.s.strict && sub != nil && sub.state == subClosed && !sub.bySub
}

// finish reports handshakes left unanswered and summarises each subscription.
func (n *negChecker) finish() {
	for _, sub := range n.order {
		n.unanswered(sub)
		sp := n.keyed[sub.source]
		delete(n.keyed, sub.source)
		if !sub.handshaked {
			if sp != nil {
				// Findings about the source without a handshake (a
				// redelivery, a reply to no running session's prompt).
				n.connectionDone(sub.key, sp)
			}
			continue
		}
		n.s.r.SessionDone(protocol.SessionSummary{Session: sub.key, Messages: sub.msgs, First: sub.first, Last: sub.last,
			State: sub.state.String(), Complete: sub.state == subClosed || sub.state == subRejected, Handshake: true})
	}
	// Sources that never became a subscription (an unknown message type
	// of theirs) but got findings under their pseudo-session.
	srcs := make([]int, 0, len(n.keyed))
	for src := range n.keyed {
		srcs = append(srcs, src)
	}
	slices.Sort(srcs)
	for _, src := range srcs {
		n.connectionDone(n.key(src), n.keyed[src])
	}
	n.keyed = nil
}
