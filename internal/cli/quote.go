package cli

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Quote returns a file name as messages show it: as it is when each of
// its characters is printable, else quoted as strconv.Quote quotes
// ("run\x1b[2J.aaep"), so that a control character in a name can neither
// act on a terminal nor pass for the message's own text (a line break
// that starts a forged line).
func Quote(name string) string {
	if printable(name) {
		return name
	}
	return strconv.Quote(name)
}

// printable reports whether every character of s is printable (a space
// included, a tab or line break not) and s is valid UTF-8.
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return printableRunes(s[i:], false)
		}
	}
	return true
}

// printableRunes is printable from the first byte that is not printable
// ASCII; lines says line breaks and tabs are text.
func printableRunes(s string, lines bool) bool {
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError && size <= 1 || !strconv.IsPrint(r) && !(lines && (r == '\n' || r == '\t')) {
			return false
		}
		s = s[size:]
	}
	return true
}

// Escape returns a message with each character that is not printable,
// but for line breaks and tabs, written as Go writes it in a string
// literal (\x1b, \r, \u200e), and each byte that is not UTF-8 as \xNN.
func Escape(msg string) string {
	if printableText(msg) {
		return msg
	}
	var b strings.Builder
	for len(msg) > 0 {
		r, size := utf8.DecodeRuneInString(msg)
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, msg[0])
		case r == '\n' || r == '\t' || strconv.IsPrint(r):
			b.WriteString(msg[:size])
		default:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
		msg = msg[size:]
	}
	return b.String()
}

// printableText is printable for text of several lines.
func printableText(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\n' && c != '\t') || c >= 0x7f {
			return printableRunes(s[i:], true)
		}
	}
	return true
}

// MessageWriter is where a command writes its messages (standard error):
// the names among args that are not printable are written quoted (Quote)
// wherever a message holds them, and any other character that is not
// printable escaped (Escape), so that every message that names a file
// shows a name with control characters quoted, whoever formatted it (a
// message of Go's os package: stat "a\nb": no such file or directory).
// A progress display, which draws with control characters, writes to
// Raw(w).
func MessageWriter(w io.Writer, args []string) io.Writer {
	m := &messageWriter{w: w}
	seen := map[string]bool{}
	for _, a := range args {
		if _, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "-") {
			a = v // --output=NAME
		}
		if a != "" && !printable(a) && !seen[a] {
			seen[a] = true
			m.names = append(m.names, a)
		}
	}
	// The longest first: a name that holds another is replaced whole.
	sort.Slice(m.names, func(i, j int) bool { return len(m.names[i]) > len(m.names[j]) })
	return m
}

type messageWriter struct {
	w     io.Writer
	names []string
}

func (m *messageWriter) Write(p []byte) (int, error) {
	s := string(p)
	if printableText(s) && !m.holdsName(s) {
		return m.w.Write(p)
	}
	// Each name is cut out first, quoted, and the rest escaped.
	if _, err := io.WriteString(m.w, quoteNames(s, m.names)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// holdsName reports whether s holds one of the names (one whose only
// characters that are not printable are line breaks or tabs passes for
// text).
func (m *messageWriter) holdsName(s string) bool {
	for _, n := range m.names {
		if strings.Contains(s, n) {
			return true
		}
	}
	return false
}

// quoteNames quotes the names in s and escapes the rest.
func quoteNames(s string, names []string) string {
	for _, n := range names {
		if i := strings.Index(s, n); i >= 0 {
			return quoteNames(s[:i], names) + Quote(n) + quoteNames(s[i+len(n):], names)
		}
	}
	return Escape(s)
}

// Raw returns the writer a MessageWriter writes to (w itself when it is
// none): a progress display's, whose control characters are its own.
func Raw(w io.Writer) io.Writer {
	if m, ok := w.(*messageWriter); ok {
		return m.w
	}
	return w
}
