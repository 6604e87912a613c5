package report

import (
	"strconv"
	"unicode/utf8"

	"github.com/aaep-tools/aaepkit/protocol"
)

// The JSON report is written by hand, not through encoding/json: a large
// check writes hundreds of thousands of session blocks, and reflection
// and re-indenting were a tenth of its time. The bytes are exactly what
// json.MarshalIndent(s, "    ", "  ") gives for a *Session (a test
// compares the two on every field, by reflection, and a fuzz target on
// arbitrary strings), so the format stays encoding/json's.

// sessionIndent is the indent of a session block in the report: the
// document's "recordings" array holds recording objects, whose "sessions"
// array holds the session blocks (and whose "streams" array the findings
// about each stream that belong to no session, at the same indent).
const sessionIndent = "        "

// field appends the start of an object's member name on a line of its
// own, indented by in.
func field(b []byte, in, name string) []byte {
	b = append(b, '\n')
	b = append(b, in...)
	b = append(b, '"')
	b = append(b, name...)
	return append(b, "\": "...)
}

// appendSessionJSON appends s as json.MarshalIndent(s, ind, "  ") writes
// it (findings nil or empty both as []).
func appendSessionJSON(b []byte, s *Session, ind string) []byte {
	in1 := ind + "  "
	b = append(b, '{')
	if s.Stream != "" {
		b = field(b, in1, "stream")
		b = appendJSONString(b, s.Stream)
		b = append(b, ',')
	}
	b = field(b, in1, "protocol")
	b = appendJSONString(b, s.Protocol)
	b = append(b, ',')
	b = field(b, in1, "session")
	b = appendJSONString(b, s.Session)
	b = append(b, ',')
	b = field(b, in1, "messages")
	b = strconv.AppendInt(b, int64(s.Messages), 10)
	b = append(b, ',')
	b = field(b, in1, "first_offset_ns")
	b = strconv.AppendInt(b, int64(s.First), 10)
	b = append(b, ',')
	b = field(b, in1, "last_offset_ns")
	b = strconv.AppendInt(b, int64(s.Last), 10)
	b = append(b, ',')
	b = field(b, in1, "state")
	b = appendJSONString(b, s.State)
	b = append(b, ',')
	b = field(b, in1, "complete")
	b = strconv.AppendBool(b, s.Complete)
	b = append(b, ',')
	b = field(b, in1, "findings")
	b = appendFindingsJSON(b, s.Findings, in1)
	b = append(b, '\n')
	b = append(b, ind...)
	return append(b, '}')
}

// appendFindingsJSON appends fs as the "findings" array of an object whose
// fields are indented by in1 (json.MarshalIndent's form: [] when empty).
func appendFindingsJSON(b []byte, fs []protocol.Finding, in1 string) []byte {
	if len(fs) == 0 {
		return append(b, "[]"...)
	}
	in2, in3 := in1+"  ", in1+"    "
	b = append(b, '[')
	for i := range fs {
		f := &fs[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '\n')
		b = append(b, in2...)
		b = append(b, '{')
		if f.Stream != "" {
			b = field(b, in3, "stream")
			b = appendJSONString(b, f.Stream)
			b = append(b, ',')
		}
		b = field(b, in3, "protocol")
		b = appendJSONString(b, f.Protocol)
		if f.Session != "" {
			b = append(b, ',')
			b = field(b, in3, "session")
			b = appendJSONString(b, f.Session)
		}
		b = append(b, ',')
		b = field(b, in3, "rule")
		b = appendJSONString(b, f.RuleID)
		b = append(b, ',')
		b = field(b, in3, "level")
		b = appendJSONString(b, f.Level.String())
		if f.Party != 0 {
			b = append(b, ',')
			b = field(b, in3, "party")
			b = appendJSONString(b, f.Party.String())
		}
		b = append(b, ',')
		b = field(b, in3, "index")
		b = strconv.AppendInt(b, f.Index, 10)
		b = append(b, ',')
		b = field(b, in3, "offset_ns")
		b = strconv.AppendInt(b, int64(f.Offset), 10)
		b = append(b, ',')
		b = field(b, in3, "message")
		b = appendJSONString(b, f.Message)
		b = append(b, ',')
		b = field(b, in3, "short")
		b = appendJSONString(b, f.Short)
		b = append(b, '\n')
		b = append(b, in2...)
		b = append(b, '}')
	}
	b = append(b, '\n')
	b = append(b, in1...)
	return append(b, ']')
}

// StreamFindings are the findings about one stream of a recording that
// belong to no session (protocol.SessionSummary.StreamLevel): the JSON
// report's "streams" entries.
type StreamFindings struct {
	// Stream names the stream ("" in a recording of one stream).
	Stream   string             `json:"stream"`
	Findings []protocol.Finding `json:"findings"`
}

// appendStreamJSON appends st as json.MarshalIndent(st, ind, "  ") writes
// it (findings nil or empty both as []).
func appendStreamJSON(b []byte, st *StreamFindings, ind string) []byte {
	in1 := ind + "  "
	b = append(b, "{\n"...)
	b = append(b, in1...)
	b = append(b, "\"stream\": "...)
	b = appendJSONString(b, st.Stream)
	b = append(b, ",\n"...)
	b = append(b, in1...)
	b = append(b, "\"findings\": "...)
	b = appendFindingsJSON(b, st.Findings, in1)
	b = append(b, '\n')
	b = append(b, ind...)
	return append(b, '}')
}

const hexDigits = "0123456789abcdef"

// plainJSON marks the ASCII bytes encoding/json writes as they are (with
// its HTML escaping: <, > and & are escaped too).
var plainJSON = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// appendJSONString appends s as a JSON string the way encoding/json's
// Marshal does: short escapes for \b \f \n \r \t, \u00XX for the other
// control bytes and for <, > and &, \ufffd for each byte of invalid UTF-8,
// and \u2028 and \u2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plainJSON[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
