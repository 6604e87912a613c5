package asp

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"
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

func rawObject(r json.RawMessage) (map[string]json.RawMessage, bool) {
	if kind(r) != "object" {
		return nil, false
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(r, &m); err != nil {
		return nil, false
	}
	return m, true
}

func rawStrings(r json.RawMessage) ([]string, bool) {
	if kind(r) != "array" {
		return nil, false
	}
	var s []string
	if err := json.Unmarshal(r, &s); err != nil {
		return nil, false
	}
	return s, true
}

// parseTime parses an RFC 3339 timestamp; zulu reports a "Z" suffix.
func parseTime(s string) (t time.Time, zulu, ok bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, false, false
	}
	return t, strings.HasSuffix(s, "Z"), true
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
