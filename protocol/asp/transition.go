// The checker's side of the state machine: δ(state, message) read from the
// table of machine.go, and the guards and actions of its edges
// (invitations, proposals, commitments, escalation and its resolution).

package asp

import (
	"slices"
	"time"

	"github.com/aaep-tools/aaepkit/protocol"
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
func (c *checker) refuse(s *session, m *protocol.Message, rule *protocol.Rule, short, format string, args ...any) move {
	c.r.Report(rule, s.id, m, short, format, args...)
	s.afterViolation = true
	return move{to: s.state, kind: protocol.StepOther, note: "refused", violation: c.strict}
}

// notAllowed refuses a performative that no edge of the state takes.
func (c *checker) notAllowed(s *session, m *protocol.Message, e *envelope) move {
	return c.refuse(s, m, ruleS02, e.perf+" not allowed in "+s.state,
		"%s is not allowed while the session is %s (allowed: %s); the receiver must reject it, answering REJECT with code invalid_state_transition", e.perf, s.state, allowedList(s.state))
}

// transition applies the normalised transition function δ(state, message)
// of the machine's table (machine.go): the first edge of the state that
// the performative takes and whose guard holds, its lenient reading, and
// its action.
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

	var r *edge
	for _, x := range index.byMsg[s.state][p] {
		if x.guard == nil || x.guard(s, e) {
			r = x
			break
		}
	}
	if r == nil {
		otherwise := refuseUnlisted
		if st := index.states[s.state]; st != nil {
			otherwise = st.otherwise
		}
		switch otherwise {
		case adoptConversing:
			c.r.Report(ruleS01, s.id, m, "no invitation", "the first message of session %s is %s, not a PROPOSE of type session-invitation; the session's start was not recorded, so checking goes on as if it were CONVERSING", protocol.Clip(s.id, 40), p)
			s.adopted, s.state = true, sConversing
			mv := c.transition(s, m, e)
			mv.from = sConversing
			return mv
		case refuseEscalated:
			return c.refuse(s, m, ruleS06, p+" while ESCALATED", "%s cannot leave or act in an ESCALATED session: only INFORM resolution (back to %s) or CLOSE may follow an escalation", p, s.escalatedFrom())
		}
		return c.notAllowed(s, m, e)
	}
	if r.lenient != "" {
		if c.strict {
			return c.notAllowed(s, m, e)
		}
		c.r.Report(ruleS02W, s.id, m, p+" in "+s.state+" (lenient)", "%s is not in the allowed-performatives table for %s, but %s; the lenient profile accepts it (the strict profile rejects it)", p, s.state, r.lenient)
	}
	mv := move{to: r.to, kind: r.kind}
	if r.act != nil {
		mv = r.act(c, s, m, e, mv)
	}
	return mv
}

// The actions and guards of the table's edges.

// acceptInvitation: the invited agent's ACCEPT (row 2's first half).
func (c *checker) acceptInvitation(s *session, m *protocol.Message, e *envelope, mv move) move {
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
	return mv
}

// identity: an INFORM identity of the exchange after the ACCEPT (row 2's
// second half); the edge to INTRODUCED is taken by the last one.
func (c *checker) identity(s *session, m *protocol.Message, e *envelope, mv move) move {
	if e.info != "identity" {
		return c.refuse(s, m, ruleS10, "INFORM not identity", "while INVITED the only INFORM is informType identity, got %q", e.info)
	}
	if !s.accepted {
		return c.refuse(s, m, ruleS03, "identity before ACCEPT", "the identity exchange starts only after the invited agent's ACCEPT; this INFORM identity came before it")
	}
	if e.sender != "" && !slices.Contains(s.identities, e.sender) && len(s.identities) < maxIdentity {
		s.identities = append(s.identities, e.sender)
	}
	if mv.to == sIntroduced {
		s.inviteDeadline = time.Time{}
	}
	return mv
}

// completesIntroduction guards the edge to INTRODUCED: an accepted
// invitation's INFORM identity after which every participant has sent its
// identity.
func completesIntroduction(s *session, e *envelope) bool {
	if e.info != "identity" || !s.accepted {
		return false
	}
	sent := func(p string) bool {
		return slices.Contains(s.identities, p) || (p == e.sender && len(s.identities) < maxIdentity)
	}
	n := 0
	for _, p := range append([]string{s.inviter}, s.acceptors...) {
		if p == "" {
			continue
		}
		if !sent(p) {
			return false
		}
		n++
	}
	return n >= 2 || (s.inviter == "" && n >= 1)
}

// acceptProposal: an ACCEPT while CONVERSING, of a proposal that must not
// be void or cleared.
func (c *checker) acceptProposal(s *session, m *protocol.Message, e *envelope, mv move) move {
	if ref := acceptRef(e); ref != "" && slices.Contains(s.cleared, ref) {
		return c.refuse(s, m, ruleS05, "accepts a cleared commitment", "this ACCEPT names commitment %s, which an earlier REJECT or COUNTER cleared; it can no longer be accepted", ref)
	}
	c.voidProposal(s, m, e)
	return mv
}

// commit: a COMMIT makes its commitment the pending one (row 5).
func (c *checker) commit(s *session, _ *protocol.Message, e *envelope, mv move) move {
	s.pending, s.pendingMsg, s.committer = e.str("commitmentId"), e.messageID, e.sender
	return mv
}

// acceptCommitment: the ACCEPT of the pending COMMIT (row 9).
func (c *checker) acceptCommitment(s *session, m *protocol.Message, e *envelope, mv move) move {
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
	return mv
}

// clearCommitment: a REJECT or COUNTER of the pending COMMIT clears it (row 10).
func (c *checker) clearCommitment(s *session, m *protocol.Message, e *envelope, mv move) move {
	if s.pending != "" {
		if len(s.cleared) >= maxCleared {
			s.cleared = s.cleared[1:]
		}
		s.cleared = append(s.cleared, s.pending)
	}
	s.pending, s.pendingMsg, s.committer = "", "", ""
	return c.remember(s, m, e, mv)
}

// executionReport: an INFORM while EXECUTING is progress, result or error.
func (c *checker) executionReport(s *session, m *protocol.Message, e *envelope, mv move) move {
	switch e.info {
	case "result":
		s.resultSeen = true
	case "progress", "error":
	default:
		return c.refuse(s, m, ruleS10, "INFORM type not for EXECUTING", "while EXECUTING an INFORM is progress, result or error, got %q", e.info)
	}
	return mv
}

// closeExecution: a CLOSE during EXECUTING before the obligations were
// reported fulfilled may be a breach (row 11).
func (c *checker) closeExecution(s *session, m *protocol.Message, e *envelope, mv move) move {
	if reason := e.str("reason"); !s.resultSeen || reason == "unilateral" {
		why := "before any INFORM result confirmed the obligations were fulfilled"
		if reason == "unilateral" {
			why = "with reason unilateral"
		}
		c.r.Report(ruleS09, s.id, m, "possible breach", "%s closed the session during EXECUTING %s; a unilateral close of an agreement in progress may be treated as a breach", e.sender, why)
	}
	return c.closeSession(s, m, e, mv)
}

// closeSession: the lenient profile keeps a session closed by CLOSE open
// for the other participant's CLOSE (mutual close).
func (c *checker) closeSession(s *session, _ *protocol.Message, e *envelope, mv move) move {
	if e.perf == pClose && !c.strict {
		s.grace, s.graceFrom = graceMutualClose, e.sender
	}
	return mv
}

// invite: the session-invitation PROPOSE starts the invitation's clocks (row 1).
func (c *checker) invite(s *session, _ *protocol.Message, e *envelope, mv move) move {
	s.inviter = e.sender
	if e.hasTS {
		s.inviteDeadline = e.ts.Add(invitationTimeout)
		if v, ok := e.body["validUntil"].Str(); ok {
			if t, _, ok := parseTime(v); ok {
				s.inviteDeadline = t
			}
		}
	}
	if terms, ok := e.body["terms"].Object(); ok {
		// Each name in its own unit (asp-kahn notes §1.6 item 7): the
		// sessions page's proposedDuration in milliseconds, the state
		// machine's proposed_duration in seconds (its default is 3600 s).
		if d, ok := bodyMillis(terms["proposedDuration"]); ok {
			s.timeout = d
		} else if d, ok := bodySeconds(terms["proposed_duration"]); ok {
			s.timeout = d
		}
	}
	return mv
}

// remember records a proposal's validUntil for ASP-T05.
func (c *checker) remember(s *session, _ *protocol.Message, e *envelope, mv move) move {
	id := e.str("proposalId")
	if id == "" {
		return mv
	}
	p := proposal{id: id, sender: e.sender}
	if v, ok := e.body["validUntil"].Str(); ok {
		if t, _, ok := parseTime(v); ok {
			p.validUntil = t
		}
	}
	if len(s.proposals) >= maxProposals {
		s.proposals = s.proposals[1:]
	}
	s.proposals = append(s.proposals, p)
	return mv
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

// escalate: an ESCALATE pauses the session and starts the escalation's
// clock; the state it leaves is pushed for the resolution.
func (c *checker) escalate(s *session, _ *protocol.Message, e *envelope, mv move) move {
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
	return mv
}

// resolve: an INFORM resolution leaves ESCALATED for the state the
// escalation left (row 14).
func (c *checker) resolve(s *session, m *protocol.Message, e *envelope, mv move) move {
	if e.info != "resolution" {
		return c.refuse(s, m, ruleS10, "INFORM not resolution", "while ESCALATED the only INFORM is informType resolution, got %q", e.info)
	}
	mv.to = sConversing // a session adopted while ESCALATED: the state left is unknown
	if n := len(s.stack); n > 0 {
		x := s.stack[n-1]
		s.stack = s.stack[:n-1]
		mv.to = x.prev
		if mv.to != sEscalated && e.hasTS && !x.start.IsZero() && e.ts.After(x.start) {
			s.paused += e.ts.Sub(x.start)
		}
	}
	return mv
}

func (s *session) escalatedFrom() string {
	if n := len(s.stack); n > 0 {
		return s.stack[n-1].prev
	}
	return "the previous state"
}
