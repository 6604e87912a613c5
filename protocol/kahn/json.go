package kahn

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// Small readers for json.RawMessage values. A nil RawMessage means the field
// was absent; "null" is a present null.

// kind returns "absent", "null", "string", "number", "boolean", "object" or
// "array" (or "invalid").
func kind(r json.RawMessage) string {
	if r == nil {
		return "absent"
	}
	r = bytes.TrimSpace(r)
	if len(r) == 0 {
		return "absent"
	}
	switch c := r[0]; {
	case c == '"':
		return "string"
	case c == '{':
		return "object"
	case c == '[':
		return "array"
	case c == 't' || c == 'f':
		return "boolean"
	case c == 'n':
		return "null"
	case c == '-' || (c >= '0' && c <= '9'):
		return "number"
	}
	return "invalid"
}

func rawString(r json.RawMessage) (string, bool) {
	if kind(r) != "string" {
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

// rawInt reads an integer token (no fraction, no exponent).
func rawInt(r json.RawMessage) (int64, bool) {
	if kind(r) != "number" {
		return 0, false
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(r)), 10, 64)
	return n, err == nil
}

func rawNumber(r json.RawMessage) (float64, bool) {
	if kind(r) != "number" {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(bytes.TrimSpace(r)), 64)
	return f, err == nil
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

// rawObject splits an object into its members. r must come from a
// document that encoding/json already validated (every RawMessage the
// decoder produced is): the split does not validate again. A repeated key
// keeps its last value, as encoding/json does.
func rawObject(r json.RawMessage) (map[string]json.RawMessage, bool) {
	if kind(r) != "object" {
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
		key, ok := rawString(b[i:kEnd])
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

// clip shortens s for a message or label.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// fifo is a bounded map that forgets its oldest keys first.
type fifo[V any] struct {
	m    map[string]V
	ring []string
	next int
	max  int
}

func newFIFO[V any](max int) *fifo[V] { return &fifo[V]{m: map[string]V{}, max: max} }

func (f *fifo[V]) get(k string) (V, bool) {
	v, ok := f.m[k]
	return v, ok
}

func (f *fifo[V]) put(k string, v V) {
	if _, ok := f.m[k]; ok {
		f.m[k] = v
		return
	}
	if len(f.ring) < f.max {
		f.ring = append(f.ring, k)
	} else {
		delete(f.m, f.ring[f.next])
		f.ring[f.next] = k
		f.next = (f.next + 1) % f.max
	}
	f.m[k] = v
}
