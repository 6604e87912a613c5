package aaep

import (
	"encoding/json"
	"strings"
	"time"
)

// Core event types (compact form), §4 of the specification.
const (
	TypeSessionStarted        = "aaep:agent.session.started"
	TypeSessionCompleted      = "aaep:agent.session.completed"
	TypeSessionErrored        = "aaep:agent.session.errored"
	TypeSessionCancelled      = "aaep:agent.session.cancelled"
	TypeStateChanged          = "aaep:agent.state.changed"
	TypeProgressUpdated       = "aaep:agent.progress.updated"
	TypeToolInvoked           = "aaep:agent.tool.invoked"
	TypeToolCompleted         = "aaep:agent.tool.completed"
	TypeOutputStreaming       = "aaep:agent.output.streaming"
	TypeAwaitingConfirmation  = "aaep:agent.awaiting.confirmation"
	TypeAwaitingClarification = "aaep:agent.awaiting.clarification"
	TypeHandoffRequested      = "aaep:agent.handoff.requested"
)

// Handshake and reply message types (Ch. 5, Ch. 6). They are bare strings
// without the "aaep:" prefix and carry no envelope.
const (
	MsgSubscriptionRequest     = "subscription.request"
	MsgSubscriptionAccepted    = "subscription.accepted"
	MsgSubscriptionRejected    = "subscription.rejected"
	MsgSubscriptionRenegotiate = "subscription.renegotiate"
	MsgSubscriptionClose       = "subscription.close"
	MsgConfirmationReply       = "confirmation.reply"
	MsgClarificationReply      = "clarification.reply"
)

// TypeProducerManifest is the type of a producer manifest document
// (§5.10.1). It uses the "aaep:" prefix but is not an event.
const TypeProducerManifest = "aaep:producer.manifest"

const (
	// CorePrefix is the compact prefix of core types.
	CorePrefix = "aaep:"
	// TypeURIPrefix is the full-URI form of the core prefix (§3.2.2, §2.2.7).
	TypeURIPrefix = "https://aaep-protocol.org/types/"
	// ContextV1 is the core JSON-LD context (§3.2.1).
	ContextV1 = "https://aaep-protocol.org/context/v1"
)

var coreTypes = map[string]bool{
	TypeSessionStarted: true, TypeSessionCompleted: true, TypeSessionErrored: true, TypeSessionCancelled: true,
	TypeStateChanged: true, TypeProgressUpdated: true, TypeToolInvoked: true, TypeToolCompleted: true,
	TypeOutputStreaming: true, TypeAwaitingConfirmation: true, TypeAwaitingClarification: true, TypeHandoffRequested: true,
}

var messageTypes = map[string]bool{
	MsgSubscriptionRequest: true, MsgSubscriptionAccepted: true, MsgSubscriptionRejected: true,
	MsgSubscriptionRenegotiate: true, MsgSubscriptionClose: true, MsgConfirmationReply: true, MsgClarificationReply: true,
}

// IsCoreType reports whether t is one of the 12 core event types in compact form.
func IsCoreType(t string) bool { return coreTypes[t] }

// IsMessageType reports whether t is one of the 7 handshake/reply message types.
func IsMessageType(t string) bool { return messageTypes[t] }

// Event is one decoded AAEP message: a core or extension event (Type has the
// "aaep:" prefix, another compact prefix, or is a full URI) or a handshake or
// reply message (bare type: subscription.*, confirmation.reply,
// clarification.reply).
type Event struct {
	// Raw is the payload as recorded (valid during the call only).
	Raw []byte
	// Fields holds every top-level field, raw.
	Fields map[string]json.RawMessage
	// Type is the type as written ("" when absent or not a string).
	Type string
	// Core is the normalized compact core type, e.g.
	// "aaep:agent.tool.invoked"; full-URI core types are normalized; "" when
	// not a core type.
	Core string
	// IsEvent reports an event (as opposed to a handshake/reply message).
	IsEvent bool
	// EventID, SessionID, Timestamp and Urgency are "" when absent or not strings.
	EventID, SessionID, Timestamp, Urgency string
	// Time is Timestamp parsed; TimeOK means an instant could be read
	// (prose-strict or lenient RFC 3339).
	Time   time.Time
	TimeOK bool
	// SeqNo is sequence_number when it is an integer (HasSeqNo).
	SeqNo    int64
	HasSeqNo bool
}

// Str returns the top-level string field key.
func (e *Event) Str(key string) (string, bool) { return rawString(e.Fields[key]) }

// Int returns the top-level integer field key.
func (e *Event) Int(key string) (int64, bool) { return rawInt(e.Fields[key]) }

// Bool returns the top-level boolean field key.
func (e *Event) Bool(key string) (bool, bool) { return rawBool(e.Fields[key]) }

// Has reports whether the top-level field key is present (even as null).
func (e *Event) Has(key string) bool {
	_, ok := e.Fields[key]
	return ok
}

// Object returns the top-level object field key, decoded one level.
func (e *Event) Object(key string) (map[string]json.RawMessage, bool) {
	return rawObject(e.Fields[key])
}

// NormalizeType maps a full-URI core type to its compact form and returns
// other types unchanged.
func NormalizeType(t string) string {
	if strings.HasPrefix(t, TypeURIPrefix) {
		return CorePrefix + t[len(TypeURIPrefix):]
	}
	return t
}

// decode decodes raw (already known to be a UTF-8 JSON object) into ev.
// It returns false when raw is not a JSON object.
func decode(raw []byte, ev *Event) bool {
	*ev = Event{Raw: raw}
	if err := json.Unmarshal(raw, &ev.Fields); err != nil || ev.Fields == nil {
		return false
	}
	ev.fill()
	return true
}

// fill derives the convenience fields from Fields.
func (ev *Event) fill() {
	ev.Type, _ = ev.Str("type")
	ev.EventID, _ = ev.Str("event_id")
	ev.SessionID, _ = ev.Str("session_id")
	ev.Timestamp, _ = ev.Str("timestamp")
	ev.Urgency, _ = ev.Str("urgency")
	ev.SeqNo, ev.HasSeqNo = ev.Int("sequence_number")
	if n := NormalizeType(ev.Type); coreTypes[n] {
		ev.Core = n
	}
	ev.IsEvent = isEventType(ev.Type) || (ev.Type == "" && (ev.Has("@context") || ev.Has("event_id") || ev.Has("session_id") || ev.Has("producer")))
	if ev.Type == TypeProducerManifest {
		ev.IsEvent = false
	}
	if ev.Timestamp != "" {
		ev.Time, ev.TimeOK = parseTimestamp(ev.Timestamp)
	}
}

// isEventType reports whether t has the form of an event type: a compact
// "prefix:local" name or a URI (anything with a colon), as opposed to the
// bare dotted names of handshake and reply messages.
func isEventType(t string) bool { return strings.IndexByte(t, ':') > 0 }

// parseTimestamp reads an RFC 3339 instant leniently.
func parseTimestamp(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}

func rawString(r json.RawMessage) (string, bool) {
	if len(r) < 2 || r[0] != '"' {
		return "", false
	}
	var s string
	if err := json.Unmarshal(r, &s); err != nil {
		return "", false
	}
	return s, true
}

func rawInt(r json.RawMessage) (int64, bool) {
	if len(r) == 0 {
		return 0, false
	}
	var n int64
	if err := json.Unmarshal(r, &n); err != nil {
		return 0, false
	}
	return n, true
}

func rawBool(r json.RawMessage) (bool, bool) {
	switch string(r) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

func rawObject(r json.RawMessage) (map[string]json.RawMessage, bool) {
	if len(r) == 0 || r[0] != '{' {
		return nil, false
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(r, &m); err != nil {
		return nil, false
	}
	return m, true
}
