// Session lifecycle in the sequence checker: session.started, terminal
// events, sessions draining on other sources, closing, and the checks run
// when a session or the stream ends (handoff end, A.7 tables).

package aaep

import (
	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol"
)

// onStarted handles agent.session.started.
func (s *seqChecker) onStarted(ss *session, m *protocol.Message, ev *Event, now instant) string {
	if ss.started {
		s.report(seqStartOnce, ss.id, m, "second session.started",
			"session %s sends agent.session.started a second time; a session has exactly one started event", ss.id)
		return ""
	}
	ss.started = true
	ss.start = now
	if ss.msgs == 1 {
		ss.state = impliedState(ev.Core)
	}
	if raw := ev.vals[kToolsAvailable]; raw != nil {
		ss.toolsAvail = map[string]bool{}
		raw.Elements(func(_ int, v payload.Value) bool {
			if t, ok := v.Str(); ok {
				ss.toolsAvail[t] = true
			}
			return true
		})
	}
	return ""
}

// onTerminal handles completed, errored and cancelled: the session's
// end-of-life rules, its last step and its summary.
func (s *seqChecker) onTerminal(ss *session, lg *leg, m *protocol.Message, ev *Event, now instant, from string) string {
	end := terminalState(ev.Core)
	cancelled := ev.Core == TypeSessionCancelled
	detail := ""
	switch ev.Core {
	case TypeSessionErrored:
		detail, _ = ev.Str("error_category")
	case TypeSessionCancelled:
		detail, _ = ev.Str("cancelled_by")
	}
	// Pending confirmations and clarifications end with the session;
	// cancelling supersedes them (§6.8).
	for _, a := range ss.awaits {
		if a.res == resPending {
			if cancelled {
				a.res, a.resWhen = resSuperseded, now
			} else {
				a.res = resSessionEnd
			}
			a.resAt = refOf(m)
		}
	}
	s.finalizeAwaits(ss, m, cancelled)
	s.finalizeTools(ss, m)
	s.finalizeOutputs(ss, m)
	s.checkCompletedCounts(ss, m, ev, now)
	s.checkCoverage(ss, m)
	for _, l := range ss.legs {
		s.flushGaps(ss, l)
	}
	ss.state = end
	ss.ended = true
	ss.endState = end
	ss.termID = ev.EventID
	s.r.Step(protocol.Step{Session: ss.id, Index: m.Index, Offset: m.Offset, From: from, To: end,
		Label: shortType(ev), Detail: detail, Kind: protocol.StepLifecycle})
	s.decideFlows(ss.id)
	s.r.SessionDone(protocol.SessionSummary{Session: ss.id, Messages: ss.msgs, First: ss.first, Last: ss.last, State: end, Complete: true})
	s.retireTokens(ss)
	// Drop what the rules no longer need; keep identity for other sources.
	ss.tools = toolTable{}
	ss.outputs, ss.outDone, ss.awaits, ss.enterPending = nil, nil, nil, nil
	s.markLegTerminal(ss, lg)
	if s.sessions.Get(ss.id) == ss && ss.ended {
		s.addDraining(ss)
	}
	return detail
}

func (s *seqChecker) addDraining(ss *session) {
	// Already closed by markLegTerminal when every source delivered the end.
	if s.sessions.Get(ss.id) != ss {
		return
	}
	s.draining = append(s.draining, ss)
	if len(s.draining) > maxDraining {
		old := s.draining[0]
		s.draining = s.draining[1:]
		if s.sessions.Get(old.id) == old {
			s.closeSession(old)
		}
	}
}

// closeSession drops a session's state and remembers its end.
func (s *seqChecker) closeSession(ss *session) {
	if s.sessions.Get(ss.id) != ss {
		return
	}
	s.neg.sessionClosed(ss)
	ss.dead = true
	s.liveIDs -= ss.idCount
	ss.idCount = 0
	s.sessions.Close(ss.id)
	if _, ok := s.closed[ss.id]; !ok {
		if len(s.closedQ) < protocol.DefaultClosedMemory {
			s.closedQ = append(s.closedQ, ss.id)
		} else {
			delete(s.closed, s.closedQ[s.closedAt])
			s.closedQ[s.closedAt] = ss.id
			s.closedAt = (s.closedAt + 1) % len(s.closedQ)
		}
	}
	s.closed[ss.id] = closedInfo{state: ss.endState, termID: ss.termID}
}

// finish ends the stream: sessions still open are incomplete.
func (s *seqChecker) finish() {
	s.flushHolds()
	s.finishRedelivered()
	for _, id := range s.sessions.Keys() {
		ss := s.sessions.Get(id)
		if ss.ended {
			s.closeSession(ss)
			continue
		}
		for _, l := range ss.legs {
			s.flushGaps(ss, l)
		}
		s.keepNotices(ss)
		if s.neg.sessionShouldHaveEnded(ss) {
			s.report(seqTerminalPresent, ss.id, nil, "no terminal event",
				"session %s never ended although its subscription was closed: every session must end with agent.session.completed, errored or cancelled (last state %s)", ss.id, ss.state)
		} else {
			s.report(seqSessionIncomplete, ss.id, nil, "unfinished",
				"the recording ends before session %s does (last state %s, no completed, errored or cancelled event): the stream stopped, a side closed the subscription or the connection dropped, which either side may do at any time (§5.8), so the session is unfinished, not in violation", ss.id, ss.state)
		}
		s.decideFlows(ss.id)
		s.r.SessionDone(protocol.SessionSummary{Session: ss.id, Messages: ss.msgs, First: ss.first, Last: ss.last, State: ss.state, Complete: false})
		s.retireTokens(ss)
		ss.ended = true
		ss.endState = ss.state
		s.closeSession(ss)
	}
	s.finishUnseen()
	s.neg.finish()
}

// checkHandoffEnd: SEQ-HANDOFF-END (INFO).
func (s *seqChecker) checkHandoffEnd(ss *session, m *protocol.Message, ev *Event) {
	if !(ss.handoff || ss.state == stateHandingOff) || ss.handoffNoted {
		return
	}
	switch ev.Core {
	case TypeStateChanged, TypeProgressUpdated, TypeToolCompleted,
		TypeSessionCompleted, TypeSessionErrored, TypeSessionCancelled:
		return
	}
	ss.handoffNoted = true
	s.report(seqHandoffEnd, ss.id, m, "activity after handoff",
		"session %s requested a handoff (or entered handing_off), which is terminal-equivalent, yet continues with %s; after a handoff expect only state changes and the terminal event", ss.id, shortType(ev))
}

// checkA7 applies the predecessor tables of Appendix A.7 (strict profile).
func (s *seqChecker) checkA7(ss *session, m *protocol.Message, ev *Event) {
	switch ev.Core {
	case TypeToolInvoked:
		ok := (ss.prevCore == TypeStateChanged && (ss.prevTo == stateCallingTool || ss.prevTo == stateThinking)) ||
			ss.prevAccept || ss.prevCore == TypeToolInvoked
		if !ok {
			s.report(seqA7Tables, ss.id, m, "unexpected predecessor",
				"A.7.4 expects agent.tool.invoked right after a state change to calling_tool or thinking, or after an accepting confirmation.reply; here it follows %s", prevName(ss))
		}
	case TypeOutputStreaming:
		out, _ := ev.text(kOutputID)
		ok := (ss.prevCore == TypeStateChanged && ss.prevTo == stateWritingOutput) || ss.prevCore == TypeToolCompleted ||
			(ss.prevCore == TypeOutputStreaming && ss.prevOutput == string(out) && !ss.prevComplete)
		if !ok {
			s.report(seqA7Tables, ss.id, m, "unexpected predecessor",
				"A.7.7 expects agent.output.streaming after a state change to writing_output, a tool completion or an unfinished chunk of the same output; here it follows %s", prevName(ss))
		}
	case TypeAwaitingConfirmation:
		ok := (ss.prevCore == TypeStateChanged && ss.prevTo == stateAwaitingInput) || ss.prevCore == TypeSessionStarted
		if !ok {
			s.report(seqA7Tables, ss.id, m, "unexpected predecessor",
				"A.7.6 expects agent.awaiting.confirmation after a state change to awaiting_input or right after session.started; here it follows %s", prevName(ss))
		}
	}
}

// keepNotices keeps the session's resolved confirmations for
// NEG-RESOLUTION-NOTICE, which is judged when the session closes on every
// source.
func (s *seqChecker) keepNotices(ss *session) {
	for _, a := range ss.awaits {
		if a.kind == kindConfirm && a.res != resPending && a.res != resSessionEnd && a.res != resSuperseded && !a.res.unseen() {
			for _, src := range a.sources {
				if s.neg.handshaked(src) {
					ss.notices = append(ss.notices, a)
					break
				}
			}
		}
	}
}

// subscriptionEnded is called when source's subscription closes or is
// rejected: sessions it carried as primary move to another source that
// still carries them, and ended sessions stop waiting for it.
func (s *seqChecker) subscriptionEnded(source int) {
	for _, id := range s.sessions.Keys() {
		ss := s.sessions.Get(id)
		if ss.ended {
			done := true
			for _, l := range ss.legs {
				if !l.terminal && !s.neg.sourceClosed(l.source) {
					done = false
				}
			}
			if done {
				s.closeSession(ss)
			}
			continue
		}
		if ss.primary != source {
			continue
		}
		for _, l := range ss.legs {
			if l.source != source && !s.neg.sourceClosed(l.source) {
				ss.former = append(ss.former, source)
				ss.primary = l.source
				break
			}
		}
	}
}
