// Attribution of the producer's actions to pending confirmations and
// clarifications: which await an action resolves, and whether the action was
// allowed by the reply or default that resolved it.

package aaep

import (
	"github.com/aaep-tools/aaepkit/protocol"
)

// attributeAction decides what a tool invocation means for the session's
// confirmations (see the file comment, and seq_unseen.go for recordings
// without replies). It returns the token of the confirmation the
// invocation was matched to, for the trace ("" when none).
func (s *seqChecker) attributeAction(ss *session, m *protocol.Message, tool, id string, irrev bool) string {
	var named *await
	how := matchNone
	for i, a := range ss.awaits {
		if a.kind != kindConfirm {
			continue
		}
		h := a.names.match(tool, id)
		if h < matchText || (h == matchText && !irrev) {
			continue
		}
		if a.res.rejected() && namedLater(ss.awaits[i+1:], tool, id) {
			continue // a later confirmation asks for this tool again: the rejected action ended there
		}
		if named == nil || h > how || (h == how && a.preference() > named.preference()) {
			named, how = a, h
		}
	}
	if named != nil {
		s.namedAction(ss, m, named, how, tool, irrev)
		return named.token
	}
	how = matchOrder
	var accepted, pending, unseen *await
	for _, a := range ss.awaits {
		if a.kind != kindConfirm || a.names.match(tool, id) == matchOther {
			continue
		}
		if accepted == nil && !a.consumed && a.res.accepted() {
			accepted = a
		}
		if pending == nil && a.res == resPending {
			pending = a
		}
		if a.res == resUnseen && !a.consumed {
			unseen = a // the latest
		}
	}
	if accepted != nil {
		if accepted.hasCand && accepted.candTool == tool {
			accepted.hasCand = false
			s.candidateBlocked(ss, accepted, tool)
		}
		if !irrev {
			// A reversible tool nothing names: perhaps non-blocked work
			// (§6.1(3)) before the action; it stands for the action only if
			// no other follows (finalizeAwaits).
			accepted.tentative = true
			return accepted.token
		}
		s.useAccept(ss, m, accepted, how, tool, irrev)
		return accepted.token
	}
	if pending != nil {
		if irrev {
			pending.consumed = true
			ss.consumed = true
			fl := s.flowFor(pending, m, acted(tool, m))
			s.blockedAction(fl, ss, m, pending, tool, how)
			if fl != nil {
				pending.res, pending.resAt = resUnseenAccept, refOf(m)
				fl.undo = append(fl.undo, func() { pending.res, pending.resAt = resPending, ref{} })
			}
		} else if !pending.hasCand {
			pending.hasCand, pending.candTool, pending.candAt = true, tool, refOf(m)
		}
		return pending.token
	}
	if unseen != nil && unseen.flow != nil {
		s.unseenAction(ss, m, unseen, tool, irrev)
		return unseen.token
	}
	var last *await
	for i := len(ss.awaits) - 1; i >= 0; i-- {
		if a := ss.awaits[i]; a.kind == kindConfirm && a.res.rejected() && a.names.match(tool, id) != matchOther {
			last = a
			break
		}
	}
	switch {
	case irrev && last != nil:
		s.blameReject(ss, m, last, tool, how)
	case irrev && ss.consumed:
		s.report(seqConfOneAction, ss.id, m, "confirmation already used",
			"irreversible tool %s is invoked, but the session's accepted confirmation was already used by an earlier action; each accept authorizes exactly one action (%s)", tool, how)
	case irrev:
		s.report(seqIrrevNeedsConf, ss.id, m, "no confirmation",
			"irreversible tool %s is invoked without a preceding agent.awaiting.confirmation in this session that could authorize it; irreversible actions need the user's confirmation first", tool)
	case last != nil && last.needReject:
		// Nothing names this reversible tool: it is other work, which the
		// producer MAY continue with (§6.1(3)), not the rejected action.
		// The missing follow-up is SEQ-CONF-REJECT-FOLLOWUP's.
	}
	return ""
}

// namedLater reports whether one of the confirmations later names an
// invocation of tool with tool_call_id id.
func namedLater(later []*await, tool, id string) bool {
	for _, b := range later {
		if b.kind == kindConfirm && b.names.match(tool, id) >= matchName {
			return true
		}
	}
	return false
}

// preference ranks confirmations that name the same invocation equally
// well: an unused accept first, then a pending one, one resolved by an
// unrecorded reply, a rejected one, and an accept already used.
func (a *await) preference() int {
	switch {
	case a.res.accepted() && !a.consumed:
		return 5
	case a.res == resPending:
		return 4
	case a.res == resUnseen && a.flow != nil:
		return 3
	case a.res.rejected():
		return 2
	case a.res.accepted():
		return 1
	}
	return 0
}

// namedAction handles an invocation that confirmation a names (how).
func (s *seqChecker) namedAction(ss *session, m *protocol.Message, a *await, how matchHow, tool string, irrev bool) {
	if a.res.accepted() && a.consumed && a.orderUse.set && how >= matchText {
		// The accept was taken by order by an irreversible tool it does
		// not name; the action it names is this one, so that tool ran
		// without a confirmation of its own.
		u := a.orderUse
		a.orderUse = orderUse{}
		s.report(seqIrrevNeedsConf, ss.id, u.at.msg(), "no confirmation",
			"irreversible tool %s is invoked without a confirmation of its own: the accept of confirmation %s (message %d) names %s, which runs at message %d; irreversible actions need the user's confirmation first",
			u.tool, a.token, a.at.related(), tool, m.Index)
		s.useAccept(ss, m, a, how, tool, irrev)
		return
	}
	switch {
	case a.res.accepted() && !a.consumed:
		if a.hasCand && a.candTool == tool {
			a.hasCand = false
			s.candidateBlocked(ss, a, tool)
		}
		s.useAccept(ss, m, a, how, tool, irrev)
	case a.res == resPending:
		a.consumed = true
		ss.consumed = true
		fl := s.flowFor(a, m, acted(tool, m))
		if irrev {
			s.blockedAction(fl, ss, m, a, tool, how)
		} else if !s.actedOnIgnored(fl, ss, refOf(m), a, "tool "+tool+" is invoked") {
			s.judge(fl, seqConfBlocking, ss.id, refOf(m), "action while blocked",
				"tool %s is invoked while confirmation %s (message %d) awaits its reply (%s); until a valid reply or the timeout, the producer must not perform the confirmed action",
				tool, a.token, a.at.related(), how)
		}
		if fl != nil {
			a.res, a.resAt = resUnseenAccept, refOf(m)
			fl.undo = append(fl.undo, func() { a.res, a.resAt = resPending, ref{} })
		}
	case a.res == resUnseen && a.flow != nil:
		s.unseenAction(ss, m, a, tool, irrev)
	case a.res.rejected():
		s.blameReject(ss, m, a, tool, how)
	case a.res.accepted() && a.consumed && irrev:
		s.report(seqConfOneAction, ss.id, m, "confirmation already used",
			"irreversible tool %s is invoked again on confirmation %s, whose accept already authorized an earlier run (%s); each accept authorizes exactly one action", tool, a.token, how)
	}
}

// useAccept lets an invocation use accepted confirmation a.
func (s *seqChecker) useAccept(ss *session, m *protocol.Message, a *await, how matchHow, tool string, irrev bool) {
	if how == matchOrder && irrev {
		a.orderUse = orderUse{set: true, at: refOf(m), tool: tool}
	}
	a.consumed = true
	a.needAccept = false
	ss.consumed = true
	if irrev && s.strict && a.res != resAccept {
		var fl *unseenFlow
		if a.res.byDefault() {
			fl = s.flowFor(a, m, acted(tool, m))
		}
		s.judge(fl, seqIrrevNeedsAccept, ss.id, refOf(m), "no accept reply",
			"irreversible tool %s runs on confirmation %s, which was %s (%s); the strict profile follows §4.3.1, which requires an accept reply for an irreversible action",
			tool, a.token, a.res, how)
	}
}

// candidateBlocked reports a tool invoked while confirmation a was pending
// and again after its accept: the first run was the action, done early.
func (s *seqChecker) candidateBlocked(ss *session, a *await, tool string) {
	var fl *unseenFlow
	if a.res.byDefault() {
		fl = s.flowFor(a, a.candAt.msg(), acted(tool, a.candAt.msg()))
	}
	s.judge(fl, seqConfBlocking, ss.id, a.candAt, "action before the reply",
		"tool %s was invoked at message %d while confirmation %s was still pending, and again after its accept; the producer must not perform the action before the confirmation is resolved",
		tool, a.candAt.related(), a.token)
}

// blockedAction reports (or holds with fl) an irreversible action invoked
// while confirmation a is unresolved.
func (s *seqChecker) blockedAction(fl *unseenFlow, ss *session, m *protocol.Message, a *await, tool string, how matchHow) {
	s.judge(fl, seqIrrevNeedsAccept, ss.id, refOf(m), "invoked before the accept",
		"irreversible tool %s is invoked while confirmation %s (message %d) is still unresolved (%s); the action needs that confirmation accepted first",
		tool, a.token, a.at.related(), how)
	if s.actedOnIgnored(fl, ss, refOf(m), a, "irreversible tool "+tool+" is invoked") {
		return
	}
	s.judge(fl, seqConfBlocking, ss.id, refOf(m), "action while blocked",
		"tool %s is invoked while confirmation %s (message %d) awaits its reply (%s); until a valid reply or the timeout, the producer must not perform the confirmed action",
		tool, a.token, a.at.related(), how)
}

// unseenAction attributes a tool invocation to confirmation a, which the
// producer treated as resolved by a reply the recording does not carry: it
// was an accept. The findings of the observed reading (where a is still
// pending, or was cancelled by a state change to thinking or deciding) are
// held with a's flow.
func (s *seqChecker) unseenAction(ss *session, m *protocol.Message, a *await, tool string, irrev bool) {
	fl := a.flow
	fl.at, fl.how = refOf(m), acted(tool, m)
	switch {
	case fl.today == resSuperseded && irrev:
		s.judge(fl, seqConfNoActionAfterReject, ss.id, refOf(m), "action after cancel",
			"tool %s is invoked after confirmation %s was cancelled (message %d); a cancelled confirmation counts as a reject and allows no action",
			tool, a.token, a.resAt.related())
	case fl.today == resPending && irrev:
		s.blockedAction(fl, ss, m, a, tool, matchOrder)
	}
	consumed, sessConsumed, today, at := a.consumed, ss.consumed, fl.today, refOf(m)
	fl.undo = append(fl.undo, func() {
		a.consumed, ss.consumed = consumed, sessConsumed
		switch {
		case today == resPending && irrev:
			a.consumed, ss.consumed = true, true
		case today == resPending && !a.hasCand:
			a.hasCand, a.candTool, a.candAt = true, tool, at
		}
		a.res = resUnseen
	})
	a.res, a.resAt = resUnseenAccept, refOf(m)
	a.consumed, ss.consumed = true, true
}

// blameReject reports an action that follows a rejected confirmation.
func (s *seqChecker) blameReject(ss *session, m *protocol.Message, a *await, tool string, how matchHow) {
	if !a.laterAccept && s.actedOnIgnored(nil, ss, refOf(m), a, "tool "+tool+" is invoked") {
		return
	}
	switch a.res {
	case resReject:
		if a.laterAccept {
			s.report(seqReplyFirstWins, ss.id, m, "followed a later reply",
				"tool %s runs after confirmation %s was rejected by its first reply (%s); a later accept reply does not count: only the first valid reply wins", tool, a.token, how)
			return
		}
		s.report(seqConfNoActionAfterReject, ss.id, m, "action after reject",
			"tool %s is invoked after the user rejected confirmation %s (message %d; %s); after a reject the producer must not perform the action",
			tool, a.token, a.resAt.related(), how)
	case resTimeoutReject:
		s.report(seqConfTimeoutDefault, ss.id, m, "action after default reject",
			"tool %s is invoked after confirmation %s timed out unanswered with default_decision \"reject\" (%s); the default applies, so the action must not happen",
			tool, a.token, how)
	case resCloseReject:
		s.report(negClosePendingDefault, ss.id, m, "action after close default",
			"tool %s is invoked after the subscription awaiting confirmation %s closed (%s); its default_decision \"reject\" applies, so the action must not happen",
			tool, a.token, how)
	case resSuperseded:
		s.report(seqConfNoActionAfterReject, ss.id, m, "action after cancel",
			"tool %s is invoked after confirmation %s was cancelled (message %d; %s); a cancelled confirmation counts as a reject and allows no action",
			tool, a.token, a.resAt.related(), how)
	}
}
