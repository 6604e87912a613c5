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
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/aaep/vocab"
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

// checkSubID: NEG-SUBID-VALID for renegotiate, close and replies. Only
// judged once some subscription.accepted was recorded.
func (n *negChecker) checkSubID(sub *subscription, m *protocol.Message, ev *Event, what string) {
	if len(n.byID) == 0 {
		return
	}
	id, ok := ev.Str("subscription_id")
	if !ok {
		return
	}
	named := n.byID[id]
	switch {
	case named == nil:
		n.s.report(negSubidValid, sub.key, m, "unknown subscription_id",
			"this %s names subscription %q, which no subscription.accepted in the capture created; it must name an accepted, open subscription", what, id)
	case named.state == subClosed || named.state == subRejected:
		n.s.report(negSubidValid, sub.key, m, "subscription no longer open",
			"this %s names subscription %s, which is already %s; it must name an accepted, open subscription", what, id, named.state)
	case sub.subID != "" && sub.subID != id:
		n.s.report(negSubidValid, sub.key, m, "subscription_id of another channel",
			"this %s arrives on subscription %s but names %s; replies and control messages travel on the subscription they name", what, sub.subID, id)
	}
}

// reply applies the per-subscription checks to a reply.
func (n *negChecker) reply(m *protocol.Message, ev *Event) {
	sub := n.sub(m.Source)
	if ev.vals[kSubscriptionID] == nil {
		n.missingSubID(m, ev)
		return
	}
	n.checkSubID(sub, m, ev, ev.Type)
}

// missingSubID judges a reply without subscription_id: the reply
// schema's MUST once a subscription.accepted naming a subscription_id was
// recorded in the stream (the subscriber had one to send), else
// NEG-REPLY-SUBID-UNISSUED, the profile reading of a contradiction
// (its Doc says which).
func (n *negChecker) missingSubID(m *protocol.Message, ev *Event) {
	section, rule := "§6.3.1", &msgConfReplySchema.Rule
	if ev.Type == MsgClarificationReply {
		section, rule = "§6.5", &msgClarReplySchema.Rule
	}
	// Filed where the reply's other findings are: under the session it
	// answers (messageSession).
	session := n.s.messageSession(m, ev)
	if len(n.byID) > 0 {
		n.s.report(rule, session, m, "missing subscription_id",
			"%s lacks the required field(s) subscription_id (%s); a subscription.accepted had issued the subscriber one to send", ev.Type, section)
		return
	}
	n.s.report(negReplySubIDUnissued, session, m, "no subscription_id, none issued",
		"%s has no subscription_id, and the subscriber was never issued one (no subscription.accepted names one before it): %s and the reply schema require the field, while §9.3.3 and §9.5.2(2) leave the handshake to Level 3", ev.Type, section)
}

// event applies the negotiated terms of its source to one event.
func (n *negChecker) event(m *protocol.Message, ev *Event) {
	if len(n.subs) == 0 {
		return
	}
	sub := n.subs[m.Source]
	if sub == nil || !sub.handshaked {
		return
	}
	session := ev.SessionID
	switch sub.state {
	case subRequested:
		if sub.once(negNoEventsBeforeAccept) {
			n.s.report(negNoEventsBeforeAccept, session, m, "event before accepted",
				"this %s arrives on a subscription whose request (message %d) has not been accepted yet; no events flow before subscription.accepted (later ones on this subscription are not repeated)",
				shortType(ev), sub.pendingAt.related())
		}
		return
	case subRejected:
		rule, why := negNoEventsBeforeAccept, "was rejected"
		if sub.renegRej {
			rule, why = negRenegRejectEnds, "ended when its renegotiation was rejected"
		}
		if sub.once(rule) {
			n.s.report(rule, session, m, "event after rejection",
				"this %s arrives on a subscription that %s; no events may follow (later ones on this subscription are not repeated)", shortType(ev), why)
		}
		return
	case subClosed:
		if sub.bySub && m.Offset <= sub.closedAt+closeGrace {
			return // in flight when the subscriber closed
		}
		if sub.once(negCloseStops) {
			n.s.report(negCloseStops, session, m, "event after close",
				"this %s arrives %s after subscription.close; the producer stops emitting on a closed subscription (later ones are not repeated)",
				shortType(ev), (m.Offset - sub.closedAt).Round(time.Millisecond))
		}
		return
	case subActive:
	default:
		return
	}
	t := &sub.terms
	renegTerms := true
	if m.Offset <= sub.applyAfter {
		t = &sub.oldTerms
		renegTerms = false
	}
	typ := ev.Core
	if typ == "" {
		typ = NormalizeType(ev.Type)
	}
	critical := ev.Urgency == "critical"
	if !critical {
		n.checkFilters(sub, m, ev, t, typ, renegTerms && sub.filtReneg)
		n.checkRate(sub, m, ev, t, renegTerms && sub.rateReneg)
	}
	switch ev.Core {
	case TypeOutputStreaming:
		if hint, ok := ev.Str("coalesce_hint"); ok && !containsString(t.coalesce, hint) && sub.once(negCoalesceHint) {
			n.s.report(negCoalesceHint, session, m, "coalesce hint not negotiated",
				"this chunk's coalesce_hint %q is not among the negotiated boundaries %v; the producer should stay within them (later ones are not repeated)", hint, t.coalesce)
		}
	case TypeAwaitingConfirmation:
		if !t.confReply {
			n.s.report(negNoConfWithoutReplyCap, session, m, "confirmation to a subscriber that cannot reply",
				"a confirmation is sent on a subscription without supports_confirmation_reply (false by default): §5.3.1.4 says not to send it and to apply default_decision at once, though §5.5.4 says critical events go to every subscription, hence a warning")
		}
	case TypeAwaitingClarification:
		if !t.clarReply {
			n.s.report(negNoConfWithoutReplyCap, session, m, "clarification to a subscriber that cannot reply",
				"a clarification is sent on a subscription without supports_clarification_reply (false by default): §5.3.1.5 says not to send it, though §5.5.4 says critical events go to every subscription, hence a warning")
		}
	}
	n.checkVerbosity(sub, m, ev, t)
	n.checkLanguage(sub, m, ev, t)
}

// checkFilters: NEG-FILTER-EXCLUDE and NEG-FILTER-INCLUDE. §5.3.1.7 says
// "exclude patterns take precedence", but its MUST forbids only events that
// match an exclude pattern "but not an include pattern", which read
// literally never applies under the default include aaep:agent.*. The
// strict profile lets exclude win. The lenient profile reports an excluded
// event unless an include pattern names it at least as specifically as the
// exclude does (e.g. include "aaep:agent.progress.updated" beside exclude
// "aaep:agent.*"), the case where the two sentences really disagree.
func (n *negChecker) checkFilters(sub *subscription, m *protocol.Message, ev *Event, t *terms, typ string, fromReneg bool) {
	incl := t.inc().Match(typ)
	if excl := t.exc().Match(typ); excl != "" && (n.s.strict || incl == "" || vocab.Specificity(excl) > vocab.Specificity(incl)) {
		rule := negFilterExclude
		if fromReneg {
			rule = negRenegApply
		}
		n.s.report(rule, ev.SessionID, m, "excluded event sent",
			"%s is sent although the subscription excludes %q and the event is not critical; excluded events must not be emitted", typ, excl)
		return
	}
	if incl == "" {
		n.s.report(negFilterInclude, ev.SessionID, m, "event not included",
			"%s matches none of the subscription's include patterns %s (the default aaep:agent.* does not cover extension types); non-critical events outside the includes should not be emitted", typ, clipList(t.include))
	}
}

// checkRate: NEG-RATE. Counts non-critical events in a sliding one-second
// window of arrival time; each burst over the honored rate is reported once.
func (n *negChecker) checkRate(sub *subscription, m *protocol.Message, ev *Event, t *terms, fromReneg bool) {
	rate := int(t.rate)
	if rate <= 0 || rate > maxRateWindow {
		return
	}
	if cap(sub.window) != rate {
		sub.window = make([]time.Duration, 0, rate)
		sub.wNext = 0
	}
	now := m.Offset
	if len(sub.window) < rate {
		sub.window = append(sub.window, now)
		return
	}
	oldest := sub.window[sub.wNext]
	sub.window[sub.wNext] = now
	sub.wNext = (sub.wNext + 1) % rate
	if now-oldest < time.Second {
		if !sub.inBurst {
			sub.inBurst = true
			rule := negRate
			if fromReneg {
				rule = negRenegApply
			}
			n.s.report(rule, ev.SessionID, m, "rate exceeded",
				"%d non-critical events arrived within %s on this subscription, over its negotiated max_events_per_second of %d",
				rate+1, (now - oldest).Round(time.Millisecond), rate)
		}
		return
	}
	sub.inBurst = false
}

// checkVerbosity: NEG-VERBOSITY (first mismatch per subscription).
func (n *negChecker) checkVerbosity(sub *subscription, m *protocol.Message, ev *Event, t *terms) {
	if v, ok := ev.Str("verbosity"); ok && v != t.verbosity && sub.once(negVerbosity) {
		n.s.report(negVerbosity, ev.SessionID, m, "verbosity not as negotiated",
			"this %s has verbosity %q but the subscriber prefers %q (later mismatches on this subscription are not repeated)", shortType(ev), v, t.verbosity)
		return
	}
	if ev.Core == "" || ev.Core == TypeOutputStreaming || t.verbosity == "normal" {
		return
	}
	hasAny := ev.Has("summary_terse") || ev.Has("summary_normal") || ev.Has("summary_detailed")
	if hasAny && !ev.Has("summary_"+t.verbosity) && sub.once(negVerbosity) {
		n.s.report(negVerbosity, ev.SessionID, m, "summary level missing",
			"this %s carries summaries but no summary_%s, the subscriber's preferred verbosity (later ones on this subscription are not repeated)", shortType(ev), t.verbosity)
	}
}

// checkLanguage: NEG-LANGUAGE (first mismatch per subscription).
func (n *negChecker) checkLanguage(sub *subscription, m *protocol.Message, ev *Event, t *terms) {
	lang, ok := ev.Str("language")
	if !ok {
		if h, okh := ev.Object("localization_hints"); okh {
			lang, ok = h["primary_language"].Str()
		}
	}
	if ok && lang != "" && !sub.noted[negLanguage] && !vocab.NewLanguages(t.languages).Has(lang) && sub.once(negLanguage) {
		n.s.report(negLanguage, ev.SessionID, m, "language not negotiated",
			"this %s is in %q, which is not among the negotiated languages %s (later ones on this subscription are not repeated)", shortType(ev), lang, clipList(t.languages))
	}
}

// copyEvent records per-subscription facts about an event of ss that
// arrived on a source other than the session's primary one.
func (n *negChecker) copyEvent(ss *session, m *protocol.Message, ev *Event) {
	switch ev.Core {
	case TypeAwaitingConfirmation, TypeAwaitingClarification:
		if tok, _ := ev.Str("reply_token"); tok != "" {
			if a := n.s.tokens[tok]; a != nil && a.sess == ss && !containsInt(a.sources, m.Source) {
				a.sources = append(a.sources, m.Source)
			}
		}
	case TypeStateChanged:
		n.s.noteResolutionNotice(ss, m.Source)
	}
	if ev.Urgency == "critical" && ev.EventID != "" {
		n.critical(ss, m, ev)
	}
}

// criticalEvent is a critical event of a session and the sources that got it.
type criticalEvent struct {
	eventID string
	label   string
	at      ref
	sources []int
}

func (n *negChecker) critical(ss *session, m *protocol.Message, ev *Event) {
	for i := range ss.critical {
		c := &ss.critical[i]
		if c.eventID == ev.EventID {
			if !containsInt(c.sources, m.Source) {
				c.sources = append(c.sources, m.Source)
			}
			return
		}
	}
	if len(ss.critical) < 1024 {
		ss.critical = append(ss.critical, criticalEvent{eventID: ev.EventID, label: shortType(ev), at: refOf(m), sources: []int{m.Source}})
	}
}

// sessionClosed runs NEG-CRITICAL-EXEMPT and NEG-RESOLUTION-NOTICE once the
// session is closed on every source.
func (n *negChecker) sessionClosed(ss *session) {
	if len(n.byID) >= 2 {
		for _, c := range ss.critical {
			for _, sub := range n.order {
				if !sub.handshaked || sub.acceptedAt > c.at.offset || containsInt(c.sources, sub.source) {
					continue
				}
				if sub.state == subRequested || sub.state == subNone || sub.renegRej {
					continue
				}
				if (sub.state == subClosed || sub.state == subRejected) && sub.closedAt <= c.at.offset+closeGrace {
					continue
				}
				n.s.report(negCriticalExempt, ss.id, c.at.msg(), "critical event not on every subscription",
					"critical %s (%s) reached some subscriptions but not %s, which was active; critical events go to every subscription regardless of filters and rate limits",
					c.label, c.eventID, sub.subIDOrKey())
			}
		}
	}
	for _, a := range ss.awaits {
		n.resolutionNotice(ss, a)
	}
	for _, a := range ss.notices {
		n.resolutionNotice(ss, a)
	}
	ss.notices = nil
}

func (sub *subscription) subIDOrKey() string {
	if sub.subID != "" {
		return "subscription " + sub.subID
	}
	return sub.key
}

// resolutionNotice: NEG-RESOLUTION-NOTICE.
func (n *negChecker) resolutionNotice(ss *session, a *await) {
	if a.kind != kindConfirm || a.res == resPending || a.res == resSessionEnd || a.res == resSuperseded || a.res.unseen() {
		return
	}
	for _, src := range a.sources {
		if !n.handshaked(src) || containsInt(a.noticed, src) || n.sourceClosed(src) {
			continue
		}
		n.s.report(negResolutionNotice, ss.id, a.resAt.msg(), "no resolution notice",
			"subscription %s received confirmation %s but no state change told it the outcome (%s); every subscription that received a confirmation should get an informational event after its resolution",
			n.sub(src).subIDOrKey(), a.token, a.res)
	}
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

// clipList renders a list for a message, eliding the middle of long ones.
func clipList(list []string) string {
	if len(list) <= 8 {
		return fmt.Sprint(list)
	}
	return fmt.Sprintf("%v ... (%d patterns)", list[:8], len(list))
}
