// The ASP state machine in the checker: which performative moves a session
// from which state, with the lenient profile's extra edges, invitations,
// proposals, escalation and its resolution.

package asp

import (
	"slices"
	"time"

	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/jsonval"
)

// move is the outcome of one message for the state machine.
type move struct {
	from      string // state the step starts from, when not the session's state (adoption)
	to        string
	kind      protocol.StepKind
	note      string
	violation bool // strict profile: the session fails after the step
}

// refuse reports a message the current state does not allow.
func (c *checker) refuse(s *session, m *protocol.Message, rule, short, format string, args ...any) move {
	c.r.Report(rule, s.id, m, short, format, args...)
	s.afterViolation = true
	return move{to: s.state, kind: protocol.StepOther, note: "refused", violation: c.strict}
}

// notAllowed refuses a performative missing from the allowed table.
func (c *checker) notAllowed(s *session, m *protocol.Message, e *envelope) move {
	return c.refuse(s, m, ruleS02, e.perf+" not allowed in "+s.state,
		"%s is not allowed while the session is %s (allowed: %s); the receiver must reject it, answering REJECT with code invalid_state_transition", e.perf, s.state, allowedList(s.state))
}

// lenientEdge takes a transition only the lenient profile accepts.
func (c *checker) lenientEdge(s *session, m *protocol.Message, e *envelope, to string, why string) move {
	if c.strict {
		return c.notAllowed(s, m, e)
	}
	c.r.Report(ruleS02W, s.id, m, e.perf+" in "+s.state+" (lenient)", "%s is not in the allowed-performatives table for %s, but %s; the lenient profile accepts it (the strict profile rejects it)", e.perf, s.state, why)
	return move{to: to, kind: protocol.StepState}
}

const (
	whyAnyClose    = "the transition table's rows 16–17 let WITHDRAW and CLOSE end a session from any state"
	whyAnyEscalate = "the state diagram lets ESCALATE leave any state"
	whyCounter     = "the sessions page lets the invited agent COUNTER an invitation"
)

func (c *checker) closeMove(s *session, e *envelope, mv move) move {
	if mv.to == sClosed {
		mv.kind = protocol.StepLifecycle
		if e.perf == pClose && !c.strict {
			s.grace, s.graceFrom = graceMutualClose, e.sender
		}
	}
	return mv
}

// transition applies the normalised transition function δ(state, message).
func (c *checker) transition(s *session, m *protocol.Message, e *envelope) move {
	p := e.perf
	if p == "" {
		return move{to: s.state, kind: protocol.StepOther, note: "unreadable performative"}
	}
	if s.afterViolation && p == pReject && e.str("code") == invalidStateTransition {
		s.afterViolation = false
		return move{to: s.state, kind: protocol.StepReply, note: "answers the refused message"}
	}
	s.afterViolation = false

	switch s.state {
	case sIdle:
		if isInvitation(e) {
			c.invite(s, e)
			return move{to: sInvited, kind: protocol.StepLifecycle}
		}
		c.r.Report(ruleS01, s.id, m, "no invitation", "the first message of session %s is %s, not a PROPOSE of type session-invitation; the session's start was not recorded, so checking goes on as if it were CONVERSING", protocol.Clip(s.id, 40), p)
		s.adopted, s.state = true, sConversing
		mv := c.transition(s, m, e)
		mv.from = sConversing
		return mv

	case sInvited:
		switch p {
		case pAccept:
			if e.sender != "" && e.sender == s.inviter {
				return c.refuse(s, m, ruleS03, "inviter accepted", "%s accepted its own invitation; only the invited agent can accept it", e.sender)
			}
			s.accepted = true
			if e.sender != "" && !slices.Contains(s.acceptors, e.sender) && len(s.acceptors) < maxIdentity {
				s.acceptors = append(s.acceptors, e.sender)
			}
			if !c.strict {
				s.inviteDeadline = time.Time{}
			}
			return move{to: sInvited, kind: protocol.StepReply}
		case pReject:
			return move{to: sFailed, kind: protocol.StepReply}
		case pInform:
			if e.info != "identity" {
				return c.refuse(s, m, ruleS10, "INFORM not identity", "while INVITED the only INFORM is informType identity, got %q", e.info)
			}
			if !s.accepted {
				return c.refuse(s, m, ruleS03, "identity before ACCEPT", "the identity exchange starts only after the invited agent's ACCEPT; this INFORM identity came before it")
			}
			if e.sender != "" && !slices.Contains(s.identities, e.sender) && len(s.identities) < maxIdentity {
				s.identities = append(s.identities, e.sender)
			}
			if c.introduced(s) {
				s.inviteDeadline = time.Time{}
				return move{to: sIntroduced, kind: protocol.StepHandshake}
			}
			return move{to: sInvited, kind: protocol.StepHandshake}
		case pCounter:
			mv := c.lenientEdge(s, m, e, sInvited, whyCounter)
			mv.kind = protocol.StepReply
			return mv
		case pWithdraw, pClose:
			return c.closeMove(s, e, c.lenientEdge(s, m, e, sClosed, whyAnyClose))
		case pEscalate:
			return c.escalateLenient(s, m, e)
		}
		return c.notAllowed(s, m, e)

	case sIntroduced:
		switch p {
		case pPropose, pQuery, pInform, pObserve:
			c.remember(s, e)
			return move{to: sConversing, kind: protocol.StepState}
		case pWithdraw, pClose:
			return c.closeMove(s, e, c.lenientEdge(s, m, e, sClosed, whyAnyClose))
		case pEscalate:
			return c.escalateLenient(s, m, e)
		}
		return c.notAllowed(s, m, e)

	case sConversing:
		switch p {
		case pCommit:
			s.pending, s.pendingMsg, s.committer = e.str("commitmentId"), e.messageID, e.sender
			return move{to: sAgreeing, kind: protocol.StepState}
		case pClose, pWithdraw:
			return c.closeMove(s, e, move{to: sClosed})
		case pEscalate:
			return c.escalate(s, e)
		case pAccept:
			if ref := acceptRef(e); ref != "" && slices.Contains(s.cleared, ref) {
				return c.refuse(s, m, ruleS05, "accepts a cleared commitment", "this ACCEPT names commitment %s, which an earlier REJECT or COUNTER cleared; it can no longer be accepted", ref)
			}
			c.voidProposal(s, m, e)
			return move{to: sConversing, kind: protocol.StepReply}
		case pReject, pCounter:
			c.remember(s, e)
			return move{to: sConversing, kind: protocol.StepReply}
		case pQuery, pClarify:
			return move{to: sConversing, kind: protocol.StepClarification}
		case pDelegate:
			return move{to: sConversing, kind: protocol.StepHandoff}
		case pInform:
			return move{to: sConversing, kind: protocol.StepProgress}
		case pPropose, pObserve:
			c.remember(s, e)
			return move{to: sConversing, kind: protocol.StepOther}
		}
		return c.notAllowed(s, m, e)

	case sAgreeing:
		switch p {
		case pAccept:
			ref := acceptRef(e)
			if ref != "" && slices.Contains(s.cleared, ref) {
				return c.refuse(s, m, ruleS05, "accepts a cleared commitment", "this ACCEPT names commitment %s, which an earlier REJECT or COUNTER cleared; only the pending commitment %s can be accepted", ref, s.pending)
			}
			switch {
			case ref == "":
				c.r.Report(ruleS04, s.id, m, "ACCEPT names no commitment", "this ACCEPT moves the session to EXECUTING but does not name the pending commitment %s (body.commitmentId or inReplyTo)", s.pending)
			case ref != s.pending && ref != s.pendingMsg:
				c.r.Report(ruleS04, s.id, m, "ACCEPT names another commitment", "this ACCEPT names %s, but the pending commitment is %s", ref, s.pending)
			}
			if e.sender != "" && e.sender == s.committer {
				c.r.Report(ruleS04, s.id, m, "committer accepted", "%s accepted its own COMMIT; the other party is the one to accept it", e.sender)
			}
			return move{to: sExecuting, kind: protocol.StepReply}
		case pReject, pCounter:
			if s.pending != "" {
				if len(s.cleared) >= maxCleared {
					s.cleared = s.cleared[1:]
				}
				s.cleared = append(s.cleared, s.pending)
			}
			s.pending, s.pendingMsg, s.committer = "", "", ""
			c.remember(s, e)
			return move{to: sConversing, kind: protocol.StepReply}
		case pClarify:
			return move{to: sAgreeing, kind: protocol.StepClarification}
		case pEscalate:
			return c.escalate(s, e)
		case pClose:
			return c.closeMove(s, e, move{to: sClosed})
		case pWithdraw:
			return c.closeMove(s, e, c.lenientEdge(s, m, e, sClosed, whyAnyClose))
		}
		return c.notAllowed(s, m, e)

	case sExecuting:
		switch p {
		case pInform:
			switch e.info {
			case "result":
				s.resultSeen = true
				return move{to: sExecuting, kind: protocol.StepProgress}
			case "progress", "error":
				return move{to: sExecuting, kind: protocol.StepProgress}
			}
			return c.refuse(s, m, ruleS10, "INFORM type not for EXECUTING", "while EXECUTING an INFORM is progress, result or error, got %q", e.info)
		case pQuery:
			return move{to: sExecuting, kind: protocol.StepClarification}
		case pEscalate:
			return c.escalate(s, e)
		case pClose:
			if reason := e.str("reason"); !s.resultSeen || reason == "unilateral" {
				why := "before any INFORM result confirmed the obligations were fulfilled"
				if reason == "unilateral" {
					why = "with reason unilateral"
				}
				c.r.Report(ruleS09, s.id, m, "possible breach", "%s closed the session during EXECUTING %s; a unilateral close of an agreement in progress may be treated as a breach", e.sender, why)
			}
			return c.closeMove(s, e, move{to: sClosed})
		case pWithdraw:
			return c.closeMove(s, e, c.lenientEdge(s, m, e, sClosed, whyAnyClose))
		}
		return c.notAllowed(s, m, e)

	case sEscalated:
		switch p {
		case pInform:
			if e.info != "resolution" {
				return c.refuse(s, m, ruleS10, "INFORM not resolution", "while ESCALATED the only INFORM is informType resolution, got %q", e.info)
			}
			return c.resolve(s, e)
		case pClose:
			return c.closeMove(s, e, move{to: sClosed})
		case pWithdraw:
			return c.closeMove(s, e, c.lenientEdge(s, m, e, sClosed, whyAnyClose))
		case pEscalate:
			return c.escalateLenient(s, m, e)
		}
		return c.refuse(s, m, ruleS06, p+" while ESCALATED", "%s cannot leave or act in an ESCALATED session: only INFORM resolution (back to %s) or CLOSE may follow an escalation", p, s.escalatedFrom())
	}
	return c.notAllowed(s, m, e)
}

// invite starts the invitation's clocks.
func (c *checker) invite(s *session, e *envelope) {
	s.inviter = e.sender
	if e.hasTS {
		s.inviteDeadline = e.ts.Add(invitationTimeout)
		if v, ok := jsonval.StringVal(e.body["validUntil"]); ok {
			if t, _, ok := parseTime(v); ok {
				s.inviteDeadline = t
			}
		}
	}
	if terms, ok := jsonval.ObjectVal(e.body["terms"]); ok {
		// Each name in its own unit (asp-kahn notes §1.6 item 7): the
		// sessions page's proposedDuration in milliseconds, the state
		// machine's proposed_duration in seconds (its default is 3600 s).
		if d, ok := bodyMillis(terms["proposedDuration"]); ok {
			s.timeout = d
		} else if d, ok := bodySeconds(terms["proposed_duration"]); ok {
			s.timeout = d
		}
	}
}

// introduced reports whether every participant has sent its identity.
func (c *checker) introduced(s *session) bool {
	if !s.accepted {
		return false
	}
	need := append([]string{s.inviter}, s.acceptors...)
	n := 0
	for _, p := range need {
		if p == "" {
			continue
		}
		if !slices.Contains(s.identities, p) {
			return false
		}
		n++
	}
	return n >= 2 || (s.inviter == "" && n >= 1)
}

// remember records a proposal's validUntil for ASP-T05.
func (c *checker) remember(s *session, e *envelope) {
	id := e.str("proposalId")
	if id == "" {
		return
	}
	p := proposal{id: id, sender: e.sender}
	if v, ok := jsonval.StringVal(e.body["validUntil"]); ok {
		if t, _, ok := parseTime(v); ok {
			p.validUntil = t
		}
	}
	if len(s.proposals) >= maxProposals {
		s.proposals = s.proposals[1:]
	}
	s.proposals = append(s.proposals, p)
}

// voidProposal reports an ACCEPT of a proposal after its validUntil. An
// ACCEPT that names no proposal accepts the other party's latest one.
func (c *checker) voidProposal(s *session, m *protocol.Message, e *envelope) {
	if !e.hasTS {
		return
	}
	ref := acceptRef(e)
	for i := len(s.proposals) - 1; i >= 0; i-- {
		p := s.proposals[i]
		if (ref != "" && p.id == ref) || (ref == "" && p.sender != e.sender) {
			if !p.validUntil.IsZero() && e.ts.After(p.validUntil) {
				c.r.Report(ruleT05, s.id, m, "proposal expired", "this ACCEPT of proposal %s came at %s, after the proposal's validUntil %s; an expired proposal is void", p.id, e.ts.Format(time.RFC3339Nano), p.validUntil.Format(time.RFC3339Nano))
			}
			return
		}
	}
}

// acceptRef is what an ACCEPT (or REJECT, COUNTER) answers [INFERRED field].
func acceptRef(e *envelope) string {
	for _, k := range []string{"commitmentId", "inReplyTo", "proposalId"} {
		if v := e.str(k); v != "" {
			return v
		}
	}
	return e.inReplyTo
}

func (c *checker) escalate(s *session, e *envelope) move {
	x := escalation{prev: s.state}
	if e.hasTS {
		timeout := escalationTimeout
		if d, ok := bodySeconds(e.body["timeout"]); ok {
			timeout = d
		} else if d, ok := bodyMillis(e.body["timeoutMs"]); ok {
			timeout = d
		}
		x.start, x.deadline = e.ts, e.ts.Add(timeout)
	}
	if len(s.stack) < maxStack {
		s.stack = append(s.stack, x)
	} else {
		s.stack[len(s.stack)-1].deadline = x.deadline
	}
	return move{to: sEscalated, kind: protocol.StepState}
}

func (c *checker) escalateLenient(s *session, m *protocol.Message, e *envelope) move {
	mv := c.lenientEdge(s, m, e, sEscalated, whyAnyEscalate)
	if mv.to == sEscalated {
		return c.escalate(s, e)
	}
	return mv
}

// resolve leaves ESCALATED for the state the escalation left.
func (c *checker) resolve(s *session, e *envelope) move {
	to := sConversing // a session adopted while ESCALATED: the state left is unknown
	if n := len(s.stack); n > 0 {
		x := s.stack[n-1]
		s.stack = s.stack[:n-1]
		to = x.prev
		if to != sEscalated && e.hasTS && !x.start.IsZero() && e.ts.After(x.start) {
			s.paused += e.ts.Sub(x.start)
		}
	}
	return move{to: to, kind: protocol.StepState}
}

func (s *session) escalatedFrom() string {
	if n := len(s.stack); n > 0 {
		return s.stack[n-1].prev
	}
	return "the previous state"
}
