package recorder

import (
	"bytes"
	"encoding/json"
)

// RedactedValue replaces the value of a redacted field.
const RedactedValue = `"[REDACTED]"`

// redactor replaces the values of named JSON fields, at any depth: in the
// top-level object, in nested objects and in objects inside arrays. Only the
// value's bytes change; the key, the whitespace and everything else stay as
// received. A redacted value becomes the string "[REDACTED]" whatever its
// type (an object or array value is replaced whole).
//
// A message that is not valid JSON is redacted on a best-effort basis: a
// member "field": is still found, and when the end of its value cannot be
// found, the rest of the message is replaced.
type redactor struct {
	fields map[string]bool
	quoted [][]byte // `"field"`, for the quick check
	out    []byte
}

func newRedactor(fields []string) *redactor {
	if len(fields) == 0 {
		return nil
	}
	r := &redactor{fields: map[string]bool{}}
	for _, f := range fields {
		r.fields[f] = true
		q, _ := json.Marshal(f)
		r.quoted = append(r.quoted, q)
	}
	return r
}

// apply returns b with the redacted fields' values replaced. The result is
// b itself when nothing changed, else a buffer valid until the next call.
func (r *redactor) apply(b []byte) ([]byte, bool) {
	if !r.mayContain(b) {
		return b, false
	}
	n := len(b)
	out := r.out[:0]
	last, i := 0, 0
	changed := false
	for i < n {
		if b[i] != '"' {
			i++
			continue
		}
		end := stringEnd(b, i)
		if end < 0 {
			break
		}
		j := skipWS(b, end)
		if j < n && b[j] == ':' && r.match(b[i+1:end-1]) {
			v := skipWS(b, j+1)
			ve := valueEnd(b, v)
			out = append(out, b[last:v]...)
			out = append(out, RedactedValue...)
			last, i, changed = ve, ve, true
			continue
		}
		i = end
	}
	if !changed {
		return b, false
	}
	out = append(out, b[last:]...)
	r.out = out
	return out, true
}

// mayContain is the quick check: a field name appears quoted, or an escape
// could hide one.
func (r *redactor) mayContain(b []byte) bool {
	for _, q := range r.quoted {
		if bytes.Contains(b, q) {
			return true
		}
	}
	return bytes.Contains(b, []byte(`\u`)) || bytes.IndexByte(b, '\\') >= 0 && r.escapedNames()
}

// escapedNames reports whether a field name has characters that JSON may
// escape with a short escape (\" \\ \/ \b ...), which the quoted check would
// miss.
func (r *redactor) escapedNames() bool {
	for f := range r.fields {
		if bytes.ContainsAny([]byte(f), "\"\\/\b\f\n\r\t") {
			return true
		}
	}
	return false
}

func (r *redactor) match(rawKey []byte) bool {
	if bytes.IndexByte(rawKey, '\\') < 0 {
		return r.fields[string(rawKey)]
	}
	var k string
	q := make([]byte, 0, len(rawKey)+2)
	q = append(append(append(q, '"'), rawKey...), '"')
	if json.Unmarshal(q, &k) != nil {
		return false
	}
	return r.fields[k]
}

// stringEnd returns the index after the string starting at b[i] == '"', or
// -1 when it is not terminated. It tolerates any byte inside.
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// valueEnd returns the index after the JSON value starting at i, or len(b)
// when its end cannot be found.
func valueEnd(b []byte, i int) int {
	n := len(b)
	if i >= n {
		return n
	}
	switch b[i] {
	case '"':
		if e := stringEnd(b, i); e >= 0 {
			return e
		}
		return n
	case '{', '[':
		depth := 0
		for j := i; j < n; j++ {
			switch b[j] {
			case '"':
				e := stringEnd(b, j)
				if e < 0 {
					return n
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return n
	default:
		for j := i; j < n; j++ {
			switch b[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return j
			}
		}
		return n
	}
}
