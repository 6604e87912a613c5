package aaep

// Which confirmation does a tool invocation carry out? A confirmation
// names its action in the fields it has (§4.4.1): the action text, and in
// extra_context (or, though ENV-FORBIDDEN-FIELDS reports it there, at the
// top level) the tool and the tool_call_id it is about. The checker matches
// an invocation to the confirmation that names it, strongest evidence
// first: the same tool_call_id, then the same tool, then the action text
// naming the tool (a word of the tool's name, four letters or more, is a
// word of the text: "transfer_funds" and "Transfer $500"). Only when no
// confirmation names the invocation does it fall back to order, and only
// among confirmations that do not name another tool or call. Every
// finding says which way it matched.

import (
	"slices"
	"strings"
	"unicode"
)

// matchHow is how an invocation was matched to a confirmation.
type matchHow uint8

const (
	matchNone  matchHow = iota // the confirmation names nothing this invocation has
	matchOther                 // it names another tool or call: never this invocation
	matchText                  // its action text names a word of the tool's name
	matchName                  // its action text spells the tool's name
	matchTool                  // it names the tool
	matchCall                  // it names the tool_call_id
	matchOrder                 // nothing names the invocation: taken by order
)

// String says how, for findings.
func (h matchHow) String() string {
	switch h {
	case matchCall:
		return "matched by the tool_call_id the confirmation names"
	case matchTool:
		return "matched by the tool the confirmation names"
	case matchText:
		return "matched by the confirmation's action text, which names the tool"
	case matchName:
		return "matched by the confirmation's action text, which spells the tool's name"
	case matchOrder:
		return "no confirmation names this tool, so it was matched by order"
	}
	return ""
}

// naming is what a confirmation names about its action.
type naming struct {
	tool, call string
	words      map[string]bool // the action text's words, lower case
	text       []string        // the same words in order
}

// namesOf reads what confirmation ev names.
func namesOf(ev *Event) naming {
	var n naming
	n.tool, _ = ev.Str("tool")
	n.call, _ = ev.Str("tool_call_id")
	if ctx, ok := ev.Object("extra_context"); ok {
		for _, k := range []string{"tool", "tool_name"} {
			if v, ok := ctx[k].Str(); ok && n.tool == "" {
				n.tool = v
			}
		}
		for _, k := range []string{"tool_call_id", "call_id"} {
			if v, ok := ctx[k].Str(); ok && n.call == "" {
				n.call = v
			}
		}
	}
	if action, ok := ev.Str("action"); ok {
		n.text = words(action)
		for _, w := range n.text {
			if n.words == nil {
				n.words = map[string]bool{}
			}
			n.words[w] = true
		}
	}
	return n
}

// explicit reports whether the confirmation names a tool or a call.
// match says how strongly the confirmation names an invocation of tool
// with tool_call_id id.
func (n *naming) match(tool, id string) matchHow {
	switch {
	case n.call != "" && id != "" && n.call == id:
		return matchCall
	case n.call != "" && id != "":
		return matchOther
	case n.tool != "" && n.tool == tool:
		return matchTool
	case n.tool != "":
		return matchOther
	}
	tw := words(tool)
	if spells(n.text, tw) {
		return matchName
	}
	for _, w := range tw {
		if len(w) >= 4 && (n.words[w] || n.words[w+"s"] || n.words[w+"es"]) {
			return matchText
		}
	}
	return matchNone
}

// spells reports whether the words of a tool's name (tool) follow one
// another in text: "Call send_invoice for ACME" spells send_invoice, "Send
// the invoice" does not.
func spells(text, tool []string) bool {
	if len(tool) == 0 {
		return false
	}
	for i := 0; i+len(tool) <= len(text); i++ {
		if slices.Equal(text[i:i+len(tool)], tool) {
			return true
		}
	}
	return false
}

// words splits s into lower-case words at anything but letters and digits
// and at lower-to-upper case changes ("sendEmail": send, email).
func words(s string) []string {
	var out []string
	var b strings.Builder
	prevLower := false
	flush := func() {
		if b.Len() > 0 {
			out = append(out, b.String())
			b.Reset()
		}
	}
	for _, r := range s {
		switch {
		case unicode.IsUpper(r):
			if prevLower {
				flush()
			}
			b.WriteRune(unicode.ToLower(r))
			prevLower = false
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
			prevLower = true
		default:
			flush()
			prevLower = false
		}
	}
	flush()
	return out
}
