package asp

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/aaep-tools/aaepkit/protocol/jsonval"
)

// Small helpers of the checker: a string-array reader and a timestamp
// parser (the other JSON readers are in protocol/jsonval), clip for
// messages and labels, and the bounded memory fifo.

// rawStrings reads an array of strings.
func rawStrings(r json.RawMessage) ([]string, bool) {
	if jsonval.KindOf(r) != jsonval.Array {
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
