package recdiff

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// TextOptions shape the text form.
type TextOptions struct {
	// Color marks removals red, additions green, hunk headers cyan and
	// session headers bold (ANSI escapes: for a terminal).
	Color bool
	// Stat prints one line per session that differs and the totals, not
	// the hunks.
	Stat bool
}

const (
	ansiBold  = "\x1b[1m"
	ansiRed   = "\x1b[31m"
	ansiGreen = "\x1b[32m"
	ansiCyan  = "\x1b[36m"
	ansiReset = "\x1b[0m"
)

type textWriter struct {
	w     *bufio.Writer
	color bool
}

func (t *textWriter) line(color, s string) {
	if t.color && color != "" {
		t.w.WriteString(color + s + ansiReset + "\n")
		return
	}
	t.w.WriteString(s + "\n")
}

func (t *textWriter) op(op, s string) {
	switch op {
	case "-":
		t.line(ansiRed, "-"+s)
	case "+":
		t.line(ansiGreen, "+"+s)
	default:
		t.line("", op+s)
	}
}

// WriteText writes the comparison as people read it, in the shape of git
// diff: for each session that differs, a header line with its one-line
// summary, then "--- a" and "+++ b" and a hunk per part that differs
// (events, tool calls, asks, output, final state, findings, timing); then
// the sessions on one side only, and a line of totals.
func (r *Result) WriteText(w io.Writer, opts TextOptions) error {
	t := &textWriter{w: bufio.NewWriter(w), color: opts.Color}
	for _, d := range r.Sessions {
		if d.Status == Same {
			continue
		}
		if opts.Stat {
			t.line("", d.statLine())
			continue
		}
		t.session(d)
	}
	if opts.Stat && !r.Same() {
		t.line("", "")
	}
	for _, why := range r.Incomplete {
		t.line("", "INCOMPLETE: "+why)
	}
	t.line("", r.totals())
	return t.w.Flush()
}

// name is how lines name a session: its id (or "(stream)"), its stream.
func name(s *SessionRef) string {
	n := s.Session
	if n == "" {
		n = "(no session)"
	}
	if s.Stream != "" {
		n += " [stream " + s.Stream + "]"
	}
	return n
}

func (d *SessionDiff) title() string {
	switch d.Status {
	case OnlyA:
		return "only in a: " + name(d.A) + startOf2(d.A, nil)
	case OnlyB:
		return "only in b: " + name(d.B) + startOf2(nil, d.B)
	}
	s := name(d.A)
	if name(d.B) != s {
		s += " ↔ " + name(d.B)
	}
	return s + startOf2(d.A, d.B) + ": " + d.Summary()
}

// startOf2 quotes what started the session(s).
func startOf2(a, b *SessionRef) string {
	switch {
	case a != nil && b != nil && a.Start != b.Start:
		return " " + quote(a.Start) + " → " + quote(b.Start)
	case a != nil && a.Start != "":
		return " " + quote(a.Start)
	case b != nil && b.Start != "":
		return " " + quote(b.Start)
	}
	return ""
}

// statLine is a session's line of --stat.
func (d *SessionDiff) statLine() string {
	mark := "M"
	switch d.Status {
	case OnlyA:
		mark = "D"
	case OnlyB:
		mark = "A"
	}
	s := mark + " " + d.title()
	if d.Status == Different {
		s += fmt.Sprintf(" (%d → %d events)", d.Events[0], d.Events[1])
	}
	return s
}

func (t *textWriter) session(d *SessionDiff) {
	t.line(ansiBold, "diff --aaep "+d.title())
	switch d.Status {
	case OnlyA:
		t.line(ansiBold, "--- "+side("a", d.A.Recording)+" "+name(d.A))
		t.line(ansiBold, "+++ /dev/null")
		t.line(ansiCyan, fmt.Sprintf("@@ events -1,%d +0,0 @@", d.Events[0]))
		return
	case OnlyB:
		t.line(ansiBold, "--- /dev/null")
		t.line(ansiBold, "+++ "+side("b", d.B.Recording)+" "+name(d.B))
		t.line(ansiCyan, fmt.Sprintf("@@ events -0,0 +1,%d @@", d.Events[1]))
		return
	}
	t.line(ansiBold, "--- "+side("a", d.A.Recording)+" "+name(d.A))
	t.line(ansiBold, "+++ "+side("b", d.B.Recording)+" "+name(d.B))
	if d.MatchedBy != "" && d.MatchedBy != MatchID && d.MatchedBy != "stream" {
		t.line("", "matched by "+d.MatchedBy)
	}
	for _, h := range d.Hunks {
		t.line(ansiCyan, fmt.Sprintf("@@ events -%s +%s @@", span(h.AStart, h.ALen), span(h.BStart, h.BLen)))
		for _, l := range h.Lines {
			t.op(l.Op, l.Text)
			for _, c := range l.Changes {
				t.line("", "~    "+c)
			}
		}
	}
	writeChanges(t, "tool calls", d.Tools)
	writeChanges(t, "confirmations and clarifications", d.Asks)
	for _, h := range d.Output {
		t.line(ansiCyan, fmt.Sprintf("@@ output -%s +%s @@", span(h.AStart, h.ALen), span(h.BStart, h.BLen)))
		for _, l := range h.Lines {
			t.op(l.Op, l.Text)
		}
	}
	if d.Final != nil {
		t.line(ansiCyan, "@@ final state @@")
		t.op("-", d.Final[0].String())
		t.op("+", d.Final[1].String())
	}
	if len(d.Findings) > 0 {
		t.line(ansiCyan, "@@ findings @@")
		for _, f := range d.Findings {
			switch {
			case f.A == 0:
				t.op("+", fmt.Sprintf("%s %s ×%d (new in b)", f.Level, f.Rule, f.B))
			case f.B == 0:
				t.op("-", fmt.Sprintf("%s %s ×%d (fixed in b)", f.Level, f.Rule, f.A))
			default:
				t.op("-", fmt.Sprintf("%s %s ×%d", f.Level, f.Rule, f.A))
				t.op("+", fmt.Sprintf("%s %s ×%d", f.Level, f.Rule, f.B))
			}
		}
	}
	if d.timingOver() {
		t.line(ansiCyan, "@@ timing @@")
		for _, tm := range d.Timing {
			if !tm.Over {
				continue
			}
			t.op("-", tm.Name+" "+dur(tm.A))
			t.op("+", tm.Name+" "+dur(tm.B)+" "+pct(tm.A, tm.B))
		}
	}
}

// writeChanges writes a part of tool calls or asks that changed.
func writeChanges[T any, P interface {
	*T
	String() string
}](t *textWriter, part string, changes []Change[T]) {
	if len(changes) == 0 {
		return
	}
	t.line(ansiCyan, "@@ "+part+" @@")
	for _, c := range changes {
		if c.A != nil {
			t.op("-", P(c.A).String())
		}
		if c.B != nil {
			s := P(c.B).String()
			if c.Op == "~" {
				s += " [" + strings.Join(c.Changed, ", ") + " changed]"
			}
			t.op("+", s)
		}
	}
}

// side names a recording as git names a file: "a/" and a relative name,
// or an absolute name or URL as it is.
func side(prefix, name string) string {
	if strings.HasPrefix(name, "/") || strings.Contains(name, "://") {
		return name
	}
	return prefix + "/" + name
}

// span is a hunk's range as diff -u writes it ("3,4"; a range of one
// line is its start alone).
func span(start, n int) string {
	if n == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

func dur(d time.Duration) string {
	return fmt.Sprintf("%.3fs", d.Seconds())
}

func pct(a, b time.Duration) string {
	if a == 0 {
		return "(was 0)"
	}
	return fmt.Sprintf("(%+.0f%%)", 100*float64(b-a)/float64(a))
}

// totals is the last line: how many sessions compared and how they went.
func (r *Result) totals() string {
	c := r.Counts()
	n := r.Total()
	verdict := "same"
	if !r.Same() {
		verdict = "different"
	}
	if len(r.Incomplete) > 0 {
		verdict = "INCOMPLETE"
	}
	line := fmt.Sprintf("%s: %d sessions: %d same, %d different, %d only in a, %d only in b", verdict, n, c[Same], c[Different], c[OnlyA], c[OnlyB])
	// The streams' messages of no session (a subscription handshake) are
	// no session: said apart.
	if sc := r.streamCounts; len(sc) > 0 {
		switch {
		case sc[Different]+sc[OnlyA]+sc[OnlyB] == 0:
			line += "; messages of no session: same"
		default:
			line += fmt.Sprintf("; messages of no session: %d same, %d different, %d only in a, %d only in b", sc[Same], sc[Different], sc[OnlyA], sc[OnlyB])
		}
	}
	return line
}

// WriteJSON writes the comparison as one JSON document of schema
// SchemaVersion: the sides, the options, the sessions kept (every one, same
// ones too with status "same", when compared with Options.KeepSame) and the
// counts of all.
func (r *Result) WriteJSON(w io.Writer) error {
	// The document around the sessions is encoded whole, with a marker
	// where they go; the sessions are then written one by one, so that
	// a report of many sessions is not made twice in memory.
	const marker = `"\u0000sessions"`
	doc := struct {
		SchemaVersion int             `json:"schema_version"`
		A             string          `json:"a"`
		B             string          `json:"b"`
		Same          bool            `json:"same"`
		Complete      bool            `json:"complete"`
		Incomplete    []string        `json:"incomplete,omitempty"`
		Options       jsonOptions     `json:"options"`
		Counts        map[Status]int  `json:"counts"`
		StreamCounts  map[Status]int  `json:"stream_counts,omitempty"`
		Sessions      json.RawMessage `json:"sessions"`
	}{SchemaVersion, r.A, r.B, r.Same(), len(r.Incomplete) == 0, r.Incomplete, r.jsonOptions(), r.Counts(), r.StreamCounts(), json.RawMessage(marker)}
	var head bytes.Buffer
	enc := json.NewEncoder(&head)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return err
	}
	before, after, ok := bytes.Cut(head.Bytes(), []byte(marker))
	if !ok {
		return fmt.Errorf("encoding the comparison: no place for the sessions")
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.Write(before)
	if len(r.Sessions) == 0 {
		bw.WriteString("[]")
	} else {
		bw.WriteString("[\n    ")
		var buf bytes.Buffer
		senc := json.NewEncoder(&buf)
		senc.SetIndent("    ", "  ")
		senc.SetEscapeHTML(false)
		for i, d := range r.Sessions {
			if i > 0 {
				bw.WriteString(",\n    ")
			}
			buf.Reset()
			if err := senc.Encode(d); err != nil {
				return err
			}
			bw.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
		}
		bw.WriteString("\n  ]")
	}
	bw.Write(after)
	return bw.Flush()
}

type jsonOptions struct {
	Match         string   `json:"match"`
	Ignore        []string `json:"ignore"`
	Keep          []string `json:"keep,omitempty"`
	TimeTolerance *float64 `json:"time_tolerance"`
	TimeFloorNS   int64    `json:"time_floor_ns"`
}

func (r *Result) jsonOptions() jsonOptions {
	o := r.Options
	j := jsonOptions{Match: o.Match, Keep: o.Keep, TimeFloorNS: int64(o.TimeFloor)}
	if j.Match == "" {
		j.Match = "auto"
	}
	if !o.NoDefaultIgnore {
		for _, n := range DefaultIgnore {
			j.Ignore = append(j.Ignore, "**."+n)
		}
	}
	j.Ignore = append(j.Ignore, o.Ignore...)
	if o.TimeTolerance >= 0 {
		tol := o.TimeTolerance
		j.TimeTolerance = &tol
	}
	return j
}
