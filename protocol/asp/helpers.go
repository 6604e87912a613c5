package asp

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/aaep-tools/aaepkit/protocol/jsonval"
)

// Small helpers of the checker: a string-array reader and a timestamp
// parser (the other JSON readers are in protocol/jsonval; the bounded memory
// and Clip are in protocol).

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
