// Package jsonval reads single JSON values held as json.RawMessage: their
// kind, and the strings, integers, numbers and objects they hold, without
// decoding the rest of a document.
//
// The protocol models decode a message's top level into json.RawMessage
// fields once and then read only the members a rule needs. A nil
// RawMessage means the member was absent; the JSON literal null is a
// present null. The readers report false for a value of another kind. They
// expect values from a document that encoding/json already accepted (every
// RawMessage the decoder produces is one): Object splits an object without
// validating it again.
package jsonval

import (
	"bytes"
	"encoding/json"
	"strconv"
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

// KindOf returns the kind of r, judging by its first byte after white
// space: Absent for nil or blank, Invalid for a byte no JSON value starts
// with.
func KindOf(r json.RawMessage) Kind {
	r = bytes.TrimSpace(r)
	if len(r) == 0 {
		return Absent
	}
	switch c := r[0]; {
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

// StringVal returns the string r holds. A string without escapes is returned as
// its bytes, as is (invalid UTF-8 included); one with escapes is decoded by
// encoding/json.
func StringVal(r json.RawMessage) (string, bool) {
	if KindOf(r) != String {
		return "", false
	}
	r = bytes.TrimSpace(r)
	if n := len(r); n >= 2 && r[n-1] == '"' && plain(r[1:n-1]) {
		return string(r[1 : n-1]), true
	}
	var s string
	if err := json.Unmarshal(r, &s); err != nil {
		return "", false
	}
	return s, true
}

// IntVal returns the integer r holds: a number token without fraction or
// exponent that fits in an int64.
func IntVal(r json.RawMessage) (int64, bool) {
	if KindOf(r) != Number {
		return 0, false
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(r)), 10, 64)
	return n, err == nil
}

// NumberVal returns the number r holds; false also for a number out of the
// range of a float64.
func NumberVal(r json.RawMessage) (float64, bool) {
	if KindOf(r) != Number {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(bytes.TrimSpace(r)), 64)
	return f, err == nil
}

// ObjectVal splits the object r into its members, each value as the bytes it
// has in r. A repeated key keeps its last value, as encoding/json does. r
// must come from a document that encoding/json validated: the split does
// not validate again, and on other input it may return false or members cut
// at odd places (it never panics).
func ObjectVal(r json.RawMessage) (map[string]json.RawMessage, bool) {
	if KindOf(r) != Object {
		return nil, false
	}
	m := map[string]json.RawMessage{}
	b := bytes.TrimSpace(r)
	i := 1
	for {
		i = skipSpace(b, i)
		if i >= len(b) || b[i] == '}' {
			return m, true
		}
		if b[i] == ',' {
			i++
			continue
		}
		kEnd := skipValue(b, i)
		key, ok := StringVal(b[i:kEnd])
		if !ok {
			return nil, false
		}
		i = skipSpace(b, kEnd)
		if i >= len(b) || b[i] != ':' {
			return nil, false
		}
		i = skipSpace(b, i+1)
		vEnd := skipValue(b, i)
		if vEnd <= i {
			return nil, false
		}
		m[key] = json.RawMessage(b[i:vEnd])
		i = vEnd
	}
}

// plain reports whether b is string content without escapes or control
// characters, valid as is.
func plain(b []byte) bool {
	for _, c := range b {
		if c == '\\' || c == '"' || c < 0x20 {
			return false
		}
	}
	return true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the valid JSON value starting at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case '\\':
				j++
			case '"':
				return j + 1
			}
		}
		return len(b)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = skipValue(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	return j
}
