package aaep

import (
	"strings"
	"time"

	"github.com/aaep-tools/aaepkit/payload"
)

// Event is one decoded AAEP message: a core or extension event (Type has the
// "aaep:" prefix, another compact prefix, or is a full URI) or a handshake or
// reply message (bare type: subscription.*, confirmation.reply,
// clarification.reply).
//
// An Event and everything it holds except its string fields are valid only
// during the call that receives it: Raw and the raw field values alias the
// recorded payload, and the checker reuses the Event for the next message.
// The string fields (Type, EventID, ...) are safe to keep.
type Event struct {
	eventHead
	// vals holds the raw values of the known top-level keys, by key; only
	// those in present are set (decode clears just those, not the whole
	// array, for the next message).
	vals [numKeys]payload.Value
}

// eventHead is everything of an Event but its value table, so that decode
// can reset it in one assignment.
type eventHead struct {
	// Raw is the payload as recorded (valid during the call only).
	Raw []byte
	// Type is the type as written ("" when absent or not a string).
	Type string
	// Core is the normalized compact core type, e.g.
	// "aaep:agent.tool.invoked"; "" when not a core type. Full-URI core
	// types are normalized (§3.2.2), and so are near-misses that
	// EVT-TYPE-CONST reports (letter case, http scheme, the JSON-LD vocab
	// expansion), so that sequence rules still see the intended type.
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

	// typeExact is false when Core was derived from a near-miss spelling.
	typeExact bool
	// ts is Timestamp read by the prose-strict grammar.
	ts tsParse
	// present marks the known keys the message has.
	present keySet
	// unknown lists the top-level keys that are not known keys, in order
	// of first appearance; unknownVals holds their values (the last one
	// when a key repeats).
	unknown     []string
	unknownVals []payload.Value
	// unknownIdx indexes unknown once it is long (nil until then).
	unknownIdx map[string]int
	// scan holds what the validating scan measured.
	scan scanStats
}

// Str returns the top-level string field key.
func (e *Event) Str(key string) (string, bool) { return e.raw(key).Str() }

// Int returns the top-level integer field key (a JSON number with no
// fractional part that fits in an int64).
func (e *Event) Int(key string) (int64, bool) { return e.raw(key).Int() }

// Bool returns the top-level boolean field key.
func (e *Event) Bool(key string) (bool, bool) { return e.raw(key).Bool() }

// Has reports whether the top-level field key is present (even as null).
func (e *Event) Has(key string) bool { return e.raw(key) != nil }

// Object returns the top-level object field key, decoded one level.
func (e *Event) Object(key string) (map[string]payload.Value, bool) {
	return e.raw(key).Object()
}

// raw returns the raw value of top-level field key, or nil.
func (e *Event) raw(key string) payload.Value { return e.Field(FieldOf(key)) }

// unknownIndexMin is the number of unknown keys from which they are
// indexed by a map rather than searched.
const unknownIndexMin = 16

// unknownIndex returns the index of unknown key name in e.unknown, or -1.
func (e *Event) unknownIndex(name string) int {
	if len(e.unknown) >= unknownIndexMin {
		if i, ok := e.unknownIdx[name]; ok {
			return i
		}
		return -1
	}
	for i, u := range e.unknown {
		if u == name {
			return i
		}
	}
	return -1
}

// addUnknown records the value of unknown key name; it reports false when
// the key was already there (a duplicate: the later value wins).
func (e *Event) addUnknown(name string, val payload.Value) bool {
	if i := e.unknownIndex(name); i >= 0 {
		e.unknownVals[i] = val
		return false
	}
	e.unknown = append(e.unknown, name)
	e.unknownVals = append(e.unknownVals, val)
	switch n := len(e.unknown); {
	case n == unknownIndexMin:
		if e.unknownIdx == nil {
			e.unknownIdx = make(map[string]int, 2*unknownIndexMin)
		}
		for i, u := range e.unknown {
			e.unknownIdx[u] = i
		}
	case n > unknownIndexMin:
		e.unknownIdx[name] = n - 1
	}
	return true
}

// Fields returns every top-level field, raw, in a new map (valid during the
// call only, like the Event). The checker reads fields by key instead;
// this is for tests and tools.
func (e *Event) Fields() map[string]payload.Value {
	out := make(map[string]payload.Value, len(e.unknown)+8)
	for k, v := range e.vals {
		if v != nil {
			out[keyNames[k]] = v
		}
	}
	for i, u := range e.unknown {
		out[u] = e.unknownVals[i]
	}
	return out
}

// text returns the content of known top-level string field k: without
// copying when it has no escapes, unescaped otherwise.
func (e *Event) text(k key) ([]byte, bool) { return e.vals[k].Text() }

// isEventLike decides whether a decoded message is an event: its type has
// the form of an event type (a compact "prefix:local" name or a URI: it
// contains a colon), or it has no handshake-like type and carries envelope
// fields. Handshake and reply messages have bare dotted types and no
// envelope (catalog §0). The producer manifest is not an event (§5.10.1).
func isEventLike(ev *Event) bool {
	if ev.Type == TypeProducerManifest {
		return false
	}
	if strings.IndexByte(ev.Type, ':') > 0 {
		return true
	}
	if IsMessageType(ev.Type) || isMessageFamily(ev.Type) {
		return false
	}
	return ev.vals[kContext] != nil || ev.vals[kEventID] != nil || ev.vals[kSessionID] != nil || ev.vals[kProducer] != nil
}

// isMessageFamily reports a bare type of the handshake/reply families.
func isMessageFamily(t string) bool {
	return strings.HasPrefix(t, "subscription.") || strings.HasPrefix(t, "confirmation.") || strings.HasPrefix(t, "clarification.")
}
