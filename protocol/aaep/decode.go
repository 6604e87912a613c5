package aaep

import (
	"encoding/json"
	"math/bits"
	"strconv"
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
// copying when it has no escapes, unescaped otherwise.
func (e *Event) text(k key) ([]byte, bool) { return rawText(e.vals[k]) }

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
	*ev = Event{Raw: raw, unknown: unknown, unknownVals: unknownVals, unknownIdx: idx}
	st := d.Stats()
	ev.scan.nonASCII = st.NonASCII
	if !d.IsObject() {
		return notObject(d, bom)
	}
	members := d.Members()
	for _, m := range members {
		val := json.RawMessage(m.Value)
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
		ev.scan.longStrTok = json.RawMessage(d.Raw()[st.LongStringAt : st.LongStringAt+st.LongString+2])
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

// The raw value helpers read with the one semantics of payload.Value (see
// there): an integer is a whole number however written (JSON Schema's
// "integer", which the AAEP schemas use), strings are unescaped.

// rawString returns r as a string when it is a JSON string.
func rawString(r json.RawMessage) (string, bool) { return payload.Value(r).Str() }

// rawText returns the content of JSON string r without copying when it
// holds no escapes, unescaped otherwise.
func rawText(r json.RawMessage) ([]byte, bool) { return payload.Value(r).Text() }

// rawNumber reports whether r is a JSON number and returns its value.
func rawNumber(r json.RawMessage) (float64, bool) { return payload.Value(r).Number() }

// rawInt returns r as an int64 when it is a JSON number with an integral
// value (JSON Schema's "integer": 3 and 3.0 both count) that fits.
func rawInt(r json.RawMessage) (int64, bool) { return payload.Value(r).Int() }

func rawBool(r json.RawMessage) (bool, bool) { return payload.Value(r).Bool() }

func rawObject(r json.RawMessage) (map[string]json.RawMessage, bool) {
	if len(r) == 0 || r[0] != '{' {
		return nil, false
	}
	m := map[string]json.RawMessage{}
	payload.Value(r).Members(func(k []byte, v payload.Value) bool {
		m[string(k)] = json.RawMessage(v)
		return true
	})
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
	return payload.Value(r).Members(func(k []byte, v payload.Value) bool { return fn(k, json.RawMessage(v)) })
}

// eachElement calls fn for each element of JSON array r (already
// validated), stopping when fn returns false. It returns false when r is not
// an array.
func eachElement(r json.RawMessage, fn func(i int, val json.RawMessage) bool) bool {
	return payload.Value(r).Elements(func(i int, v payload.Value) bool { return fn(i, json.RawMessage(v)) })
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// scanStats is what the decoding measured for the size and range rules.
type scanStats struct {
	depth      int             // deepest container nesting; the message object is 1
	bigInt     string          // first integer literal beyond ±2^53, "" if none
	bigIntKey  string          // the top-level key it was found under
	longStr    int             // longest string token, raw bytes between the quotes
	longStrAt  int             // offset of that token's opening quote
	longStrTok json.RawMessage // that token
	longStrKey string          // the top-level key it was found under (set past maxStringBytes)
	dupKey     string          // a top-level key that occurs twice, "" if none
	keys       int             // number of top-level members
	nonASCII   bool            // a string holds a byte of 0x80 or above
	tooDeep    bool            // nesting went past payload.MaxDepth (read without recursion)
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
