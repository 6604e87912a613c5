package visualize

import (
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/aaep-tools/aaepkit/protocol"
)

// Colours of the drawing. The legend shows each of them.
const (
	colorState     = "#374151" // state changes and lifecycle steps
	colorTool      = "#1d4ed8" // tool invoked / completed
	colorAsk       = "#7c3aed" // awaiting confirmation / clarification
	colorReply     = "#15803d" // a subscriber's reply
	colorOutput    = "#c2410c" // streaming output
	colorHandoff   = "#92400e" // handoff
	colorQuiet     = "#6b7280" // progress, handshake, other
	colorViolation = "#dc2626" // a step or state that breaks a rule
	colorInfo      = "#b45309" // an informative finding
	colorFaint     = "#c0c4cc" // model states and transitions the session did not use

	fillInitial  = "#dbeafe"
	fillTerminal = "#dcfce7"
	fillError    = "#fee2e2"
	fillNote     = "#fef2f2"
	fillInfoNote = "#fffbeb"

	fontName = "Verdana"
)

// kindStyle is how steps of one kind are drawn.
type kindStyle struct {
	color     string
	arrowhead string
	bold      bool
	// legend describes the kinds sharing this style.
	legend string
}

var kindStyles = map[protocol.StepKind]kindStyle{
	protocol.StepLifecycle:     {color: colorState, arrowhead: "normal", bold: true, legend: "session lifecycle (bold)"},
	protocol.StepState:         {color: colorState, arrowhead: "normal", legend: "state change"},
	protocol.StepTool:          {color: colorTool, arrowhead: "normal", legend: "tool invoked / completed"},
	protocol.StepConfirmation:  {color: colorAsk, arrowhead: "normal", legend: "awaiting confirmation / clarification"},
	protocol.StepClarification: {color: colorAsk, arrowhead: "normal", legend: "awaiting confirmation / clarification"},
	protocol.StepReply:         {color: colorReply, arrowhead: "empty", legend: "subscriber's reply (hollow arrow)"},
	protocol.StepOutput:        {color: colorOutput, arrowhead: "vee", legend: "streaming output (open arrow)"},
	protocol.StepHandoff:       {color: colorHandoff, arrowhead: "normal", legend: "handoff"},
	protocol.StepProgress:      {color: colorQuiet, arrowhead: "normal", legend: "progress, handshake, other"},
	protocol.StepHandshake:     {color: colorQuiet, arrowhead: "normal", legend: "progress, handshake, other"},
	protocol.StepTimeout:       {color: colorQuiet, arrowhead: "normal", legend: "progress, handshake, other"},
	protocol.StepOther:         {color: colorQuiet, arrowhead: "normal", legend: "progress, handshake, other"},
}

func styleOf(k protocol.StepKind) kindStyle {
	if s, ok := kindStyles[k]; ok {
		return s
	}
	return kindStyles[protocol.StepOther]
}

// Text limits for labels taken from the input.
const (
	maxLabelRunes  = 40
	maxDetailRunes = 32
	maxStateRunes  = 32
	maxShortRunes  = 48
	maxTitleRunes  = 80
	maxTipRunes    = 400
)

// clean makes text from the input safe and short for a label: trunc, then
// '&' written as an entity (Graphviz passes entities through to SVG, so a
// bare "&name;" from the input would make the SVG invalid). Clean each piece
// of text once: cleaning twice would escape the '&' twice.
func clean(s string, max int) string {
	s = trunc(s, max)
	if strings.IndexByte(s, '&') < 0 {
		return s
	}
	return strings.ReplaceAll(s, "&", "&amp;")
}

// trunc makes text from the input valid UTF-8 without control characters,
// at most max runes long ("…" marks a cut).
func trunc(s string, max int) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n == max {
			b.WriteString("…")
			break
		}
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			r = ' '
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// quote writes s as a DOT double-quoted string. s must already be clean or
// built by this package: backslashes and quotes are escaped, so DOT escape
// sequences cannot come from the input.
func quote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\', '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// label renders ls as a quoted DOT label, each line ending with sep ("\n"
// centred, "\l" left-justified).
func label(ls []string, sep string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i, l := range ls {
		// Left-justified labels end every line with \l; centred ones only
		// separate lines.
		q := quote(l)
		b.WriteString(q[1 : len(q)-1])
		if sep == `\l` || i < len(ls)-1 {
			b.WriteString(sep)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// offset renders a duration as seconds with millisecond precision.
func offset(d time.Duration) string { return protocol.FormatOffset(d) }

// count renders n with thousands separators: 10,000.
func count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// plural returns "1 message" or "3 messages".
func plural(n int64, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return count(n) + " " + word + "s"
}
