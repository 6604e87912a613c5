package asp

import (
	"strings"
	"time"

	"github.com/aaep-tools/aaepkit/payload"
)

// Small helpers of the checker: a string-array reader and a timestamp
// parser (values are read with payload.Value's readers; the bounded memory
// and Clip are in protocol).

// rawStrings reads an array of strings; a null element reads as "", as
// encoding/json decodes it into a []string.
func rawStrings(r payload.Value) ([]string, bool) {
	if r.Kind() != payload.Array {
		return nil, false
	}
	s, ok := []string{}, true
	r.Elements(func(_ int, e payload.Value) bool {
		if e.IsNull() {
			s = append(s, "")
			return true
		}
		v, isStr := e.Str()
		s, ok = append(s, v), isStr
		return ok
	})
	if !ok {
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
