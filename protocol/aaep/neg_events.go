package aaep

// The negotiated terms applied to the events of a handshaked source: none
// before the accept or after a close or rejection, then filters, rate,
// coalesce hints, reply support, verbosity and language (NEG-NO-EVENTS-*,
// NEG-CLOSE-STOPS, NEG-RENEG-*, NEG-FILTER-*, NEG-RATE, NEG-COALESCE-HINT,
// NEG-VERBOSITY, NEG-LANGUAGE).

import (
	"fmt"
	"time"

	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/aaep/vocab"
)

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

// clipList renders a list for a message, eliding the middle of long ones.
func clipList(list []string) string {
	if len(list) <= 8 {
		return fmt.Sprint(list)
	}
	return fmt.Sprintf("%v ... (%d patterns)", list[:8], len(list))
}
