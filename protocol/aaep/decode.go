package aaep

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aaep-tools/aaepkit/peek"
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
	// escaped marks the known keys whose string value has escapes.
	escaped keySet
	// present marks the known keys the message has.
	present keySet
	// vals holds the raw values of the known top-level keys, by key.
	vals [numKeys]json.RawMessage
	// unknown lists the top-level keys that are not known keys, in order
	// of first appearance; unknownVals holds their values (the last one
	// when a key repeats).
	unknown     []string
	unknownVals []json.RawMessage
	// unknownIdx indexes unknown once it is long (nil until then).
	unknownIdx map[string]int
	// scan holds what the validating scan measured.
	scan scanStats
}

// Str returns the top-level string field key.
func (e *Event) Str(key string) (string, bool) { return rawString(e.raw(key)) }

// Int returns the top-level integer field key (a JSON number with no
// fractional part that fits in an int64).
func (e *Event) Int(key string) (int64, bool) { return rawInt(e.raw(key)) }

// Bool returns the top-level boolean field key.
func (e *Event) Bool(key string) (bool, bool) { return rawBool(e.raw(key)) }

// Has reports whether the top-level field key is present (even as null).
func (e *Event) Has(key string) bool { return e.raw(key) != nil }

// Object returns the top-level object field key, decoded one level.
func (e *Event) Object(key string) (map[string]json.RawMessage, bool) {
	return rawObject(e.raw(key))
}

// raw returns the raw value of top-level field key, or nil.
func (e *Event) raw(key string) json.RawMessage {
	if k := lookupKey(key); k != kUnknown {
		return e.vals[k]
	}
	if i := e.unknownIndex(key); i >= 0 {
		return e.unknownVals[i]
	}
	return nil
}

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
func (e *Event) addUnknown(name string, val json.RawMessage) bool {
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
func (e *Event) Fields() map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(e.unknown)+8)
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
// copying when it has no escapes (the scan knows), unescaped otherwise.
func (e *Event) text(k key) ([]byte, bool) {
	r := e.vals[k]
	if len(r) < 2 || r[0] != '"' {
		return nil, false
	}
	if !e.escaped.has(k) {
		return r[1 : len(r)-1], true
	}
	return rawText(r)
}

// decodeError says why a payload is not a JSON object.
type decodeError struct {
	offset int
	msg    string
}

func (e *decodeError) Error() string { return e.msg + " at byte " + strconv.Itoa(e.offset) }

// decode validates raw as one strict RFC 8259 JSON object and decodes it
// into ev, reusing ev's buffers. It returns a *decodeError when raw is not
// a JSON object. It does not validate UTF-8: when ev.scan.nonASCII is set
// (or raw is not an object), the caller does. known, when not nil, holds
// the routing fields the engine already read from raw: equal strings are
// taken from it instead of being allocated again.
func decode(raw []byte, ev *Event, known *peek.Fields) error {
	unknown, unknownVals, idx := ev.unknown[:0], ev.unknownVals[:0], ev.unknownIdx
	clear(ev.unknownVals) // drop references to the previous payload
	if len(ev.unknown) >= unknownIndexMin {
		clear(idx)
	}
	*ev = Event{Raw: raw, unknown: unknown, unknownVals: unknownVals, unknownIdx: idx}
	s := scanner{b: raw, ev: ev}
	err := s.document()
	ev.scan.nonASCII = s.nonASCII
	if err != nil {
		return err
	}
	if known == nil {
		known = &peek.Fields{}
	}
	ev.fill(known)
	return nil
}

// str returns top-level string field k, reusing known when it is equal.
func (ev *Event) str(k key, known string) string {
	b, ok := ev.text(k)
	switch {
	case !ok:
		return ""
	case string(b) == known:
		return known
	}
	return string(b)
}

// typeName returns the type field as a string, without allocating for the
// core and handshake types.
func (ev *Event) typeName(known string) string {
	b, ok := ev.text(kType)
	if !ok {
		return ""
	}
	switch string(b) { // a switch on the conversion does not allocate
	case TypeSessionStarted:
		return TypeSessionStarted
	case TypeSessionCompleted:
		return TypeSessionCompleted
	case TypeSessionErrored:
		return TypeSessionErrored
	case TypeSessionCancelled:
		return TypeSessionCancelled
	case TypeStateChanged:
		return TypeStateChanged
	case TypeProgressUpdated:
		return TypeProgressUpdated
	case TypeToolInvoked:
		return TypeToolInvoked
	case TypeToolCompleted:
		return TypeToolCompleted
	case TypeOutputStreaming:
		return TypeOutputStreaming
	case TypeAwaitingConfirmation:
		return TypeAwaitingConfirmation
	case TypeAwaitingClarification:
		return TypeAwaitingClarification
	case TypeHandoffRequested:
		return TypeHandoffRequested
	case MsgSubscriptionRequest:
		return MsgSubscriptionRequest
	case MsgSubscriptionAccepted:
		return MsgSubscriptionAccepted
	case MsgSubscriptionRejected:
		return MsgSubscriptionRejected
	case MsgSubscriptionRenegotiate:
		return MsgSubscriptionRenegotiate
	case MsgSubscriptionClose:
		return MsgSubscriptionClose
	case MsgConfirmationReply:
		return MsgConfirmationReply
	case MsgClarificationReply:
		return MsgClarificationReply
	case known:
		return known
	}
	return string(b)
}

// urgencyName returns the urgency field as a string, without allocating
// for the three defined values.
func (ev *Event) urgencyName(known string) string {
	b, ok := ev.text(kUrgency)
	if !ok {
		return ""
	}
	switch string(b) {
	case "normal":
		return "normal"
	case "critical":
		return "critical"
	case "background":
		return "background"
	case known:
		return known
	}
	return string(b)
}

// routing sets f to the routing fields of the message, as peek.Peek reads
// them: the AAEP fields, the ASP and KAHN ones among the unknown keys, and
// whether an "envelope" object is present.
func (ev *Event) routing(f *peek.Fields) {
	*f = peek.Fields{Object: true, Type: ev.Type, EventID: ev.EventID, SessionID: ev.SessionID,
		Urgency: ev.Urgency, Timestamp: ev.Timestamp}
	for i, name := range ev.unknown {
		var dst *string
		switch name {
		case "performative":
			dst = &f.Performative
		case "sessionId":
			dst = &f.ASPSessionID
		case "messageId":
			dst = &f.ASPMessageID
		case "run_id":
			dst = &f.RunID
		case "event":
			dst = &f.Event
		case "ts":
			dst = &f.TS
		case "envelope":
			f.ASPHasEnvelop = len(ev.unknownVals[i]) > 0 && ev.unknownVals[i][0] == '{'
		}
		if dst != nil {
			*dst, _ = rawString(ev.unknownVals[i])
		}
	}
}

// fill derives the convenience fields from the raw values.
func (ev *Event) fill(known *peek.Fields) {
	ev.Type = ev.typeName(known.Type)
	ev.EventID = ev.str(kEventID, known.EventID)
	ev.SessionID = ev.str(kSessionID, known.SessionID)
	ev.Timestamp = ev.str(kTimestamp, known.Timestamp)
	ev.Urgency = ev.urgencyName(known.Urgency)
	ev.SeqNo, ev.HasSeqNo = rawInt(ev.vals[kSeqNo])
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

// ---- timestamps ----

// tsParse is the result of reading a timestamp by the prose-strict grammar
// of §3.2.5 with any number of fraction digits.
type tsParse struct {
	t        time.Time
	ok       bool   // the form and calendar are valid (fraction length aside)
	hasFrac  bool   // a fraction is present
	fracLen  int    // number of fraction digits
	problem  string // why it is not ok
	tzOffset int    // seconds east of UTC
}

// parseStrict reads s as YYYY-MM-DDTHH:MM:SS[.f+](Z|±HH:MM) with uppercase T
// and Z and a real calendar date; seconds may be 60 (a leap second, as RFC
// 3339 allows). The precision rule (0, 3 or 6 digits) is left to the caller.
func parseStrict(s string) tsParse {
	var p tsParse
	n := len(s)
	if n < 20 {
		p.problem = "too short for YYYY-MM-DDTHH:MM:SSZ"
		return p
	}
	digits := func(i, w int) (int, bool) {
		v := 0
		for j := i; j < i+w; j++ {
			c := s[j]
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		return v, true
	}
	year, ok1 := digits(0, 4)
	month, ok2 := digits(5, 2)
	day, ok3 := digits(8, 2)
	hour, ok4 := digits(11, 2)
	min, ok5 := digits(14, 2)
	sec, ok6 := digits(17, 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || s[4] != '-' || s[7] != '-' || s[13] != ':' || s[16] != ':' {
		p.problem = "not in the form YYYY-MM-DDTHH:MM:SS"
		return p
	}
	if s[10] != 'T' {
		p.problem = "the date and time must be separated by an uppercase T"
		return p
	}
	i := 19
	if i < n && s[i] == '.' {
		p.hasFrac = true
		i++
		start := i
		for i < n && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		p.fracLen = i - start
		if p.fracLen == 0 {
			p.problem = "a decimal point without fraction digits"
			return p
		}
	}
	nsec := 0
	if p.hasFrac {
		f := s[20 : 20+p.fracLen]
		for k := 0; k < 9; k++ {
			nsec *= 10
			if k < len(f) {
				nsec += int(f[k] - '0')
			}
		}
	}
	switch {
	case i == n-1 && s[i] == 'Z':
	case i+6 == n && (s[i] == '+' || s[i] == '-') && s[i+3] == ':':
		oh, okh := digits(i+1, 2)
		om, okm := digits(i+4, 2)
		if !okh || !okm || oh > 23 || om > 59 {
			p.problem = "the UTC offset is not ±HH:MM"
			return p
		}
		p.tzOffset = oh*3600 + om*60
		if s[i] == '-' {
			p.tzOffset = -p.tzOffset
		}
	case i < n && s[i] == 'z':
		p.problem = "the UTC designator must be an uppercase Z"
		return p
	default:
		p.problem = "it must end in Z or a ±HH:MM offset"
		return p
	}
	if month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || hour > 23 || min > 59 || sec > 60 {
		p.problem = "it is not a real calendar date and time"
		return p
	}
	loc := time.UTC
	if p.tzOffset != 0 {
		loc = time.FixedZone("", p.tzOffset)
	}
	p.t = time.Date(year, time.Month(month), day, hour, min, sec, nsec, loc)
	p.ok = true
	return p
}

func daysIn(year, month int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// parseLenient reads an RFC 3339 instant the way Go does, for timestamps
// the prose-strict grammar refuses.
func parseLenient(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}

// ---- raw value helpers ----

// rawString returns r as a string when it is a JSON string.
func rawString(r json.RawMessage) (string, bool) {
	b, ok := rawText(r)
	if !ok {
		return "", false
	}
	return string(b), true
}

// rawText returns the content of JSON string r without copying when it
// holds no escapes, unescaped otherwise.
func rawText(r json.RawMessage) ([]byte, bool) {
	if len(r) < 2 || r[0] != '"' {
		return nil, false
	}
	in := r[1 : len(r)-1]
	for _, c := range in {
		if c == '\\' {
			var s string
			if err := json.Unmarshal(r, &s); err != nil {
				return nil, false
			}
			return []byte(s), true
		}
	}
	return in, true
}

// rawNumber reports whether r is a JSON number and returns its value.
func rawNumber(r json.RawMessage) (float64, bool) {
	if len(r) == 0 || !(r[0] == '-' || (r[0] >= '0' && r[0] <= '9')) {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(r), 64)
	if err != nil && !isRangeErr(err) {
		return 0, false
	}
	return f, true
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// rawInt returns r as an int64 when it is a JSON number with an integral
// value (JSON Schema's "integer": 3 and 3.0 both count) that fits.
func rawInt(r json.RawMessage) (int64, bool) {
	if len(r) == 0 || !(r[0] == '-' || (r[0] >= '0' && r[0] <= '9')) {
		return 0, false
	}
	neg := r[0] == '-'
	i := 0
	if neg {
		i = 1
	}
	var v int64
	j := i
	for ; j < len(r) && r[j] >= '0' && r[j] <= '9'; j++ {
		if v > (math.MaxInt64-9)/10 {
			return 0, false
		}
		v = v*10 + int64(r[j]-'0')
	}
	if j == len(r) && j > i {
		if neg {
			v = -v
		}
		return v, true
	}
	f, ok := rawNumber(r)
	if !ok || f != math.Trunc(f) || math.Abs(f) > 1<<62 {
		return 0, false
	}
	return int64(f), true
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

// jsonKind names the JSON type of raw value r, for messages.
func jsonKind(r json.RawMessage) string {
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

// eachMember calls fn for each member of JSON object r (already validated),
// in order, stopping when fn returns false. It returns false when r is not
// an object.
func eachMember(r json.RawMessage, fn func(key []byte, val json.RawMessage) bool) bool {
	if len(r) == 0 || r[0] != '{' {
		return false
	}
	s := scanner{b: r}
	s.i = 1
	s.ws()
	if s.peek() == '}' {
		return true
	}
	for {
		s.ws()
		ks := s.i
		if s.skipString() != nil {
			return true
		}
		key := s.b[ks+1 : s.i-1]
		s.ws()
		s.i++ // ':'
		s.ws()
		vs := s.i
		if s.value(0) != nil {
			return true
		}
		if !fn(key, s.b[vs:s.i]) {
			return true
		}
		s.ws()
		if s.peek() != ',' {
			return true
		}
		s.i++
	}
}

// eachElement calls fn for each element of JSON array r (already
// validated), stopping when fn returns false. It returns false when r is not
// an array.
func eachElement(r json.RawMessage, fn func(i int, val json.RawMessage) bool) bool {
	if len(r) == 0 || r[0] != '[' {
		return false
	}
	s := scanner{b: r}
	s.i = 1
	s.ws()
	if s.peek() == ']' {
		return true
	}
	for n := 0; ; n++ {
		s.ws()
		vs := s.i
		if s.value(0) != nil {
			return true
		}
		if !fn(n, s.b[vs:s.i]) {
			return true
		}
		s.ws()
		if s.peek() != ',' {
			return true
		}
		s.i++
	}
}

// ---- the validating scanner ----

// maxScanDepth bounds nesting, like encoding/json, so hostile input cannot
// exhaust the stack.
const maxScanDepth = 10000

// bigIntLimit is 2^53: integers beyond ±2^53 must be strings (§3.8).
const bigIntLimit = "9007199254740992"

// scanStats is what the scan measures for the size and range rules.
type scanStats struct {
	depth      int    // deepest container nesting; the message object is 1
	bigInt     string // first integer literal beyond ±2^53, "" if none
	bigIntKey  string // the top-level key it was found under
	longStr    int    // longest string token, raw bytes between the quotes
	longStrAt  int    // offset of that token's opening quote
	longStrKey string // the top-level key it was found under
	dupKey     string // a top-level key that occurs twice, "" if none
	keys       int    // number of top-level members
	nonASCII   bool   // a string holds a byte of 0x80 or above
	tooDeep    bool   // nesting went past maxScanDepth (skipped without recursion)
}

type scanner struct {
	b        []byte
	i        int
	deep     int    // untracked nesting (depth 0 values), to bound recursion
	ev       *Event // nil: validate only
	topKey   string
	escaped  bool // a string with an escape sequence was read
	nonASCII bool // a byte of 0x80 or above was met in a string
}

func (s *scanner) fail(msg string) error { return &decodeError{offset: s.i, msg: msg} }

func (s *scanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// document reads one top-level object and records its members into s.ev.
func (s *scanner) document() error {
	s.ws()
	if s.peek() != '{' {
		if s.i >= len(s.b) {
			return s.fail("empty message")
		}
		// Tell a valid non-object JSON value from garbage.
		start := s.i
		if err := s.value(1); err == nil {
			s.ws()
			if s.i == len(s.b) {
				s.i = start
				if s.b[start] == '[' {
					return s.fail("a JSON array, not an object: each message is one event; split an array of events into one per line (e.g. jq -c '.[]')")
				}
				return s.fail("a JSON value that is not an object")
			}
		}
		s.i = start
		return s.fail("not JSON: expected '{'")
	}
	s.i++
	ev := s.ev
	ev.scan.depth = 1
	s.ws()
	if s.peek() == '}' {
		s.i++
	} else {
		for {
			s.ws()
			ks := s.i
			if s.peek() != '"' {
				return s.fail("expected a quoted member name")
			}
			if err := s.skipString(); err != nil {
				return err
			}
			kraw := s.b[ks:s.i]
			s.ws()
			if s.peek() != ':' {
				return s.fail("expected ':' after a member name")
			}
			s.i++
			s.ws()
			vs := s.i
			var name string
			k := kUnknown
			if kb, ok := rawText(kraw); ok {
				k = lookupKeyBytes(kb)
				if k != kUnknown {
					name = keyNames[k]
				} else {
					name = string(kb)
				}
			}
			s.topKey = name
			s.escaped = false
			if err := s.value(2); err != nil {
				return err
			}
			if s.escaped && k != kUnknown {
				ev.escaped.add(k)
			}
			val := json.RawMessage(s.b[vs:s.i:s.i])
			ev.scan.keys++
			if k != kUnknown {
				if ev.vals[k] != nil && ev.scan.dupKey == "" {
					ev.scan.dupKey = name
				}
				ev.vals[k] = val
				ev.present.add(k)
			} else if !ev.addUnknown(name, val) && ev.scan.dupKey == "" {
				ev.scan.dupKey = name
			}
			s.ws()
			if s.peek() == ',' {
				s.i++
				continue
			}
			if s.peek() == '}' {
				s.i++
				break
			}
			return s.fail("expected ',' or '}' after a member")
		}
	}
	s.ws()
	if s.i != len(s.b) {
		return s.fail("data after the end of the object")
	}
	return nil
}

// deepValue skips a container nested beyond maxScanDepth without
// recursion, validating it as strictly as value does: nesting that deep is
// valid JSON (RFC 8259 lets a parser limit it, §9), so the message is still
// read, and ENV-SIZE says it is nested too deeply.
func (s *scanner) deepValue() error {
	var stack []byte
	for {
		s.ws()
		switch c := s.peek(); c {
		case '{', '[':
			s.i++
			s.ws()
			if (c == '{' && s.peek() == '}') || (c == '[' && s.peek() == ']') {
				s.i++
				break // an empty container: a complete value
			}
			stack = append(stack, c)
			if c == '{' {
				if err := s.memberName(); err != nil {
					return err
				}
			}
			continue // its first value
		default:
			if err := s.value(0); err != nil {
				return err
			}
		}
		// A value ended: close containers, or go on after a comma.
		for {
			if len(stack) == 0 {
				return nil
			}
			s.ws()
			top, c := stack[len(stack)-1], s.peek()
			if c == ',' {
				s.i++
				if top == '{' {
					if err := s.memberName(); err != nil {
						return err
					}
				}
				break
			}
			if (top == '{' && c == '}') || (top == '[' && c == ']') {
				s.i++
				stack = stack[:len(stack)-1]
				continue
			}
			return s.fail("expected ',' or the end of the container")
		}
	}
}

// memberName reads a member name and its colon.
func (s *scanner) memberName() error {
	s.ws()
	if s.peek() != '"' {
		return s.fail("expected a quoted member name")
	}
	if err := s.skipString(); err != nil {
		return err
	}
	s.ws()
	if s.peek() != ':' {
		return s.fail("expected ':' after a member name")
	}
	s.i++
	return nil
}

// value skips one JSON value, validating it strictly; depth is the nesting
// level a container starting here would have (0: do not track).
func (s *scanner) value(depth int) error {
	if s.i >= len(s.b) {
		return s.fail("unexpected end of input")
	}
	switch c := s.b[s.i]; {
	case c == '"':
		start := s.i
		if err := s.skipString(); err != nil {
			return err
		}
		if s.ev != nil && depth > 0 {
			if n := s.i - start - 2; n > s.ev.scan.longStr {
				s.ev.scan.longStr, s.ev.scan.longStrAt, s.ev.scan.longStrKey = n, start, s.topKey
			}
		}
		return nil
	case c == '{' || c == '[':
		if depth > maxScanDepth || (depth == 0 && s.deep >= maxScanDepth) {
			if s.ev != nil {
				s.ev.scan.tooDeep = true
			}
			return s.deepValue()
		}
		if depth == 0 {
			s.deep++
			defer func() { s.deep-- }()
		}
		if s.ev != nil && depth > s.ev.scan.depth {
			s.ev.scan.depth = depth
		}
		next := 0
		if depth > 0 {
			next = depth + 1
		}
		s.i++
		s.ws()
		if c == '{' {
			if s.peek() == '}' {
				s.i++
				return nil
			}
			for {
				if err := s.memberName(); err != nil {
					return err
				}
				s.ws()
				if err := s.value(next); err != nil {
					return err
				}
				s.ws()
				switch s.peek() {
				case ',':
					s.i++
				case '}':
					s.i++
					return nil
				default:
					return s.fail("expected ',' or '}' in an object")
				}
			}
		}
		if s.peek() == ']' {
			s.i++
			return nil
		}
		for {
			s.ws()
			if err := s.value(next); err != nil {
				return err
			}
			s.ws()
			switch s.peek() {
			case ',':
				s.i++
			case ']':
				s.i++
				return nil
			default:
				return s.fail("expected ',' or ']' in an array")
			}
		}
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number(depth > 0)
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	}
	return s.fail("unexpected character " + strconv.QuoteRune(rune(s.b[s.i])))
}

func (s *scanner) literal(lit string) error {
	if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
		s.i += len(lit)
		return nil
	}
	return s.fail("invalid literal (JSON allows only true, false and null)")
}

// number reads an RFC 8259 number and notes integers beyond ±2^53.
func (s *scanner) number(track bool) error {
	start := s.i
	if s.b[s.i] == '-' {
		s.i++
	}
	ds := s.i
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case s.i < len(s.b) && s.b[s.i] >= '1' && s.b[s.i] <= '9':
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
		}
	default:
		return s.fail("invalid number")
	}
	de := s.i
	integer := true
	if s.i < len(s.b) && s.b[s.i] == '.' {
		integer = false
		s.i++
		fs := s.i
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
		}
		if s.i == fs {
			return s.fail("invalid number: no digits after the decimal point")
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		integer = false
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		es := s.i
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
		}
		if s.i == es {
			return s.fail("invalid number: no digits in the exponent")
		}
	}
	if track && integer && s.ev != nil && s.ev.scan.bigInt == "" {
		d := s.b[ds:de]
		if len(d) > len(bigIntLimit) || (len(d) == len(bigIntLimit) && string(d) > bigIntLimit) {
			s.ev.scan.bigInt, s.ev.scan.bigIntKey = string(s.b[start:s.i]), s.topKey
		}
	}
	return nil
}

// skipString reads a JSON string at the cursor, validating escapes and
// rejecting raw control characters. It does not validate UTF-8, but notes
// in s.nonASCII that a byte of 0x80 or above was met, so that a message
// made of ASCII needs no UTF-8 pass of its own.
func (s *scanner) skipString() error {
	s.i++ // opening quote
	for s.i < len(s.b) {
		// Fast path: plain characters, eight at a time while no byte of
		// the word is a quote, a backslash or a control character (nor,
		// until one was met, a non-ASCII byte).
		i, b := s.i, s.b
		hi, special := uint64(msbs), &strSpecialASCII
		if s.nonASCII {
			hi, special = 0, &strSpecial
		}
		for i+8 <= len(b) {
			w := binary.LittleEndian.Uint64(b[i:])
			q, bs := w^quotes, w^backslashes
			if ((q-lsbs)&^q|(bs-lsbs)&^bs|(w-controls)&^w)&msbs|w&hi != 0 {
				break
			}
			i += 8
		}
		for i < len(b) && !special[b[i]] {
			i++
		}
		s.i = i
		if i >= len(b) {
			break
		}
		c := b[i]
		switch {
		case c == '"':
			s.i++
			return nil
		case c == '\\':
			s.escaped = true
			s.i++
			if s.i >= len(s.b) {
				return s.fail("unterminated string")
			}
			switch s.b[s.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i++
			case 'u':
				if len(s.b)-s.i < 5 || !isHex(s.b[s.i+1]) || !isHex(s.b[s.i+2]) || !isHex(s.b[s.i+3]) || !isHex(s.b[s.i+4]) {
					return s.fail(`invalid \u escape in a string`)
				}
				s.i += 5
			default:
				return s.fail("invalid escape in a string")
			}
		case c < 0x20:
			return s.fail("control character in a string (must be escaped)")
		default: // the first non-ASCII byte
			s.nonASCII = true
			s.i++
		}
	}
	return s.fail("unterminated string")
}

// Word-at-a-time constants for skipString: a byte b of word w is zero in
// (w^x) exactly where b == the byte of x, and (v-lsbs)&^v&msbs is non-zero
// when v has a zero byte; (w-controls)&^w&msbs is non-zero when w has a
// byte below 0x20.
const (
	lsbs        = 0x0101010101010101
	msbs        = 0x8080808080808080
	quotes      = lsbs * '"'
	backslashes = lsbs * '\\'
	controls    = lsbs * 0x20
)

// strSpecial marks the bytes that end the plain run of a JSON string: the
// quote, the backslash and control characters.
var strSpecial = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// strSpecialASCII is strSpecial plus the non-ASCII bytes.
var strSpecialASCII = func() (t [256]bool) {
	t = strSpecial
	for c := 0x80; c < 0x100; c++ {
		t[c] = true
	}
	return t
}()

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// validUTF8 reports whether b is UTF-8 without a byte-order mark.
func validUTF8(b []byte) (ok bool, bom bool) {
	if len(b) >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF {
		return false, true
	}
	return utf8.Valid(b), false
}

// ---- known top-level keys ----

// key identifies a known top-level field name (envelope, core payload and
// handshake/reply fields), so that rules read fields by index, not by hash.
type key uint8

const (
	kUnknown                key = iota
	kContext                    // "@context"
	kType                       // "type"
	kEventID                    // "event_id"
	kSessionID                  // "session_id"
	kTimestamp                  // "timestamp"
	kProducer                   // "producer"
	kAAEPVersion                // "aaep_version"
	kVerbosity                  // "verbosity"
	kUrgency                    // "urgency"
	kLocHints                   // "localization_hints"
	kSeqNo                      // "sequence_number"
	kCorrelationID              // "correlation_id"
	kExtensions                 // "extensions"
	kSummaryTerse               // "summary_terse"
	kSummaryNormal              // "summary_normal"
	kSummaryDetailed            // "summary_detailed"
	kExpectedDurationMS         // "expected_duration_ms"
	kRequestedBy                // "requested_by"
	kRequestText                // "request_text"
	kToolsAvailable             // "tools_available"
	kDurationMS                 // "duration_ms"
	kToolInvocationsCount       // "tool_invocations_count"
	kOutputSummary              // "output_summary"
	kResultURI                  // "result_uri"
	kErrorCategory              // "error_category"
	kErrorCode                  // "error_code"
	kErrorURI                   // "error_uri"
	kRecoverable                // "recoverable"
	kRemediationHint            // "remediation_hint"
	kCancelledBy                // "cancelled_by"
	kCancellationReason         // "cancellation_reason"
	kPartialResult              // "partial_result"
	kFromState                  // "from_state"
	kToState                    // "to_state"
	kProgress                   // "progress"
	kETAMS                      // "eta_ms"
	kTool                       // "tool"
	kDescription                // "description"
	kArgsSummary                // "args_summary"
	kRiskLevel                  // "risk_level"
	kIrreversible               // "irreversible"
	kToolCallID                 // "tool_call_id"
	kStatus                     // "status"
	kErrorMessage               // "error_message"
	kChunk                      // "chunk"
	kPosition                   // "position"
	kComplete                   // "complete"
	kCoalesceHint               // "coalesce_hint"
	kOutputID                   // "output_id"
	kContentType                // "content_type"
	kLanguage                   // "language"
	kAction                     // "action"
	kConsequence                // "consequence"
	kReplyToken                 // "reply_token"
	kTimeoutSeconds             // "timeout_seconds"
	kDefaultDecision            // "default_decision"
	kReversibility              // "reversibility"
	kAllowedReplies             // "allowed_replies"
	kExtraContext               // "extra_context"
	kQuestion                   // "question"
	kAcceptedResponseKinds      // "accepted_response_kinds"
	kChoices                    // "choices"
	kContextText                // "context"
	kDefaultResponse            // "default_response"
	kReason                     // "reason"
	kTargetKind                 // "target_kind"
	kTargetURI                  // "target_uri"
	kPackagedContext            // "packaged_context"
	kUrgencyForHandoff          // "urgency_for_handoff"
	kSubscriberID               // "subscriber_id"
	kSubscriberName             // "subscriber_name"
	kSubscriberVersion          // "subscriber_version"
	kSubscriberManifestURI      // "subscriber_manifest_uri"
	kCapabilities               // "capabilities"
	kSubscriptionID             // "subscription_id"
	kHonoredCapabilities        // "honored_capabilities"
	kManifestURI                // "manifest_uri"
	kSignedManifest             // "signed_manifest"
	kNegotiationNotes           // "negotiation_notes"
	kReasonCode                 // "reason_code"
	kReasonMessage              // "reason_message"
	kRetryAfterSeconds          // "retry_after_seconds"
	kAlternativeManifestURI     // "alternative_manifest_uri"
	kDecision                   // "decision"
	kDecidedBy                  // "decided_by"
	kDecisionRationale          // "decision_rationale"
	kModifiedAction             // "modified_action"
	kResponse                   // "response"
	kConfidence                 // "confidence"
	numKeys
)

// keyNames maps a key to its field name.
var keyNames = [numKeys]string{
	kContext:                "@context",
	kType:                   "type",
	kEventID:                "event_id",
	kSessionID:              "session_id",
	kTimestamp:              "timestamp",
	kProducer:               "producer",
	kAAEPVersion:            "aaep_version",
	kVerbosity:              "verbosity",
	kUrgency:                "urgency",
	kLocHints:               "localization_hints",
	kSeqNo:                  "sequence_number",
	kCorrelationID:          "correlation_id",
	kExtensions:             "extensions",
	kSummaryTerse:           "summary_terse",
	kSummaryNormal:          "summary_normal",
	kSummaryDetailed:        "summary_detailed",
	kExpectedDurationMS:     "expected_duration_ms",
	kRequestedBy:            "requested_by",
	kRequestText:            "request_text",
	kToolsAvailable:         "tools_available",
	kDurationMS:             "duration_ms",
	kToolInvocationsCount:   "tool_invocations_count",
	kOutputSummary:          "output_summary",
	kResultURI:              "result_uri",
	kErrorCategory:          "error_category",
	kErrorCode:              "error_code",
	kErrorURI:               "error_uri",
	kRecoverable:            "recoverable",
	kRemediationHint:        "remediation_hint",
	kCancelledBy:            "cancelled_by",
	kCancellationReason:     "cancellation_reason",
	kPartialResult:          "partial_result",
	kFromState:              "from_state",
	kToState:                "to_state",
	kProgress:               "progress",
	kETAMS:                  "eta_ms",
	kTool:                   "tool",
	kDescription:            "description",
	kArgsSummary:            "args_summary",
	kRiskLevel:              "risk_level",
	kIrreversible:           "irreversible",
	kToolCallID:             "tool_call_id",
	kStatus:                 "status",
	kErrorMessage:           "error_message",
	kChunk:                  "chunk",
	kPosition:               "position",
	kComplete:               "complete",
	kCoalesceHint:           "coalesce_hint",
	kOutputID:               "output_id",
	kContentType:            "content_type",
	kLanguage:               "language",
	kAction:                 "action",
	kConsequence:            "consequence",
	kReplyToken:             "reply_token",
	kTimeoutSeconds:         "timeout_seconds",
	kDefaultDecision:        "default_decision",
	kReversibility:          "reversibility",
	kAllowedReplies:         "allowed_replies",
	kExtraContext:           "extra_context",
	kQuestion:               "question",
	kAcceptedResponseKinds:  "accepted_response_kinds",
	kChoices:                "choices",
	kContextText:            "context",
	kDefaultResponse:        "default_response",
	kReason:                 "reason",
	kTargetKind:             "target_kind",
	kTargetURI:              "target_uri",
	kPackagedContext:        "packaged_context",
	kUrgencyForHandoff:      "urgency_for_handoff",
	kSubscriberID:           "subscriber_id",
	kSubscriberName:         "subscriber_name",
	kSubscriberVersion:      "subscriber_version",
	kSubscriberManifestURI:  "subscriber_manifest_uri",
	kCapabilities:           "capabilities",
	kSubscriptionID:         "subscription_id",
	kHonoredCapabilities:    "honored_capabilities",
	kManifestURI:            "manifest_uri",
	kSignedManifest:         "signed_manifest",
	kNegotiationNotes:       "negotiation_notes",
	kReasonCode:             "reason_code",
	kReasonMessage:          "reason_message",
	kRetryAfterSeconds:      "retry_after_seconds",
	kAlternativeManifestURI: "alternative_manifest_uri",
	kDecision:               "decision",
	kDecidedBy:              "decided_by",
	kDecisionRationale:      "decision_rationale",
	kModifiedAction:         "modified_action",
	kResponse:               "response",
	kConfidence:             "confidence",
}

// lookupKey returns the key named name, or kUnknown.
func lookupKey(name string) key {
	switch name {
	case "@context":
		return kContext
	case "type":
		return kType
	case "event_id":
		return kEventID
	case "session_id":
		return kSessionID
	case "timestamp":
		return kTimestamp
	case "producer":
		return kProducer
	case "aaep_version":
		return kAAEPVersion
	case "verbosity":
		return kVerbosity
	case "urgency":
		return kUrgency
	case "localization_hints":
		return kLocHints
	case "sequence_number":
		return kSeqNo
	case "correlation_id":
		return kCorrelationID
	case "extensions":
		return kExtensions
	case "summary_terse":
		return kSummaryTerse
	case "summary_normal":
		return kSummaryNormal
	case "summary_detailed":
		return kSummaryDetailed
	case "expected_duration_ms":
		return kExpectedDurationMS
	case "requested_by":
		return kRequestedBy
	case "request_text":
		return kRequestText
	case "tools_available":
		return kToolsAvailable
	case "duration_ms":
		return kDurationMS
	case "tool_invocations_count":
		return kToolInvocationsCount
	case "output_summary":
		return kOutputSummary
	case "result_uri":
		return kResultURI
	case "error_category":
		return kErrorCategory
	case "error_code":
		return kErrorCode
	case "error_uri":
		return kErrorURI
	case "recoverable":
		return kRecoverable
	case "remediation_hint":
		return kRemediationHint
	case "cancelled_by":
		return kCancelledBy
	case "cancellation_reason":
		return kCancellationReason
	case "partial_result":
		return kPartialResult
	case "from_state":
		return kFromState
	case "to_state":
		return kToState
	case "progress":
		return kProgress
	case "eta_ms":
		return kETAMS
	case "tool":
		return kTool
	case "description":
		return kDescription
	case "args_summary":
		return kArgsSummary
	case "risk_level":
		return kRiskLevel
	case "irreversible":
		return kIrreversible
	case "tool_call_id":
		return kToolCallID
	case "status":
		return kStatus
	case "error_message":
		return kErrorMessage
	case "chunk":
		return kChunk
	case "position":
		return kPosition
	case "complete":
		return kComplete
	case "coalesce_hint":
		return kCoalesceHint
	case "output_id":
		return kOutputID
	case "content_type":
		return kContentType
	case "language":
		return kLanguage
	case "action":
		return kAction
	case "consequence":
		return kConsequence
	case "reply_token":
		return kReplyToken
	case "timeout_seconds":
		return kTimeoutSeconds
	case "default_decision":
		return kDefaultDecision
	case "reversibility":
		return kReversibility
	case "allowed_replies":
		return kAllowedReplies
	case "extra_context":
		return kExtraContext
	case "question":
		return kQuestion
	case "accepted_response_kinds":
		return kAcceptedResponseKinds
	case "choices":
		return kChoices
	case "context":
		return kContextText
	case "default_response":
		return kDefaultResponse
	case "reason":
		return kReason
	case "target_kind":
		return kTargetKind
	case "target_uri":
		return kTargetURI
	case "packaged_context":
		return kPackagedContext
	case "urgency_for_handoff":
		return kUrgencyForHandoff
	case "subscriber_id":
		return kSubscriberID
	case "subscriber_name":
		return kSubscriberName
	case "subscriber_version":
		return kSubscriberVersion
	case "subscriber_manifest_uri":
		return kSubscriberManifestURI
	case "capabilities":
		return kCapabilities
	case "subscription_id":
		return kSubscriptionID
	case "honored_capabilities":
		return kHonoredCapabilities
	case "manifest_uri":
		return kManifestURI
	case "signed_manifest":
		return kSignedManifest
	case "negotiation_notes":
		return kNegotiationNotes
	case "reason_code":
		return kReasonCode
	case "reason_message":
		return kReasonMessage
	case "retry_after_seconds":
		return kRetryAfterSeconds
	case "alternative_manifest_uri":
		return kAlternativeManifestURI
	case "decision":
		return kDecision
	case "decided_by":
		return kDecidedBy
	case "decision_rationale":
		return kDecisionRationale
	case "modified_action":
		return kModifiedAction
	case "response":
		return kResponse
	case "confidence":
		return kConfidence
	}
	return kUnknown
}

// lookupKeyBytes is lookupKey for a byte slice, without allocating.
func lookupKeyBytes(b []byte) key { return lookupKey(string(b)) }

// keySet is a set of keys.
type keySet [2]uint64

func (s *keySet) add(k key) { s[k>>6] |= 1 << (k & 63) }

// minus returns the keys of s that are not in t.
func (s keySet) minus(t keySet) keySet { return keySet{s[0] &^ t[0], s[1] &^ t[1]} }

// each calls fn for every key of s in key order.
func (s keySet) each(fn func(k key)) {
	for w := range s {
		for set := s[w]; set != 0; set &= set - 1 {
			fn(key(w*64 + bits.TrailingZeros64(set)))
		}
	}
}
func (s *keySet) has(k key) bool { return s[k>>6]&(1<<(k&63)) != 0 }
func setOf(keys ...key) (s keySet) {
	for _, k := range keys {
		s.add(k)
	}
	return s
}
