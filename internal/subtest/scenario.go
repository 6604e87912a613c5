package subtest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Scenario is a capture to play to a subscriber and what it is expected
// to send back.
type Scenario struct {
	// Name identifies the scenario (--scenario NAME, the JUnit testsuite).
	Name string `json:"name"`
	// Level is the conformance level the scenario tests (1, 2 or 3).
	Level int `json:"level"`
	// Sections are the specification sections it tests.
	Sections []string `json:"sections"`
	// Transports are the transports the scenario applies to (sse,
	// websocket, grpc); empty: every one. A subscriber on another is
	// reported not applicable, never failed.
	Transports  []string `json:"transports,omitempty"`
	Description string   `json:"description,omitempty"`
	// User is the scripted user's decision, for the harness that plays
	// the user (a subscriber's test mode, a browser script).
	User string `json:"user"`
	// Decisions are the scripted user's decisions in a form a harness
	// can act on (AAEP_TEST_DECISIONS, as JSON, for an exec'd subscriber).
	Decisions []Decision `json:"decisions"`
	// Capture is the path of the capture (or JSON Lines file) to play.
	Capture string `json:"capture,omitempty"`
	// Speed scales the capture's pace; NoDelay sends as fast as possible.
	Speed   float64 `json:"speed,omitempty"`
	NoDelay bool    `json:"no_delay,omitempty"`
	// Keepalive is the silence after which the stream gets a keepalive
	// (0: serve's default).
	Keepalive time.Duration `json:"keepalive_ns,omitempty"`
	// Linger is how long replies are awaited after the last event.
	Linger time.Duration `json:"linger_ns"`
	// Reject, when set, answers every subscription.request with
	// subscription.rejected and this reason code.
	Reject string `json:"reject,omitempty"`
	// HonorMaxRate, when positive, caps the max_events_per_second the
	// subscription is honoured at (a producer that accepts a lower rate
	// than requested, serve.Options.HonorMaxRate).
	HonorMaxRate int           `json:"honor_max_events_per_second,omitempty"`
	Faults       []Fault       `json:"faults,omitempty"`
	Expect       []Expectation `json:"expect"`
	// File is where the scenario was read from ("builtin" for a built-in).
	File string `json:"file"`

	// jsonl holds a built-in scenario's capture as JSON Lines.
	jsonl []byte
	// needs is an event type the scenario tests that a subscriber's
	// negotiated event_filters may leave out (§5.3.1.7): when it never
	// reached a subscriber that negotiated, the scenario is not
	// applicable rather than passed.
	needs string
	// captureLine is the line of the capture key (for errors).
	captureLine int
}

// Decision is one thing the scripted user does, Delay after its trigger:
// answer the prompt that carries Token with Decision (a confirmation) or
// Response (a clarification), the prompt's appearance being the trigger
// (a prompt without a decision is left unanswered); or, after the event
// After, ask for other Capabilities (renegotiate) or quit the subscriber
// (shutdown).
type Decision struct {
	// Action is ActionReply, ActionRenegotiate or ActionShutdown.
	Action   string          `json:"action"`
	Token    string          `json:"token,omitempty"`
	Decision string          `json:"decision,omitempty"`
	Response json.RawMessage `json:"response,omitempty"`
	// After is the event_id of the event after which the user acts
	// (renegotiate, shutdown).
	After string `json:"after,omitempty"`
	// Capabilities are what a renegotiation asks for (a capabilities
	// object, §5.7).
	Capabilities json.RawMessage `json:"capabilities,omitempty"`
	Delay        time.Duration   `json:"delay_ns,omitempty"`
	Line         int             `json:"-"`
}

// Decision.Action values: what the scripted user does.
const (
	// ActionReply answers the prompt that carries the token.
	ActionReply = "reply"
	// ActionRenegotiate asks for other capabilities: the subscriber sends
	// subscription.renegotiate (§5.7, §9.5.2(4)).
	ActionRenegotiate = "renegotiate"
	// ActionShutdown quits the subscriber: it closes its subscription
	// cleanly (subscription.close, §9.5.2(7)) and ends.
	ActionShutdown = "shutdown"
)

// FaultKind is what a fault does to the stream.
type FaultKind string

// Fault kinds.
const (
	// FaultCut cuts the connection after event After.
	FaultCut FaultKind = "cut"
	// FaultPause holds the stream for For after event After (keepalives only).
	FaultPause FaultKind = "pause"
	// FaultRedeliver cuts after event After and sends that event again
	// when the subscriber is back.
	FaultRedeliver FaultKind = "redeliver"
	// FaultSlow plays at Speed from event After on.
	FaultSlow FaultKind = "slow"
)

// Fault is one disturbance of the stream, placed after an event (counted
// from 1 over the events of the capture).
type Fault struct {
	Kind  FaultKind     `json:"kind"`
	After int           `json:"after"`
	For   time.Duration `json:"for_ns,omitempty"`
	Speed float64       `json:"speed,omitempty"`
	Line  int           `json:"line,omitempty"`
}

// ExpectKind is what an expectation asks of the subscriber.
type ExpectKind string

// Expectation kinds.
const (
	ExpectReply          ExpectKind = "reply"
	ExpectNoReply        ExpectKind = "no_reply"
	ExpectRequest        ExpectKind = "request"
	ExpectSends          ExpectKind = "sends"
	ExpectStaysConnected ExpectKind = "stays_connected"
	ExpectResumes        ExpectKind = "resumes"
	// ExpectAnnounce asks that an event be announced to the user (what a
	// screen reader would hear of a web page, or what a native subscriber
	// reports with --announcements); see announce.go.
	ExpectAnnounce ExpectKind = "announce"
)

// defaultRequired says which kinds the specification requires (the others
// are advisory unless a scenario marks them required).
var defaultRequired = map[ExpectKind]bool{
	ExpectReply: true, ExpectNoReply: true, ExpectRequest: true, ExpectSends: true, ExpectAnnounce: true,
}

// DefaultWithin is how long a reply or a resumption may take when the
// scenario does not say.
const DefaultWithin = 30 * time.Second

// DefaultLinger is how long replies are awaited after the last event.
const DefaultLinger = 2 * time.Second

// Expectation is one thing the subscriber must (or should) do.
type Expectation struct {
	Kind ExpectKind `json:"kind"`
	// Token is the reply_token a reply (or no reply) is about; empty for
	// no_reply means no reply at all.
	Token string `json:"token,omitempty"`
	// Decision is the confirmation.reply decision expected; Response the
	// clarification.reply response (JSON).
	Decision string          `json:"decision,omitempty"`
	Response json.RawMessage `json:"response,omitempty"`
	// Once asks for exactly one reply with the token (a redelivered prompt
	// answered again fails it).
	Once bool `json:"once,omitempty"`
	// Within bounds a reply (from its event) or a resumption (from the cut).
	Within time.Duration `json:"within_ns,omitempty"`
	// Type is the message type for sends (request: subscription.request).
	Type string `json:"type,omitempty"`
	// Fields are members the message must have, compared as JSON; an
	// object compares member by member (the message may have more).
	Fields map[string]json.RawMessage `json:"fields,omitempty"`
	// Transport is the transport a request must come over (sse or
	// websocket; empty: either).
	Transport string `json:"transport,omitempty"`
	// Event (an event_id), or Type (an event type, with or without its
	// aaep:agent. prefix) and Session, name the events an announce
	// expectation is about; Contains are words one of which its
	// announcement must hold (case aside), Politeness how it must claim
	// the user's attention (assertive or polite).
	Event      string   `json:"event,omitempty"`
	Session    string   `json:"session,omitempty"`
	Contains   []string `json:"contains,omitempty"`
	Politeness string   `json:"politeness,omitempty"`
	// Why is the duty an announce check stands for, said when it fails
	// (built-ins only).
	Why string `json:"why,omitempty"`
	// Required says whether failing it fails the run.
	Required bool `json:"required"`
	Line     int  `json:"line,omitempty"`
}

// Name is a short name for the expectation (a JUnit testcase name).
func (e *Expectation) Name() string {
	var b strings.Builder
	b.WriteString(string(e.Kind))
	switch e.Kind {
	case ExpectReply:
		fmt.Fprintf(&b, " %s", e.Token)
		if e.Decision != "" {
			fmt.Fprintf(&b, " decision=%s", e.Decision)
		}
		if len(e.Response) > 0 {
			fmt.Fprintf(&b, " response=%s", e.Response)
		}
		fmt.Fprintf(&b, " within %s", e.Within)
		if e.Once {
			b.WriteString(" once")
		}
	case ExpectNoReply:
		if e.Token != "" {
			fmt.Fprintf(&b, " %s", e.Token)
		} else {
			b.WriteString(" at all")
		}
	case ExpectSends:
		fmt.Fprintf(&b, " %s", e.Type)
	case ExpectRequest:
		if e.Transport != "" {
			fmt.Fprintf(&b, " over %s", e.Transport)
		}
	case ExpectResumes:
		fmt.Fprintf(&b, " within %s", e.Within)
	case ExpectAnnounce:
		e.announceName(&b)
	}
	for _, k := range sortedKeys(e.Fields) {
		fmt.Fprintf(&b, " %s=%s", k, e.Fields[k])
	}
	return b.String()
}

// ScenarioError is an invalid scenario file: where and what.
type ScenarioError struct {
	File string
	Line int // 0 when the error concerns the whole file
	Msg  string
}

func (e *ScenarioError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
