package payload

import (
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Kind is the kind of a JSON value.
type Kind uint8

// The kinds of JSON values, plus Absent (no value) and Invalid (not the
// start of a JSON value).
const (
	Absent Kind = iota
	Null
	String
	Number
	Bool
	Object
	Array
	Invalid
)

var kindNames = [...]string{"absent", "null", "string", "number", "boolean", "object", "array", "invalid"}

// String returns the kind's name as findings print it: "absent", "null",
// "string", "number", "boolean", "object", "array" or "invalid".
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// kindOfByte returns the kind of a value starting with c.
func kindOfByte(c byte) Kind {
	switch {
	case c == '"':
		return String
	case c == '{':
		return Object
	case c == '[':
		return Array
	case c == 't' || c == 'f':
		return Bool
	case c == 'n':
		return Null
	case c == '-' || (c >= '0' && c <= '9'):
		return Number
	}
	return Invalid
}

// Value is the text of one JSON value, exactly its bytes (no white space
// around it), as a Doc's members and the iterators below give it. A nil
// Value is an absent one; the literal null is a present Null.
//
// The readers report false for a value of another kind. They expect a
// value that a Doc validated: on other bytes they never panic, but may
// report false or read a prefix.
//
// The semantics, once for every protocol:
//   - Str and Text unescape (\uXXXX pairs are joined; a lone surrogate
//     becomes U+FFFD, as in encoding/json); bytes that are not UTF-8 are
//     kept as they are, for the UTF-8 rules to report.
//   - Int accepts a number whose value is a whole number in the int64
//     range however it is written: 3, -0, 3.0 and 3e2 are integers
//     (JSON Schema's "integer", and JavaScript's Number.isInteger). A rule
//     that wants the integer written as one uses IntToken and says so.
//   - Number is the nearest float64; a number beyond float64's range reads
//     as ±Inf (it is still a number).
type Value []byte

// Kind returns the kind of v, judging by its first byte.
func (v Value) Kind() Kind {
	if len(v) == 0 {
		return Absent
	}
	return kindOfByte(v[0])
}

// IsNull reports whether v is the literal null.
func (v Value) IsNull() bool { return string(v) == "null" }

// Text returns the content of string v, without copying when it has no
// escapes (a slice of v), unescaped into new memory otherwise.
func (v Value) Text() ([]byte, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return nil, false
	}
	in := v[1 : len(v)-1]
	for _, c := range in {
		if c == '\\' {
			return unescape(nil, in), true
		}
	}
	return in, true
}

// Str returns the content of string v, unescaped.
func (v Value) Str() (string, bool) {
	b, ok := v.Text()
	if !ok {
		return "", false
	}
	return string(b), true
}

// Bool returns the boolean v holds.
func (v Value) Bool() (bool, bool) {
	switch string(v) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// Number returns the number v holds (±Inf beyond float64's range).
func (v Value) Number() (float64, bool) {
	if v.Kind() != Number {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			return 0, false
		}
	}
	return f, true
}

// IntToken returns the integer v holds when it is written as one: digits
// with an optional minus sign, no fraction or exponent, in the int64 range.
// It is the reading of rules whose schema or reference implementation
// types an integer by its token (3.0 is not one); Int is the common one.
func (v Value) IntToken() (int64, bool) {
	if len(v) == 0 {
		return 0, false
	}
	neg := v[0] == '-'
	i := 0
	if neg {
		i = 1
	}
	if i == len(v) {
		return 0, false
	}
	var u uint64
	for ; i < len(v); i++ {
		c := v[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if u > (math.MaxUint64-9)/10 {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	switch {
	case !neg && u <= math.MaxInt64:
		return int64(u), true
	case neg && u <= 1<<63:
		return -int64(u-1) - 1, true
	}
	return 0, false
}

// Int returns the integer v holds: a number whose value is whole and in the
// int64 range, however written (see Value).
func (v Value) Int() (int64, bool) {
	if n, ok := v.IntToken(); ok {
		return n, true
	}
	f, ok := v.Number()
	if !ok || f != math.Trunc(f) || f >= 1<<63 || f < -(1<<63) {
		return 0, false
	}
	return int64(f), true
}

// Members calls fn for each member of object v, in order, stopping when fn
// returns false. It reports false when v is not an object.
func (v Value) Members(fn func(name []byte, val Value) bool) bool {
	if len(v) == 0 || v[0] != '{' {
		return false
	}
	s := scanner{b: v, i: 1}
	s.ws()
	if s.peek() == '}' {
		return true
	}
	for {
		s.ws()
		ks := s.i
		s.escaped = false
		if s.skipString() != nil {
			return true
		}
		name := s.b[ks+1 : s.i-1 : s.i-1]
		if s.escaped {
			name = unescape(nil, name)
		}
		s.ws()
		s.i++ // ':'
		s.ws()
		vs := s.i
		if s.value(0) != nil {
			return true
		}
		if !fn(name, Value(s.b[vs:s.i:s.i])) {
			return true
		}
		s.ws()
		if s.peek() != ',' {
			return true
		}
		s.i++
	}
}

// Elements calls fn for each element of array v, in order, stopping when fn
// returns false. It reports false when v is not an array.
func (v Value) Elements(fn func(i int, val Value) bool) bool {
	if len(v) == 0 || v[0] != '[' {
		return false
	}
	s := scanner{b: v, i: 1}
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
		if !fn(n, Value(s.b[vs:s.i:s.i])) {
			return true
		}
		s.ws()
		if s.peek() != ',' {
			return true
		}
		s.i++
	}
}

// Get returns the value of the last member of object v named name, or nil
// (also when v is not an object).
func (v Value) Get(name string) Value {
	var out Value
	v.Members(func(k []byte, val Value) bool {
		if string(k) == name {
			out = val
		}
		return true
	})
	return out
}

// Object returns the members of object v in a new map; of repeated names
// the last wins.
func (v Value) Object() (map[string]Value, bool) {
	if v.Kind() != Object {
		return nil, false
	}
	m := map[string]Value{}
	v.Members(func(k []byte, val Value) bool {
		m[string(k)] = val
		return true
	})
	return m, true
}

// unescape appends the content of a validated JSON string with escapes
// (without its quotes) to dst, unescaped.
func unescape(dst, s []byte) []byte {
	if dst == nil {
		dst = make([]byte, 0, len(s))
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			j := i + 1
			for j < len(s) && s[j] != '\\' {
				j++
			}
			dst = append(dst, s[i:j]...)
			i = j
			continue
		}
		if i+1 >= len(s) {
			return dst
		}
		i += 2
		switch s[i-1] {
		case '"', '\\', '/':
			dst = append(dst, s[i-1])
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := hex4(s, i)
			if !ok {
				return dst
			}
			i += 4
			if utf16.IsSurrogate(r) {
				r2, ok := rune(-1), false
				if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
					r2, ok = hex4(s, i+2)
				}
				if dec := utf16.DecodeRune(r, r2); ok && dec != utf8.RuneError {
					r = dec
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			dst = utf8.AppendRune(dst, r)
		}
	}
	return dst
}

// hex4 reads four hex digits at s[i:].
func hex4(s []byte, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range s[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
