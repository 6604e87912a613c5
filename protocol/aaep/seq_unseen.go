package aaep

// Recordings that do not carry the replies: SEQ-REPLY-UNOBSERVED.
//
// A passive recorder (aaep-capture) subscribes and records what the
// producer sends, but never replies: the user answers confirmations and
// clarifications through another subscription (a screen reader). In such a
// recording every confirmation flow is followed by the producer's action
// with no reply in sight, and the rules that need the replies (scope R of
// the catalog, §0) cannot tell a producer that waited for an unseen accept
// from one that did not wait at all. The checker must not accuse a
// producer of what the recording cannot show.
//
// A source (subscription) carries replies from the first
// confirmation.reply or clarification.reply that travels on it towards the
// producer; the replies of a confirmation or clarification are observed
// when one of the sources that received it carries replies, or when a reply
// for its token was recorded at all. While they are not observed, the
// checker infers the resolution from what the producer did instead of
// reporting a MUST violation that rests on a missing reply:
//
//   - the producer leaves awaiting_input while a confirmation is pending: it
//     was resolved by a reply the recording did not carry (decision still
//     open: an action that follows makes it an accept);
//   - a tool is invoked for a pending (or so resolved) confirmation: an
//     unseen accept (instead of SEQ-CONF-BLOCKING and SEQ-IRREV-NEEDS-ACCEPT,
//     or SEQ-CONF-NO-ACTION-AFTER-REJECT after the state change to thinking
//     that the observed reading takes as a cancel);
//   - the producer leaves awaiting_input while a clarification is pending:
//     an unseen answer (instead of SEQ-CLAR-BLOCKING);
//   - the same action is asked for again while the first confirmation is
//     pending: an unseen resolution (instead of SEQ-CONF-NO-DUP-PENDING);
//   - a confirmation accepted by its default (timeout or closed
//     subscription) whose action ran before the default applied, or never
//     ran: an unseen accept or reject (instead of SEQ-CONF-BLOCKING,
//     SEQ-CONF-ACCEPT-INVOKES, and strict SEQ-IRREV-NEEDS-ACCEPT).
//
// Such a flow is held, with the MUST findings the observed reading gives,
// until its session ends. When its replies turn out to be observed before
// that (the first reply on one of its sources, or a reply for its token,
// arrives later), the held findings are reported and the flow's state is set
// back to what the observed reading holds, so a recording that carries
// replies is judged as before. When the session ends (its terminal event,
// or the end of the stream), the flows still held are reported once per
// session as SEQ-REPLY-UNOBSERVED (INFO), naming what the producer did,
// before the session's summary: so a source that carries its first reply
// only after a session ended counts as not carrying replies for that
// session. Held flows belong to open sessions, so their memory is bounded
// like the sessions'. Rules that need no reply stay as they are: an action
// before the confirmation was emitted (SEQ-IRREV-NEEDS-CONF), one accept
// used twice (SEQ-CONF-ONE-ACTION), an action after the timeout of a
// confirmation the producer kept waiting for with default reject
// (SEQ-CONF-TIMEOUT-DEFAULT), a reject without any follow-up
// (SEQ-CONF-REJECT-FOLLOWUP).

import (
	"fmt"
	"strings"

	"github.com/aaep-tools/aaepkit/protocol"
)

// unseenFlow is a confirmation or clarification whose judgment rests on
// replies the recording may not carry.
type unseenFlow struct {
	a       *await
	session string
	at      ref    // where the producer showed the resolution
	how     string // what the producer did, for SEQ-REPLY-UNOBSERVED
	// today is the resolution the observed reading holds when the flow
	// was inferred (pending, or superseded by a state change).
	today    resolution
	findings []heldFinding
	undo     []func() // restore the observed reading, applied last first
	done     bool
}

// heldFinding is a MUST finding held until it is known whether the
// recording carries the replies it rests on.
type heldFinding struct {
	rule          *protocol.Rule
	short, format string
	// args are the message format's arguments, values (the related
	// messages among them) rendered when the finding is reported.
	args []any
	at   ref
}

// unseenGroup holds one session's flows, for one SEQ-REPLY-UNOBSERVED
// finding per session.
type unseenGroup struct {
	session string
	flows   []*unseenFlow
}

// unseen is the seqChecker's memory of sources and held flows.
type unseen struct {
	replySrc map[int]bool // sources that carried a reply
	groups   []*unseenGroup
	groupOf  map[string]*unseenGroup // the newest group of each session
	held     int                     // flows not done
	ended    int                     // groups of ended sessions still listed
}

// observed reports whether the replies to a can be seen in the recording.
func (s *seqChecker) observed(a *await) bool {
	if a.replied {
		return true
	}
	for _, src := range a.sources {
		if s.unseen.replySrc[src] {
			return true
		}
	}
	return false
}

// flowFor returns a's held flow, starting one, when a's replies are not
// observed; nil when they are (then the observed reading applies). The
// flow's place and description become at and how.
func (s *seqChecker) flowFor(a *await, at *protocol.Message, how string) *unseenFlow {
	if s.observed(a) {
		if a.flow != nil {
			// A copy reached a source that carries replies since.
			s.observeFlow(a.flow)
		}
		return nil
	}
	fl := a.flow
	if fl == nil {
		u := &s.unseen
		fl = &unseenFlow{a: a, session: a.sess.id, today: a.res}
		a.flow = fl
		g := u.groupOf[fl.session]
		if g == nil {
			if u.groupOf == nil {
				u.groupOf = map[string]*unseenGroup{}
			}
			g = &unseenGroup{session: fl.session}
			u.groupOf[fl.session] = g
			u.groups = append(u.groups, g)
		}
		g.flows = append(g.flows, fl)
		u.held++
	}
	fl.at, fl.how = refOf(at), how
	return fl
}

// judge reports a finding that rests on the absence of a reply, or holds
// it with fl when the replies are not observed (fl != nil).
func (s *seqChecker) judge(fl *unseenFlow, rule *protocol.Rule, session string, at ref, short, format string, args ...any) {
	if fl == nil {
		s.report(rule, session, at.msg(), short, format, args...)
		return
	}
	fl.findings = append(fl.findings, heldFinding{rule: rule, short: short, format: format, args: args, at: at})
}

// replyCarried notes a reply towards the producer on source: from now on
// the source's flows are observed, and those held so far are judged as
// observed.
func (s *seqChecker) replyCarried(source int) {
	u := &s.unseen
	if u.replySrc[source] {
		return
	}
	if u.replySrc == nil {
		u.replySrc = map[int]bool{}
	}
	u.replySrc[source] = true
	if u.held == 0 {
		return
	}
	for _, g := range u.groups {
		for _, fl := range g.flows {
			if !fl.done && containsInt(fl.a.sources, source) {
				s.observeFlow(fl)
			}
		}
	}
	s.compactGroups()
}

// observeFlow judges a held flow as observed: its findings are reported
// and its await gets back the state of the observed reading.
func (s *seqChecker) observeFlow(fl *unseenFlow) {
	if fl.done {
		return
	}
	fl.done = true
	s.unseen.held--
	for _, f := range fl.findings {
		s.r.Report(f.rule, fl.session, f.at.msg(), f.short, f.format, f.args...)
	}
	for i := len(fl.undo) - 1; i >= 0; i-- {
		fl.undo[i]()
	}
	fl.a.flow = nil
}

// compactGroups drops done flows and empty groups.
func (s *seqChecker) compactGroups() {
	u := &s.unseen
	groups := u.groups[:0]
	for _, g := range u.groups {
		flows := g.flows[:0]
		for _, fl := range g.flows {
			if !fl.done {
				flows = append(flows, fl)
			}
		}
		clear(g.flows[len(flows):])
		g.flows = flows
		if len(flows) > 0 {
			groups = append(groups, g)
		} else if u.groupOf[g.session] == g {
			delete(u.groupOf, g.session)
		}
	}
	clear(u.groups[len(groups):])
	u.groups = groups
	u.ended = 0
}

// decideFlows ends the held flows of session id, which ends: they are
// reported as unobserved (SEQ-REPLY-UNOBSERVED).
func (s *seqChecker) decideFlows(id string) {
	u := &s.unseen
	g := u.groupOf[id]
	if g == nil {
		return
	}
	s.reportGroup(g)
	g.flows = nil
	// Drop ended groups from the list now and then, not at every end.
	if u.ended++; u.ended > 64 && 2*u.ended > len(u.groups) {
		s.compactGroups()
	}
}

// reportGroup reports one session's held flows as unobserved: one
// SEQ-REPLY-UNOBSERVED finding for those that held findings.
func (s *seqChecker) reportGroup(g *unseenGroup) {
	u := &s.unseen
	var inc []*unseenFlow
	for _, fl := range g.flows {
		if fl.done {
			continue
		}
		fl.done = true
		fl.a.flow = nil
		u.held--
		if len(fl.findings) > 0 {
			inc = append(inc, fl)
		}
	}
	if u.groupOf[g.session] == g {
		delete(u.groupOf, g.session)
	}
	if len(inc) == 0 {
		return
	}
	rules := map[*protocol.Rule]bool{}
	var names, more []string
	for i, fl := range inc {
		if i > 0 && len(more) < 4 {
			more = append(more, fl.a.token)
		}
		for _, f := range fl.findings {
			if !rules[f.rule] {
				rules[f.rule] = true
				names = append(names, f.rule.ID)
			}
		}
	}
	also := ""
	switch n := len(inc) - 1; {
	case n == 1:
		also = fmt.Sprintf("; so was %s", more[0])
	case n > 1:
		list := strings.Join(more, ", ")
		if n > len(more) {
			list += ", …"
		}
		also = fmt.Sprintf("; so were %d more of this session (%s)", n, list)
	}
	first := inc[0]
	a := first.a
	s.r.Report(seqReplyUnobserved, g.session, first.at.msg(), "reply not in the recording",
		"%s %s (message %d) was resolved by a reply this recording did not carry: %s%s; the recording carries no replies on this subscription, so %s cannot be judged here",
		a.kindName(), a.token, a.at.related(), first.how, also, strings.Join(names, ", "))
}

// finishUnseen reports every flow still held: the stream ended without
// showing their replies.
func (s *seqChecker) finishUnseen() {
	for _, g := range s.unseen.groups {
		s.reportGroup(g)
	}
	s.unseen.groups = nil
}

// acted describes an action for SEQ-REPLY-UNOBSERVED.
func acted(tool string, m *protocol.Message) string {
	return fmt.Sprintf("the producer acted as if it was accepted (it invoked %s at message %d)", tool, m.Index)
}
