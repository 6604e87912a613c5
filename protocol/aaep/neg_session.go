package aaep

// A session's events across subscriptions: critical events that must reach
// every subscription and the notices of a confirmation's resolution
// (NEG-CRITICAL-EXEMPT, NEG-RESOLUTION-NOTICE).

import (
	"github.com/aaep-tools/aaepkit/protocol"
)

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
