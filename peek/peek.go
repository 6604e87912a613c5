// Package peek reads the few top-level fields of a JSON message that routing
// needs (type, identifiers, urgency) without decoding the whole message, and
// matches messages against the type, session and urgency filters that
// aaep-capture and aaep-replay share.
//
// Peek never fails on bad input: a payload that is not a JSON object yields
// Fields with Object false, and fields it cannot read stay empty.
package peek

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"strings"
)

// Fields are the routing fields of one message. String fields are empty when
// absent or not strings.
type Fields struct {
	// Object reports whether the payload is a JSON object (the scan reached its
	// closing brace without a syntax error).
	Object bool

	// AAEP (and the AAEP handshake messages).
	Type      string // "type"
	EventID   string // "event_id"
	SessionID string // "session_id"
	Urgency   string // "urgency"
	Timestamp string // "timestamp"

	// ASP.
	Performative  string // "performative"
	ASPSessionID  string // "sessionId"
	ASPMessageID  string // "messageId"
	ASPHasEnvelop bool   // an "envelope" object is present (ASP WebSocket frame)

	// KAHN.
	RunID string // "run_id"
	Event string // "event"
	TS    string // "ts"

	// Array is set when the payload is a JSON array rather than an object.
	Array bool
}

// SessionKey is the session a message belongs to, whatever its protocol:
// AAEP session_id, ASP sessionId, or KAHN run_id.
func (f *Fields) SessionKey() string {
	switch {
	case f.SessionID != "":
		return f.SessionID
	case f.ASPSessionID != "":
		return f.ASPSessionID
	default:
		return f.RunID
	}
}

// Peek scans the top level of payload and fills the routing fields.
//
// A UTF-8 byte-order mark before the object is skipped: it is an encoding
// fault for the protocol checks to report, not a reason to lose the
// message's routing. Values nested deeper than maxDepth are skipped
// without recursion.
func Peek(payload []byte) Fields {
	var f Fields
	s := scanner{b: payload}
	if len(payload) >= 3 && payload[0] == 0xEF && payload[1] == 0xBB && payload[2] == 0xBF {
		s.i = 3
	}
	s.ws()
	if !s.eat('{') {
		f.Array = s.peekByte() == '['
		return f
	}
	s.ws()
	if s.eat('}') {
		f.Object = true
		return f
	}
	for {
		s.ws()
		key, ok := s.key()
		if !ok {
			return f
		}
		s.ws()
		if !s.eat(':') {
			return f
		}
		s.ws()
		dst := f.slot(key)
		if dst != nil && s.peekByte() == '"' {
			v, ok := s.str()
			if !ok {
				return f
			}
			*dst = v
		} else {
			if string(key) == "envelope" && s.peekByte() == '{' {
				f.ASPHasEnvelop = true
			}
			if !s.skipValue(0) {
				return f
			}
		}
		s.ws()
		if s.eat(',') {
			continue
		}
		if s.eat('}') {
			s.ws()
			f.Object = s.i == len(s.b)
			return f
		}
		return f
	}
}

// slot returns the field a key fills, or nil. (A switch on string(key)
// does not allocate.)
func (f *Fields) slot(key []byte) *string {
	switch string(key) {
	case "type":
		return &f.Type
	case "event_id":
		return &f.EventID
	case "session_id":
		return &f.SessionID
	case "urgency":
		return &f.Urgency
	case "timestamp":
		return &f.Timestamp
	case "performative":
		return &f.Performative
	case "sessionId":
		return &f.ASPSessionID
	case "messageId":
		return &f.ASPMessageID
	case "run_id":
		return &f.RunID
	case "event":
		return &f.Event
	case "ts":
		return &f.TS
	}
	return nil
}

// plain marks the bytes that cannot end or escape a string: a table lookup
// per byte is the fast path of scanning string contents.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// skipPlain returns the index of the first byte at or after i that ends
// or escapes a string (or len(b)): eight bytes at a time while no byte of
// the word is a quote, a backslash or a control character, then byte by
// byte.
func skipPlain(b []byte, i int) int {
	for i+8 <= len(b) {
		w := binary.LittleEndian.Uint64(b[i:])
		q, bs := w^quotes, w^backslashes
		if ((q-lsbs)&^q|(bs-lsbs)&^bs|(w-controls)&^w)&msbs != 0 {
			break
		}
		i += 8
	}
	for i < len(b) && plain[b[i]] {
		i++
	}
	return i
}

// Word-at-a-time constants for skipPlain: a byte of w is zero in w^x where
// it equals the byte of x; (v-lsbs)&^v&msbs is non-zero when v has a zero
// byte, and (w-controls)&^w&msbs when w has a byte below 0x20. (A borrow can
// flag a plain byte too; the byte loop then looks closer.)
const (
	lsbs        = 0x0101010101010101
	msbs        = 0x8080808080808080
	quotes      = lsbs * '"'
	backslashes = lsbs * '\\'
	controls    = lsbs * 0x20
)

// maxDepth bounds nesting so that hostile input cannot exhaust the stack.
const maxDepth = 512

type scanner struct {
	b []byte
	i int
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

func (s *scanner) peekByte() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *scanner) eat(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// key reads an object key at the cursor. A key without escapes is returned
// as a slice of the input, without copying: keys are only compared.
func (s *scanner) key() ([]byte, bool) {
	start := s.i
	if !s.skipString() {
		return nil, false
	}
	raw := s.b[start+1 : s.i-1]
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw, true
	}
	var v string
	if err := json.Unmarshal(s.b[start:s.i], &v); err != nil {
		return nil, false
	}
	return []byte(v), true
}

// str reads a JSON string at the cursor and returns its unescaped value.
func (s *scanner) str() (string, bool) {
	if !s.eat('"') {
		return "", false
	}
	start := s.i
	escaped := false
	for s.i < len(s.b) {
		s.i = skipPlain(s.b, s.i)
		if s.i >= len(s.b) {
			return "", false
		}
		c := s.b[s.i]
		switch {
		case c == '\\':
			escaped = true
			s.i += 2
			continue
		case c == '"':
			raw := s.b[start:s.i]
			s.i++
			if !escaped {
				return string(raw), true
			}
			var v string
			if err := json.Unmarshal(s.b[start-1:s.i], &v); err != nil {
				return "", false
			}
			return v, true
		case c < 0x20:
			return "", false
		}
		s.i++
	}
	return "", false
}

func (s *scanner) skipString() bool {
	if !s.eat('"') {
		return false
	}
	for s.i < len(s.b) {
		s.i = skipPlain(s.b, s.i)
		if s.i >= len(s.b) {
			return false
		}
		switch c := s.b[s.i]; {
		case c == '\\':
			s.i += 2
			continue
		case c == '"':
			s.i++
			return true
		case c < 0x20:
			return false
		}
		s.i++
	}
	return false
}

// skipDeep skips one value nested past maxDepth without recursion,
// checking that its brackets match.
func (s *scanner) skipDeep() bool {
	var stack []byte
	for s.i < len(s.b) {
		switch c := s.b[s.i]; c {
		case '"':
			if !s.skipString() {
				return false
			}
			if len(stack) == 0 {
				return true
			}
			continue
		case '{', '[':
			stack = append(stack, c)
		case '}', ']':
			if len(stack) == 0 || (c == '}') != (stack[len(stack)-1] == '{') {
				return false
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				s.i++
				return true
			}
		default:
			if len(stack) == 0 {
				return s.skipValue(0)
			}
		}
		s.i++
	}
	return false
}

// skipValue skips one JSON value. It checks structure, not every literal.
func (s *scanner) skipValue(depth int) bool {
	if depth > maxDepth {
		return s.skipDeep()
	}
	s.ws()
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; c {
	case '"':
		return s.skipString()
	case '{', '[':
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		s.i++
		s.ws()
		if s.eat(closer) {
			return true
		}
		for {
			if c == '{' {
				s.ws()
				if !s.skipString() {
					return false
				}
				s.ws()
				if !s.eat(':') {
					return false
				}
			}
			if !s.skipValue(depth + 1) {
				return false
			}
			s.ws()
			if s.eat(',') {
				continue
			}
			return s.eat(closer)
		}
	default:
		start := s.i
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return s.i > start
			}
			s.i++
		}
		return s.i > start
	}
}

// Filter selects messages by type, session and urgency. An empty list
// matches everything; within a list any entry may match.
type Filter struct {
	// Types match a message type exactly or as a suffix: "tool.invoked"
	// matches "aaep:agent.tool.invoked".
	Types []string
	// Sessions match the session key exactly.
	Sessions []string
	// Urgencies match the urgency; an absent urgency counts as "normal", as
	// the AAEP envelope defines (the reference Python tool matched only an
	// explicit "normal").
	Urgencies []string
}

// Empty reports whether the filter lets everything through.
func (f *Filter) Empty() bool {
	return len(f.Types) == 0 && len(f.Sessions) == 0 && len(f.Urgencies) == 0
}

// Match reports whether a message with fields m passes the filter.
func (f *Filter) Match(m *Fields) bool {
	if len(f.Types) > 0 && !anyOf(f.Types, func(t string) bool { return TypeMatches(m.TypeName(), t) }) {
		return false
	}
	if len(f.Sessions) > 0 {
		key := m.SessionKey()
		if !anyOf(f.Sessions, func(s string) bool { return s == key }) {
			return false
		}
	}
	if len(f.Urgencies) > 0 {
		u := m.Urgency
		if u == "" {
			u = "normal"
		}
		if !anyOf(f.Urgencies, func(s string) bool { return s == u }) {
			return false
		}
	}
	return true
}

// TypeName is what type filters compare with and listings show: the AAEP
// type, the ASP performative or the KAHN event.
func (f *Fields) TypeName() string {
	switch {
	case f.Type != "":
		return f.Type
	case f.Performative != "":
		return f.Performative
	default:
		return f.Event
	}
}

// TypeMatches reports whether typ matches the filter pattern: equal, or
// ending with pattern, as the reference Python aaep-capture matches
// ("tool.invoked" and "invoked" both match "aaep:agent.tool.invoked").
func TypeMatches(typ, pattern string) bool {
	return pattern != "" && strings.HasSuffix(typ, pattern)
}

func anyOf(list []string, pred func(string) bool) bool {
	for _, s := range list {
		if pred(s) {
			return true
		}
	}
	return false
}
