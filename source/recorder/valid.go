package recorder

import (
	"bytes"
	"encoding/binary"
	"encoding/json"

	"github.com/aaep-tools/aaepkit/peek"
)

// validJSON reports whether b is exactly one JSON value (RFC 8259) with
// optional surrounding whitespace, with the same answer as encoding/json's
// Valid (which does not check UTF-8 inside strings either: utf8.Valid does
// that separately). It is several times faster than json.Valid because
// string contents, the bulk of AAEP messages, are skipped eight bytes at a
// time.
func validJSON(b []byte) bool { return scanJSON(b, nil) }

// scanJSON is validJSON that also fills, when f is not nil, the session
// fields of f (SessionID, ASPSessionID, RunID) from the top-level members
// session_id, sessionId and run_id, as peek.Peek does: the last string
// value of each wins. So one pass gives both the validity flag and the
// session key.
func scanJSON(b []byte, f *peek.Fields) bool {
	var small [64]byte
	stack := small[:0] // open containers: '{' or '['
	var slot *string   // where a top-level string value goes
	n := len(b)
	i := skipWS(b, 0)
	for {
		// A value starts at i.
		if i >= n {
			return false
		}
		switch c := b[i]; {
		case c == '{':
			if len(stack) >= maxDepth {
				return false
			}
			i = skipWS(b, i+1)
			if i < n && b[i] == '}' {
				i++
				break
			}
			stack = append(stack, '{')
			if i, slot = member(b, i, f, len(stack) == 1); i < 0 {
				return false
			}
			continue
		case c == '[':
			if len(stack) >= maxDepth {
				return false
			}
			slot = nil
			i = skipWS(b, i+1)
			if i < n && b[i] == ']' {
				i++
				break
			}
			stack = append(stack, '[')
			continue
		case c == '"':
			start := i
			if i = skipString(b, i); i < 0 {
				return false
			}
			if slot != nil {
				*slot = stringValue(b[start:i])
			}
		case c == '-' || c >= '0' && c <= '9':
			if i = skipNumber(b, i); i < 0 {
				return false
			}
		case c == 't':
			if !hasPrefix(b[i:], "true") {
				return false
			}
			i += 4
		case c == 'f':
			if !hasPrefix(b[i:], "false") {
				return false
			}
			i += 5
		case c == 'n':
			if !hasPrefix(b[i:], "null") {
				return false
			}
			i += 4
		default:
			return false
		}
		slot = nil
		// After a value: close containers, or go on to the next element.
		for {
			i = skipWS(b, i)
			if len(stack) == 0 {
				return i == n
			}
			if i >= n {
				return false
			}
			top := stack[len(stack)-1]
			c := b[i]
			if c == ',' {
				i = skipWS(b, i+1)
				if top == '{' {
					if i, slot = member(b, i, f, len(stack) == 1); i < 0 {
						return false
					}
				}
				break
			}
			if top == '{' && c == '}' || top == '[' && c == ']' {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			return false
		}
	}
}

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

// member reads `"key" :` at i and returns the index of the value after it,
// and, for a top-level member of f's interest, where its string value goes.
func member(b []byte, i int, f *peek.Fields, top bool) (int, *string) {
	if i >= len(b) || b[i] != '"' {
		return -1, nil
	}
	start := i
	if i = skipString(b, i); i < 0 {
		return -1, nil
	}
	var slot *string
	if f != nil && top {
		slot = sessionSlot(f, b[start:i])
	}
	i = skipWS(b, i)
	if i >= len(b) || b[i] != ':' {
		return -1, nil
	}
	return skipWS(b, i+1), slot
}

// sessionSlot returns the field of f that the quoted key fills, or nil.
func sessionSlot(f *peek.Fields, quoted []byte) *string {
	key := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(key, '\\') >= 0 {
		var k string
		if json.Unmarshal(quoted, &k) != nil {
			return nil
		}
		key = []byte(k)
	}
	switch string(key) {
	case "session_id":
		return &f.SessionID
	case "sessionId":
		return &f.ASPSessionID
	case "run_id":
		return &f.RunID
	}
	return nil
}

// stringValue unescapes a quoted JSON string (already validated).
func stringValue(quoted []byte) string {
	raw := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw)
	}
	var v string
	_ = json.Unmarshal(quoted, &v)
	return v
}

func skipWS(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

func hasPrefix(b []byte, s string) bool {
	return len(b) >= len(s) && string(b[:len(s)]) == s
}

// plain marks the bytes a string may hold without escaping: everything but
// '"', '\\' and control characters.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

var hexDigit = func() (t [256]bool) {
	for _, c := range "0123456789abcdefABCDEF" {
		t[c] = true
	}
	return t
}()

// special8 reports whether any of the 8 bytes in x may end or escape a
// string ('"', '\\' or a control character). It can report a false
// positive (a borrow into a byte above a real match), never a false
// negative; the caller then scans byte by byte.
func special8(x uint64) bool {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	q := x ^ (lo * '"')
	bs := x ^ (lo * '\\')
	return ((x-lo*0x20)&^x|(q-lo)&^q|(bs-lo)&^bs)&hi != 0
}

// skipString skips the string starting at b[i] == '"' and returns the index
// after its closing quote, or -1.
func skipString(b []byte, i int) int {
	i++
	n := len(b)
	for {
		for i+8 <= n && !special8(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		for i < n && plain[b[i]] {
			i++
		}
		if i >= n {
			return -1
		}
		switch b[i] {
		case '"':
			return i + 1
		case '\\':
			if i+1 >= n {
				return -1
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > n || !hexDigit[b[i+2]] || !hexDigit[b[i+3]] || !hexDigit[b[i+4]] || !hexDigit[b[i+5]] {
					return -1
				}
				i += 6
			default:
				return -1
			}
		default:
			return -1 // a control character
		}
	}
}

// skipNumber skips -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? at i.
func skipNumber(b []byte, i int) int {
	n := len(b)
	if b[i] == '-' {
		i++
	}
	switch {
	case i < n && b[i] == '0':
		i++
	case i < n && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return -1
	}
	if i < n && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < n && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < n && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}
