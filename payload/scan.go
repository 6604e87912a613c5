package payload

import (
	"encoding/binary"
	"strconv"
)

// scanner is the validating scanner: one strict RFC 8259 pass, strings
// skipped eight bytes at a time.
type scanner struct {
	b        []byte
	i        int
	deep     int  // untracked nesting (depth 0 values), to bound recursion
	d        *Doc // nil: validate only
	top      int  // index of the top-level member being read, -1
	escaped  bool // the last string read had an escape sequence
	nonASCII bool // a byte of 0x80 or above was met in a string
	stats    bool // measure the longest string and big integers
}

func (s *scanner) fail(msg string) *SyntaxError { return &SyntaxError{Offset: s.i, Msg: msg} }

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

// document reads the top-level value; for an object it records the
// members, the routing fields and the statistics into s.d, as s.d.need
// asks.
func (s *scanner) document() *SyntaxError {
	d := s.d
	members := d.need&NeedMembers != 0
	routing := d.need&(NeedSession|NeedRouting) != 0
	s.ws()
	d.start = s.i
	if s.i >= len(s.b) {
		return s.fail("empty message")
	}
	d.kind = kindOfByte(s.b[s.i])
	if s.b[s.i] != '{' {
		if err := s.value(1); err != nil {
			return err
		}
		s.ws()
		if s.i != len(s.b) {
			return s.fail("data after the end of the value")
		}
		return nil
	}
	s.i++
	d.stats.Depth = 1
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
			s.escaped = false
			if err := s.skipString(); err != nil {
				return err
			}
			name := s.b[ks+1 : s.i-1 : s.i-1]
			if s.escaped && (members || routing) {
				name = unescape(nil, name)
			}
			s.ws()
			if s.peek() != ':' {
				return s.fail("expected ':' after a member name")
			}
			s.i++
			s.ws()
			vs := s.i
			if members {
				s.top = len(d.members)
			}
			s.escaped = false
			if err := s.value(2); err != nil {
				return err
			}
			if members {
				d.addMember(name, Value(s.b[vs:s.i:s.i]))
			}
			if routing {
				d.route(name, vs, s.i, s.escaped)
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
	s.top = -1
	s.ws()
	if s.i != len(s.b) {
		return s.fail("data after the end of the object")
	}
	return nil
}

// deepValue skips a container nested beyond MaxDepth without recursion,
// validating it as strictly as value does.
func (s *scanner) deepValue() *SyntaxError {
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
func (s *scanner) memberName() *SyntaxError {
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
func (s *scanner) value(depth int) *SyntaxError {
	if s.i >= len(s.b) {
		return s.fail("unexpected end of input")
	}
	switch c := s.b[s.i]; {
	case c == '"':
		start := s.i
		if err := s.skipString(); err != nil {
			return err
		}
		if s.stats && depth > 0 {
			if n := s.i - start - 2; n > s.d.stats.LongString {
				st := &s.d.stats
				st.LongString, st.LongStringAt, st.LongStringMember = n, start, s.top
			}
		}
		return nil
	case c == '{' || c == '[':
		if depth > MaxDepth || (depth == 0 && s.deep >= MaxDepth) {
			if s.d != nil {
				s.d.stats.TooDeep = true
			}
			return s.deepValue()
		}
		if depth == 0 {
			s.deep++
			err := s.container(c, 0)
			s.deep--
			return err
		}
		return s.container(c, depth)
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number(s.stats && depth > 0)
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	}
	return s.fail("unexpected character " + strconv.QuoteRune(rune(s.b[s.i])))
}

// container reads an object or array (c is its opening byte) at nesting
// depth (0: untracked).
func (s *scanner) container(c byte, depth int) *SyntaxError {
	if s.d != nil && depth > s.d.stats.Depth {
		s.d.stats.Depth = depth
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
}

func (s *scanner) literal(lit string) *SyntaxError {
	if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
		s.i += len(lit)
		return nil
	}
	return s.fail("invalid literal (JSON allows only true, false and null)")
}

// bigIntLimit is 2^53, the largest magnitude up to which every integer is
// exact in a float64.
const bigIntLimit = "9007199254740992"

// number reads an RFC 8259 number and notes integers beyond ±2^53.
func (s *scanner) number(track bool) *SyntaxError {
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
	if track && integer && s.d.stats.BigInt == nil {
		d := s.b[ds:de]
		if len(d) > len(bigIntLimit) || (len(d) == len(bigIntLimit) && string(d) > bigIntLimit) {
			s.d.stats.BigInt, s.d.stats.BigIntMember = Value(s.b[start:s.i:s.i]), s.top
		}
	}
	return nil
}

// skipString reads a JSON string at the cursor, validating escapes and
// rejecting raw control characters. It does not validate UTF-8, but notes
// in s.nonASCII that a byte of 0x80 or above was met, so that a payload
// made of ASCII needs no UTF-8 pass of its own: the bytes it passes over
// are ORed together (off the loop's critical path) and their high bits
// looked at once, at the end.
func (s *scanner) skipString() *SyntaxError {
	b, i := s.b, s.i+1 // after the opening quote
	var seen uint64    // the bytes passed over, ORed
	for {
		// Plain characters, eight at a time while no byte of the word is
		// a quote, a backslash or a control character.
		for i+8 <= len(b) {
			w := binary.LittleEndian.Uint64(b[i:])
			q, bs := w^quotes, w^backslashes
			if ((q-lsbs)&^q|(bs-lsbs)&^bs|(w-controls)&^w)&msbs != 0 {
				break
			}
			seen |= w
			i += 8
		}
		for i < len(b) && !strSpecial[b[i]] {
			seen |= uint64(b[i])
			i++
		}
		if i >= len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			s.i = i + 1
			if seen&msbs != 0 {
				s.nonASCII = true
			}
			return nil
		case c == '\\':
			s.escaped = true
			i++
			if i >= len(b) {
				s.i = i
				return s.fail("unterminated string")
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if len(b)-i < 5 || !isHex(b[i+1]) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) {
					s.i = i
					return s.fail(`invalid \u escape in a string`)
				}
				i += 5
			default:
				s.i = i
				return s.fail("invalid escape in a string")
			}
		default: // a control character
			s.i = i
			return s.fail("control character in a string (must be escaped)")
		}
	}
	s.i = i
	if seen&msbs != 0 {
		s.nonASCII = true
	}
	return s.fail("unterminated string")
}

// Word-at-a-time constants for skipString: a byte b of word w is zero in
// (w^x) exactly where b == the byte of x, and (v-lsbs)&^v&msbs is non-zero
// when v has a zero byte; (w-controls)&^w&msbs is non-zero when w has a
// byte below 0x20. (A borrow can flag a plain byte too; the byte loop then
// looks closer.)
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

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}
