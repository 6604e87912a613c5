package aaep

// What a subscription does not deliver. A subscriber's handshake can
// exclude event types (event_filters, §5.3.1.7) and, by declaring no reply
// support, have the producer withhold confirmations and clarifications
// (§5.3.1.4–5; supports_*_reply is false when absent). A recording of such
// a subscription lacks those events by agreement, so the rules that judge
// their absence (a missing session.started, a missing state change after a
// reject, a missing confirmation before an irreversible tool...) cannot be
// judged on it: they are not reported for sessions carried by that
// subscription, and NEG-TYPES-WITHHELD (INFO) says once which types the
// subscription withholds, at the accepted answer that set its terms, when
// the first finding is left out for it. Critical events bypass
// filters (§5.5.4), so the types that are always critical (errored,
// confirmation, clarification, handoff) are never taken as filtered out.

import (
	"strings"

	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/aaep/vocab"
)

// absenceRules lists, for each rule that judges missing events, the event
// types whose absence can make it fire.
var absenceRules = map[*protocol.Rule][]string{
	seqStartFirst:         {TypeSessionStarted},
	seqTerminalPresent:    {TypeSessionCompleted, TypeSessionCancelled},
	seqStateFirstIdle:     implicitStateTypes,
	seqStateChain:         implicitStateTypes,
	seqStateL1Coverage:    {TypeStateChanged},
	seqStateAwaitingEnter: {TypeStateChanged},
	seqStateAwaitingExit:  {TypeStateChanged},
	seqConfRejectFollowup: {TypeStateChanged},
	negResolutionNotice:   {TypeStateChanged},
	seqConfAcceptInvokes:  {TypeToolInvoked},
	seqToolPairPreceded:   {TypeToolInvoked},
	seqCompletedCounts:    {TypeToolInvoked, TypeToolCompleted},
	seqToolPairCompleted:  {TypeToolCompleted},
	seqToolBeforeState:    {TypeToolCompleted},
	seqIrrevNeedsConf:     {TypeAwaitingConfirmation},
	seqIrrevNeedsAccept:   {TypeAwaitingConfirmation},
	seqConfOneAction:      {TypeAwaitingConfirmation},
	seqConfCountdown:      {TypeProgressUpdated},
	seqA7Tables:           {TypeStateChanged, TypeToolInvoked, TypeToolCompleted, TypeOutputStreaming},
}

// implicitStateTypes are the events the state chain reads states from.
var implicitStateTypes = []string{TypeStateChanged, TypeToolInvoked, TypeOutputStreaming,
	TypeAwaitingConfirmation, TypeAwaitingClarification, TypeHandoffRequested}

// alwaysCritical are the types that must be sent with urgency critical, so
// that filters never remove them.
func alwaysCritical(typ string) bool {
	switch typ {
	case TypeSessionErrored, TypeAwaitingConfirmation, TypeAwaitingClarification, TypeHandoffRequested:
		return true
	}
	return false
}

// withheld reports whether the subscription on source does not deliver
// events of core type typ.
func (n *negChecker) withheld(source int, typ string) bool {
	sub := n.subs[source]
	if sub == nil || !sub.handshaked {
		return false
	}
	t := &sub.terms
	switch {
	case typ == TypeAwaitingConfirmation && !t.confReply:
		return true
	case typ == TypeAwaitingClarification && !t.clarReply:
		return true
	case alwaysCritical(typ):
		return false
	}
	incl := t.inc().Match(typ)
	excl := t.exc().Match(typ)
	return incl == "" || (excl != "" && (n.s.strict || vocab.Specificity(excl) > vocab.Specificity(incl)))
}

// withheldTypes lists the core types source's subscription does not deliver.
func (n *negChecker) withheldTypes(source int) []string {
	var out []string
	for _, typ := range coreTypeList {
		if n.withheld(source, typ) {
			out = append(out, typ)
		}
	}
	return out
}

// noteWithheld reports NEG-TYPES-WITHHELD once per set of terms, at the
// accepted answer that set them.
func (n *negChecker) noteWithheld(sub *subscription, m *protocol.Message) {
	if sub.noting {
		return
	}
	sub.noting = true
	defer func() { sub.noting = false }()
	types := n.withheldTypes(sub.source)
	list := strings.Join(types, ", ")
	if list == sub.withheldNoted {
		return
	}
	sub.withheldNoted = list
	if len(types) == 0 {
		return
	}
	n.s.report(negTypesWithheld, sub.key, m, "types withheld",
		"by this handshake the subscription does not deliver %s (its honored event_filters, or no supports_confirmation_reply / supports_clarification_reply); findings that rest on the absence of these events are not reported for its sessions",
		list)
}

// unjudgeable reports whether rule, about session, rests on events the
// session's subscription does not deliver.
func (s *seqChecker) unjudgeable(rule *protocol.Rule, session string) bool {
	types := absenceRules[rule]
	if types == nil {
		return false
	}
	ss := s.sessions.Get(session)
	if ss == nil {
		return false
	}
	for _, typ := range types {
		if s.neg.withheld(ss.primary, typ) {
			sub := s.neg.subs[ss.primary]
			s.neg.noteWithheld(sub, sub.acceptedRef.msg())
			return true
		}
	}
	return false
}
