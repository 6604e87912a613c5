package aaep

// Confirmations, clarifications and replies: SEQ-IRREV-*, SEQ-CONF-*,
// SEQ-REPLY-*, SEQ-CLAR-* (the safety contract of Chapter 6).
//
// A confirmation is resolved, in this order (catalog §3.5):
//  1. by its first valid reply, taken at the reply's capture position: a
//     reply for a known, outstanding token of the right kind, decided
//     (reply timestamp) before ts(confirmation)+timeout_seconds and not
//     before the confirmation, whose decision is in allowed_replies;
//  2. otherwise by timeout, noticed at the session's first event stamped at
//     or after the deadline (a synthetic "timeout" step), when
//     default_decision applies;
//  3. by supersession: session.cancelled, or a state change to thinking or
//     deciding while it is pending (§6.8);
//  4. when the subscription that received it closes and no other
//     reply-capable subscription received it, by its default (§5.8.2).
//
// Which tool.invoked is "the action"? The one the confirmation names
// (seq_naming.go): by tool_call_id, by tool, or by its action text naming
// the tool; each finding says which. A tool.invoked that a confirmation
// names by tool_call_id or tool is its action for certain: run while the
// confirmation is pending it breaks the block (SEQ-CONF-BLOCKING), after a
// reject it is SEQ-CONF-NO-ACTION-AFTER-REJECT however much later, and a
// second run on one accept is SEQ-CONF-ONE-ACTION. Text is weaker evidence,
// so it decides which confirmation an irreversible action belongs to, but
// a reversible tool matched by text only is treated like an unnamed one.
//
// When nothing names it, order decides, among the confirmations that name
// no other tool or call: an irreversible tool.invoked consumes the first
// unused accept (one accept authorizes one action) and needs one; a
// reversible one (a read-only lookup, say) does not use the accept up: it
// only stands for the action if no other follows before the session ends.
// A tool.invoked that comes after a reject and before the reject's
// follow-up event is taken to be the rejected action (A.8.5); a tool
// invoked while a confirmation is pending is noted and becomes a blocking
// violation if the same tool is invoked again after the accept, or if no
// tool follows the accept at all (the action was already done).
//
// Irreversible actions and timeouts: §4.3.1 says an irreversible invocation
// needs "an accept reply"; §4.5.3 and §6.1 also let a timeout with
// default_decision "accept" authorize the action. The lenient profile
// follows §4.5.3/§6.1 (prose of the later, more specific chapter); the
// strict profile follows §4.3.1 and reports SEQ-IRREV-NEEDS-ACCEPT for an
// irreversible action authorized only by a defaulted accept.

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/aaep-tools/aaepkit/protocol"
)

type awaitKind uint8

const (
	kindConfirm awaitKind = iota + 1
	kindClarify
)

type resolution uint8

const (
	resPending resolution = iota
	resAccept
	resReject
	resTimeoutAccept
	resTimeoutReject
	resCloseAccept
	resCloseReject
	resSuperseded
	resAnswered
	resClarTimeout
	resSessionEnd
	// Resolutions inferred while the replies are not observed (seq_unseen.go).
	resUnseen       // the producer left awaiting_input: an unseen reply, decision open
	resUnseenAccept // the producer acted: an unseen accept
	resUnseenAnswer // the producer went on: an unseen answer
)

var resolutionNames = [...]string{"pending", "accepted by reply", "rejected by reply", "timed out, default accept",
	"timed out, default reject", "subscription closed, default accept", "subscription closed, default reject",
	"cancelled", "answered", "timed out", "session ended",
	"resolved by an unrecorded reply", "accepted by an unrecorded reply", "answered by an unrecorded reply"}

func (r resolution) String() string { return resolutionNames[r] }

func (r resolution) accepted() bool {
	return r == resAccept || r == resTimeoutAccept || r == resCloseAccept || r == resUnseenAccept
}

// unseen reports a resolution inferred from the producer's behaviour.
func (r resolution) unseen() bool { return r >= resUnseen }

// byDefault reports an accept that no reply decided (timeout or close).
func (r resolution) byDefault() bool { return r == resTimeoutAccept || r == resCloseAccept }

func (r resolution) rejected() bool {
	return r == resReject || r == resTimeoutReject || r == resCloseReject || r == resSuperseded
}

// await is one confirmation or clarification.
type await struct {
	kind            awaitKind
	token           string
	sess            *session
	at              ref
	when            instant
	timeout         time.Duration
	defaultDecision string
	allowed         []string // nil: ["accept","reject"]
	action          string
	irreversible    bool
	risk            string
	kinds           []string
	choices         []string
	stateBefore     string

	res           resolution
	resAt         ref
	replyDecision string
	laterAccept   bool // a later (ignored) reply accepted
	laterReject   bool // a later (ignored) reply rejected
	modified      bool // accepted with modified_action
	consumed      bool // an action used this confirmation (or was done early)

	needExit   bool // SEQ-STATE-AWAITING-EXIT pending
	needReject bool // SEQ-CONF-REJECT-FOLLOWUP pending
	needAccept bool // SEQ-CONF-ACCEPT-INVOKES pending

	hasCand  bool // a tool was invoked while this was pending
	candTool string
	candAt   ref

	names     naming // what the confirmation names about its action (seq_naming.go)
	tentative bool   // a reversible tool no confirmation names ran after the accept

	progress int   // progress.updated events while pending
	sources  []int // subscriptions (sources) that received the event
	noticed  []int // sources that got a state change after the resolution

	replied bool        // a reply for this token was recorded
	flow    *unseenFlow // held while its replies are not observed (seq_unseen.go)
}

func (a *await) kindName() string {
	if a.kind == kindConfirm {
		return "confirmation"
	}
	return "clarification"
}

func (a *await) past(now instant) bool {
	if a.timeout <= 0 {
		return false
	}
	if a.when.ok && now.ok {
		return !now.t.Before(a.when.t.Add(a.timeout))
	}
	return now.off >= a.when.off+a.timeout
}

func (s *seqChecker) onAwait(ss *session, m *protocol.Message, ev *Event, now instant, kind awaitKind) string {
	a := &await{kind: kind, sess: ss, at: refOf(m), when: now, stateBefore: ss.state, sources: []int{m.Source}}
	a.token, _ = ev.Str("reply_token")
	if secs, ok := ev.Int("timeout_seconds"); ok && secs > 0 {
		a.timeout = time.Duration(secs) * time.Second
	}
	if kind == kindConfirm {
		a.defaultDecision, _ = ev.Str("default_decision")
		a.action, _ = ev.Str("action")
		a.names = namesOf(ev)
		a.risk, _ = ev.Str("risk_level")
		a.irreversible, _ = ev.Bool("irreversible")
		if rev, _ := ev.Str("reversibility"); rev == "irreversible" {
			a.irreversible = true
		}
		if raw := ev.vals[kAllowedReplies]; raw != nil {
			a.allowed = stringList(raw)
		}
		for _, b := range ss.awaits {
			if b.kind == kindConfirm && b.res == resPending && a.action != "" && b.action == a.action {
				fl := s.flowFor(b, m, fmt.Sprintf("the producer went on as if it was resolved (it asked for the same action again at message %d)", m.Index))
				s.judge(fl, "SEQ-CONF-NO-DUP-PENDING", ss.id, refOf(m), "duplicate pending confirmation",
					"a second confirmation for the same action (%q) is emitted while %s (message %d) is still unresolved; the first block must be released before asking again",
					a.action, b.token, b.at.index)
				if fl != nil {
					b.res, b.resAt = resUnseen, refOf(m)
					fl.undo = append(fl.undo, func() { b.res, b.resAt = resPending, ref{} })
				}
				break
			}
		}
	} else {
		if raw := ev.vals[kAcceptedResponseKinds]; raw != nil {
			a.kinds = stringList(raw)
		}
		eachElement(ev.vals[kChoices], func(_ int, v json.RawMessage) bool {
			eachMember(v, func(key []byte, val json.RawMessage) bool {
				if string(key) == "value" {
					if str, ok := rawString(val); ok {
						a.choices = append(a.choices, str)
					}
					return false
				}
				return true
			})
			return true
		})
	}
	if a.token != "" {
		if prev := s.tokens[a.token]; prev != nil {
			where := ""
			if prev.sess != ss {
				where = " of session " + prev.sess.id
			}
			s.report("SEQ-REPLY-TOKEN-UNIQUE", ss.id, m, "reply_token reused",
				"reply_token %s was already issued by the %s at message %d%s; reply tokens are never reused, even after resolution",
				a.token, prev.kindName(), prev.at.index, where)
		} else if sid, ok := s.retired[a.token]; ok {
			s.report("SEQ-REPLY-TOKEN-UNIQUE", ss.id, m, "reply_token reused",
				"reply_token %s was already issued in session %s, which has ended; reply tokens are never reused for at least the session plus 24 hours",
				a.token, sid)
		}
		s.tokens[a.token] = a
		ss.tokens = append(ss.tokens, a.token)
	}
	s.checkTimeoutRange(ss, m, a)
	if ss.explicit != stateAwaitingInput || ss.state != stateAwaitingInput {
		ss.enterPending = a
	}
	s.pruneAwaits(ss)
	ss.awaits = append(ss.awaits, a)
	ss.state = stateAwaitingInput
	detail := a.token
	if kind == kindConfirm && a.defaultDecision != "" {
		detail += " default " + a.defaultDecision
	}
	if a.timeout > 0 {
		detail += " " + a.timeout.String()
	}
	return detail
}

// pruneAwaits forgets settled confirmations so a long session's memory stays
// bounded; the most recent settled ones are kept for attributing actions.
func (s *seqChecker) pruneAwaits(ss *session) {
	if len(ss.awaits) < 64 {
		return
	}
	keep := ss.awaits[:0]
	settledKept := 0
	for i := len(ss.awaits) - 1; i >= 0; i-- {
		a := ss.awaits[i]
		settled := a.res != resPending && !a.needExit && !a.needReject && !a.needAccept && (a.consumed || !a.res.accepted())
		if settled {
			if settledKept >= 8 {
				continue
			}
			settledKept++
		}
		keep = append(keep, a)
	}
	for i, j := 0, len(keep)-1; i < j; i, j = i+1, j-1 {
		keep[i], keep[j] = keep[j], keep[i]
	}
	for i := len(keep); i < len(ss.awaits); i++ {
		ss.awaits[i] = nil
	}
	ss.awaits = keep
}

// checkTimeoutRange: SEQ-CONF-TIMEOUT-RANGE (INFO), §6.4.2.
func (s *seqChecker) checkTimeoutRange(ss *session, m *protocol.Message, a *await) {
	if a.timeout <= 0 {
		return
	}
	var lo, hi int64
	what := ""
	switch {
	case a.kind == kindClarify:
		lo, hi, what = 60, 300, "a clarification"
	case a.irreversible && a.risk == "high":
		lo, hi, what = 180, 600, "a high-risk irreversible action"
	case a.irreversible && a.risk == "medium":
		lo, hi, what = 60, 180, "a medium-risk irreversible action"
	case !a.irreversible && (a.risk == "low" || a.risk == ""):
		lo, hi, what = 30, 90, "a low-risk reversible action"
	default:
		return
	}
	secs := int64(a.timeout / time.Second)
	if secs < lo || secs > hi {
		s.report("SEQ-CONF-TIMEOUT-RANGE", ss.id, m, "timeout outside recommended range",
			"timeout_seconds %d for %s lies outside the recommended %d to %d seconds (§6.4.2)", secs, what, lo, hi)
	}
}

// expireAwaits resolves pending confirmations and clarifications whose
// timeout has passed by the time of the event now.
func (s *seqChecker) expireAwaits(ss *session, m *protocol.Message, now instant) {
	for _, a := range ss.awaits {
		if a.res != resPending || !a.past(now) {
			continue
		}
		decision := ""
		switch {
		case a.kind == kindClarify:
			a.res = resClarTimeout
		case a.defaultDecision == "accept":
			a.res, decision = resTimeoutAccept, "accept"
		default:
			a.res, decision = resTimeoutReject, "reject"
		}
		a.resAt = refOf(m)
		s.settle(ss, a, m, a.timeout)
		off := a.at.offset + a.timeout
		if off > m.Offset || off < a.at.offset {
			off = m.Offset
		}
		detail := a.token
		if decision != "" {
			detail += " → default " + decision
		}
		s.r.Step(protocol.Step{Session: ss.id, Index: m.Index, Offset: off, From: ss.state, To: ss.state,
			Label: "timeout", Detail: detail, Kind: protocol.StepTimeout, Synthetic: true})
	}
}

// settle sets the obligations that follow a resolution and checks the countdown.
func (s *seqChecker) settle(ss *session, a *await, at *protocol.Message, elapsed time.Duration) {
	a.needExit = true
	if a.kind == kindConfirm {
		a.needReject = a.res.rejected() && a.res != resSuperseded
		a.needAccept = a.res.accepted() && !a.consumed
	}
	if a.kind == kindConfirm && a.timeout > 60*time.Second {
		need := 0
		if elapsed >= a.timeout/2 {
			need = 1
		}
		if elapsed >= a.timeout*9/10 {
			need = 2
		}
		if a.progress < need {
			s.report("SEQ-CONF-COUNTDOWN", ss.id, at, "no countdown progress",
				"%s %s (timeout %s) stayed unresolved for %s with %d progress.updated event(s); for timeouts over 60 s, emit progress at about 50%% and 10%% of the time remaining",
				a.kindName(), a.token, a.timeout, elapsed.Round(time.Second), a.progress)
		}
	}
}

// stateChangeAwaits handles a state change while confirmations or
// clarifications are pending: supersession (§6.8) or SEQ-CLAR-BLOCKING.
func (s *seqChecker) stateChangeAwaits(ss *session, m *protocol.Message, to string) {
	for _, a := range ss.awaits {
		if a.res != resPending || to == stateAwaitingInput {
			continue
		}
		switch {
		case a.kind == kindConfirm:
			if fl := s.flowFor(a, m, fmt.Sprintf("the producer left awaiting_input for %q at message %d", to, m.Index)); fl != nil {
				// Resolved by a reply the recording does not show; an
				// action that follows makes it an accept.
				fl.today = resPending
				if to == stateThinking || to == stateDeciding {
					fl.today = resSuperseded
				}
				today, at := fl.today, refOf(m)
				fl.undo = append(fl.undo, func() {
					a.res, a.resAt = today, ref{}
					if today == resSuperseded {
						a.resAt = at
					}
				})
				a.res, a.resAt = resUnseen, refOf(m)
			} else if to == stateThinking || to == stateDeciding {
				a.res = resSuperseded
				a.resAt = refOf(m)
			}
		case a.kind == kindClarify:
			fl := s.flowFor(a, m, fmt.Sprintf("the producer went on as if it was answered (it left awaiting_input for %q at message %d)", to, m.Index))
			s.judge(fl, "SEQ-CLAR-BLOCKING", ss.id, refOf(m), "left awaiting_input before reply",
				"the state moves to %q while clarification %s (message %d) has neither a valid reply nor a passed timeout; the producer stays blocked until one of them",
				to, a.token, a.at.index)
			a.res = resSuperseded
			if fl != nil {
				a.res = resUnseenAnswer
				fl.undo = append(fl.undo, func() { a.res = resSuperseded })
			}
			a.resAt = refOf(m)
		}
	}
	s.noteResolutionNotice(ss, m.Source)
}

// noteResolutionNotice records that source received a state change after
// the resolution of the session's settled confirmations.
func (s *seqChecker) noteResolutionNotice(ss *session, source int) {
	for _, list := range [2][]*await{ss.awaits, ss.notices} {
		for _, a := range list {
			if a.kind == kindConfirm && a.res != resPending && containsInt(a.sources, source) && !containsInt(a.noticed, source) {
				a.noticed = append(a.noticed, source)
			}
		}
	}
}

// attributeAction decides what a tool invocation means for the session's
// confirmations (see the file comment, and seq_unseen.go for recordings
// without replies). It returns the token of the confirmation the
// invocation was matched to, for the trace ("" when none).
func (s *seqChecker) attributeAction(ss *session, m *protocol.Message, tool, id string, irrev bool) string {
	var named *await
	how := matchNone
	for _, a := range ss.awaits {
		if a.kind != kindConfirm {
			continue
		}
		h := a.names.match(tool, id)
		if h < matchText || (h == matchText && !irrev) {
			continue
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
		s.report("SEQ-CONF-ONE-ACTION", ss.id, m, "confirmation already used",
			"irreversible tool %s is invoked, but the session's accepted confirmation was already used by an earlier action; each accept authorizes exactly one action (%s)", tool, how)
	case irrev:
		s.report("SEQ-IRREV-NEEDS-CONF", ss.id, m, "no confirmation",
			"irreversible tool %s is invoked without a preceding agent.awaiting.confirmation in this session that could authorize it; irreversible actions need the user's confirmation first", tool)
	case last != nil && last.needReject:
		s.blameReject(ss, m, last, tool, how)
	}
	return ""
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
		} else {
			s.judge(fl, "SEQ-CONF-BLOCKING", ss.id, refOf(m), "action while blocked",
				"tool %s is invoked while confirmation %s (message %d) awaits its reply (%s); until a valid reply or the timeout, the producer must not perform the confirmed action",
				tool, a.token, a.at.index, how)
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
		s.report("SEQ-CONF-ONE-ACTION", ss.id, m, "confirmation already used",
			"irreversible tool %s is invoked again on confirmation %s, whose accept already authorized an earlier run (%s); each accept authorizes exactly one action", tool, a.token, how)
	}
}

// useAccept lets an invocation use accepted confirmation a.
func (s *seqChecker) useAccept(ss *session, m *protocol.Message, a *await, how matchHow, tool string, irrev bool) {
	a.consumed = true
	a.needAccept = false
	ss.consumed = true
	if irrev && s.strict && a.res != resAccept {
		var fl *unseenFlow
		if a.res.byDefault() {
			fl = s.flowFor(a, m, acted(tool, m))
		}
		s.judge(fl, "SEQ-IRREV-NEEDS-ACCEPT", ss.id, refOf(m), "no accept reply",
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
	s.judge(fl, "SEQ-CONF-BLOCKING", ss.id, a.candAt, "action before the reply",
		"tool %s was invoked at message %d while confirmation %s was still pending, and again after its accept; the producer must not perform the action before the confirmation is resolved",
		tool, a.candAt.index, a.token)
}

// blockedAction reports (or holds with fl) an irreversible action invoked
// while confirmation a is unresolved.
func (s *seqChecker) blockedAction(fl *unseenFlow, ss *session, m *protocol.Message, a *await, tool string, how matchHow) {
	s.judge(fl, "SEQ-IRREV-NEEDS-ACCEPT", ss.id, refOf(m), "invoked before the accept",
		"irreversible tool %s is invoked while confirmation %s (message %d) is still unresolved (%s); the action needs that confirmation accepted first",
		tool, a.token, a.at.index, how)
	s.judge(fl, "SEQ-CONF-BLOCKING", ss.id, refOf(m), "action while blocked",
		"tool %s is invoked while confirmation %s (message %d) awaits its reply (%s); until a valid reply or the timeout, the producer must not perform the confirmed action",
		tool, a.token, a.at.index, how)
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
		s.judge(fl, "SEQ-CONF-NO-ACTION-AFTER-REJECT", ss.id, refOf(m), "action after cancel",
			"tool %s is invoked after confirmation %s was cancelled (message %d); a cancelled confirmation counts as a reject and allows no action",
			tool, a.token, a.resAt.index)
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
	switch a.res {
	case resReject:
		if a.laterAccept {
			s.report("SEQ-REPLY-FIRST-WINS", ss.id, m, "followed a later reply",
				"tool %s runs after confirmation %s was rejected by its first reply (%s); a later accept reply does not count: only the first valid reply wins", tool, a.token, how)
			return
		}
		s.report("SEQ-CONF-NO-ACTION-AFTER-REJECT", ss.id, m, "action after reject",
			"tool %s is invoked after the user rejected confirmation %s (message %d; %s); after a reject the producer must not perform the action",
			tool, a.token, a.resAt.index, how)
	case resTimeoutReject:
		s.report("SEQ-CONF-TIMEOUT-DEFAULT", ss.id, m, "action after default reject",
			"tool %s is invoked after confirmation %s timed out unanswered with default_decision \"reject\" (%s); the default applies, so the action must not happen",
			tool, a.token, how)
	case resCloseReject:
		s.report("NEG-CLOSE-PENDING-DEFAULT", ss.id, m, "action after close default",
			"tool %s is invoked after the subscription awaiting confirmation %s closed (%s); its default_decision \"reject\" applies, so the action must not happen",
			tool, a.token, how)
	case resSuperseded:
		s.report("SEQ-CONF-NO-ACTION-AFTER-REJECT", ss.id, m, "action after cancel",
			"tool %s is invoked after confirmation %s was cancelled (message %d; %s); a cancelled confirmation counts as a reject and allows no action",
			tool, a.token, a.resAt.index, how)
	}
}

// finalizeAwaits reports the obligations still open at the terminal event.
func (s *seqChecker) finalizeAwaits(ss *session, m *protocol.Message, cancelled bool) {
	if cancelled {
		return // session.cancelled supersedes every pending obligation (§6.8)
	}
	for _, a := range ss.awaits {
		if a.needReject {
			s.report("SEQ-CONF-REJECT-FOLLOWUP", ss.id, m, "reject silently dropped",
				"confirmation %s was %s (message %d), but no event reflecting the cancelled action followed before the session ended; a reject must be followed by e.g. a state change back to thinking or deciding",
				a.token, a.res, a.resAt.index)
		}
		if a.needAccept {
			var fl *unseenFlow
			switch {
			case a.tentative:
				// A reversible tool that nothing named ran after the accept
				// and no other followed: by order, it was the action.
				a.needAccept = false
			case a.hasCand:
				if a.res.byDefault() {
					fl = s.flowFor(a, a.candAt.msg(), acted(a.candTool, a.candAt.msg()))
				}
				s.judge(fl, "SEQ-CONF-BLOCKING", ss.id, a.candAt, "action before the reply",
					"tool %s was invoked at message %d while confirmation %s was still pending, and nothing was invoked after its accept: the action ran before the confirmation was resolved",
					a.candTool, a.candAt.index, a.token)
			case a.laterReject:
				s.report("SEQ-REPLY-FIRST-WINS", ss.id, m, "followed a later reply",
					"confirmation %s was accepted by its first reply but the action never ran, as if a later reject reply had won; only the first valid reply counts", a.token)
			case a.modified:
				// Accepted with modified_action: a producer without support treats it as a reject (SEQ-REPLY-MODIFIED).
			default:
				if a.res.byDefault() {
					fl = s.flowFor(a, m, fmt.Sprintf("the producer went on as if it was rejected (no tool was invoked before the session ended at message %d)", m.Index))
				}
				s.judge(fl, "SEQ-CONF-ACCEPT-INVOKES", ss.id, refOf(m), "accepted action never invoked",
					"confirmation %s was %s (message %d), but no agent.tool.invoked for the action followed before the session ended; an accept must be followed by the action",
					a.token, a.res, a.resAt.index)
			}
		}
	}
	s.keepNotices(ss)
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
	if a != nil {
		session = a.sess.id
	} else if sid, ok := s.retired[token]; ok {
		session = sid
	}
	if by, _ := ev.Str("decided_by"); len(by) >= 5 && by[:5] == "auto:" {
		s.report("SEQ-REPLY-AUTO", session, m, "automatic reply",
			"this %s was decided automatically (decided_by %q); subscribers must not auto-respond unless the user configured it, so surface it", label, by)
	}
	if a == nil {
		what := "no earlier confirmation or clarification issued it"
		if sid, ok := s.retired[token]; ok {
			what = "its session " + sid + " has already ended"
		}
		s.report("SEQ-REPLY-KNOWN-TOKEN", session, m, "unknown reply_token",
			"this %s carries reply_token %q, but %s; a reply must match an outstanding blocking event, otherwise the producer ignores it", label, token, what)
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
		s.report("SEQ-REPLY-KNOWN-TOKEN", ss.id, m, "reply of the wrong kind",
			"this %s answers reply_token %s, which belongs to a %s (message %d); replies must match a blocking event of their own kind", label, a.token, a.kindName(), a.at.index)
		return false
	}
	decided := s.replyInstant(m, ev)
	expired := a.past(decided)
	switch a.res {
	case resPending:
	case resSuperseded:
		s.report("SEQ-REPLY-AFTER-CANCEL", ss.id, m, "reply to a cancelled prompt",
			"this %s answers %s %s, which was cancelled at message %d; replies to a superseded prompt are invalid and no action may follow",
			label, a.kindName(), a.token, a.resAt.index)
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
			s.report("SEQ-REPLY-NOT-EXPIRED", ss.id, m, "reply after the timeout",
				"this %s for %s was decided at %s, after the %s timeout of the event at message %d had passed; an expired reply is invalid",
				label, a.token, ev.Timestamp, a.timeout, a.at.index)
		}
		return false
	}
	switch {
	case expired:
		s.report("SEQ-REPLY-NOT-EXPIRED", ss.id, m, "reply after the timeout",
			"this %s for %s was decided at %s, after the %s timeout of the event at message %d had passed; an expired reply is invalid and must be ignored",
			label, a.token, ev.Timestamp, a.timeout, a.at.index)
		return false
	case decided.ok && a.when.ok && decided.t.Before(a.when.t):
		s.report("SEQ-REPLY-NOT-EXPIRED", ss.id, m, "reply before the prompt",
			"this %s for %s is stamped %s, before the event it answers (%s); such a reply is invalid",
			label, a.token, ev.Timestamp, a.when.t.Format(time.RFC3339Nano))
		return false
	}
	if kind == kindConfirm {
		if !s.decisionAllowed(a, decision) {
			allowed := a.allowed
			if allowed == nil {
				allowed = []string{"accept", "reject"}
			}
			s.report("SEQ-REPLY-DECISION-ALLOWED", ss.id, m, "decision not allowed",
				"this confirmation.reply decides %q, which is not among the allowed_replies %v of confirmation %s; such a reply is invalid", decision, allowed, a.token)
			return false
		}
		a.replyDecision = decision
		if decision == "accept" {
			a.res = resAccept
			ss.prevAccept = true
			if ev.Has("modified_action") {
				a.modified = true
				s.report("SEQ-REPLY-MODIFIED", ss.id, m, "accept with modified_action",
					"this accept for %s carries modified_action; a producer that does not support modified actions must treat it as a reject, so check what the producer does next", a.token)
			}
		} else {
			a.res = resReject
		}
	} else {
		if why := s.responseMismatch(a, ev.raw("response")); why != "" {
			s.report("SEQ-CLAR-RESPONSE-TYPE", ss.id, m, "response of the wrong kind",
				"this clarification.reply for %s %s; it counts as no reply, so the producer keeps waiting", a.token, why)
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
	if s.replay {
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

// responseMismatch checks a clarification response against the accepted
// kinds (§6.5.2); it returns "" when the response fits one of them.
func (s *seqChecker) responseMismatch(a *await, raw json.RawMessage) string {
	if len(raw) == 0 {
		return "has no response"
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "has an unreadable response"
	}
	kinds := a.kinds
	if len(kinds) == 0 {
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

// retireTokens drops a session's reply tokens from the lookup table and
// remembers them (bounded) for reuse checks and late replies.
func (s *seqChecker) retireTokens(ss *session) {
	for _, t := range ss.tokens {
		if a := s.tokens[t]; a != nil && a.sess == ss {
			delete(s.tokens, t)
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
		s.retired[t] = ss.id
	}
	ss.tokens = nil
}

// applyCloseDefault resolves the pending confirmations that only the closed
// subscription source could answer (§5.8.2).
func (s *seqChecker) applyCloseDefault(source int, m *protocol.Message) {
	for _, id := range s.sessions.Keys() {
		ss := s.sessions.Get(id)
		for _, a := range ss.awaits {
			if a.kind != kindConfirm || a.res != resPending || !containsInt(a.sources, source) || s.neg.otherReplyCapable(a.sources, source) {
				continue
			}
			decision := "reject"
			a.res = resCloseReject
			if a.defaultDecision == "accept" {
				a.res, decision = resCloseAccept, "accept"
			}
			a.resAt = refOf(m)
			s.settle(ss, a, m, 0)
			s.r.Step(protocol.Step{Session: ss.id, Index: m.Index, Offset: m.Offset, From: ss.state, To: ss.state,
				Label: "subscription closed", Detail: a.token + " → default " + decision, Kind: protocol.StepTimeout, Synthetic: true})
		}
	}
}

// stringList returns the string elements of JSON array raw (others are
// skipped: the schema rules report them); nil when raw is not an array.
func stringList(raw json.RawMessage) []string {
	list := []string{}
	if !eachElement(raw, func(_ int, v json.RawMessage) bool {
		if s, ok := rawString(v); ok {
			list = append(list, s)
		}
		return true
	}) {
		return nil
	}
	return list
}

func containsInt(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func containsString(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
