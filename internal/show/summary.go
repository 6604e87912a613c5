package show

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/aaep-tools/aaepkit/payload"
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
func Summary(d *payload.Doc) string {
	if !d.IsObject() || !d.JSONValid() {
		return "(not JSON, " + strconv.Itoa(len(d.Raw())) + " bytes)"
	}
	if s := str(d.Get("summary_normal")); s != "" {
		return clip(s)
	}
	// Fields of a nested "payload" object count where the top level lacks them.
	inner := d.Get("payload")
	if inner.Kind() != payload.Object {
		inner = nil
	} else if s := str(inner.Get("summary_normal")); s != "" {
		return clip(s)
	}
	get := func(k string) payload.Value {
		if v := d.Get(k); v != nil || inner == nil {
			return v
		}
		return inner.Get(k)
	}
	var parts []string
	if from, to := str(get("from_state")), str(get("to_state")); from != "" || to != "" {
		parts = append(parts, from+"→"+to)
	}
	for _, k := range keyFields {
		if k == "from_state" || k == "to_state" {
			continue
		}
		v := scalar(get(k))
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

// str returns a JSON string value, or "". Bytes that are not UTF-8 become
// U+FFFD, one each.
func str(v payload.Value) string {
	s, ok := v.Str()
	if !ok {
		return ""
	}
	if !utf8.ValidString(s) {
		s = strings.Map(func(r rune) rune { return r }, s)
	}
	return s
}

// scalar returns a string, number or boolean value as text, or "".
func scalar(v payload.Value) string {
	switch v.Kind() {
	case payload.String:
		return str(v)
	case payload.Number, payload.Bool:
		return string(v)
	}
	return ""
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
