package show

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/aaep-tools/aaepkit/peek"
)

// MaxSummary bounds a summary, in runes.
const MaxSummary = 160

// keyFields are the fields that say what a message is about when it has no
// summary_normal, tried in order; the first few present make the summary.
var keyFields = []string{
	"tool", "from_state", "to_state", "status", "decision", "response", "question", "action",
	"chunk", "error_code", "error_message", "reason", "performative", "event", "agent_id", "message",
}

// Summary returns the human summary of a message: its summary_normal (at
// the top level or in a nested "payload"), else its key fields
// ("tool=search_flights status=success"), else "" . Control characters
// become spaces and the result is at most MaxSummary runes. It never fails:
// a payload that is not a JSON object gives "(not JSON, N bytes)".
func Summary(payload []byte, f *peek.Fields) string {
	if f != nil && !f.Object {
		return "(not JSON, " + strconv.Itoa(len(payload)) + " bytes)"
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(payload, &top); err != nil {
		return "(not JSON, " + strconv.Itoa(len(payload)) + " bytes)"
	}
	obj := top
	if s := str(top["summary_normal"]); s != "" {
		return clip(s)
	}
	if inner := top["payload"]; len(inner) > 0 && inner[0] == '{' {
		var p map[string]json.RawMessage
		if json.Unmarshal(inner, &p) == nil {
			if s := str(p["summary_normal"]); s != "" {
				return clip(s)
			}
			for k, v := range p {
				if _, ok := top[k]; !ok {
					top[k] = v
				}
			}
			obj = top
		}
	}
	var parts []string
	if from, to := str(obj["from_state"]), str(obj["to_state"]); from != "" || to != "" {
		parts = append(parts, from+"→"+to)
	}
	for _, k := range keyFields {
		if k == "from_state" || k == "to_state" {
			continue
		}
		v := scalar(obj[k])
		if v == "" {
			continue
		}
		if k == "chunk" || k == "question" || k == "action" || k == "message" || k == "error_message" {
			v = strconv.Quote(v)
		}
		parts = append(parts, k+"="+v)
		if len(parts) == 3 {
			break
		}
	}
	return clip(strings.Join(parts, " "))
}

// str returns a JSON string value, or "".
func str(raw json.RawMessage) string {
	if len(raw) == 0 || raw[0] != '"' {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// scalar returns a string, number or boolean value as text, or "".
func scalar(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '"':
		return str(raw)
	case '{', '[', 'n':
		return ""
	}
	return string(raw)
}

// oneLine turns control characters into spaces.
func oneLine(s string) string {
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s))
}

// clip makes s one line of at most MaxSummary runes.
func clip(s string) string {
	s = oneLine(s)
	if utf8.RuneCountInString(s) <= MaxSummary {
		return s
	}
	r := []rune(s)
	return string(r[:MaxSummary-1]) + "…"
}
