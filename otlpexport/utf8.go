package otlpexport

import (
	"strings"
	"unicode/utf8"
)

// OTLP's strings are UTF-8 (protobuf string fields; JSON text), while a
// recording holds payloads byte for byte as received: a session id, an
// agent id or a tool name may carry bytes that are not UTF-8. Both
// encoders write such a string with each run of invalid bytes replaced by
// U+FFFD, as strings.ToValidUTF8 does, so that one bad byte does not cost
// the request it is in (a receiver refuses a protobuf message with an
// invalid string, whole) or the export (protojson refused to write it).
// The trace and span ids come from the recording's own bytes, so two
// sessions whose ids differ only in invalid bytes stay two traces.

// validUTF8 returns s, or s with each run of invalid bytes replaced by
// U+FFFD when it is not valid UTF-8.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
