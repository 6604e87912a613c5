package payload

import (
	"encoding/binary"
	"math/bits"
)

// Routing are the top-level fields that route a message to its protocol
// and session. Each is the last top-level member of that name when it is a
// string (unescaped), "" otherwise. On a payload that is not JSON they hold
// what the members before the error gave.
type Routing struct {
	// AAEP (and the AAEP handshake messages).
	Type      string // "type"
	EventID   string // "event_id"
	SessionID string // "session_id"
	Urgency   string // "urgency"
	Timestamp string // "timestamp"

	// ASP.
	Performative string // "performative"
	ASPSessionID string // "sessionId"
	ASPMessageID string // "messageId"
	ASPEnvelope  bool   // the last "envelope" member is an object (ASP WebSocket frame)

	// KAHN.
	RunID string // "run_id"
	Event string // "event"
	TS    string // "ts"
}

// SessionKey is the session a message belongs to, whatever its protocol:
// AAEP session_id, ASP sessionId, or KAHN run_id.
func (r *Routing) SessionKey() string {
	switch {
	case r.SessionID != "":
		return r.SessionID
	case r.ASPSessionID != "":
		return r.ASPSessionID
	default:
		return r.RunID
	}
}

// TypeName is what type filters compare with and listings show: the AAEP
// type, the ASP performative or the KAHN event.
func (r *Routing) TypeName() string {
	switch {
	case r.Type != "":
		return r.Type
	case r.Performative != "":
		return r.Performative
	default:
		return r.Event
	}
}

// The routing fields, in the order of rv. The first four are the session
// keys and the names Decode interns; the identifiers and times after them
// are unique to a message.
const (
	fSessionID = iota
	fASPSessionID
	fRunID
	fType
	fUrgency
	fPerformative
	fEvent
	fEventID
	fTimestamp
	fASPMessageID
	fTS
	fEnvelope
	numFields

	numSession  = fRunID + 1 // fields NeedSession fills
	numInterned = fEvent + 1 // fields interned
)

// span is where a value is in the payload: raw[off:end]; end 0 is none.
// esc is set when a string value has escape sequences.
type span struct {
	off, end int
	esc      bool
}

// routeField returns the routing field member name fills, or -1.
func routeField(name []byte) int {
	switch string(name) {
	case "session_id":
		return fSessionID
	case "sessionId":
		return fASPSessionID
	case "run_id":
		return fRunID
	case "type":
		return fType
	case "urgency":
		return fUrgency
	case "performative":
		return fPerformative
	case "event":
		return fEvent
	case "event_id":
		return fEventID
	case "timestamp":
		return fTimestamp
	case "messageId":
		return fASPMessageID
	case "ts":
		return fTS
	case "envelope":
		return fEnvelope
	}
	return -1
}

// route notes where the value of member name is, if it is a routing field
// the decoding fills (the last member of a name wins). The strings are
// made once the scan is over (fillRouting), so that a repeated member costs
// nothing and the unique ones share an allocation.
func (d *Doc) route(name []byte, off, end int, esc bool) {
	f := routeField(name)
	if f < 0 || (f >= numSession && d.need&NeedRouting == 0) {
		return
	}
	d.rv[f] = span{off, end, esc}
}

// routeText is the text of the string the scan noted for field f,
// unescaped (into d.scratch after its first n bytes, when it has escape
// sequences); ok is false when there is none or it is not a string.
func (d *Doc) routeText(f, n int) (text []byte, ok bool) {
	sp := d.rv[f]
	if sp.end-sp.off < 2 || d.raw[sp.off] != '"' {
		return nil, false
	}
	text = d.raw[sp.off+1 : sp.end-1]
	if sp.esc {
		d.scratch = unescape(d.scratch[:n], text)
		text = d.scratch[n:]
	}
	return text, true
}

// fillRouting sets Routing from the values route noted. Session keys and
// names are interned; the other strings (identifiers, times), which differ
// in every message, are made with one allocation between them.
func (d *Doc) fillRouting() {
	r := &d.Routing
	dst := [numFields]*string{
		fSessionID: &r.SessionID, fASPSessionID: &r.ASPSessionID, fRunID: &r.RunID,
		fType: &r.Type, fUrgency: &r.Urgency, fPerformative: &r.Performative, fEvent: &r.Event,
		fEventID: &r.EventID, fTimestamp: &r.Timestamp, fASPMessageID: &r.ASPMessageID, fTS: &r.TS,
	}
	n := numSession
	if d.need&NeedRouting != 0 {
		n = numFields
		if sp := d.rv[fEnvelope]; sp.end > 0 && d.raw[sp.off] == '{' {
			r.ASPEnvelope = true
		}
	}
	// The unique strings are gathered in d.scratch; ends[f] is where field
	// f's text ends there.
	var ends [numFields]int
	used := 0
	for f := range min(n, fEnvelope) {
		if d.rv[f].end == 0 {
			continue
		}
		text, ok := d.routeText(f, used)
		switch {
		case !ok || len(text) == 0:
		case f < numInterned:
			*dst[f] = d.intern(text)
		default:
			if !d.rv[f].esc { // an unescaped text is already in scratch
				d.scratch = append(d.scratch[:used], text...)
			}
			used += len(text)
			ends[f] = used
		}
	}
	if used == 0 {
		return
	}
	all, start := string(d.scratch[:used]), 0
	for f := numInterned; f < fEnvelope; f++ {
		if ends[f] > 0 {
			*dst[f] = all[start:ends[f]]
			start = ends[f]
		}
	}
}

// The interned strings are a direct-mapped cache: a string's hash picks
// its one slot, and a newcomer takes the slot over. Session keys and names
// repeat from message to message, so most are found; hostile input can
// neither grow the table nor make it slower than allocating.
const (
	internBits   = 10
	internSlots  = 1 << internBits
	internMaxLen = 64 // longer strings are not interned
)

type internTable struct {
	slots [internSlots]string
}

// ShareInterned makes d intern its routing strings in the same table as
// from, so that Docs decoded on one goroutine (a reader decoding messages
// ahead, a Doc for each) find the strings any of them met. Docs sharing a
// table must not be decoded concurrently.
func (d *Doc) ShareInterned(from *Doc) {
	if from.interned == nil {
		from.interned = new(internTable)
	}
	d.interned = from.interned
}

// intern returns b as a string, allocated once while it keeps its slot.
// A Doc makes its table when it is decoded a second time, so that the
// Docs of one-off decodings (Decode's) do not pay for one.
func (d *Doc) intern(b []byte) string {
	if len(b) > internMaxLen {
		return string(b)
	}
	if d.interned == nil {
		if !d.reused {
			return string(b)
		}
		d.interned = new(internTable)
	}
	slot := &d.interned.slots[internHash(b)]
	if *slot != string(b) {
		*slot = string(b)
	}
	return *slot
}

// internHash picks the slot of b (at most internMaxLen bytes) from its
// length and its first and last eight bytes: cheap, and as good as a full
// hash for identifiers and names, which differ at an end. Strings that
// share a slot only cost an allocation when they alternate.
func internHash(b []byte) int {
	var lo, hi uint64
	if len(b) >= 8 {
		lo = binary.LittleEndian.Uint64(b)
		hi = binary.LittleEndian.Uint64(b[len(b)-8:])
	} else {
		for i, c := range b {
			lo |= uint64(c) << (8 * i)
		}
	}
	h := (lo ^ bits.RotateLeft64(hi, 29) ^ uint64(len(b))) * 0x9E3779B97F4A7C15
	return int(h >> (64 - internBits))
}
