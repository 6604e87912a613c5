package aaep

// The internal state chain: SEQ-STATE-*.
//
// Implicit-state model (catalog §3.3): after each event the current state is
// the last explicit to_state, overridden by the latest implicit one:
// session.started ⇒ idle, tool.invoked ⇒ calling_tool, awaiting.* ⇒
// awaiting_input, output.streaming ⇒ writing_output, handoff.requested ⇒
// handing_off; tool.completed, progress.updated and replies leave it
// unchanged. §4.2.1 allows a from_state "consistent with the implicit state
// derived from other emitted events", and this is the only reading under
// which the specification's own examples (§4.6, §5.11, §6.7.2, §6.10) pass.
//
// Lenient profile: a from_state is accepted when it equals the previous
// explicit to_state or the implicit current state. Strict profile: the
// explicit chain only (the first from_state must be "idle", each later one
// must equal the previous to_state); it flags §4.6's own line 10.

import (
	"fmt"
	"math"
	"time"

	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol"
)

func (s *seqChecker) onStateChanged(ss *session, m *protocol.Message, ev *Event, now instant) string {
	from, _ := field(ev, kFromState)
	to, hasTo := field(ev, kToState)
	ss.prevTo = to
	// The step's From and To already say where the session went; the
	// detail names the from_state only when it is not where the session was.
	detail := ""
	if from != ss.state {
		detail = "from_state " + from
	}
	if !hasTo {
		return detail // EVT-SCHEMA reports the missing field; the state is unknown
	}
	if !ss.sawSC {
		if from != stateIdle && (s.strict || from != ss.state || ss.state == StateStarted) {
			implicit := ""
			if !s.strict && ss.state != StateStarted && ss.state != stateIdle {
				implicit = fmt.Sprintf(" (nor the implicit state %q reached through the events before it)", ss.state)
			}
			s.report(seqStateFirstIdle, ss.id, m, "first from_state ≠ idle",
				"the first state change of session %s leaves %q, but the first agent.state.changed of a session must have from_state \"idle\"%s", ss.id, from, implicit)
		}
	} else if from != ss.explicit && (s.strict || from != ss.state) {
		why := fmt.Sprintf("the previous state change entered %q", ss.explicit)
		if !s.strict && ss.state != ss.explicit {
			why += fmt.Sprintf(" and the events since then imply %q", ss.state)
		}
		if s.strict && ss.state != ss.explicit && from == ss.state {
			why += fmt.Sprintf(" (the strict profile ignores the implicit state %q)", ss.state)
		}
		s.report(seqStateChain, ss.id, m, "from_state ≠ previous to_state",
			"this state change leaves %q but %s; each from_state must continue from the previous to_state (or the implicit state)", from, why)
	}
	if from == stateCallingTool || to == stateCallingTool {
		ss.scTool = true
	}
	if from == stateWritingOutput || to == stateWritingOutput {
		ss.scOutput = true
	}
	if c := ss.tools.oldestOpen(); c != nil && to != stateCallingTool {
		if from == stateCallingTool {
			s.report(seqToolBeforeState, ss.id, m, "state moves on before tool.completed",
				"the state leaves calling_tool for %q while tool %s (message %d) has not completed; tool.completed must come before the state change that reflects the post-tool state",
				to, c.describe(), c.at.related())
		} else {
			s.report(seqStateCallingTool, ss.id, m, "state ≠ calling_tool during a tool",
				"the state changes from %q to %q while tool %s (message %d) is still running; the state during tool execution should be calling_tool",
				from, to, c.describe(), c.at.related())
		}
	}
	s.stateChangeAwaits(ss, m, to, now)
	ss.sawSC = true
	ss.explicit = to
	ss.state = to
	if to == stateHandingOff {
		ss.handoff = true
	}
	return detail
}

func (s *seqChecker) onProgress(ss *session, m *protocol.Message, ev *Event, now instant) string {
	for _, a := range ss.awaits {
		if a.res == resPending {
			a.progress++
		}
	}
	var percent, desc payload.Value
	var step, total int64
	var okS, okT bool
	ev.raw("progress").Members(func(key []byte, val payload.Value) bool {
		switch string(key) {
		case "percent":
			percent = val
		case "step":
			step, okS = val.Int()
		case "total_steps":
			total, okT = val.Int()
		case "description":
			desc = val
		}
		return true
	})
	if p, ok := percent.Number(); ok {
		s.checkCoalesce(ss, m, p, now)
	}
	switch {
	case percent != nil:
		return string(percent) + "%"
	case okS && okT:
		return fmt.Sprintf("step %d/%d", step, total)
	case okS:
		return fmt.Sprintf("step %d", step)
	}
	d, _ := desc.Str()
	return d
}

// checkEnterPending: SEQ-STATE-AWAITING-ENTER. A.4 wants a state change to
// awaiting_input at or before each awaiting.confirmation (A.5 implies the
// same for clarifications); "at" is read as "the very next event".
func (s *seqChecker) checkEnterPending(ss *session, m *protocol.Message, ev *Event) {
	a := ss.enterPending
	if a == nil {
		return
	}
	ss.enterPending = nil
	if ev.Core == TypeStateChanged {
		if to, _ := ev.text(kToState); string(to) == stateAwaitingInput {
			return
		}
	}
	s.report(seqStateAwaitingEnter, ss.id, a.at.msg(), "no state change to awaiting_input",
		"%s %s is not accompanied by agent.state.changed to awaiting_input (the state was %q); Appendix A.4 asks for that state change at or before the blocking event",
		a.kindName(), a.token, a.stateBefore)
}

// checkFollowUps tracks what must follow a resolved confirmation or
// clarification: SEQ-STATE-AWAITING-EXIT (here) and the follow-up event of
// a reject (SEQ-CONF-REJECT-FOLLOWUP, reported at the terminal event).
//
// SEQ-STATE-AWAITING-EXIT: strict profile (A.4): the first event after the
// resolution (countdown progress aside) is a state change from
// awaiting_input. Lenient profile (§9.4.1(9), "typically state.changed"):
// any follow-up other than the session's completed/errored end; when a
// reject or accept already obliges a specific follow-up
// (SEQ-CONF-REJECT-FOLLOWUP, SEQ-CONF-ACCEPT-INVOKES), that rule reports it.
func (s *seqChecker) checkFollowUps(ss *session, m *protocol.Message, ev *Event) {
	if len(ss.awaits) == 0 {
		return
	}
	from, to := "", ""
	if ev.Core == TypeStateChanged {
		from, _ = field(ev, kFromState)
		to, _ = field(ev, kToState)
	}
	for _, a := range ss.awaits {
		if a.needExit {
			switch {
			case s.strict && ev.Core == TypeStateChanged && from == stateAwaitingInput:
				a.needExit = false
			case s.strict && ev.Core == TypeProgressUpdated:
			case s.strict:
				a.needExit = false
				s.report(seqStateAwaitingExit, ss.id, m, "no state change from awaiting_input",
					"after %s %s was resolved (%s) the next event is %s; the strict profile (A.4) wants agent.state.changed away from awaiting_input first",
					a.kindName(), a.token, a.res, shortType(ev))
			default:
				a.needExit = false
				if (ev.Core == TypeSessionCompleted || ev.Core == TypeSessionErrored) && !a.needReject && !a.needAccept {
					s.report(seqStateAwaitingExit, ss.id, m, "no follow-up after resolution",
						"after %s %s was resolved (%s) the session ends at once; a follow-up event (typically a state change away from awaiting_input) must reflect the resolution",
						a.kindName(), a.token, a.res)
				}
			}
		}
		if a.needReject {
			var ok bool
			if s.strict {
				ok = (ev.Core == TypeStateChanged && (to == stateThinking || to == stateDeciding)) || ev.Core == TypeSessionCancelled
			} else {
				switch ev.Core {
				case TypeStateChanged:
					// calling_tool starts other work (§6.1(3)); it does not
					// reflect the cancelled action (§6.1(2)).
					ok = to != stateCallingTool
				case TypeSessionCancelled, TypeOutputStreaming, TypeHandoffRequested:
					ok = true
				}
			}
			if ok {
				a.needReject = false
			}
		}
	}
}

// checkCoverage: SEQ-STATE-L1-COVERAGE, at the session's end.
func (s *seqChecker) checkCoverage(ss *session, m *protocol.Message) {
	var missing []string
	if ss.sawTI && !ss.scTool {
		missing = append(missing, "invokes tools but never changes state to or from calling_tool")
	}
	if ss.sawOS && !ss.scOutput {
		missing = append(missing, "streams output but never changes state to or from writing_output")
	}
	switch len(missing) {
	case 1:
		s.report(seqStateL1Coverage, ss.id, m, "state changes missing",
			"session %s %s; a Level 1 producer emits state changes to and from thinking, calling_tool and writing_output at minimum", ss.id, missing[0])
	case 2:
		s.report(seqStateL1Coverage, ss.id, m, "state changes missing",
			"session %s %s, and %s; a Level 1 producer emits state changes to and from thinking, calling_tool and writing_output at minimum", ss.id, missing[0], missing[1])
	}
}

// Progress coalescing (§4.2.2): "Producers SHOULD coalesce rapid successive
// progress updates into less frequent emissions (e.g., emit every 5% rather
// than every 1%)". The checker reads the example as its threshold: a step
// of less than coalesceStep percentage points between two successive
// progress.updated events of a session, less than coalesceWithin apart, is
// a rapid update, and coalesceRun of them in a row (three updates, so that
// one close pair is not a pattern) are what the text asks to coalesce.
const (
	coalesceStep   = 5.0
	coalesceWithin = time.Second
	coalesceRun    = 2
)

// checkCoalesce: SEQ-PROGRESS-COALESCE (SHOULD), reported once per
// session, at the update that completes the first run of rapid updates.
func (s *seqChecker) checkCoalesce(ss *session, m *protocol.Message, percent float64, now instant) {
	prev, had := ss.lastPercent, ss.hasPercent
	ss.lastPercent, ss.hasPercent = percent, true
	prevAt := ss.lastPercentAt
	ss.lastPercentAt = now
	if !had || ss.coalesceNoted {
		return
	}
	gap := now.off - prevAt.off
	if now.ok && prevAt.ok {
		gap = now.t.Sub(prevAt.t)
	}
	if math.Abs(percent-prev) >= coalesceStep || gap >= coalesceWithin || gap < 0 {
		ss.rapidRun = 0
		return
	}
	ss.rapidRun++
	if ss.rapidRun >= coalesceRun {
		ss.coalesceNoted = true
		s.report(seqProgressCoalesce, ss.id, m, "progress not coalesced",
			"this progress.updated moves from %g%% to %g%% within %s of the one before, the %s such step in a row; producers should coalesce rapid progress updates (§4.2.2: every 5%% rather than every 1%%); noted once per session",
			prev, percent, gap.Round(time.Millisecond), ordinal(ss.rapidRun))
	}
}

func ordinal(n int) string {
	switch n {
	case 1:
		return "first"
	case 2:
		return "second"
	case 3:
		return "third"
	}
	return fmt.Sprintf("%dth", n)
}
