package asp

import (
	"slices"
	"strings"
	"time"

	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol"
)

// Timeout defaults of the state-machine page, and other bounds.
const (
	invitationTimeout = 30 * time.Second
	sessionTimeout    = 3600 * time.Second
	escalationTimeout = 3600 * time.Second
	// uuidClockSkew is how far a timestamp may be from its UUIDv7 time
	// before ASP-E07W warns [INFERRED].
	uuidClockSkew = 5 * time.Minute
	// recentMemory bounds the stream-wide memory of message IDs and hashes
	// (ASP-E04, ASP-H03) and of ended sessions (ASP-S07).
	recentMemory = protocol.DefaultClosedMemory

	maxSenders   = 64
	maxProposals = 64
	maxCleared   = 32
	maxStack     = 32
	maxIdentity  = 16
	maxSources   = 4096
)

// frameKind says how an envelope was carried.
type frameKind uint8

const (
	frameNone    frameKind = iota // a bare envelope
	frameMessage                  // WebSocket {"type":"message","envelope":…}
	frameSend                     // WebSocket {"type":"send","envelope":…}
)

// grace is the one message a terminal session may still take.
type grace uint8

const (
	graceNone         grace = iota
	graceMutualClose        // lenient: the other participant's CLOSE
	graceRejectAnswer       // strict: the REJECT invalid_state_transition answering a violation
)

type escalation struct {
	prev     string
	start    time.Time
	deadline time.Time
}

type proposal struct {
	id         string
	sender     string
	validUntil time.Time
}

// await is a message whose constraints bind the next reply.
type await struct {
	from string
	// msg is the message's position (the findings about its reply name it).
	msg         protocol.Related
	at          time.Time
	maxResponse time.Duration
	allowed     []string
	reqTrust    float64
	hasReqTrust bool
}

// session is the state of one open ASP session.
type session struct {
	id          string
	state       string
	messages    int
	first, last time.Duration
	version     string
	// adopted: the session's start was not recorded (ASP-S01) or a
	// WebSocket frame announced its state; the chain start is unknown.
	adopted bool

	inviter    string
	acceptors  []string
	identities []string
	accepted   bool

	lastHash string
	seq      map[string]int64

	lastTS         time.Time
	inviteDeadline time.Time
	timeout        time.Duration
	convStart      time.Time
	paused         time.Duration
	lifetimeWarned bool
	stack          []escalation

	pending, pendingMsg, committer string
	cleared                        []string
	proposals                      []proposal
	resultSeen                     bool

	await          *await
	grace          grace
	graceFrom      string
	afterViolation bool
	// expect is a state a session_state frame announced before the message
	// that causes it.
	expect string
}

type ended struct {
	state        string
	lateReported bool
}

type seenID struct {
	hash  string
	frame frameKind
}

type checker struct {
	md       *model
	r        protocol.Reporter
	strict   bool
	sessions *protocol.Sessions[session]
	ended    *protocol.Recent[ended]
	ids      *protocol.Recent[seenID]
	hashes   *protocol.Recent[struct{}]
	bySource map[int]string
	last     string
	// now is the latest message timestamp of the stream, the clock for
	// timeouts at the end of the stream.
	now time.Time
}

func newChecker(md *model, r protocol.Reporter, strict bool) *checker {
	return newCheckerSized(md, r, strict, recentMemory)
}

// newCheckerSized bounds the stream-wide memories at memory entries each.
func newCheckerSized(md *model, r protocol.Reporter, strict bool, memory int) *checker {
	return &checker{
		md: md, r: r, strict: strict,
		sessions: protocol.NewSessions[session](memory),
		ended:    protocol.NewRecent[ended](memory),
		ids:      protocol.NewRecent[seenID](memory),
		hashes:   protocol.NewRecent[struct{}](memory),
		bySource: map[int]string{},
	}
}

// Handle checks one ASP message, WebSocket frame or foreign-protocol message.
func (c *checker) Handle(m *protocol.Message) {
	if !m.Doc.IsObject() {
		c.r.Report(ruleE01, "", m, "not JSON", "message %d is not a JSON object, so it cannot be an ASP envelope", m.Index)
		return
	}
	f := &m.Doc.Routing
	get, frame := m.Doc.Get, frameNone
	if f.Performative == "" {
		switch {
		case (f.Type == "message" || f.Type == "send") && f.ASPEnvelope:
			env, _ := envelopeOf(m.Doc).Object()
			if env == nil {
				c.r.Report(ruleE01, "", m, "bad envelope", "the WebSocket %s frame's envelope is not a readable JSON object", f.Type)
				return
			}
			get, frame = func(name string) payload.Value { return env[name] }, frameMessage
			if f.Type == "send" {
				frame = frameSend
			}
		case stateFrames[f.Type]:
			c.stateFrame(m)
			return
		case controlFrames[f.Type]:
			return // transport bookkeeping; nothing to check
		case strings.HasPrefix(f.Type, "session.") && isOtherASP(m.Doc):
			c.r.Report(ruleX01, "", m, "other Agent Session Protocol", "message %d (type %q with id, created_at and data) belongs to agentsessionprotocol.org's Agent Session Protocol, a different protocol from npayload ASP; it is not checked", m.Index, protocol.Clip(f.Type, 40))
			return
		}
	}
	c.handle(m, decode(get, c.md), frame)
}

func (c *checker) handle(m *protocol.Message, e *envelope, frame frameKind) {
	id := e.sessionID
	for _, is := range e.issues {
		c.r.Report(is.rule, id, m, is.short, "%s", is.text)
	}
	if e.hasTS && e.ts.After(c.now) {
		c.now = e.ts
	}
	dup := false
	if e.messageID != "" {
		if prev, ok := c.ids.Get(e.messageID); ok {
			if prev.frame != frame && prev.frame != frameNone && frame != frameNone && prev.hash == e.hash {
				return // the WebSocket echo of a message already checked
			}
			dup = true
		} else {
			c.ids.Put(e.messageID, seenID{e.hash, frame})
		}
	}
	if id == "" {
		// Discovery, or no usable sessionId: envelope checks only.
		if dup {
			c.r.Report(ruleE04, "", m, "duplicate messageId", "messageId %s was already used by an earlier message; a repeated messageId is a replay", e.messageID)
		}
		return
	}
	if len(c.bySource) >= maxSources {
		clear(c.bySource)
	}
	c.bySource[m.Source], c.last = id, id

	s := c.sessions.Get(id)
	if s == nil {
		if end, ok := c.ended.Get(id); ok {
			c.late(m, e, id, end)
			return
		}
		s = c.open(id, m)
	}
	s.messages++
	s.last = m.Offset
	if dup {
		c.r.Report(ruleE04, id, m, "duplicate messageId", "messageId %s was already used by an earlier message; a repeated messageId is a replay, so this message is ignored", e.messageID)
		c.step(s, m, e, s.state, s.state, protocol.StepOther, "duplicate, ignored")
		return
	}
	c.sessionEnvelope(s, m, e)
	if !terminal(s.state) && e.hasTS && c.expired(s, m, e.ts) {
		c.step(s, m, e, sFailed, sFailed, protocol.StepOther, "after the timeout")
		c.end(s, false)
		return
	}
	if e.hasTS && e.ts.After(s.lastTS) {
		s.lastTS = e.ts
	}
	if !c.chain(s, m, e) {
		return
	}
	if terminal(s.state) {
		c.graceMessage(s, m, e)
		return
	}
	c.replies(s, m, e)
	if c.md.minimal[e.sender] && e.perf != "" && e.perf != pInform && e.perf != pQuery && e.perf != pClose {
		c.r.Report(ruleC03, id, m, "not Minimal", "%s is declared at the Minimal conformance level, which supports only INFORM, QUERY and CLOSE, but sent %s", e.sender, e.perf)
	}
	c.reasons(s, m, e)

	from := s.state
	mv := c.transition(s, m, e)
	if mv.from != "" {
		from = mv.from
	}
	c.step(s, m, e, from, mv.to, mv.kind, mv.note)
	s.state = mv.to
	if (s.state == sConversing || s.state == sAgreeing || s.state == sExecuting) && s.convStart.IsZero() && e.hasTS {
		s.convStart = e.ts
	}
	if mv.violation {
		c.synthetic(s, m, protocol.StepState, "protocol violation", e.perf+" not allowed")
		s.grace = graceRejectAnswer
	}
	if s.expect != "" {
		if s.state != s.expect {
			c.r.Report(ruleS11, id, m, "server state differs", "the server's session_state frame announced %s, but after this message the session is %s", s.expect, s.state)
		}
		s.expect = ""
	}
	if terminal(s.state) && s.grace == graceNone {
		c.end(s, false)
	}
}

// open starts tracking session id.
func (c *checker) open(id string, m *protocol.Message) *session {
	s := &session{id: id, state: sIdle, first: m.Offset, timeout: sessionTimeout, seq: map[string]int64{}}
	c.sessions.Open(id, s)
	if !isUUID(id) {
		c.r.Report(ruleE05, id, m, "sessionId not a UUID", "sessionId %q is not a UUID; the message schema asks for a UUID v7 (transport examples use other ids, hence only a warning)", protocol.Clip(id, 60))
	}
	return s
}

// sessionEnvelope checks the per-session envelope rules: one version,
// increasing sequence numbers per sender, ordered timestamps.
func (c *checker) sessionEnvelope(s *session, m *protocol.Message, e *envelope) {
	if e.version != "" {
		if s.version == "" {
			s.version = e.version
		} else if e.version != s.version {
			c.r.Report(ruleE03, s.id, m, "version changed", "this message uses %s but the session started with %s; both participants must use one version", protocol.Clip(e.version, 20), s.version)
		}
	}
	if e.hasSeq && e.sender != "" {
		if prev, ok := s.seq[e.sender]; ok && e.seq <= prev {
			c.r.Report(ruleE06, s.id, m, "sequenceNumber not increasing", "sequenceNumber %d of %s is not greater than its previous %d; each sender's numbers must strictly increase within a session", e.seq, e.sender, prev)
		}
		if _, ok := s.seq[e.sender]; ok || len(s.seq) < maxSenders {
			s.seq[e.sender] = e.seq
		}
	}
	if e.hasTS {
		if !s.lastTS.IsZero() && e.ts.Before(s.lastTS) {
			c.r.Report(ruleE07W, s.id, m, "timestamp went back", "timestamp %s is earlier than the session's previous %s", e.ts.Format(time.RFC3339Nano), s.lastTS.Format(time.RFC3339Nano))
		}
		if ut, ok := uuidTime(e.messageID); ok {
			if d := e.ts.Sub(ut); d > uuidClockSkew || d < -uuidClockSkew {
				c.r.Report(ruleE07W, s.id, m, "timestamp ≠ UUIDv7 time", "timestamp %s is %s away from the time inside its UUIDv7 messageId (%s)", e.ts.Format(time.RFC3339Nano), d.Abs().Round(time.Second), ut.Format(time.RFC3339Nano))
			}
		}
	}
}

// chain checks the hash chain; it returns false when the chain broke and
// the session failed.
func (c *checker) chain(s *session, m *protocol.Message, e *envelope) bool {
	if e.hash != "" {
		if _, dup := c.hashes.Get(e.hash); dup {
			c.r.Report(ruleH03, s.id, m, "hash reused", "integrity.hash %s was already the hash of an earlier message; every message's hash is unique", protocol.Clip(e.hash, 24))
		} else {
			c.hashes.Put(e.hash, struct{}{})
		}
	}
	switch {
	case s.messages == 1 && !s.adopted && isInvitation(s, e):
		if e.prevHash != "" && e.prevHash != genesisHash {
			c.r.Report(ruleH01, s.id, m, "chain does not start at genesis", "the session's first message has previousHash %s, but a chain starts at the genesis value sha256:000…0 (64 zeros)", protocol.Clip(e.prevHash, 24))
		}
	case s.lastHash != "" && e.prevHash != "" && e.prevHash != s.lastHash:
		c.r.Report(ruleH02, s.id, m, "hash chain broken", "previousHash %s does not equal the hash of the session's previous message (%s): the chain is broken, which fails the session (an integrity failure)", protocol.Clip(e.prevHash, 24), protocol.Clip(s.lastHash, 24))
		c.step(s, m, e, s.state, s.state, protocol.StepOther, "hash chain broken")
		c.synthetic(s, m, protocol.StepState, "hash chain break", "")
		c.end(s, false)
		return false
	}
	if e.hash != "" {
		s.lastHash = e.hash
	}
	return true
}

// isInvitation guards the edge that opens a session: a PROPOSE of type
// session-invitation.
func isInvitation(_ *session, e *envelope) bool {
	return e.perf == pPropose && e.str("type") == "session-invitation"
}

// expired checks the clocks of the session's state (the table's timed
// edges) at time t. When one ran out it reports the timeout, adds the
// synthetic step to FAILED and returns true. m is nil at the end of the
// stream.
func (c *checker) expired(s *session, m *protocol.Message, t time.Time) bool {
	for _, r := range index.timers[s.state] {
		if r.timer.expired(c, s, m, t) {
			c.synthetic(s, m, r.kind, "timeout", r.timer.name)
			return true
		}
	}
	return false
}

// invitationExpired: the invitation was not answered by its deadline (row 3).
func (c *checker) invitationExpired(s *session, m *protocol.Message, t time.Time) bool {
	if s.inviteDeadline.IsZero() || !t.After(s.inviteDeadline) {
		return false
	}
	what := "answered (ACCEPT or REJECT)"
	if c.strict {
		what = "answered and the introduction finished"
	}
	c.r.Report(ruleT01, s.id, m, "invitation timed out", "the invitation was not %s by its deadline %s (validUntil, or 30 s); at %s the session had already failed", what, s.inviteDeadline.Format(time.RFC3339Nano), t.Format(time.RFC3339Nano))
	return true
}

// escalationExpired: the escalation was not resolved in time.
func (c *checker) escalationExpired(s *session, m *protocol.Message, t time.Time) bool {
	n := len(s.stack)
	if n == 0 || s.stack[n-1].deadline.IsZero() || !t.After(s.stack[n-1].deadline) {
		return false
	}
	c.r.Report(ruleT04, s.id, m, "escalation timed out", "the escalation was not resolved by %s (its timeout, 3600 s by default); at %s the session had already failed", s.stack[n-1].deadline.Format(time.RFC3339Nano), t.Format(time.RFC3339Nano))
	return true
}

// sessionExpired: the session timeout ran out (row 8) — in the lenient
// profile an idle limit (with a warning once the lifetime exceeds it), in
// the strict profile the total lifetime, escalations not counted.
func (c *checker) sessionExpired(s *session, m *protocol.Message, t time.Time) bool {
	if s.convStart.IsZero() {
		return false
	}
	active := t.Sub(s.convStart) - s.paused
	if !c.strict {
		if !s.lastTS.IsZero() && t.Sub(s.lastTS) > s.timeout {
			c.r.Report(ruleT03, s.id, m, "session timed out", "no message for %s since %s, longer than the session timeout of %s, so the session failed (lenient profile: the timeout is an idle limit)", t.Sub(s.lastTS).Round(time.Millisecond), s.lastTS.Format(time.RFC3339Nano), s.timeout)
			return true
		}
		if active > s.timeout && !s.lifetimeWarned && m != nil {
			s.lifetimeWarned = true
			c.r.Report(ruleT03, s.id, m, "session lifetime exceeded", "the session has been active for %s, longer than its timeout of %s (the strict profile fails it here)", active.Round(time.Millisecond), s.timeout)
		}
		return false
	}
	if active > s.timeout {
		c.r.Report(ruleT03, s.id, m, "session timed out", "the session's lifetime exceeded its timeout of %s at %s, so it failed (strict profile: the timeout is the total lifetime)", s.timeout, s.convStart.Add(s.paused+s.timeout).Format(time.RFC3339Nano))
		return true
	}
	return false
}

// graceMessage handles a message to a session that is terminal but still
// open for one expected message.
func (c *checker) graceMessage(s *session, m *protocol.Message, e *envelope) {
	ok := false
	switch s.grace {
	case graceMutualClose:
		ok = e.perf == pClose && e.sender != s.graceFrom
	case graceRejectAnswer:
		ok = e.perf == pReject && e.str("code") == invalidStateTransition
	}
	if ok {
		c.step(s, m, e, s.state, s.state, protocol.StepLifecycle, "")
		c.end(s, false)
		return
	}
	c.reportLate(s.id, m, e, s.state)
	c.step(s, m, e, s.state, s.state, protocol.StepOther, "after "+s.state)
	c.end(s, true)
}

// late handles a message to a session that has ended.
func (c *checker) late(m *protocol.Message, e *envelope, id string, end ended) {
	if !end.lateReported {
		c.reportLate(id, m, e, end.state)
		end.lateReported = true
		c.ended.Put(id, end)
	}
	c.r.Step(protocol.Step{Session: id, Index: m.Index, Offset: m.Offset, From: end.state, To: end.state,
		Label: stepLabel(e), Detail: detail(e, "after "+end.state), Kind: protocol.StepOther})
}

func (c *checker) reportLate(id string, m *protocol.Message, e *envelope, state string) {
	what := e.perf
	if what == "" {
		what = "a message"
	}
	c.r.Report(ruleS07, id, m, "message after "+state, "%s arrived after the session ended in %s; no message may follow a terminal state (later messages of this session are not reported again)", what, state)
}

// replies checks a reply against the constraints of the message it answers.
func (c *checker) replies(s *session, m *protocol.Message, e *envelope) {
	if a := s.await; a != nil && e.sender != "" && e.sender != a.from {
		if a.maxResponse > 0 && !a.at.IsZero() && e.hasTS && e.ts.Sub(a.at) > a.maxResponse {
			c.r.Report(ruleT02, s.id, m, "late reply", "this reply came %s after message %d, which asked for an answer within %s (constraints.maxResponseTimeMs)", e.ts.Sub(a.at).Round(time.Millisecond), a.msg, a.maxResponse)
		}
		if len(a.allowed) > 0 && e.perf != "" && !slices.Contains(a.allowed, e.perf) {
			c.r.Report(ruleC01, s.id, m, "reply performative not allowed", "message %d allowed only %s as a reply (constraints.allowedPerformatives), but the reply is %s", a.msg, strings.Join(a.allowed, ", "), e.perf)
		}
		if a.hasReqTrust && e.hasTrust && e.trust < a.reqTrust {
			c.r.Report(ruleC02, s.id, m, "trust score too low", "%s replied with trustScore %g, below the %g that message %d required (constraints.requiredTrustScore)", e.sender, e.trust, a.reqTrust, a.msg)
		}
		s.await = nil
	}
	if e.maxResponse > 0 || len(e.allowedPerfs) > 0 || e.hasReqTrust {
		a := &await{from: e.sender, msg: protocol.RelatedTo(m), maxResponse: e.maxResponse, allowed: e.allowedPerfs, reqTrust: e.reqTrust, hasReqTrust: e.hasReqTrust}
		if e.hasTS {
			a.at = e.ts
		}
		s.await = a
	}
}

// reasons checks that closing, rejecting and escalating messages say why.
func (c *checker) reasons(s *session, m *protocol.Message, e *envelope) {
	var missing []string
	need := func(k string) {
		if v, ok := e.body[k].Str(); !ok || v == "" {
			missing = append(missing, k)
		}
	}
	switch e.perf {
	case pReject, pClose, pWithdraw:
		need("reason")
	case pEscalate:
		need("reason")
		need("urgency")
	default:
		return
	}
	if len(missing) > 0 {
		c.r.Report(ruleS08, s.id, m, "no "+strings.Join(missing, ", "), "%s should say why: its body lacks %s", e.perf, strings.Join(missing, " and "))
	}
}

// stateFrame cross-checks a WebSocket session_state, auth_ok or heartbeat
// frame against the computed state (ASP-S11). A frame that names a session
// not seen yet anchors it in the announced state.
func (c *checker) stateFrame(m *protocol.Message) {
	d := m.Doc
	state, ok := d.Get("state").Str()
	if !ok {
		return
	}
	prev, _ := d.Get("previous").Str()
	id, explicit := d.Get("sessionId").Str()
	if id == "" {
		id, explicit = c.bySource[m.Source], false
		if id == "" {
			id = c.last
		}
	}
	if id == "" {
		return
	}
	typ := m.Doc.Routing.Type
	if !stateNames[state] {
		c.r.Report(ruleS11, id, m, "unknown server state", "the server's %s frame names state %q, which is not one of the 9 ASP session states", typ, protocol.Clip(state, 30))
		return
	}
	if s := c.sessions.Get(id); s != nil {
		switch {
		case s.state == state:
		case typ == "session_state" && prev == s.state:
			s.expect = state // announced ahead of the message that causes it
		default:
			c.r.Report(ruleS11, id, m, "server state differs", "the server's %s frame says the session is %s, but the messages so far put it in %s", typ, state, s.state)
		}
		return
	}
	if end, ok := c.ended.Get(id); ok {
		if end.state != state {
			c.r.Report(ruleS11, id, m, "server state differs", "the server's %s frame says the session is %s, but the messages ended it in %s", typ, state, end.state)
		}
		return
	}
	if explicit && state != sIdle && !terminal(state) {
		s := c.open(id, m)
		s.state, s.adopted = state, true
	}
}

// end reports a session finished and drops its state.
func (c *checker) end(s *session, lateReported bool) {
	c.r.SessionDone(protocol.SessionSummary{Session: s.id, Messages: s.messages, First: s.first, Last: s.last, State: s.state, Complete: terminal(s.state)})
	c.sessions.Close(s.id)
	c.ended.Put(s.id, ended{state: s.state, lateReported: lateReported})
}

// Finish applies the clocks at the stream's last timestamp and reports
// every session still open.
func (c *checker) Finish() {
	for _, id := range c.sessions.Keys() {
		s := c.sessions.Get(id)
		if !terminal(s.state) && !c.now.IsZero() {
			c.expired(s, nil, c.now)
		}
		c.end(s, false)
	}
}
