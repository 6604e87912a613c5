// Subscriber replies (confirmation.reply, clarification.reply): matching a
// reply to its request, timing, allowed decisions and responses, and
// retiring reply tokens.

package aaep

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol"
)

// messageSession is the session the findings of a message that is not an
// event are filed under: a reply's is the session whose confirmation or
// clarification it answers, while that session runs (its reply_token is
// outstanding or resolved, not yet retired); any other message's (and a
// reply to a token unknown or retired) is its source's subscription
// ("subscription-N", neg.go). A checker that prepares messages ahead has
// no sequence checker (nil s): the source's subscription.
func (s *seqChecker) messageSession(m *protocol.Message, ev *Event) string {
	if s != nil && (ev.Type == MsgConfirmationReply || ev.Type == MsgClarificationReply) {
		if token, _ := ev.Str("reply_token"); token != "" {
			if a := s.tokens[token]; a != nil {
				return a.sess.id
			}
		}
	}
	return subKey(m.Source)
}

// reply handles confirmation.reply and clarification.reply.
func (s *seqChecker) reply(m *protocol.Message, ev *Event) {
	kind, label := kindConfirm, "confirmation.reply"
	if ev.Type == MsgClarificationReply {
		kind, label = kindClarify, "clarification.reply"
	}
	token, _ := ev.Str("reply_token")
	decision, _ := ev.Str("decision")
	a := s.tokens[token]
	session := s.neg.key(m.Source)
	rt, retired := s.retired[token]
	if a != nil {
		session = a.sess.id
	} else if retired {
		session = rt.session
	}
	if by, _ := ev.Str("decided_by"); len(by) >= 5 && by[:5] == "auto:" {
		s.report(seqReplyAuto, session, m, "automatic reply",
			"this %s was decided automatically (decided_by %q); subscribers must not auto-respond unless the user configured it, so surface it", label, by)
	}
	switch {
	case a == nil && retired && rt.withdrawn:
		if decided := s.replyInstant(m, ev); !decided.before(rt.when) {
			s.report(seqReplyAfterCancel, session, m, "reply to a cancelled prompt",
				"this %s answers reply_token %s, whose prompt the producer withdrew before session %s ended; a subscriber detects the cancellation and removes the prompt, and the producer ignores the reply",
				label, token, rt.session)
		}
		return
	case a == nil && retired:
		s.report(seqReplyNotExpired, session, m, "reply after the session ended",
			"this %s answers reply_token %s of session %s, which has already ended; a late reply is not outstanding any more, so the producer ignores it",
			label, token, rt.session)
		return
	case a == nil:
		s.report(seqReplyKnownToken, session, m, "unknown reply_token",
			"this %s carries reply_token %q, which no recorded confirmation or clarification issued; a subscriber echoes the reply_token exactly as it received it, and the producer ignores a reply that matches no outstanding prompt", label, token)
		return
	}
	a.replied = true
	if a.flow != nil {
		// The recording carries this flow's reply after all.
		s.observeFlow(a.flow)
		s.compactGroups()
	}
	ss := a.sess
	ss.msgs++
	ss.last = m.Offset
	detail := token
	if kind == kindConfirm {
		detail += " " + decision
	}
	valid := s.checkReply(ss, a, m, ev, kind, label, decision)
	if !valid {
		detail += " (ignored)"
	}
	s.r.Step(protocol.Step{Session: ss.id, Index: m.Index, Offset: m.Offset, From: ss.state, To: ss.state,
		Label: label, Detail: detail, Kind: protocol.StepReply})
}

// checkReply validates a reply against its blocking event and resolves it;
// it reports whether the reply counts.
func (s *seqChecker) checkReply(ss *session, a *await, m *protocol.Message, ev *Event, kind awaitKind, label, decision string) bool {
	if a.kind != kind {
		s.report(seqReplyKnownToken, ss.id, m, "reply of the wrong kind",
			"this %s answers reply_token %s, which belongs to a %s (message %d); replies must match a blocking event of their own kind", label, a.token, a.kindName(), a.at.related())
		a.ignore(m, kind, decision, "a reply of the wrong kind")
		return false
	}
	decided := s.replyInstant(m, ev)
	expired := a.past(decided)
	switch a.res {
	case resPending:
	case resSuperseded:
		if !decided.before(a.resWhen) {
			s.report(seqReplyAfterCancel, ss.id, m, "reply to a cancelled prompt",
				"this %s answers %s %s, which the producer withdrew at message %d; a subscriber detects the cancellation and removes the prompt, and the producer ignores the reply",
				label, a.kindName(), a.token, a.resAt.related())
		}
		a.ignore(m, kind, decision, fmt.Sprintf("the prompt was withdrawn at message %d", a.resAt.index))
		return false
	case resAccept, resReject, resAnswered:
		if kind == kindConfirm && !expired && s.decisionAllowed(a, decision) && decision != a.replyDecision {
			if decision == "accept" {
				a.laterAccept = true
			} else {
				a.laterReject = true
			}
		}
		return false // only the first valid reply counts (SEQ-REPLY-FIRST-WINS is judged by what the producer does)
	default:
		if expired {
			s.report(seqReplyNotExpired, ss.id, m, "reply after the timeout",
				"this %s for %s was decided at %s, after the %s timeout of the event at message %d had passed; a late reply is not outstanding any more, so the producer ignores it",
				label, a.token, ev.Timestamp, a.timeout, a.at.related())
			a.ignore(m, kind, decision, "it was decided after the timeout")
		}
		return false
	}
	switch {
	case expired:
		s.report(seqReplyNotExpired, ss.id, m, "reply after the timeout",
			"this %s for %s was decided at %s, after the %s timeout of the event at message %d had passed; a late reply is not outstanding any more, so the producer ignores it",
			label, a.token, ev.Timestamp, a.timeout, a.at.related())
		a.ignore(m, kind, decision, "it was decided after the timeout")
		return false
	case decided.ok && a.when.ok && decided.t.Before(a.when.t):
		s.report(seqReplyNotExpired, ss.id, m, "reply before the prompt",
			"this %s for %s is stamped %s, before the event it answers (%s); such a reply is invalid, so the producer ignores it",
			label, a.token, ev.Timestamp, a.when.t.Format(time.RFC3339Nano))
		a.ignore(m, kind, decision, "it is stamped before the prompt")
		return false
	}
	if kind == kindConfirm {
		if !s.decisionAllowed(a, decision) {
			allowed := a.allowed
			if allowed == nil {
				allowed = []string{"accept", "reject"}
			}
			s.report(seqReplyDecisionAllowed, ss.id, m, "decision not allowed",
				"this confirmation.reply decides %q, which is not among the allowed_replies %v of confirmation %s; such a reply is invalid", decision, allowed, a.token)
			a.ignore(m, kind, decision, "its decision is not among allowed_replies")
			return false
		}
		a.replyDecision = decision
		if decision == "accept" {
			a.res = resAccept
			ss.prevAccept = true
			if ev.Has("modified_action") {
				a.modified = true
				s.report(seqReplyModified, ss.id, m, "accept with modified_action",
					"this accept for %s carries modified_action; a producer that does not support modified actions must treat it as a reject, so check what the producer does next", a.token)
			}
		} else {
			a.res = resReject
		}
	} else {
		if why := s.responseMismatch(a, ev.raw("response")); why != "" {
			s.report(seqClarResponseType, ss.id, m, "response of the wrong kind",
				"this clarification.reply for %s %s; it counts as no reply, so the producer keeps waiting", a.token, why)
			a.ignore(m, kind, decision, "its response fits none of the accepted kinds")
			return false
		}
		a.res = resAnswered
	}
	a.resAt = refOf(m)
	s.settle(ss, a, m, since(a.when, decided))
	return true
}

// replyInstant is when a reply was decided: its own timestamp (§6.3.4(4)),
// else its receive time. In a recording of a replay (aaep-replay serve
// --record) the prompts carry the original producer's timestamps, minutes
// or days before the live subscriber answered, so the reply is placed on
// the receive clock only: its timing is judged by the receive offsets of
// prompt and reply.
func (s *seqChecker) replyInstant(m *protocol.Message, ev *Event) instant {
	if s.replay[m.Source] {
		return instant{off: m.Offset}
	}
	decided := instant{t: ev.Time, ok: ev.TimeOK, off: m.Offset}
	if !decided.ok && !m.Received.IsZero() {
		decided.t, decided.ok = m.Received, true
	}
	return decided
}

func (s *seqChecker) decisionAllowed(a *await, decision string) bool {
	if a.allowed == nil {
		return decision == "accept" || decision == "reject"
	}
	return containsString(a.allowed, decision)
}

// validKinds reports whether accepted_response_kinds raw, whose string
// items are list, is a non-empty array of known response kinds.
func validKinds(raw payload.Value, list []string) bool {
	n := 0
	if !raw.Elements(func(int, payload.Value) bool { n++; return true }) || n == 0 || n != len(list) {
		return false
	}
	for _, k := range list {
		switch k {
		case "freetext", "yes_no", "numeric", "multiple_choice":
		default:
			return false
		}
	}
	return true
}

// responseMismatch checks a clarification response against the accepted
// kinds (§6.5.2); it returns "" when the response fits one of them.
func (s *seqChecker) responseMismatch(a *await, raw payload.Value) string {
	if len(raw) == 0 {
		return "has no response"
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "has an unreadable response"
	}
	kinds := a.kinds
	if a.kindsInvalid {
		// The producer's list is invalid (an unknown kind, no kind, an
		// item that is no string): the subscriber cannot follow it, and a
		// reply of any kind the specification knows is reasonable; the
		// list is the producer's fault (EVT-SCHEMA, §9.4.1(7)).
		kinds = []string{"freetext", "yes_no", "numeric"}
	} else if len(kinds) == 0 {
		kinds = []string{"freetext", "yes_no", "numeric"}
	}
	for _, k := range kinds {
		switch k {
		case "freetext":
			if _, ok := v.(string); ok {
				return ""
			}
		case "yes_no":
			if _, ok := v.(bool); ok {
				return ""
			}
		case "numeric":
			if _, ok := v.(float64); ok {
				return ""
			}
		case "multiple_choice":
			if str, ok := v.(string); ok && (len(a.choices) == 0 || containsString(a.choices, str)) {
				return ""
			}
		}
	}
	return fmt.Sprintf("answers %s, which fits none of the accepted response kinds %v", string(raw), kinds)
}

// retiredToken is what the checker remembers of a reply token once its
// session has closed.
type retiredToken struct {
	session string
	// withdrawn: the producer withdrew the prompt (§6.8: a state change
	// to thinking or deciding while it was pending, or session.cancelled)
	// at when.
	withdrawn bool
	when      instant
}

// before reports whether i is known to lie before j: on the producer's
// clock when both were read, else on the capture clock. A zero j (not
// known) is never after i.
func (i instant) before(j instant) bool {
	if i.ok && j.ok {
		return i.t.Before(j.t)
	}
	return i.off < j.off
}

// retireTokens drops a session's reply tokens from the lookup table and
// remembers them (bounded) for reuse checks and late replies.
func (s *seqChecker) retireTokens(ss *session) {
	for _, t := range ss.tokens {
		rt := retiredToken{session: ss.id}
		if a := s.tokens[t]; a != nil && a.sess == ss {
			delete(s.tokens, t)
			if a.res == resSuperseded {
				rt.withdrawn, rt.when = true, a.resWhen
			}
		}
		if _, ok := s.retired[t]; !ok {
			if len(s.retQ) < maxRetiredTokens {
				s.retQ = append(s.retQ, t)
			} else {
				delete(s.retired, s.retQ[s.retAt])
				s.retQ[s.retAt] = t
				s.retAt = (s.retAt + 1) % maxRetiredTokens
			}
		}
		s.retired[t] = rt
	}
	ss.tokens = nil
}
