// Value validators shared by the envelope and event checks: identifiers,
// language tags, URIs, content types, tool names, type forms, producer and
// localization-hint shapes, and small text helpers for messages.

package aaep

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/aaep-tools/aaepkit/payload"
)

// typeFormProblem says what is wrong with type t, or "" when its form is valid.
func typeFormProblem(t string) string {
	colon := strings.IndexByte(t, ':')
	if colon < 0 {
		return "it has no prefix"
	}
	for i := 0; i < len(t); i++ {
		if t[i] <= ' ' || t[i] == 0x7f {
			return "it contains a space or control character"
		}
	}
	if strings.HasPrefix(t[colon:], "://") {
		if !isURI([]byte(t)) {
			return "it is not a valid URI"
		}
		return ""
	}
	if !isPrefixName(t[:colon]) {
		return "the prefix must start with a letter or underscore and hold only letters, digits, '_', '-' and '.'"
	}
	if colon == len(t)-1 {
		return "the local name after the prefix is empty"
	}
	return ""
}

func isPrefixName(p string) bool {
	if p == "" {
		return false
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case i > 0 && (c >= '0' && c <= '9' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return true
}

// producerProblem returns a sentence saying what is wrong with producer
// object r, or "". It is shared with subscription.accepted (MSG-ACC-SCHEMA).
func producerProblem(r payload.Value) string {
	if r[0] != '{' {
		return "producer is " + jsonKind(r) + "; it must be an object with at least agent_id"
	}
	problem, hasID := "", false
	r.Members(func(k []byte, v payload.Value) bool {
		name := string(k)
		switch name {
		case "agent_id", "agent_version", "agent_name", "model", "manifest_uri":
			s, ok := v.Text()
			switch {
			case !ok:
				problem = "producer." + name + " is " + jsonKind(v) + "; it must be a non-empty string"
			case len(s) == 0:
				problem = "producer." + name + " is empty; producer fields must be non-empty strings"
			case name == "manifest_uri" && !isURI(s):
				problem = "producer.manifest_uri " + clipb(s) + " is not an absolute URI"
			}
			if name == "agent_id" {
				hasID = true
			}
		default:
			problem = "producer has the unknown key " + strconv.Quote(name) + "; only agent_id, agent_version, agent_name, model and manifest_uri are defined"
		}
		return problem == ""
	})
	if problem == "" && !hasID {
		problem = "producer has no agent_id; it must identify the agent with a stable, non-empty agent_id"
	}
	return problem
}

func locHintsProblem(r payload.Value) string {
	problem := ""
	r.Members(func(k []byte, v payload.Value) bool {
		name := string(k)
		switch name {
		case "primary_language":
			if s, ok := v.Text(); !ok || !isLanguageTag(s) {
				problem = "localization_hints.primary_language " + describe(v) + " is not a language tag such as \"en-US\""
			}
		case "text_direction":
			if s, ok := v.Text(); !ok || !oneOf(s, "ltr", "rtl", "auto") {
				problem = "localization_hints.text_direction " + describe(v) + " must be \"ltr\", \"rtl\" or \"auto\""
			}
		case "available_languages", "fallback_chain":
			limit := 32
			if name == "fallback_chain" {
				limit = 16
			}
			problem = tagListProblem("localization_hints."+name, v, 0, limit, name == "available_languages")
		case "script":
			if s, ok := v.Text(); !ok || !isScript(s) {
				problem = "localization_hints.script " + describe(v) + " is not an ISO 15924 code such as \"Latn\""
			}
		case "calendar":
			if v[0] != '"' {
				problem = "localization_hints.calendar is " + jsonKind(v) + "; it must be a string"
			}
		default:
			problem = "localization_hints has the unknown key " + strconv.Quote(name)
		}
		return problem == ""
	})
	return problem
}

// tagListProblem checks an array of language tags with min..max items,
// optionally unique.
func tagListProblem(name string, v payload.Value, min, max int, unique bool) string {
	if v[0] != '[' {
		return name + " is " + jsonKind(v) + "; it must be an array of language tags"
	}
	problem, n := "", 0
	var seen uniqueSet
	v.Elements(func(i int, e payload.Value) bool {
		n++
		s, ok := e.Text()
		if !ok || !isLanguageTag(s) {
			problem = name + " item " + strconv.Itoa(i) + " " + describe(e) + " is not a language tag such as \"en-US\""
			return false
		}
		if unique && !seen.add(s) {
			problem = name + " lists " + clipb(s) + " twice; its items must be unique"
			return false
		}
		return true
	})
	switch {
	case problem != "":
	case n < min:
		problem = name + " has " + strconv.Itoa(n) + " items; at least " + strconv.Itoa(min) + " are required"
	case n > max:
		problem = name + " has " + strconv.Itoa(n) + " items; at most " + strconv.Itoa(max) + " are allowed"
	}
	return problem
}

// isID reports whether s is prefix followed by 1 to 64 ASCII letters or
// digits: the ABNF of event_id, session_id, reply_token, subscription_id,
// tool_call_id and output_id.
func isID(s []byte, prefix string) bool {
	if len(s) <= len(prefix) || len(s) > len(prefix)+64 || string(s[:len(prefix)]) != prefix {
		return false
	}
	for _, c := range s[len(prefix):] {
		if !isAlnum(c) {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool { return alnum[c] }

// alnum marks the ASCII letters and digits.
var alnum = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	return t
}()

func isAlpha(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

// isLanguageTag is ^[a-zA-Z]{1,8}(-[a-zA-Z0-9]{1,8})*$.
func isLanguageTag(s []byte) bool {
	i := 0
	for i < len(s) && isAlpha(s[i]) {
		i++
	}
	if i == 0 || i > 8 {
		return false
	}
	for i < len(s) {
		if s[i] != '-' {
			return false
		}
		i++
		j := i
		for i < len(s) && isAlnum(s[i]) {
			i++
		}
		if i == j || i-j > 8 {
			return false
		}
	}
	return true
}

// isScript is ^[A-Z][a-z]{3}$.
func isScript(s []byte) bool {
	return len(s) == 4 && s[0] >= 'A' && s[0] <= 'Z' &&
		s[1] >= 'a' && s[1] <= 'z' && s[2] >= 'a' && s[2] <= 'z' && s[3] >= 'a' && s[3] <= 'z'
}

// isToolName is ^[A-Za-z_][A-Za-z0-9_.-]{0,255}$.
func isToolName(s []byte) bool {
	if len(s) == 0 || len(s) > 256 || !(isAlpha(s[0]) || s[0] == '_') {
		return false
	}
	for _, c := range s[1:] {
		if !(isAlnum(c) || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// isContentType is ^[a-zA-Z][a-zA-Z0-9.+_-]*/[a-zA-Z][a-zA-Z0-9.+_-]*$.
func isContentType(s []byte) bool {
	part := func(p []byte) bool {
		if len(p) == 0 || !isAlpha(p[0]) {
			return false
		}
		for _, c := range p[1:] {
			if !(isAlnum(c) || c == '.' || c == '+' || c == '_' || c == '-') {
				return false
			}
		}
		return true
	}
	for i, c := range s {
		if c == '/' {
			return part(s[:i]) && part(s[i+1:])
		}
	}
	return false
}

// isURI reports whether s is an absolute RFC 3986 URI: a scheme, a colon,
// and only characters a URI may hold (unreserved, reserved, and valid
// percent-escapes). This is what JSON Schema's format:uri asserts.
func isURI(s []byte) bool {
	i := 0
	for i < len(s) && s[i] != ':' {
		c := s[i]
		if !(isAlpha(c) || (i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'))) {
			return false
		}
		i++
	}
	if i == 0 || i == len(s) {
		return false
	}
	for i++; i < len(s); i++ {
		c := s[i]
		switch {
		case isAlnum(c):
		case strings.IndexByte("-._~:/?#[]@!$&'()*+,;=", c) >= 0:
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return false
			}
			i += 2
		default:
			return false
		}
	}
	return true
}

// uniqueSet detects repeated strings in a list: a short list is searched,
// a long one hashed, so that hostile lists cost linear time. The strings
// added must stay unchanged while the set is in use (they are slices of
// the payload being checked, which the short list keeps without copying).
type uniqueSet struct {
	list [16][]byte
	n    int // list[:n] is in use
	set  map[string]struct{}
}

// add adds s and reports whether it was new.
func (u *uniqueSet) add(s []byte) bool {
	if u.set != nil {
		if _, dup := u.set[string(s)]; dup {
			return false
		}
		u.set[string(s)] = struct{}{}
		return true
	}
	for _, p := range u.list[:u.n] {
		if string(p) == string(s) {
			return false
		}
	}
	if u.n < len(u.list) {
		u.list[u.n] = s
		u.n++
		return true
	}
	u.set = make(map[string]struct{}, 64)
	for _, p := range u.list {
		u.set[string(p)] = struct{}{}
	}
	u.set[string(s)] = struct{}{}
	return true
}

func oneOf(s []byte, values ...string) bool {
	for _, v := range values {
		if string(s) == v {
			return true
		}
	}
	return false
}

// clip quotes s for a message, shortened to 60 characters.
func clip(s string) string {
	if utf8.RuneCountInString(s) > 60 {
		r := []rune(s)
		return strconv.Quote(string(r[:57])) + "…"
	}
	return strconv.Quote(s)
}

func clipb(b []byte) string { return clip(string(b)) }

// describe renders raw value r for a message: strings quoted and clipped,
// other values by kind (numbers and literals as written).
func describe(r payload.Value) string {
	if len(r) == 0 {
		return "absent"
	}
	switch r[0] {
	case '"':
		s, _ := r.Text()
		return clipb(s)
	case '{', '[':
		return jsonKind(r)
	}
	if len(r) > 60 {
		return string(r[:57]) + "…"
	}
	return string(r)
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = clip(n)
	}
	return strings.Join(q, ", ")
}
