package aaep

// The sequence checker: rules across messages (SEQ-*), the recorded
// subscription handshake (NEG-*, neg.go) and transport frames (TRN-*,
// trn.go), plus the trace Steps and SessionSummaries of every AAEP session.
//
// How the stream is read
//
// Sessions are keyed by session_id. Each open session keeps its state in a
// protocol.Sessions table; when a session reaches its terminal event its
// state is dropped and only its ID (and terminal state) is remembered in a
// bounded list, so memory is bounded by the sessions open at once. A late
// event for a closed session is SEQ-NOTHING-AFTER-TERMINAL.
//
// Messages are taken in capture order. Events keep the producer's emission
// order within one channel (the transport must preserve per-session order);
// sequence_number gaps and late arrivals are reported (SEQ-SEQNO-INCREMENT,
// SEQ-DELIVERY-ORDER) but the stream is not reordered. Replies
// (confirmation.reply, clarification.reply, direction subscriber→producer)
// are placed at their capture position, so "the reply arrived before the
// action" is a question of capture order, while "the reply was decided in
// time" uses the reply's own timestamp (§6.3.4(4)).
//
// Several subscriptions (sources) may carry the same session. The session's
// state machine follows one channel: its primary source, the first source
// that carried it (a later one takes over if the primary's subscription is
// closed). Copies of its events on other sources are checked only by the
// per-channel rules (event_id uniqueness and sequence numbers per source,
// and the NEG rules of that subscription), and a session stays known until
// every source that carried it has delivered the terminal event (at most
// maxDraining such sessions; the oldest is then forgotten).
//
// Recordings without replies: a passive recorder never carries the
// subscriber's replies, so the rules that rest on a missing reply are not
// reported for the subscriptions (sources) that carried none by the end of
// the session; the resolution is inferred from what the producer did and
// noted once per session as SEQ-REPLY-UNOBSERVED (seq_unseen.go).
//
// Time: durations between two events of a session (timeouts, countdowns,
// tool durations) are measured on the producer's clock, from the events'
// timestamps, as §6.4 measures timeouts "from the timestamp of the
// originating event"; when either timestamp is unreadable the capture's
// receive offsets are used instead. A recording of a replay
// (protocol.SourceInfo.Replay: aaep-replay serve --record) pairs the
// original producer's events with a live subscriber's replies: there the
// replies are placed on the receive clock (replyInstant), so reply timing
// is judged by receive offsets, and events' timestamps are not compared
// with their receive times (SEQ-TIMESTAMP-NOT-FUTURE, -BACKDATED).
//
// Profiles: where the specification contradicts itself, the lenient profile
// (default) follows the reading under which the specification's own examples
// pass, and the strict profile (opts.Strict()) follows the letter of the
// stricter text:
//
//   - SEQ-STATE-FIRST-IDLE, SEQ-STATE-CHAIN: lenient accepts the implicit
//     state (§4.2.1's escape clause); strict follows the explicit chain.
//   - SEQ-STATE-AWAITING-EXIT: lenient wants any follow-up (§9.4.1(9));
//     strict a state change from awaiting_input first (A.4).
//   - SEQ-CONF-REJECT-FOLLOWUP: lenient accepts any state change, output,
//     handoff or cancel; strict a state change to thinking or deciding, or
//     a cancel (§4.5.3, §6.1(2)).
//   - SEQ-IRREV-NEEDS-ACCEPT: lenient lets a defaulted accept authorize an
//     irreversible action (§4.5.3, §6.1); strict wants an accept reply
//     (§4.3.1).
//   - SEQ-A7-TABLES: strict only.
//   - NEG-FILTER-EXCLUDE: strict lets exclude always win; lenient lets a
//     more specific include win (§5.3.1.7 says both).
//
// Where prose and schema disagree, the prose wins in both profiles (§3.0,
// §4.7); the rule comments in seqRuleTable say where that matters.

import (
	"time"

	"github.com/aaep-tools/aaepkit/protocol"
)

// Internal states of Appendix A (A.2). Any other string is allowed in
// state.changed and is followed as written.
const (
	stateIdle          = "idle"
	stateThinking      = "thinking"
	stateCallingTool   = "calling_tool"
	stateWritingOutput = "writing_output"
	stateAwaitingInput = "awaiting_input"
	stateDeciding      = "deciding"
	stateHandingOff    = "handing_off"
)

// Bounds that keep per-session memory finite even in endless sessions.
const (
	// maxIDsPerSession bounds the event_ids remembered per open session for
	// SEQ-EVENT-ID-UNIQUE; older ones are forgotten first.
	maxIDsPerSession = 1 << 16
	// maxCallIDsPerSession bounds the tool_call_ids remembered per session.
	maxCallIDsPerSession = 1 << 14
	// maxOutputsPerSession bounds the finished outputs remembered per session.
	maxOutputsPerSession = 4096
	// maxRetiredTokens bounds the reply tokens remembered after their
	// session closed (for SEQ-REPLY-TOKEN-UNIQUE and late replies).
	maxRetiredTokens = 1 << 16
	// maxDraining bounds the ended sessions kept while other sources have
	// not yet delivered their terminal event.
	maxDraining = 1024
	// maxGaps bounds the open sequence_number gaps remembered per channel.
	maxGaps = 64
)

// Timing allowances.
const (
	// futureSkew is how far an event's timestamp may lie after its capture
	// receive time (clock skew) before SEQ-TIMESTAMP-NOT-FUTURE fires.
	futureSkew = 5 * time.Minute
	// backdateLimit is how far it may lie before the receive time before
	// SEQ-TIMESTAMP-BACKDATED fires.
	backdateLimit = time.Hour
)

// ref locates a message for a finding reported later than its message.
type ref struct {
	index  int64
	offset time.Duration
}

func refOf(m *protocol.Message) ref { return ref{m.Index, m.Offset} }

// related is the message's position as a finding about another message
// names it: written as its index ("message %d"), filed in the finding's
// Related.
func (r ref) related() protocol.Related { return protocol.Related{Index: r.index, Offset: r.offset} }

func (r ref) msg() *protocol.Message { return &protocol.Message{Index: r.index, Offset: r.offset} }

// instant is when something happened: on the producer's clock when its
// timestamp could be read, and on the capture clock always.
type instant struct {
	t   time.Time
	ok  bool
	off time.Duration
}

func instantOf(m *protocol.Message, ev *Event) instant {
	return instant{t: ev.Time, ok: ev.TimeOK, off: m.Offset}
}

// since is the time from a to b: by the producer clock when both are known,
// otherwise by the capture clock.
func since(a, b instant) time.Duration {
	if a.ok && b.ok {
		return b.t.Sub(a.t)
	}
	return b.off - a.off
}

// leg is one source's view of a session: per-channel rules live here.
type leg struct {
	source   int
	terminal bool // this source delivered the session's terminal event
	// sequence_number state of this channel.
	seqMode  uint8 // 0 unknown, 1 numbered, 2 unnumbered
	seqNext  int64
	seqGaps  []seqGap
	seqGapAt []ref
	// hold holds the session's messages back while an event of this
	// (primary) source is late (seq_order.go).
	hold *hold
}

type seqGap struct{ from, to int64 } // missing numbers [from, to)

// session is the state of one open session.
type session struct {
	id       string
	primary  int
	former   []int // earlier primary sources (closed subscriptions)
	legs     []*leg
	started  bool
	ended    bool // terminal processed; waiting for other sources (draining)
	endState string
	termID   string

	msgs        int
	first, last time.Duration

	state    string // current state (implicit-state model, §3.3 of the catalog)
	explicit string // last explicit to_state ("" before the first state.changed)
	sawSC    bool

	clocks            []producerClock
	producer0         string // the first producer object, as recorded
	reportedFuture    bool
	reportedBackdated bool

	start        instant
	tiCount      int
	toolsAvail   map[string]bool
	handoff      bool
	handoffNoted bool
	sawTI, sawOS bool
	scTool       bool // a state.changed touched calling_tool
	scOutput     bool // a state.changed touched writing_output

	// previous event, for SEQ-A7-TABLES (strict).
	prevCore     string
	prevTo       string
	prevOutput   string
	prevComplete bool
	prevAccept   bool // the previous session item was an accept reply

	tools   toolTable
	outputs map[string]*output
	outDone []string // completed outputs, oldest first (for the bound)
	// outTotal and outTotal16 are the session's streamed output so far,
	// all outputs, in code points and UTF-16 units: the field table's
	// reading of position (§4.3.3, "offset within the session's total
	// output").
	outTotal, outTotal16 int64

	awaits       []*await
	enterPending *await // awaiting.confirmation waiting for its state.changed to awaiting_input
	consumed     bool   // some accepted confirmation was already used by an action

	idCount  int    // live event ids held for this session
	idGen    uint32 // bumped to forget the session's ids at once
	dead     bool   // closed: its ids are stale
	tokens   []string
	critical []criticalEvent
	notices  []*await // resolved confirmations kept for NEG-RESOLUTION-NOTICE after the end

	// The last progress percent, for SEQ-PROGRESS-COALESCE (seq_state.go).
	lastPercent   float64
	lastPercentAt instant
	hasPercent    bool
	rapidRun      int
	coalesceNoted bool
}

type producerClock struct {
	hash uint64
	last time.Time
}

// seqChecker implements the sequence rules for one run.
type seqChecker struct {
	r      protocol.Reporter
	strict bool

	sessions *protocol.Sessions[session]
	closed   map[string]closedInfo
	closedQ  []string
	closedAt int
	draining []*session

	ids     map[uint64]idRec // by idKey.key
	liveIDs int              // entries of ids that belong to open sessions
	tokens  map[string]*await
	retired map[string]retiredToken // token -> what became of it when its session closed
	retQ    []string
	retAt   int

	neg    negChecker
	unseen unseen // flows whose replies the recording may not carry (seq_unseen.go)

	// holders are the sessions holding messages back while an event is
	// late (seq_order.go); flushing judges held messages without holding.
	holders  []*session
	heldAll  int // messages held by all holds
	flushing bool

	redeliver  redeliveries // identical repeats per source (seq_redeliver.go)
	idReported bool         // SEQ-EVENT-ID-UNIQUE already reported for this message
	memo       messageMemo  // the message being checked (seq_ids.go)
	// replay holds the sources that record a replay
	// (protocol.SourceInfo.Replay): their events' timestamps are the
	// original producer's.
	replay map[int]bool
	// gaps counts the gaps recorded in the capture so far: a lost or
	// refused connection, a reconnect, a message not recorded, a
	// sequence_number that skips. A streaming position that jumps across
	// one is not the producer's (SEQ-STREAM-POSITION-JUMP).
	gaps int64
}

type closedInfo struct {
	state  string
	termID string
}

func newSeqChecker(r protocol.Reporter, opts *protocol.Options) *seqChecker {
	s := &seqChecker{
		r:        r,
		strict:   opts.Strict(),
		sessions: protocol.NewSessions[session](0),
		closed:   map[string]closedInfo{},
		ids:      make(map[uint64]idRec, 1024),
		tokens:   map[string]*await{},
		retired:  map[string]retiredToken{},
	}
	s.neg.init(s)
	return s
}

func (s *seqChecker) report(rule *protocol.Rule, session string, m *protocol.Message, short, format string, args ...any) {
	if s.unjudgeable(rule, session) {
		return // it rests on events the subscription does not deliver (seq_withheld.go)
	}
	s.r.Report(rule, session, m, short, format, args...)
}

// handle takes every decodable AAEP message in capture order.
func (s *seqChecker) handle(m *protocol.Message, ev *Event) {
	s.checkTransport(m, ev)
	if !ev.IsEvent {
		switch ev.Type {
		case MsgConfirmationReply, MsgClarificationReply:
			if len(s.holders) > 0 && s.holdReply(m, ev) {
				return // judged after the held events of its session (seq_order.go)
			}
			s.replyMessage(m, ev)
		case MsgSubscriptionRequest, MsgSubscriptionAccepted, MsgSubscriptionRejected,
			MsgSubscriptionRenegotiate, MsgSubscriptionClose:
			s.neg.message(m, ev)
		}
		return
	}
	s.neg.event(m, ev)
	if ev.SessionID == "" {
		return // no session to follow; ENV-REQ-FIELDS reports the missing field
	}
	s.event(m, ev)
}

// replyMessage handles a confirmation.reply or clarification.reply.
func (s *seqChecker) replyMessage(m *protocol.Message, ev *Event) {
	if m.Dir == protocol.ToProducer {
		s.replyCarried(m.Source)
	}
	s.neg.reply(m, ev)
	s.reply(m, ev)
}

// event routes one event to its session.
func (s *seqChecker) event(m *protocol.Message, ev *Event) {
	id := ev.SessionID
	ss := s.sessions.Get(id)
	if ss == nil {
		if info, ok := s.closed[id]; ok && s.sessions.WasClosed(id) {
			s.afterClose(m, ev, info)
			return
		}
		ss = s.open(id, m)
	}
	lg := ss.leg(m.Source)
	if ss.ended {
		s.drainingEvent(ss, lg, m, ev)
		return
	}
	primary := m.Source == ss.primary
	switch s.checkEventID(ss, m, ev, primary) {
	case idRedelivered:
		return
	case idCopy:
		primary = false
	}
	if primary && s.holdEvent(ss, lg, m, ev) {
		return // judged in emission order (seq_order.go)
	}
	s.checkSeqNo(ss, lg, m, ev)
	if !primary {
		s.copyEvent(ss, lg, m, ev)
		return
	}
	s.primaryEvent(ss, lg, m, ev)
}

// open starts tracking session id at its first message.
func (s *seqChecker) open(id string, m *protocol.Message) *session {
	ss := &session{id: id, primary: m.Source, state: StateStarted, first: m.Offset, last: m.Offset}
	s.sessions.Open(id, ss)
	return ss
}

func (ss *session) leg(source int) *leg {
	for _, l := range ss.legs {
		if l.source == source {
			return l
		}
	}
	l := &leg{source: source}
	ss.legs = append(ss.legs, l)
	return l
}

// afterClose handles an event of a session whose terminal event was already
// processed and whose state was dropped.
func (s *seqChecker) afterClose(m *protocol.Message, ev *Event, info closedInfo) {
	if ev.Core == TypeSessionStarted {
		s.report(seqSessionIDReuse, ev.SessionID, m, "session_id reused",
			"session %s starts again after it ended (%s); session_id values must be unique across a producer's sessions, so a new session needs a new id",
			ev.SessionID, info.state)
		ss := s.open(ev.SessionID, m)
		s.primaryEvent(ss, ss.leg(m.Source), m, ev)
		return
	}
	if ev.EventID != "" && ev.EventID == info.termID {
		return // the terminal event again (another subscription, or redelivered)
	}
	s.lateEvent(ev.SessionID, info.state, m, ev)
}

func (s *seqChecker) lateEvent(session, endState string, m *protocol.Message, ev *Event) {
	if isTerminal(ev.Core) {
		s.report(seqTerminalOnce, session, m, "second terminal event",
			"session %s already ended (%s) and now sends %s; a session has exactly one terminal event, and completed must never follow errored or cancelled",
			session, endState, shortType(ev))
	} else {
		s.report(seqNothingAfterTerminal, session, m, "event after the end",
			"%s arrives after session %s ended (%s); no event of a session may follow its terminal event",
			shortType(ev), session, endState)
	}
	s.r.Step(protocol.Step{Session: session, Index: m.Index, Offset: m.Offset, From: endState, To: endState,
		Label: shortType(ev), Detail: "after the end", Kind: stepKind(ev.Core)})
}

// drainingEvent handles an event of a session that ended on its primary
// source while other sources still carry it.
func (s *seqChecker) drainingEvent(ss *session, lg *leg, m *protocol.Message, ev *Event) {
	if ev.EventID != "" {
		if rec, ok := s.lookupID(s.idKey(m, ev)); ok && rec.sess == ss && s.live(rec) {
			s.repeatedID(ss, m, ev, rec, s.contentHash(ev))
			return
		}
		if ev.EventID == ss.termID {
			// The terminal event on another source.
			s.checkSeqNo(ss, lg, m, ev)
			s.rememberID(ss, m, ev)
			s.neg.copyEvent(ss, m, ev)
			s.markLegTerminal(ss, lg)
			return
		}
	}
	if lg.terminal || m.Source == ss.primary {
		if ev.Core == TypeSessionStarted {
			// A new session under the ended one's id: forget the old one.
			s.closeSession(ss)
			s.afterClose(m, ev, s.closed[ss.id])
			return
		}
		s.lateEvent(ss.id, ss.endState, m, ev)
		return
	}
	// An event emitted before the end that reaches this source late.
	s.checkSeqNo(ss, lg, m, ev)
	s.rememberID(ss, m, ev)
	s.neg.copyEvent(ss, m, ev)
	if isTerminal(ev.Core) {
		s.markLegTerminal(ss, lg)
	}
}

func (s *seqChecker) markLegTerminal(ss *session, lg *leg) {
	lg.terminal = true
	for _, l := range ss.legs {
		if !l.terminal && !s.neg.sourceClosed(l.source) {
			return
		}
	}
	s.closeSession(ss)
}

// copyEvent handles an event of the session that arrived on a source other
// than the primary one: per-channel rules only.
func (s *seqChecker) copyEvent(ss *session, lg *leg, m *protocol.Message, ev *Event) {
	s.neg.copyEvent(ss, m, ev)
	if isTerminal(ev.Core) {
		lg.terminal = true
	}
}

// primaryEvent runs the session rules on one event of the primary channel.
func (s *seqChecker) primaryEvent(ss *session, lg *leg, m *protocol.Message, ev *Event) {
	now := instantOf(m, ev)
	if ss.msgs == 0 {
		ss.first = m.Offset
	}
	ss.msgs++
	ss.last = m.Offset
	from := ss.state

	if !ss.started && ev.Core != TypeSessionStarted && ss.msgs == 1 {
		s.report(seqStartFirst, ss.id, m, "no session.started first",
			"the first event of session %s is %s; every session must begin with agent.session.started before any other event", ss.id, shortType(ev))
	}
	s.checkTime(ss, m, ev)
	s.expireAwaits(ss, m, now)
	s.checkEnterPending(ss, m, ev)
	s.checkFollowUps(ss, m, ev)
	s.checkHandoffEnd(ss, m, ev)
	if s.strict {
		s.checkA7(ss, m, ev)
	}

	if ev.Urgency == "critical" && ev.EventID != "" {
		s.neg.critical(ss, m, ev)
	}
	label, detail := shortType(ev), ""
	switch ev.Core {
	case TypeSessionStarted:
		detail = s.onStarted(ss, m, ev, now)
	case TypeSessionCompleted, TypeSessionErrored, TypeSessionCancelled:
		s.onTerminal(ss, lg, m, ev, now, from)
		return // onTerminal emits the step and closes
	case TypeStateChanged:
		detail = s.onStateChanged(ss, m, ev, now)
	case TypeProgressUpdated:
		detail = s.onProgress(ss, m, ev, now)
	case TypeToolInvoked:
		detail = s.onToolInvoked(ss, m, ev, now)
	case TypeToolCompleted:
		detail = s.onToolCompleted(ss, m, ev, now)
	case TypeOutputStreaming:
		detail = s.onOutput(ss, m, ev)
	case TypeAwaitingConfirmation:
		detail = s.onAwait(ss, m, ev, now, kindConfirm)
	case TypeAwaitingClarification:
		detail = s.onAwait(ss, m, ev, now, kindClarify)
	case TypeHandoffRequested:
		ss.handoff = true
		ss.state = impliedState(ev.Core)
		detail, _ = ev.Str("target_kind")
	}
	s.r.Step(protocol.Step{Session: ss.id, Index: m.Index, Offset: m.Offset, From: from, To: ss.state,
		Label: label, Detail: detail, Kind: stepKind(ev.Core)})
	s.setPrev(ss, ev)
}

// setPrev remembers the event for the next one's SEQ-A7-TABLES check; the
// state.changed and output.streaming handlers fill in prevTo and prevOutput.
func (s *seqChecker) setPrev(ss *session, ev *Event) {
	ss.prevCore = ev.Core
	ss.prevAccept = false
	if ev.Core != TypeStateChanged {
		ss.prevTo = ""
	}
}
