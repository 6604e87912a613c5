package aaep

import (
	"strconv"

	"github.com/aaep-tools/aaepkit/payload"
)

// decodeError says why a payload is not a JSON object.
type decodeError struct {
	offset int
	msg    string
}

func (e *decodeError) Error() string { return e.msg + " at byte " + strconv.Itoa(e.offset) }

// decode builds ev from d, the engine's one decoding of the message,
// reusing ev's buffers. It returns a *decodeError when the payload is not
// a JSON object; its offset, like ev.Raw, counts from after a byte-order
// mark (which ENV-UTF8 reports on its own).
func decode(d *payload.Doc, ev *Event) error {
	unknown, unknownVals, idx := ev.unknown[:0], ev.unknownVals[:0], ev.unknownIdx
	clear(ev.unknownVals) // drop references to the previous payload
	if len(ev.unknown) >= unknownIndexMin {
		clear(idx)
	}
	bom := 0
	if d.BOM() {
		bom = 3
	}
	raw := d.Raw()[bom:]
	ev.present.each(func(k key) { ev.vals[k] = nil })
	ev.eventHead = eventHead{Raw: raw, unknown: unknown, unknownVals: unknownVals, unknownIdx: idx}
	st := d.Stats()
	ev.scan.nonASCII = st.NonASCII
	if !d.IsObject() {
		return notObject(d, bom)
	}
	members := d.Members()
	for _, m := range members {
		val := m.Value
		if k := lookupKeyBytes(m.Name); k != kUnknown {
			ev.vals[k] = val
			ev.present.add(k)
		} else {
			ev.addUnknown(string(m.Name), val)
		}
	}
	ev.scan.keys = len(members)
	ev.scan.depth, ev.scan.tooDeep = st.Depth, st.TooDeep
	if st.Dup >= 0 {
		ev.scan.dupKey = string(members[st.Dup].Name)
	}
	if st.BigInt != nil {
		ev.scan.bigInt = string(st.BigInt)
		if st.BigIntMember >= 0 {
			ev.scan.bigIntKey = string(members[st.BigIntMember].Name)
		}
	}
	if st.LongString > 0 {
		ev.scan.longStr, ev.scan.longStrAt = st.LongString, st.LongStringAt-bom
		ev.scan.longStrTok = payload.Value(d.Raw()[st.LongStringAt : st.LongStringAt+st.LongString+2])
		if st.LongString > maxStringBytes && st.LongStringMember >= 0 {
			// Only ENV-SIZE reads the name, past that length.
			ev.scan.longStrKey = string(members[st.LongStringMember].Name)
		}
	}
	ev.fill(&d.Routing)
	return nil
}

// notObject says why d, which is not a JSON object, cannot be an AAEP
// message, at offsets counted after a byte-order mark of bom bytes.
func notObject(d *payload.Doc, bom int) error {
	at := d.Start() - bom
	switch {
	case d.Kind() == payload.Absent:
		return &decodeError{offset: len(d.Raw()) - bom, msg: "empty message"}
	case d.Kind() == payload.Object:
		e := d.Err()
		return &decodeError{offset: e.Offset - bom, msg: e.Msg}
	case !d.Valid():
		return &decodeError{offset: at, msg: "not JSON: expected '{'"}
	case d.Kind() == payload.Array:
		return &decodeError{offset: at, msg: "a JSON array, not an object: each message is one event; split an array of events into one per line (e.g. jq -c '.[]')"}
	}
	return &decodeError{offset: at, msg: "a JSON value that is not an object"}
}

// fill derives the convenience fields from the raw values; the string
// fields are the decoding's routing fields (the same last-member-wins
// reading, allocated once).
func (ev *Event) fill(r *payload.Routing) {
	ev.Type = r.Type
	ev.EventID = r.EventID
	ev.SessionID = r.SessionID
	ev.Timestamp = r.Timestamp
	ev.Urgency = r.Urgency
	ev.SeqNo, ev.HasSeqNo = ev.vals[kSeqNo].Int()
	ev.typeExact = true
	if n := NormalizeType(ev.Type); coreIndex(n) >= 0 {
		ev.Core = n
	} else if n := nearCoreType(ev.Type); n != "" {
		ev.Core, ev.typeExact = n, false
	}
	ev.IsEvent = isEventLike(ev)
	if r := ev.vals[kTimestamp]; len(r) > 0 && r[0] == '"' {
		ev.ts = parseStrict(ev.Timestamp)
		ev.Time, ev.TimeOK = ev.ts.t, ev.ts.ok
		if !ev.TimeOK {
			ev.Time, ev.TimeOK = parseLenient(ev.Timestamp)
		}
	}
}

// Values are read with payload.Value's readers, whose one semantics (an
// integer is a whole number however written: JSON Schema's "integer",
// which the AAEP schemas use; strings unescaped) is AAEP's too.

// jsonKind names the JSON type of raw value r, for messages.
func jsonKind(r payload.Value) string {
	if len(r) == 0 {
		return "absent"
	}
	switch r[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// scanStats is what the decoding measured for the size and range rules.
type scanStats struct {
	depth      int           // deepest container nesting; the message object is 1
	bigInt     string        // first integer literal beyond ±2^53, "" if none
	bigIntKey  string        // the top-level key it was found under
	longStr    int           // longest string token, raw bytes between the quotes
	longStrAt  int           // offset of that token's opening quote
	longStrTok payload.Value // that token
	longStrKey string        // the top-level key it was found under (set past maxStringBytes)
	dupKey     string        // a top-level key that occurs twice, "" if none
	keys       int           // number of top-level members
	nonASCII   bool          // a string holds a byte of 0x80 or above
	tooDeep    bool          // nesting went past payload.MaxDepth (read without recursion)
}
