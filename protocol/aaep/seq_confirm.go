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
// (seq_naming.go): by tool_call_id, by tool, or by its action text
// spelling the tool's name; each finding says which. A tool.invoked that a
// confirmation names so is its action for certain, reversible or not
// (§6.1(1) blocks "the action being confirmed", whatever its
// reversibility): run while the confirmation is pending it breaks the
// block (SEQ-CONF-BLOCKING), after a reject it is
// SEQ-CONF-NO-ACTION-AFTER-REJECT up to the next confirmation that names
// the same tool (a later, separately confirmed use is not the rejected
// action), and a second run on one accept is SEQ-CONF-ONE-ACTION. A text
// that only shares a word with the tool's name is weaker evidence: it
// decides which confirmation an irreversible action belongs to, but a
// reversible tool matched so is treated like an unnamed one. An accept
// taken by order by an irreversible tool it does not name goes back to
// the action it names when that runs: the earlier tool ran unconfirmed
// and is blamed at its own message (SEQ-IRREV-NEEDS-CONF).
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
	"fmt"
	"time"

	"github.com/aaep-tools/aaepkit/payload"
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
	kindsInvalid    bool // the producer's accepted_response_kinds is no valid list (§9.4.1(7))
	choices         []string
	stateBefore     string

	res           resolution
	resAt         ref
	resWhen       instant // when a withdrawal (resSuperseded) happened
	ignored       ignoredReply
	replyDecision string
	laterAccept   bool // a later (ignored) reply accepted
	laterReject   bool // a later (ignored) reply rejected
	modified      bool // accepted with modified_action
	consumed      bool // an action used this confirmation (or was done early)
	orderUse      orderUse

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

// orderUse is an irreversible invocation that took an accept by order,
// though the confirmation named nothing it has (seq_attribute.go).
type orderUse struct {
	set  bool
	at   ref
	tool string
}

// ignoredReply is a reply to an await that the producer had to ignore
// (§6.3.4, §6.5.5, §6.8) and that would have let it act: an accept, or a
// clarification answer. The producer acting afterwards is
// SEQ-REPLY-IGNORED.
type ignoredReply struct {
	set  bool
	at   ref
	what string // "accept", "answer"
	why  string // why it had to be ignored
}

// ignore notes a reply to a that the producer has to ignore, when it is
// one the producer could act on.
func (a *await) ignore(m *protocol.Message, kind awaitKind, decision, why string) {
	switch {
	case a.kind == kindConfirm && decision == "accept":
		a.ignored = ignoredReply{true, refOf(m), "accept", why}
	case a.kind == kindClarify && kind == kindClarify:
		a.ignored = ignoredReply{true, refOf(m), "answer", why}
	}
}

// actedOnIgnored reports SEQ-REPLY-IGNORED at at when a has an ignored
// reply the producer's action (what) follows, and reports whether it did:
// the action's own blocking finding is then not reported too.
func (s *seqChecker) actedOnIgnored(fl *unseenFlow, ss *session, at ref, a *await, what string) bool {
	ig := a.ignored
	if !ig.set || ig.at.index >= at.index {
		return false
	}
	s.judge(fl, seqReplyIgnored, ss.id, at, "acted on an ignored reply",
		"%s after the %s at message %d for %s %s, which the producer had to ignore (%s); an invalid reply authorizes nothing, so the producer stays bound by the prompt's own outcome",
		what, ig.what, ig.at.related(), a.kindName(), a.token, ig.why)
	return true
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
				s.judge(fl, seqConfNoDupPending, ss.id, refOf(m), "duplicate pending confirmation",
					"a second confirmation for the same action (%q) is emitted while %s (message %d) is still unresolved; the first block must be released before asking again",
					a.action, b.token, b.at.related())
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
			a.kindsInvalid = !validKinds(raw, a.kinds)
		}
		ev.vals[kChoices].Elements(func(_ int, v payload.Value) bool {
			v.Members(func(key []byte, val payload.Value) bool {
				if string(key) == "value" {
					if str, ok := val.Str(); ok {
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
			s.report(seqReplyTokenUnique, ss.id, m, "reply_token reused",
				"reply_token %s was already issued by the %s at message %d%s; reply tokens are never reused, even after resolution",
				a.token, prev.kindName(), prev.at.related(), where)
		} else if rt, ok := s.retired[a.token]; ok {
			s.report(seqReplyTokenUnique, ss.id, m, "reply_token reused",
				"reply_token %s was already issued in session %s, which has ended; reply tokens are never reused for at least the session plus 24 hours",
				a.token, rt.session)
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
	ss.state = impliedState(ev.Core)
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
		s.report(seqConfTimeoutRange, ss.id, m, "timeout outside recommended range",
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
			s.report(seqConfCountdown, ss.id, at, "no countdown progress",
				"%s %s (timeout %s) stayed unresolved for %s with %d progress.updated event(s); for timeouts over 60 s, emit progress at about 50%% and 10%% of the time remaining",
				a.kindName(), a.token, a.timeout, elapsed.Round(time.Second), a.progress)
		}
	}
}

// stateChangeAwaits handles a state change while confirmations or
// clarifications are pending: supersession (§6.8) or SEQ-CLAR-BLOCKING.
func (s *seqChecker) stateChangeAwaits(ss *session, m *protocol.Message, to string, now instant) {
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
						a.resAt, a.resWhen = at, now
					}
				})
				a.res, a.resAt = resUnseen, refOf(m)
			} else if to == stateThinking || to == stateDeciding {
				a.res = resSuperseded
				a.resAt, a.resWhen = refOf(m), now
			}
		case a.kind == kindClarify:
			fl := s.flowFor(a, m, fmt.Sprintf("the producer went on as if it was answered (it left awaiting_input for %q at message %d)", to, m.Index))
			if !s.actedOnIgnored(fl, ss, refOf(m), a, fmt.Sprintf("the state moves to %q", to)) {
				s.judge(fl, seqClarBlocking, ss.id, refOf(m), "left awaiting_input before reply",
					"the state moves to %q while clarification %s (message %d) has neither a valid reply nor a passed timeout; the producer stays blocked until one of them",
					to, a.token, a.at.related())
			}
			a.res, a.resWhen = resSuperseded, now
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

// finalizeAwaits reports the obligations still open at the terminal event.
func (s *seqChecker) finalizeAwaits(ss *session, m *protocol.Message, cancelled bool) {
	if cancelled {
		return // session.cancelled supersedes every pending obligation (§6.8)
	}
	for _, a := range ss.awaits {
		if a.needReject {
			s.report(seqConfRejectFollowup, ss.id, m, "reject silently dropped",
				"confirmation %s was %s (message %d), but no event reflecting the cancelled action followed before the session ended; a reject must be followed by e.g. a state change back to thinking or deciding",
				a.token, a.res, a.resAt.related())
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
				s.judge(fl, seqConfBlocking, ss.id, a.candAt, "action before the reply",
					"tool %s was invoked at message %d while confirmation %s was still pending, and nothing was invoked after its accept: the action ran before the confirmation was resolved",
					a.candTool, a.candAt.related(), a.token)
			case a.laterReject:
				s.report(seqReplyFirstWins, ss.id, m, "followed a later reply",
					"confirmation %s was accepted by its first reply but the action never ran, as if a later reject reply had won; only the first valid reply counts", a.token)
			case a.modified:
				// Accepted with modified_action: a producer without support treats it as a reject (SEQ-REPLY-MODIFIED).
			default:
				if a.res.byDefault() {
					fl = s.flowFor(a, m, fmt.Sprintf("the producer went on as if it was rejected (no tool was invoked before the session ended at message %d)", m.Index))
				}
				s.judge(fl, seqConfAcceptInvokes, ss.id, refOf(m), "accepted action never invoked",
					"confirmation %s was %s (message %d), but no agent.tool.invoked for the action followed before the session ended; an accept must be followed by the action",
					a.token, a.res, a.resAt.related())
			}
		}
	}
	s.keepNotices(ss)
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
