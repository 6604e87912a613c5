// Package aaep is the protocol model of the Agent Accessibility Event
// Protocol (AAEP) for the protocol engine: how AAEP messages are recognised,
// the state machine of Appendix A, and the rules of the AAEP rule catalog
// (shared/notes/aaep-rules.md), each under its catalog ID and level:
// envelope rules ENV-* and payload rules EVT-* for every event,
// handshake/reply rules MSG-* for every handshake or reply message (single
// messages, envelope.go, events.go, messages.go), and SEQ-*, NEG-*, TRN-*
// rules across messages (seq*.go).
//
// # Recognition
//
// A message is AAEP when its "type" has the "aaep:" prefix or the full-URI
// form "https://aaep-protocol.org/types/"; when it is one of the seven bare
// handshake/reply types (subscription.request/accepted/rejected/
// renegotiate/close, confirmation.reply, clarification.reply) or another
// bare type of those families (then MSG-TYPE-KNOWN reports it); when it has
// no such type but carries an AAEP identifier (an "evt_" event_id or a
// "sess_" session_id), which covers extension-typed events and events whose
// type is broken; or when its type is missing or prefixed and it names the
// AAEP core context URL, which covers events with broken identifiers.
// JSON-RPC 2.0 envelopes of the stdio binding (Appendix B.6) are not
// unwrapped here: the capture side records their params as the message and
// keeps the method as a transport attribute. A producer's untyped error
// answer to a reply (B.1.4) is recognised by the run's checker, not the
// model: the checker claims it (protocol.Claimer) when it arrives right
// after a reply on the same source.
//
// # Decoding
//
// Each message is scanned once, by the engine, with the one JSON front end
// (package payload): a strict RFC 8259 validation that also splits the
// top-level members, reads the routing fields and notes whether any byte
// is non-ASCII (only then is UTF-8 validated in a pass of its own). The
// checker builds its Event from that decoding (decode.go) without reading
// the payload again; rules read the members by key index, unknown keys
// from a short list. A message that is
// not UTF-8 or not a JSON object gets ENV-UTF8 or ENV-JSON-OBJECT and
// nothing else. Events get the ENV rules, core-typed events also the EVT
// rules; handshake and reply messages get the MSG rules only, filed under
// their source's pseudo-session "subscription-N" as the handshake is. A
// producer manifest (aaep:producer.manifest, §5.10.1) is neither and is
// left alone.
//
// # Profiles
//
// For the single-message rules, the lenient profile (default) and the
// strict profile differ only where the specification contradicts itself and
// no precedence rule settles it: ENV-LOCHINTS-PRESENT, EVT-SUMMARY-NORMAL
// on types whose schema does not require it, and the schemas' string length
// maxima in EVT-SCHEMA are strict-only. Where prose and schema disagree,
// the prose wins in both profiles (§3.0, §4.7), as each rule's
// documentation says. The sequence rules document their own profile
// differences (seq.go); three of them weigh a contradiction with a level of
// its own in each profile (protocol.Rule.StrictLevel):
// SEQ-REPLY-AFTER-CANCEL (§6.8's SHOULD in the lenient profile, §9.4.2(9)'s
// MUST for a Level 2 subscriber in the strict one) and
// SEQ-STATE-AWAITING-ENTER (A.7.6 and §4.6 make it a note in the lenient
// profile, A.4 a warning in the strict one; informative text makes no
// MUST), and NEG-REPLY-SUBID-UNISSUED (a reply without subscription_id
// from a subscriber never issued one: SHOULD by §9.3.3 and §9.5.2(2),
// MUST by §6.3.1 and the reply schemas).
//
// # Parties
//
// Every rule names whose duty it states (protocol.Party): the envelope,
// payload, sequence and negotiation rules are mostly the producer's; the
// subscription request and the replies are the subscriber's
// (MSG-REQ-SCHEMA, MSG-CONF-REPLY-SCHEMA, MSG-CLAR-REPLY-SCHEMA,
// NEG-L2-DECLARES-REPLY, and the reply rules SEQ-REPLY-KNOWN-TOKEN,
// SEQ-REPLY-NOT-EXPIRED, SEQ-REPLY-AFTER-CANCEL, SEQ-REPLY-DECISION-ALLOWED,
// SEQ-CLAR-RESPONSE-TYPE, SEQ-REPLY-AUTO); the rules both sides share
// (subscription.close, a message's type, the subscription it names) and
// those about the recording itself (SEQ-REPLY-UNOBSERVED,
// SEQ-SESSION-INCOMPLETE, NEG-TYPES-WITHHELD) are either's. A reply the
// producer must ignore is the subscriber's finding at the subscriber's
// level; the producer is reported only when it acts on it
// (SEQ-REPLY-IGNORED).
package aaep

import (
	"bytes"
	"strings"

	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol"
)

// New returns the AAEP protocol model.
func New() protocol.Model { return model{} }

type model struct{}

func (model) Name() string { return "aaep" }

func (model) Rules() []protocol.Rule { return append(singleRules(), seqRules()...) }

// Recognize implements protocol.Model; see the package documentation.
func (model) Recognize(m *protocol.Message) bool {
	f := &m.Doc.Routing
	t := f.Type
	switch {
	case strings.HasPrefix(t, CorePrefix), strings.HasPrefix(t, TypeURIPrefix):
		return true
	case IsMessageType(t), isMessageFamily(t):
		return true
	}
	return strings.HasPrefix(f.EventID, "evt_") || strings.HasPrefix(f.SessionID, "sess_") ||
		((t == "" || strings.IndexByte(t, ':') > 0) && bytes.Contains(m.Raw, contextV1Bytes))
}

var contextV1Bytes = []byte(`"` + ContextV1 + `"`)

func (model) NewChecker(r protocol.Reporter, opts *protocol.Options) protocol.Checker {
	if opts == nil {
		opts = &protocol.Options{}
	}
	sr := &subReporter{Reporter: r}
	c := &checker{r: sr, seq: newSeqChecker(sr, opts)}
	sr.neg = &c.seq.neg
	c.ev = &c.own
	c.setRules(opts)
	return c
}

// setRules sets c's profile and the single-message rules it checks, as
// opts say.
func (c *checker) setRules(opts *protocol.Options) {
	if opts == nil {
		opts = &protocol.Options{}
	}
	c.strict = opts.Strict()
	disabled := map[string]bool{}
	for _, id := range opts.Disabled {
		disabled[id] = true
	}
	c.utf8On, c.jsonOn = !disabled[envUTF8.ID], !disabled[envJSONObject.ID]
	for _, r := range singleRuleTable() {
		if disabled[r.ID] || r.check == nil {
			continue
		}
		switch r.scope {
		case scopeEvent:
			c.eventChecks = append(c.eventChecks, r)
		case scopeCore:
			c.coreChecks = append(c.coreChecks, r)
		case scopeMessage:
			c.msgChecks = append(c.msgChecks, r)
		}
	}
}

// scope says which messages a single-message rule applies to.
type scope uint8

const (
	// scopeRaw rules are checked on the raw bytes before decoding.
	scopeRaw scope = iota + 1
	// scopeEvent rules apply to every event (envelope rules).
	scopeEvent
	// scopeCore rules apply to events of the 12 core types (payload rules).
	scopeCore
	// scopeMessage rules apply to handshake and reply messages.
	scopeMessage
)

// singleRule is one single-message rule: its catalog entry, scope and check.
type singleRule struct {
	protocol.Rule
	scope scope
	check func(c *checker)
}

// singleRuleTable lists every single-message rule, in catalog order:
// envelope (catalog §1.5), payload (§2.13), handshake/reply (§5.9).
func singleRuleTable() []*singleRule {
	out := make([]*singleRule, 0, len(envRules)+len(evtRules)+len(msgRules))
	out = append(out, envRules...)
	out = append(out, evtRules...)
	return append(out, msgRules...)
}

// singleRules returns the catalog entries of the single-message rules.
func singleRules() []protocol.Rule {
	t := singleRuleTable()
	out := make([]protocol.Rule, len(t))
	for i, r := range t {
		out[i] = r.Rule
	}
	return out
}

// checker checks one run: single-message rules here, sequence rules in seq.
type checker struct {
	r      protocol.Reporter
	strict bool
	seq    *seqChecker

	utf8On, jsonOn bool
	eventChecks    []*singleRule
	coreChecks     []*singleRule
	msgChecks      []*singleRule
	// rule is the single-message rule being checked: report files its
	// findings under it.
	rule *singleRule

	// The message being checked, and its Event: own's, or the one the
	// message was prepared with (prepare.go).
	m       *protocol.Message
	ev      *Event
	own     Event
	session string

	// afterReply marks the sources whose last AAEP message was a reply
	// towards the producer; claimed is set by Claim for Handle.
	afterReply map[int]bool
	claimed    bool
}

// Claim implements protocol.Claimer: a message no model recognises is an
// AAEP producer's answer to a reply when it comes from the producer, on a
// source whose last AAEP message was a reply towards the producer, and has
// the shape of the reply endpoint's error body (B.1.4): an "error" member,
// with nothing but error-description members beside it. Only the
// transport rules (TRN-NO-FAILURE-REASON) apply to it.
func (c *checker) Claim(m *protocol.Message) bool {
	if m.Dir != protocol.FromProducer || !c.afterReply[m.Source] || !m.Doc.IsObject() || m.Doc.Routing.Type != "" || !isErrorAnswer(m.Doc) {
		return false
	}
	delete(c.afterReply, m.Source)
	c.claimed = true
	return true
}

// errorAnswerKeys are the members an error answer may have.
var errorAnswerKeys = map[string]bool{"error": true, "message": true, "error_description": true, "detail": true,
	"reason": true, "code": true, "status": true}

// isErrorAnswer reports whether d is shaped as a producer's error answer
// (an object as encoding/json reads one).
func isErrorAnswer(d *payload.Doc) bool {
	if !d.JSONValid() {
		return false
	}
	if e := d.Get("error"); len(e) == 0 || (e[0] != '"' && e[0] != '{') {
		return false
	}
	for _, m := range d.Members() {
		if !errorAnswerKeys[string(m.Name)] {
			return false
		}
	}
	return true
}

func (c *checker) Handle(m *protocol.Message) {
	c.m = m
	c.seq.newMessage()
	claimed := c.claimed
	c.claimed = false
	d := m.Doc
	var err error
	p, ok := protocol.PrepOf[*prep](m)
	if !ok || !p.ok {
		p = nil
	}
	if p != nil {
		c.ev, err = &p.c.own, p.err
		if p.hashed {
			c.seq.prepared(p.key, p.hash)
		}
	} else {
		c.ev = &c.own
		err = decode(d, c.ev)
	}
	badUTF8, bom := !d.UTF8(), d.BOM()
	if len(c.afterReply) > 0 {
		delete(c.afterReply, m.Source)
	}
	if badUTF8 || bom {
		// The encoding fault is the message's (ENV-UTF8, §3.8); a message
		// that still decodes goes on to every other rule and to the
		// sequence checks, so one bad byte does not change the verdict of
		// the events around it.
		if c.utf8On {
			what := "is not valid UTF-8"
			if bom {
				what = "starts with a byte-order mark, which RFC 8259 does not allow"
				if badUTF8 {
					what += ", and is not valid UTF-8 after it"
				}
			}
			c.r.Report(&envUTF8.Rule, m.Doc.Routing.SessionKey(), m, "not UTF-8",
				"message %d %s; AAEP messages must be UTF-8 JSON without a BOM (§3.8)", m.Index, what)
		}
		if err != nil {
			return // not JSON in any encoding we read: nothing more to judge
		}
	}
	if err != nil {
		if c.jsonOn {
			c.r.Report(&envJSONObject.Rule, m.Doc.Routing.SessionKey(), m, "not a JSON object",
				"message %d is not a strict RFC 8259 JSON object (%v); every AAEP message must be one (§3.8, §3.9)", m.Index, err)
		}
		return
	}
	ev := c.ev
	if claimed {
		c.seq.checkTransport(m, ev)
		return
	}
	if m.Dir == protocol.ToProducer && (ev.Type == MsgConfirmationReply || ev.Type == MsgClarificationReply) {
		if c.afterReply == nil {
			c.afterReply = map[int]bool{}
		}
		c.afterReply[m.Source] = true
	}
	if ev.Type == TypeProducerManifest {
		// A manifest document (§5.10.1) is neither an event nor a
		// handshake message: no rule applies to it.
		return
	}
	c.session = ev.SessionID
	if c.seq.redelivery(m, ev) {
		return // an identical repeat: counted, judged no further
	}
	if p != nil && p.checked {
		c.session = p.c.session
		if !ev.IsEvent {
			// Made ahead, under the source's subscription: a reply's
			// findings go to the session it answers (messageSession).
			c.session = c.seq.messageSession(m, ev)
		}
		p.replay(c.r, m, p.c.session, c.session)
	} else {
		c.checkSingle()
	}
	c.seq.handle(m, ev)
}

// checkSingle checks the single-message rules that apply to c.ev.
func (c *checker) checkSingle() {
	switch {
	case !c.ev.IsEvent:
		// Handshake and reply messages carry no session_id: a reply is
		// filed under the session it answers, the others under their
		// source's pseudo-session, as the sequence checker files the
		// handshake (neg.go).
		c.session = c.seq.messageSession(c.m, c.ev)
		c.runChecks(c.msgChecks)
	default:
		c.runChecks(c.eventChecks)
		if c.ev.Core != "" {
			c.runChecks(c.coreChecks)
		}
	}
}

func (c *checker) Finish() { c.seq.finish() }

// Begin implements protocol.StreamObserver.
func (c *checker) Begin(info protocol.StreamInfo) {
	c.seq.replay = nil
	for _, src := range info.Sources {
		if src.Replay {
			if c.seq.replay == nil {
				c.seq.replay = map[int]bool{}
			}
			c.seq.replay[src.ID] = true
		}
	}
}

// Connection implements protocol.StreamObserver: reconnects delimit
// redeliveries (seq_redeliver.go).
func (c *checker) Connection(conn *protocol.Conn) { c.seq.connection(conn) }

// runChecks runs the checks of rules on the current message.
func (c *checker) runChecks(rules []*singleRule) {
	for _, r := range rules {
		c.rule = r
		r.check(c)
	}
	c.rule = nil
}

// report records a finding of the rule being checked (c.rule) on the
// current message. A check cannot name another rule: each single-message
// rule is one value with its check (rules_single.go).
func (c *checker) report(short, format string, args ...any) {
	c.r.Report(&c.rule.Rule, c.session, c.m, short, format, args...)
}

// Lifecycle states of a session (Appendix A); the internal states between
// them come from agent.state.changed.
const (
	StateStarted   = "started"
	StateCompleted = "completed"
	StateErrored   = "errored"
	StateCancelled = "cancelled"
)
