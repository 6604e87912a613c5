// Package protocol is what the protocol models share and the engine that
// runs them: a Model describes one protocol (packages protocol/aaep, asp
// and kahn): how its messages are recognised, its state machine and its
// rules. The Engine reads a stream once, decodes each message's routing
// fields once and hands the message to its protocol's Checker, which
// reports Findings (rule violations, with related positions) and Steps
// (moves through the state machine) to a Reporter. Checkers keep state per
// open session only (Sessions), so memory is bounded by the sessions open
// at once, not by the stream's length.
//
// Package protocol/check runs the models over a recording, the one
// analysis driver; package protocol/report renders what they found.
package protocol

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aaep-tools/aaepkit/payload"
)

// Level is how serious a rule is. The order matters: Must > Should > Info.
type Level uint8

// Rule levels, named after the requirement keywords of the specifications.
const (
	// Info is informative: heuristics and derived consistency checks.
	Info Level = iota + 1
	// Should is a SHOULD/RECOMMENDED requirement, or a rule built on
	// unpublished ([INFERRED]) facts: a warning.
	Should
	// Must is a MUST/REQUIRED requirement: an error.
	Must
	// Never is a threshold above every level (--fail-on never): no finding
	// reaches it, so nothing fails. No rule has this level.
	Never
)

// String returns "MUST", "SHOULD" or "INFO".
func (l Level) String() string {
	switch l {
	case Must:
		return "MUST"
	case Should:
		return "SHOULD"
	case Info:
		return "INFO"
	case Never:
		return "NEVER"
	}
	return fmt.Sprintf("Level(%d)", uint8(l))
}

// MarshalText encodes the level as its name.
func (l Level) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// ParseLevel parses "must", "should" or "info" (any case; "error" and
// "warning" are accepted as synonyms of must and should).
func ParseLevel(s string) (Level, error) {
	return parseLevel(s)
}

// ParseThreshold parses a failure threshold: a level as ParseLevel reads
// it, or "never" (Never: nothing fails).
func ParseThreshold(s string) (Level, error) {
	if strings.EqualFold(s, "never") {
		return Never, nil
	}
	l, err := parseLevel(s)
	if err != nil {
		return 0, fmt.Errorf("unknown level %q (want must, should, info or never)", s)
	}
	return l, nil
}

func parseLevel(s string) (Level, error) {
	switch strings.ToLower(s) {
	case "must", "error":
		return Must, nil
	case "should", "warning", "warn":
		return Should, nil
	case "info":
		return Info, nil
	}
	return 0, fmt.Errorf("unknown level %q (want must, should or info)", s)
}

// Rule is one checkable requirement of a protocol, declared once as a
// value (as golang.org/x/tools/go/analysis declares an Analyzer): its ID,
// level, summary, documentation, the text that states it and how each
// profile reads it. Checkers report a finding by handing the rule value to
// Reporter.Report, so a misspelt rule does not compile; `aaep-replay check
// --rules` prints these values (WriteRules).
//
// A model declares each rule as a package-level *Rule and lists them in
// Model.Rules. The values are read-only once declared.
type Rule struct {
	// ID is the rule's catalog ID, e.g. "SEQ-STATE-CHAIN" or "ASP-S01".
	// --disable names rules by it.
	ID string `json:"id"`
	// Level is the rule's requirement level for its party: in the lenient
	// (default) profile, and in the strict one unless StrictLevel says
	// otherwise.
	Level Level `json:"level"`
	// StrictLevel is the rule's level in the strict profile where a
	// contradiction of the specification makes the two profiles weigh it
	// differently (Profiles and Doc say why); zero when it is Level.
	StrictLevel Level `json:"strict_level,omitempty"`
	// Party is whose duty the rule states: the producer's, the
	// subscriber's, or either's (see Party). A finding of the rule is
	// reported against this party, at the rule's level.
	Party Party `json:"party"`
	// Summary says in one sentence what the rule requires.
	Summary string `json:"summary"`
	// Doc is the rationale: why the rule has its level, which reading of
	// an unclear or self-contradicting text the checker takes, and what it
	// leaves alone. Empty when the summary says it all.
	Doc string `json:"doc,omitempty"`
	// Spec says where the requirement is stated: sections of the
	// protocol's specification (shared/spec/) and of the rule catalog
	// (shared/notes/aaep-rules.md, shared/notes/asp-kahn.md).
	Spec string `json:"spec"`
	// Profiles says how the lenient and the strict profile read the rule
	// where they differ; zero when both read it alike.
	Profiles Profiles `json:"profiles,omitzero"`
}

// validate reports what makes a declared rule unusable: no ID, a level,
// strict level or party out of range, no summary.
func (r *Rule) validate() error {
	switch {
	case r.ID == "":
		return errors.New("no ID")
	case r.Level < Info || r.Level > Must:
		return fmt.Errorf("level %v is none of MUST, SHOULD, INFO", r.Level)
	case r.StrictLevel != 0 && (r.StrictLevel < Info || r.StrictLevel > Must):
		return fmt.Errorf("strict level %v is none of MUST, SHOULD, INFO", r.StrictLevel)
	case r.Party != Producer && r.Party != Subscriber && r.Party != Either:
		return fmt.Errorf("party %v is none of producer, subscriber, either", r.Party)
	case r.Summary == "":
		return errors.New("no summary")
	}
	return nil
}

// LevelIn returns the rule's level in the profile opts select
// (StrictLevel in the strict profile, where it is set).
func (r *Rule) LevelIn(opts *Options) Level {
	if r.StrictLevel != 0 && opts.Strict() {
		return r.StrictLevel
	}
	return r.Level
}

// Profiles holds a rule's reading in each profile (Options.Profile). A rule
// only one profile checks says so in the other's reading.
type Profiles struct {
	// Lenient is the reading of the lenient (default) profile.
	Lenient string `json:"lenient"`
	// Strict is the reading of the strict profile.
	Strict string `json:"strict"`
}

// Differ reports whether the two profiles read the rule differently.
func (p Profiles) Differ() bool { return p != Profiles{} }

// Only names the one profile that reports the rule ("lenient" or
// "strict"), or returns "" when both do.
func (p Profiles) Only() string {
	switch {
	case strings.HasPrefix(p.Lenient, NotChecked):
		return "strict"
	case strings.HasPrefix(p.Strict, NotChecked):
		return "lenient"
	}
	return ""
}

// NotChecked starts the reading of a profile that does not report a rule
// at all ("not checked", or "not checked: " and why).
const NotChecked = "not checked"

// Direction says which way a message travelled.
type Direction uint8

const (
	// FromProducer: the agent (producer) sent it; events, handshake answers.
	FromProducer Direction = iota
	// ToProducer: a subscriber sent it; subscription requests, replies.
	ToProducer
)

// String returns "producer→subscriber" or "subscriber→producer".
func (d Direction) String() string {
	if d == ToProducer {
		return "subscriber→producer"
	}
	return "producer→subscriber"
}

// Message is one recorded message as the engine hands it to a checker.
type Message struct {
	// Index is the message's position in the input (record index in a
	// capture, 0-based; line number minus one in a JSONL file).
	Index int64
	// Offset is the receive time since the capture's start.
	Offset time.Duration
	// Received is the absolute receive time (zero when unknown).
	Received time.Time
	// Dir is the direction of the message.
	Dir Direction
	// Source is the capture's source id (connection/subscription).
	Source int
	// Recording is, for a message of several recordings read joined
	// (recording.Join), the position among them of the recording it
	// belongs to; 0 otherwise.
	Recording int
	// Raw is the payload exactly as recorded. It is valid only during the
	// call that receives the Message: copy what you keep.
	Raw []byte
	// Attrs are transport attributes (SSE id/event, JSON-RPC method), may be nil.
	Attrs map[string]string
	// Doc is the payload decoded once (validity, members, routing fields,
	// statistics) for recognition and every check. Engine.Feed decodes Raw
	// into a Doc of its own when Doc is nil or was decoded from other bytes;
	// a caller may decode earlier, on another goroutine, with Decode. Like
	// Raw it is valid only during the call that receives the Message.
	Doc *payload.Doc
	// Prep is the models' preparation of the message, made ahead of the
	// engine (Preparation.Prepare), or nil. Like Doc it is valid only
	// during the call that receives the Message.
	Prep *Slot
}

// Decode decodes m.Raw into d (reset first, its buffers reused) and sets
// m.Doc to d, so that Engine.Feed need not decode m again. It touches no
// engine state: a reading goroutine may decode messages ahead of the
// engine, each into a Doc of its own.
func (m *Message) Decode(d *payload.Doc) {
	d.Decode(m.Raw)
	m.Doc = d
}

// decoded reports whether m.Doc holds the decoding of m.Raw.
func (m *Message) decoded() bool {
	if m.Doc == nil {
		return false
	}
	return sameBytes(m.Doc.Raw(), m.Raw)
}

// Conn is one connection record of a capture: a source connected, lost its
// connection, was closed or refused a message.
type Conn struct {
	// Index is the record's position in the capture (the numbering
	// Message.Index uses).
	Index int64
	// Offset is the receive time since the capture's start.
	Offset time.Duration
	// Source is the capture's source id.
	Source int
	// Recording is, for a record of several recordings read joined, the
	// position among them of the recording it belongs to (Message.Recording).
	Recording int
	// Raw is the record's payload, a JSON object whose "event" member names
	// what happened (capfile's Conn* names). It is
	// valid only during the call that receives the Conn.
	Raw []byte
	// Attrs are the record's attributes (a serve --record recording's
	// "subscription"), may be nil. Like Raw, valid only during the call.
	Attrs map[string]string
	// Event is the "event" member of Raw, read by the engine.
	Event string
}

// StreamInfo describes the stream an engine checks: which stream of its
// recording it is and what each of its sources is. It is a required
// argument of NewEngine, as analysis.Pass carries what an analyzer needs:
// a front end cannot forget it. The analysis driver (package
// protocol/check) fills it from the recording (package recording).
type StreamInfo struct {
	// Stream names the stream within its recording: "" for a recording
	// that is one stream, a subscription id for each subscription of an
	// aaep-replay serve --record (or push --record) file. Findings, steps
	// and session summaries carry it (Finding.Stream, ...).
	Stream string
	// Tool is the recording tool, e.g. "aaep-capture/0.1.0" (may be empty).
	Tool string
	// Sources describes the sources (Message.Source) the stream's messages
	// come from. A source missing from the list is a live one.
	Sources []SourceInfo
}

// SourceInfo describes one source of a stream.
type SourceInfo struct {
	// ID is the source id messages carry (Message.Source).
	ID int `json:"id"`
	// Transport and Endpoint are those of the recording's source table.
	Transport string `json:"transport,omitempty"`
	Endpoint  string `json:"endpoint,omitempty"`
	// Replay is set for a source that recorded a replay (aaep-replay serve
	// --record, push --record): the events' own timestamps are the
	// original producer's, hours or days before the subscriber's replies,
	// so timing between events and replies is judged on receive offsets.
	Replay bool `json:"replay,omitempty"`
}

// Replay reports whether source id recorded a replay.
func (i *StreamInfo) Replay(id int) bool {
	for _, s := range i.Sources {
		if s.ID == id {
			return s.Replay
		}
	}
	return false
}

// StreamObserver is an optional interface of a Checker that wants to know
// what the input is and when its connections came and went.
type StreamObserver interface {
	// Begin is called once, by NewEngine, before the first message.
	Begin(info StreamInfo)
	// Connection is called for each connection record, in stream order
	// with the messages.
	Connection(c *Conn)
}

// Finding is one rule violation (or, at Info level, one observation).
type Finding struct {
	// Stream is the stream of the recording the finding is about
	// (StreamInfo.Stream; "" when the recording is one stream).
	Stream   string `json:"stream,omitempty"`
	Protocol string `json:"protocol"`
	Session  string `json:"session,omitempty"`
	RuleID   string `json:"rule"`
	Level    Level  `json:"level"`
	// Party is whose duty the rule states (the rule's Party): the finding
	// is reported against that party.
	Party  Party         `json:"party,omitempty"`
	Index  int64         `json:"index"` // message index; -1 when the finding concerns the end of the stream
	Offset time.Duration `json:"offset_ns"`
	// Message is a sentence a newcomer understands: what happened and what the rule wants.
	Message string `json:"message"`
	// Short is a few words for a trace label, e.g. "from_state ≠ previous to_state".
	Short string `json:"short"`
	// Related are the other messages the finding is about (the invocation
	// a completion does not match, the request that got no answer), as
	// analysis.Diagnostic.Related names other positions: each one the
	// message names, in its order ("message 7"), so that a front end can
	// link them. Not written in the JSON report (schema 2).
	Related []Related `json:"-"`
}

// Related is the position of a message a finding refers to besides its
// own. Given to Reporter.Report among a message format's arguments, it is
// written as its index (format "message %d") and filed in the finding's
// Related.
type Related struct {
	Index  int64         `json:"index"`
	Offset time.Duration `json:"offset_ns"`
}

// RelatedTo returns the position of message m.
func RelatedTo(m *Message) Related { return Related{Index: m.Index, Offset: m.Offset} }

// Format writes the message's index as the verb asks (%d): a message
// format names a related message as it names any message, by index.
func (r Related) Format(f fmt.State, verb rune) {
	fmt.Fprintf(f, fmt.FormatString(f, verb), r.Index)
}

// StepKind classifies a step for drawing.
type StepKind uint8

// Step kinds.
const (
	StepLifecycle     StepKind = iota + 1 // session started / ended
	StepState                             // an explicit state change
	StepTool                              // tool invoked or completed
	StepConfirmation                      // awaiting confirmation
	StepClarification                     // awaiting clarification
	StepReply                             // a subscriber's reply
	StepOutput                            // streaming output
	StepHandoff                           // handoff
	StepProgress                          // progress without state change
	StepHandshake                         // subscription handshake
	StepTimeout                           // a timeout inferred from times (synthetic)
	StepOther
)

var stepKindNames = [...]string{"", "lifecycle", "state", "tool", "confirmation", "clarification", "reply", "output", "handoff", "progress", "handshake", "timeout", "other"}

// String returns the kind's lower-case name.
func (k StepKind) String() string {
	if int(k) < len(stepKindNames) && k != 0 {
		return stepKindNames[k]
	}
	return fmt.Sprintf("StepKind(%d)", uint8(k))
}

// MarshalText encodes the kind as its name.
func (k StepKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// Step is one move of a session through its protocol's state machine: the
// message at Index took the session from state From to state To (equal when
// the message did not change the state).
type Step struct {
	// Stream is the stream of the recording (StreamInfo.Stream).
	Stream   string        `json:"stream,omitempty"`
	Protocol string        `json:"protocol"`
	Session  string        `json:"session"`
	Index    int64         `json:"index"`
	Offset   time.Duration `json:"offset_ns"`
	From     string        `json:"from"`
	To       string        `json:"to"`
	// Label names what happened, short: "tool.invoked", "PROPOSE", "agent_transition".
	Label string `json:"label"`
	// Detail adds the salient argument: a tool name, a reply decision, an agent id.
	Detail string   `json:"detail,omitempty"`
	Kind   StepKind `json:"kind"`
	// Synthetic marks a step inferred by the checker (a timeout), not a message.
	Synthetic bool `json:"synthetic,omitempty"`
}

// SessionSummary describes a session when the checker is done with it.
type SessionSummary struct {
	// Stream is the stream of the recording (StreamInfo.Stream).
	Stream   string        `json:"stream,omitempty"`
	Protocol string        `json:"protocol"`
	Session  string        `json:"session"`
	Messages int           `json:"messages"`
	First    time.Duration `json:"first_offset_ns"`
	Last     time.Duration `json:"last_offset_ns"`
	// State is the state the session ended in.
	State string `json:"state"`
	// Complete is false when the stream ended before the session did.
	Complete bool `json:"complete"`
	// Handshake marks the summary of a source's subscription handshake
	// (aaep's "subscription-N": subscription.request, accepted, rejected,
	// renegotiation, close), a block about the stream and not a session:
	// a session runs from session.started to its terminal event under its
	// session_id.
	Handshake bool `json:"handshake,omitempty"`
}

// StateNoHandshake is the state a checker gives the block of findings
// about a source's connection where no handshake was recorded (a
// producer's redelivery after a reconnect): the block holds no messages of
// its own and is not counted as a session.
const StateNoHandshake = "no handshake recorded"

// ConnectionOnly reports whether s is the block of findings about a
// source's connection, not a session (see StateNoHandshake).
func (s SessionSummary) ConnectionOnly() bool { return s.State == StateNoHandshake && s.Messages == 0 }

// StreamLevel reports whether s is a block of findings about a stream, not
// a session: the messages no protocol could take (StreamProtocol), a
// protocol's messages outside any session (no session id: a line that is
// not JSON, for instance), a source's connection where no handshake was
// recorded (ConnectionOnly) or a source's recorded subscription handshake
// (Handshake). Reports list such blocks apart and do not count them as
// sessions.
func (s SessionSummary) StreamLevel() bool {
	return s.Protocol == StreamProtocol || s.Session == "" || s.ConnectionOnly() || s.Handshake
}

// Reporter receives what checkers find. The engine's reporter adds the
// protocol name and level; checkers fill the rest.
type Reporter interface {
	// Report records a violation of rule (one of the model's declared
	// rules, named by its identifier) at message m (nil m: end of stream or
	// of session) in session. The level and party are the rule's. The
	// message is fmt.Sprintf(format, args...); each argument of type
	// Related names another message the finding is about (Finding.Related).
	Report(rule *Rule, session string, m *Message, short, format string, args ...any)
	// Step records a move through the state machine.
	Step(s Step)
	// SessionDone records that a session is finished (terminal, or the stream ended).
	SessionDone(s SessionSummary)
}

// StateKind says what role a state plays in a machine.
type StateKind uint8

// State kinds.
const (
	StateNormal StateKind = iota
	StateInitial
	StateTerminal
	StateError // a terminal state that means failure
)

// State is one state of a protocol's machine.
type State struct {
	Name string
	Kind StateKind
}

// Transition is one legal edge of a protocol's machine.
type Transition struct {
	From, To string
	Label    string
}

// Machine is a protocol's state machine, for drawing and documentation.
type Machine struct {
	States      []State
	Transitions []Transition
}

// Profile selects how the rules read a specification where it
// contradicts itself (see Rule.Profiles).
type Profile string

// The profiles. The zero Profile is Lenient.
const (
	Lenient Profile = "lenient"
	Strict  Profile = "strict"
)

// ParseProfile parses "lenient" or "strict" ("" is Lenient).
func ParseProfile(s string) (Profile, error) {
	switch p := Profile(s); p {
	case "", Lenient, Strict:
		return p, nil
	}
	return "", fmt.Errorf("unknown profile %q (want strict or lenient)", s)
}

// Options configure a run.
type Options struct {
	// Profile selects strict or lenient readings where a specification
	// contradicts itself: Lenient (default, also "") or Strict.
	Profile Profile
	// Disabled lists rule IDs not to report.
	Disabled []string
}

// Strict reports whether the strict profile is selected.
func (o *Options) Strict() bool { return o != nil && o.Profile == Strict }

// Model describes one protocol.
type Model interface {
	// Name is the protocol's short name: "aaep", "asp", "kahn".
	Name() string
	// Rules lists every rule the model can report.
	Rules() []Rule
	// Machine is the protocol's state machine.
	Machine() Machine
	// Recognize reports whether m is a message of this protocol, judging
	// by its decoded top-level members (m.Doc) only. It is also asked about
	// payloads that are not JSON, with the routing fields their members
	// before the error gave.
	Recognize(m *Message) bool
	// NewChecker starts a run: the checker keeps the run's state and
	// reports to r.
	NewChecker(r Reporter, opts *Options) Checker
}

// Checker checks the messages of one protocol in one run.
type Checker interface {
	// Handle checks one message (already recognised as this protocol).
	Handle(m *Message)
	// Finish is called once at the end of the stream: report what is still
	// open and call SessionDone for every open session.
	Finish()
}
