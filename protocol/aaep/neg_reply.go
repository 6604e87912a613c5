package aaep

// The subscription ids of replies and control messages (NEG-SUBID-VALID,
// NEG-REPLY-SUBID-UNISSUED).

import (
	"github.com/aaep-tools/aaepkit/protocol"
)

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
