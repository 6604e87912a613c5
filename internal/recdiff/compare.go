package recdiff

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aaep-tools/aaepkit/payload"
)

// Status says how a session of A compares with its match in B.
type Status string

// Statuses.
const (
	Same      Status = "same"
	Different Status = "different"
	OnlyA     Status = "only_a"
	OnlyB     Status = "only_b"
)

// Line is one line of a hunk: ' ' in both, '-' only in A, '+' only in B.
type Line struct {
	Op   string `json:"op"`
	Text string `json:"text"`
	// Changes lists, for an event whose line is the same on both sides but
	// whose members differ, each member that differs: "path: a → b" (on
	// the '+' line only).
	Changes []string `json:"changes,omitempty"`
}

// Hunk is a run of changes with the lines around them, as diff -u shows:
// A's lines from AStart (1-based) for ALen, B's from BStart for BLen.
type Hunk struct {
	AStart int    `json:"a_start"`
	ALen   int    `json:"a_len"`
	BStart int    `json:"b_start"`
	BLen   int    `json:"b_len"`
	Lines  []Line `json:"lines"`
}

// Change is a tool call, confirmation or clarification added in B ("+"),
// removed from A ("-") or changed ("~": Changed names what changed).
type Change[T any] struct {
	Op      string   `json:"op"`
	A       *T       `json:"a,omitempty"`
	B       *T       `json:"b,omitempty"`
	Changed []string `json:"changed,omitempty"`
}

// FindingChange is a rule whose findings in the session differ in number.
type FindingChange struct {
	Rule  string `json:"rule"`
	Level string `json:"level"`
	A     int    `json:"a"`
	B     int    `json:"b"`
}

// Timing is one measure of time compared with the tolerance.
type Timing struct {
	// Name is "duration", "first_output" or "waiting".
	Name string        `json:"name"`
	A    time.Duration `json:"a_ns"`
	B    time.Duration `json:"b_ns"`
	// Over is set when the difference is beyond the tolerance.
	Over bool `json:"over"`
}

// State is a session's final state.
type State struct {
	State string `json:"state"`
	// Complete is false when the recording ended before the session did.
	Complete bool `json:"complete"`
}

func (s State) String() string {
	if !s.Complete {
		return s.State + " (unfinished)"
	}
	return s.State
}

// SessionDiff is how one session of A compares with its match in B (or
// that it has none).
type SessionDiff struct {
	Status Status `json:"status"`
	// MatchedBy is how the two were matched: "id", "order", "start" (what
	// started them), a member's name (--match FIELD), or "stream" for the
	// messages of a stream that belong to no session.
	MatchedBy string      `json:"matched_by,omitempty"`
	A         *SessionRef `json:"a,omitempty"`
	B         *SessionRef `json:"b,omitempty"`
	// Events counts the events (chunks of one output as one) on each side.
	Events [2]int `json:"events"`
	// Added, Removed and Changed count the event lines of the edit script.
	Added   int `json:"added"`
	Removed int `json:"removed"`
	Changed int `json:"changed"`
	// Hunks are the edit script of the sequences of events.
	Hunks    []Hunk             `json:"hunks,omitempty"`
	Tools    []Change[ToolCall] `json:"tool_calls,omitempty"`
	Asks     []Change[Ask]      `json:"asks,omitempty"`
	Output   []Hunk             `json:"output,omitempty"`
	Final    *[2]State          `json:"final_state,omitempty"`
	Findings []FindingChange    `json:"findings,omitempty"`
	Timing   []Timing           `json:"timing,omitempty"`
}

// compare compares two matched sessions.
func compare(a, b *session, by string, opts *Options, p *paths) *SessionDiff {
	// Copies of the refs: the diff outlives the sessions, which must not
	// be kept by it.
	ra, rb := a.ref, b.ref
	d := &SessionDiff{MatchedBy: by, A: &ra, B: &rb, Events: [2]int{len(a.events), len(b.events)}}
	d.events(a, b, p)
	d.Tools = compareTools(a.tools, b.tools)
	d.Asks = compareAsks(a.asks, b.asks)
	d.Output = textHunks(strings.Join(a.outputs, "\n\n"), strings.Join(b.outputs, "\n\n"))
	sa, sb := State{a.state, a.complete}, State{b.state, b.complete}
	if sa != sb {
		d.Final = &[2]State{sa, sb}
	}
	d.Findings = compareFindings(a.findings, b.findings)
	if opts.TimeTolerance >= 0 && !a.pseudo {
		d.Timing = compareTiming(a, b, opts)
	}
	d.Status = Same
	if len(d.Hunks) > 0 || len(d.Tools) > 0 || len(d.Asks) > 0 || len(d.Output) > 0 || d.Final != nil || len(d.Findings) > 0 || d.timingOver() {
		d.Status = Different
	}
	return d
}

func (d *SessionDiff) timingOver() bool {
	for _, t := range d.Timing {
		if t.Over {
			return true
		}
	}
	return false
}

// context is how many unchanged lines a hunk shows around a change.
const contextLines = 3

// events makes the edit script of the event sequences.
func (d *SessionDiff) events(a, b *session, p *paths) {
	if sameEvents(a.events, b.events) {
		return
	}
	var norm *normalizer
	fields := func(s *session, e event) string {
		if norm == nil {
			norm = newNormalizer(p)
		}
		return norm.fields(payload.Decode(s.raw[e.Start:e.End]))
	}
	ops := editScript(len(a.events), len(b.events), func(i, j int) bool { return a.events[i].Line == b.events[j].Line })
	lines := make([]hunkLine, 0, len(ops))
	for _, op := range ops {
		switch op.Kind {
		case ' ':
			ea, eb := a.events[op.A], b.events[op.B]
			if ea.Hash != eb.Hash {
				if changes := fieldDiff(fields(a, ea), fields(b, eb)); len(changes) > 0 {
					d.Changed++
					lines = append(lines,
						hunkLine{Line{Op: "-", Text: ea.Line}, op.A, -1},
						hunkLine{Line{Op: "+", Text: eb.Line, Changes: changes}, -1, op.B})
					continue
				}
			}
			lines = append(lines, hunkLine{Line{Op: " ", Text: ea.Line}, op.A, op.B})
		case '-':
			d.Removed++
			lines = append(lines, hunkLine{Line{Op: "-", Text: a.events[op.A].Line}, op.A, -1})
		case '+':
			d.Added++
			lines = append(lines, hunkLine{Line{Op: "+", Text: b.events[op.B].Line}, -1, op.B})
		}
	}
	d.Hunks = hunks(lines)
}

// sameEvents reports whether two sequences have the same lines and members.
func sameEvents(a, b []event) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Line != b[i].Line || a[i].Hash != b[i].Hash {
			return false
		}
	}
	return true
}

// hunkLine is a line of a script with its positions (-1: not on that side).
type hunkLine struct {
	Line
	a, b int
}

// hunks groups a script's changes with context lines around them.
func hunks(lines []hunkLine) []Hunk {
	var out []Hunk
	n := len(lines)
	for i := 0; i < n; {
		if lines[i].Op == " " {
			i++
			continue
		}
		start := max(0, i-contextLines)
		end := i
		for end < n {
			if lines[end].Op != " " {
				end++
				continue
			}
			// A run of unchanged lines: the hunk goes on if another change
			// comes within twice the context.
			j := end
			for j < n && lines[j].Op == " " {
				j++
			}
			if j == n || j-end > 2*contextLines {
				end = min(n, end+contextLines)
				break
			}
			end = j
		}
		h := Hunk{}
		firstA, firstB := -1, -1
		for _, l := range lines[start:end] {
			h.Lines = append(h.Lines, l.Line)
			if l.a >= 0 {
				h.ALen++
				if firstA < 0 {
					firstA = l.a
				}
			}
			if l.b >= 0 {
				h.BLen++
				if firstB < 0 {
					firstB = l.b
				}
			}
		}
		h.AStart, h.BStart = startOf(firstA, lines[:start], true), startOf(firstB, lines[:start], false)
		out = append(out, h)
		i = end
	}
	return out
}

// startOf is a hunk's 1-based start on one side; for a side with no line
// in the hunk, diff -u gives the line before it (0 at the top).
func startOf(first int, before []hunkLine, sideA bool) int {
	if first >= 0 {
		return first + 1
	}
	for i := len(before) - 1; i >= 0; i-- {
		p := before[i].b
		if sideA {
			p = before[i].a
		}
		if p >= 0 {
			return p + 1
		}
	}
	return 0
}

// textHunks diffs two texts line by line.
func textHunks(a, b string) []Hunk {
	if a == b {
		return nil
	}
	al, bl := splitLines(a), splitLines(b)
	ops := editScript(len(al), len(bl), func(i, j int) bool { return al[i] == bl[j] })
	lines := make([]hunkLine, 0, len(ops))
	for _, op := range ops {
		switch op.Kind {
		case ' ':
			lines = append(lines, hunkLine{Line{Op: " ", Text: al[op.A]}, op.A, op.B})
		case '-':
			lines = append(lines, hunkLine{Line{Op: "-", Text: al[op.A]}, op.A, -1})
		case '+':
			lines = append(lines, hunkLine{Line{Op: "+", Text: bl[op.B]}, -1, op.B})
		}
	}
	return hunks(lines)
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// compareSeq pairs two sequences by key (a minimal edit script over the
// keys) and compares the pairs with differ, which names what differs.
func compareSeq[T any](a, b []*T, key func(*T) string, differ func(x, y *T) []string) []Change[T] {
	var out []Change[T]
	for _, op := range editScript(len(a), len(b), func(i, j int) bool { return key(a[i]) == key(b[j]) }) {
		switch op.Kind {
		case '-':
			out = append(out, Change[T]{Op: "-", A: a[op.A]})
		case '+':
			out = append(out, Change[T]{Op: "+", B: b[op.B]})
		default:
			if changed := differ(a[op.A], b[op.B]); len(changed) > 0 {
				out = append(out, Change[T]{Op: "~", A: a[op.A], B: b[op.B], Changed: changed})
			}
		}
	}
	return out
}

// differences names the members of pairs whose two values differ.
func differences(pairs ...[3]string) []string {
	var out []string
	for _, p := range pairs {
		if p[1] != p[2] {
			out = append(out, p[0])
		}
	}
	return out
}

// compareTools pairs the tool calls of two sessions by name.
func compareTools(a, b []*ToolCall) []Change[ToolCall] {
	return compareSeq(a, b, func(t *ToolCall) string { return t.Name }, func(x, y *ToolCall) []string {
		return differences(
			[3]string{"reversibility", x.Reversibility, y.Reversibility},
			[3]string{"risk", x.Risk, y.Risk},
			[3]string{"args_summary", x.Args, y.Args},
			[3]string{"status", x.Status, y.Status})
	})
}

// compareAsks pairs the confirmations and clarifications of two sessions
// by kind, in order.
func compareAsks(a, b []*Ask) []Change[Ask] {
	return compareSeq(a, b, func(x *Ask) string { return x.Kind }, func(x, y *Ask) []string {
		return differences(
			[3]string{"text", x.Text, y.Text},
			[3]string{"options", strings.Join(x.Options, "\x00"), strings.Join(y.Options, "\x00")},
			[3]string{"default", x.Default, y.Default},
			[3]string{"risk", x.Risk, y.Risk},
			[3]string{"reversibility", x.Reversibility, y.Reversibility},
			[3]string{"decision", x.Decision, y.Decision})
	})
}

// compareFindings lists the rules whose findings differ in number, most
// severe first.
func compareFindings(a, b map[FindingKey]int) []FindingChange {
	var out []FindingChange
	seen := map[FindingKey]bool{}
	for _, m := range []map[FindingKey]int{a, b} {
		for k := range m {
			if seen[k] {
				continue
			}
			seen[k] = true
			if a[k] != b[k] {
				out = append(out, FindingChange{Rule: k.Rule, Level: k.Level.String(), A: a[k], B: b[k]})
			}
		}
	}
	slices.SortFunc(out, func(x, y FindingChange) int {
		return cmp.Or(cmp.Compare(levelRank(y.Level), levelRank(x.Level)), cmp.Compare(x.Rule, y.Rule))
	})
	return out
}

func levelRank(l string) int {
	switch l {
	case "MUST":
		return 3
	case "SHOULD":
		return 2
	}
	return 1
}

// compareTiming compares the session's duration, time to first output and
// time waiting for the user; a difference is over the tolerance when it is
// more than TimeTolerance of A's value and more than TimeFloor.
func compareTiming(a, b *session, opts *Options) []Timing {
	over := func(x, y time.Duration) bool {
		diff := y - x
		if diff < 0 {
			diff = -diff
		}
		return diff > opts.TimeFloor && float64(diff) > opts.TimeTolerance*float64(x)
	}
	out := []Timing{{Name: "duration", A: a.last - a.first, B: b.last - b.first}}
	if a.hasOutput || b.hasOutput {
		out = append(out, Timing{Name: "first_output", A: a.firstOutput, B: b.firstOutput})
	}
	if len(a.asks) > 0 || len(b.asks) > 0 {
		out = append(out, Timing{Name: "waiting", A: a.waiting, B: b.waiting})
	}
	for i := range out {
		out[i].Over = over(out[i].A, out[i].B)
	}
	return out
}

// only describes a session with no match.
func only(s *session) *SessionDiff {
	ref := s.ref
	d := &SessionDiff{Status: OnlyA, Events: [2]int{len(s.events), 0}}
	if s.side == 0 {
		d.A = &ref
	} else {
		d.Status, d.B, d.Events = OnlyB, &ref, [2]int{0, len(s.events)}
	}
	return d
}

// Summary is the one line a session gets: what differs, counted.
func (d *SessionDiff) Summary() string {
	var parts []string
	if d.Added+d.Removed+d.Changed > 0 {
		s := fmt.Sprintf("events +%d -%d", d.Added, d.Removed)
		if d.Changed > 0 {
			s += fmt.Sprintf(" ~%d", d.Changed)
		}
		parts = append(parts, s)
	}
	if n := len(d.Tools); n > 0 {
		parts = append(parts, plural(n, "tool call"))
	}
	if n := len(d.Asks); n > 0 {
		parts = append(parts, plural(n, "ask"))
	}
	if len(d.Output) > 0 {
		parts = append(parts, "output")
	}
	if d.Final != nil {
		parts = append(parts, "final state")
	}
	if len(d.Findings) > 0 {
		var newB, fixed int
		for _, f := range d.Findings {
			if f.B > f.A {
				newB += f.B - f.A
			} else {
				fixed += f.A - f.B
			}
		}
		parts = append(parts, fmt.Sprintf("findings +%d -%d", newB, fixed))
	}
	for _, t := range d.Timing {
		if t.Over {
			parts = append(parts, "timing")
			break
		}
	}
	return strings.Join(parts, ", ")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
