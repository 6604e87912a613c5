package visualize_test

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	goldenfile "github.com/aaep-tools/aaepkit/internal/golden"
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/visualize"
	"github.com/aaep-tools/aaepkit/visualize/internal/fixture"
)

// hostile returns a session whose names and details try to break the DOT
// text, the SVG or the layout.
func hostile() []fixture.Event {
	nasty := "q\"uote \\back\\slash\nnew line \\N \\G \\l &nbsp; &amp; <b>tag</b> ]; } \x00\x1b ]] \xff\xfe " + strings.Repeat("long ", 40)
	return []fixture.Event{
		{Step: &protocol.Step{Protocol: "aaep", Session: nasty, Index: 0, From: nasty, To: "b\"", Label: nasty, Detail: nasty, Kind: protocol.StepTool}},
		{Finding: &protocol.Finding{Protocol: "aaep", Session: nasty, RuleID: "R\"1", Level: protocol.Must, Index: 0, Short: nasty, Message: nasty}},
		{Step: &protocol.Step{Protocol: "aaep", Session: nasty, Index: 1, From: "b\"", To: "b\"", Label: "<loop>", Detail: nasty, Kind: protocol.StepOutput}},
		{Step: &protocol.Step{Protocol: "aaep", Session: nasty, Index: 2, From: "b\"", To: "b\"", Label: "&loop;", Detail: "x", Kind: protocol.StepReply}},
		{Finding: &protocol.Finding{Protocol: "aaep", Session: nasty, RuleID: "R<2>", Level: protocol.Should, Index: 2, Short: "<&>"}},
		{Finding: &protocol.Finding{Protocol: "aaep", Session: nasty, RuleID: "R&3", Level: protocol.Must, Index: -1, Short: nasty}},
		{Done: &protocol.SessionSummary{Protocol: "aaep", Session: nasty, Messages: 3, State: nasty, Complete: false}},
	}
}

// goldenCases are the drawings compared with testdata/*.dot (and rendered
// by the render package's tests).
func goldenCases() []struct {
	name   string
	events []fixture.Event
	col    visualize.CollectorOptions
	opts   visualize.DOTOptions
} {
	machines := fixture.Machines()
	return []struct {
		name   string
		events []fixture.Event
		col    visualize.CollectorOptions
		opts   visualize.DOTOptions
	}{
		{"sessions", fixture.Sessions(), visualize.CollectorOptions{}, visualize.DOTOptions{Title: "fixture.aaep", Machines: machines}},
		{"broken", fixture.Sessions(), visualize.CollectorOptions{Session: "sess_broken"}, visualize.DOTOptions{Title: "fixture.aaep", Machines: machines}},
		{"plain", fixture.Sessions(), visualize.CollectorOptions{}, visualize.DOTOptions{HideMachine: true, NoLegend: true}},
		{"long", fixture.Long("sess_long", 10_000), visualize.CollectorOptions{}, visualize.DOTOptions{Title: "long.aaep", Machines: machines}},
		{"empty", nil, visualize.CollectorOptions{}, visualize.DOTOptions{Title: "empty.jsonl"}},
		{"nostep", []fixture.Event{
			{Finding: &protocol.Finding{Protocol: protocol.StreamProtocol, RuleID: "STREAM-NOT-JSON", Level: protocol.Must, Index: 0, Short: "not JSON", Message: "message 0 is not a JSON object"}},
			{Finding: &protocol.Finding{Protocol: "aaep", Session: "sess_env", RuleID: "ENV-EVENT-ID", Level: protocol.Must, Index: 1, Short: "no event_id", Message: "message 1 has no event_id"}},
			{Finding: &protocol.Finding{Protocol: "aaep", Session: "sess_env", RuleID: "SEQ-LIFECYCLE-START", Level: protocol.Must, Index: -1, Short: "never started", Message: "session sess_env never started"}},
		}, visualize.CollectorOptions{}, visualize.DOTOptions{Title: "nostep.jsonl", Machines: machines}},
		{"hostile", hostile(), visualize.CollectorOptions{}, visualize.DOTOptions{Title: "hostile \"title\"\n&x;", Machines: machines}},
	}
}

func TestDOTGolden(t *testing.T) {
	for _, tc := range goldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			c := visualize.NewCollector(tc.col)
			fixture.Feed(tc.events, c.Sink())
			got := visualize.DOT(c.Traces(), tc.opts)
			path := filepath.Join("testdata", tc.name+".dot")
			goldenfile.Check(t, path, got)
			// Deterministic: a second run over fresh traces gives the same bytes.
			c2 := visualize.NewCollector(tc.col)
			fixture.Feed(tc.events, c2.Sink())
			if again := visualize.DOT(c2.Traces(), tc.opts); !bytes.Equal(again, got) {
				t.Errorf("second run differs:\n%s", firstDiff(again, got))
			}
		})
	}
}

func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return "line " + strconv.Itoa(i+1) + ":\n got: " + a + "\nwant: " + b
		}
	}
	return "(no difference)"
}

func dotOf(t *testing.T, events []fixture.Event, col visualize.CollectorOptions, opts visualize.DOTOptions) string {
	t.Helper()
	c := visualize.NewCollector(col)
	fixture.Feed(events, c.Sink())
	return string(visualize.DOT(c.Traces(), opts))
}

// statement returns the DOT statements (lines) that contain s.
func statements(dot, s string) []string {
	var out []string
	for _, l := range strings.Split(dot, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return out
}

func TestDOTShowsViolationsInRed(t *testing.T) {
	dot := dotOf(t, fixture.Sessions(), visualize.CollectorOptions{}, visualize.DOTOptions{Machines: fixture.Machines(), NoLegend: true})
	red := `"#dc2626"`
	tests := []struct {
		rule, short string
		where       string // what statement carries it
	}{
		{"SEQ-TOOL-PAIR", "no preceding tool.invoked", "loop"},
		{"SEQ-STATE-CHAIN", "from_state ≠ previous to_state", "edge"},
		{"ENV-UTF8", "not UTF-8", "note"},
		{"EVT-PROGRESS-PERCENT", "percent above 100", "loop"},
		{"ASP-S03", "PROPOSE not allowed in INITIATED", "loop"},
		{"SEQ-LIFECYCLE-TERMINAL", "no terminal event", "end note"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			st := statements(dot, tt.rule+": "+tt.short)
			if len(st) != 1 {
				t.Fatalf("%d statements show %q, want 1", len(st), tt.rule+": "+tt.short)
			}
			s := st[0]
			switch tt.where {
			case "edge":
				if !strings.Contains(s, "color="+red) || !strings.Contains(s, "fontcolor="+red) || !strings.Contains(s, "->") {
					t.Errorf("edge not red: %s", s)
				}
			case "loop":
				// One loop per state lists its transitions; the row of the
				// violation and the loop itself are red.
				if !regexp.MustCompile(`<font color=`+red+`>[^<]*`+regexp.QuoteMeta(tt.rule)).MatchString(s) || !strings.Contains(s, "color="+red) {
					t.Errorf("loop row not red: %s", s)
				}
			case "note", "end note":
				if !strings.Contains(s, "shape=note") || !strings.Contains(s, "color="+red) {
					t.Errorf("note not red: %s", s)
				}
				if tt.where == "end note" && !strings.Contains(s, "end of session:") {
					t.Errorf("end note without its heading: %s", s)
				}
			}
		})
	}
	// The final state of the broken session carries the end note and is red.
	if st := statements(dot, `label="thinking\n(stream ended here)"`); len(st) != 1 || !strings.Contains(st[0], "color="+red) || !strings.Contains(st[0], "penwidth=3") {
		t.Errorf("final state of sess_broken not bold and red: %v", st)
	}
	// No clean transition is red.
	if st := statements(dot, "8. state.changed +4.400s"); len(st) != 1 || strings.Contains(st[0], red) {
		t.Errorf("clean transition: %v", st)
	}
}

func TestDOTStyles(t *testing.T) {
	dot := dotOf(t, fixture.Sessions(), visualize.CollectorOptions{}, visualize.DOTOptions{Machines: fixture.Machines()})
	tests := []struct {
		name, find string
		want       []string
	}{
		{"synthetic timeout is dashed", "invitation timeout 30s", []string{"style=dashed"}},
		{"tool step is blue", "2. tool.invoked web_search +1.204s", []string{`color="#1d4ed8"`}},
		{"merged steps show count and first", `output.streaming out_1\n×13, first #9 +4.500s`, []string{`"#c2410c"`, "arrowhead=vee"}},
		{"reply has a hollow arrow", "6. confirmation.reply accept +4.200s", []string{`"#15803d"`}},
		{"lifecycle is bold", "22. session.completed +6.000s", []string{"penwidth=2.0"}},
		{"terminal state has a double border", `label="completed\n(session ended here)"`, []string{"peripheries=2", "penwidth=3"}},
		{"error state is a double octagon", `label="FAILED\n(session ended here)"`, []string{"shape=doubleoctagon"}},
		{"initial state is filled blue", `label="started"`, []string{`fillcolor="#dbeafe"`}},
		{"model state not reached is faint and dashed", `label="NEGOTIATING"`, []string{`style="rounded,dashed,filled"`, `color="#c0c4cc"`}},
		{"model transition not taken is dotted", "model transition not taken", []string{"style=dotted"}},
		{"legend", "<b>Legend</b>", []string{"breaks a rule: RULE-ID: reason", "inferred by the checker"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := statements(dot, tt.find)
			if len(st) == 0 {
				t.Fatalf("no statement contains %q", tt.find)
			}
			for _, w := range tt.want {
				if !strings.Contains(st[0], w) {
					t.Errorf("statement lacks %q: %s", w, st[0])
				}
			}
		})
	}
}

// TestDOTQuoting checks the hostile session's DOT text statement by
// statement: every quoted string is closed on its line (no raw newline,
// every quote inside escaped) and no DOT escape comes from the input.
func TestDOTQuoting(t *testing.T) {
	dot := dotOf(t, hostile(), visualize.CollectorOptions{}, visualize.DOTOptions{Title: "t\"\n", Machines: fixture.Machines()})
	for i, l := range strings.Split(strings.TrimSuffix(dot, "\n"), "\n") {
		inQuote, esc := false, false
		for _, r := range l {
			switch {
			case esc:
				esc = false
			case r == '\\':
				esc = true
			case r == '"':
				inQuote = !inQuote
			case r < 0x20 && r != '\t':
				t.Errorf("line %d: control character %q", i+1, r)
			}
		}
		if inQuote {
			t.Errorf("line %d: unterminated quoted string: %s", i+1, l)
		}
		html := strings.Contains(l, "label=<")
		for _, bad := range []string{`\N`, `\G`, `\l &`} {
			// DOT escapes are interpreted in quoted labels (HTML-like
			// labels take backslashes literally).
			if !html && strings.Contains(l, bad) && !strings.Contains(l, `\`+bad) {
				t.Errorf("line %d: %q reaches the DOT text unescaped: %s", i+1, bad, l)
			}
		}
		for _, bad := range []string{"&nbsp;", "&amp;amp;nbsp", "&loop;", "\xff"} {
			if strings.Contains(l, bad) {
				t.Errorf("line %d: %q reaches the DOT text unescaped (or escaped twice): %s", i+1, bad, l)
			}
		}
		if !html {
			continue
		}
		// Inside an HTML-like label, markup from the input must be escaped.
		lab := l[strings.Index(l, "label=<"):]
		lab = lab[:strings.LastIndex(lab, ">>")]
		for _, bad := range []string{"<b>tag", "<loop>", "R<2>"} {
			if strings.Contains(lab, bad) {
				t.Errorf("line %d: %q reaches the DOT text unescaped (or escaped twice): %s", i+1, bad, l)
			}
		}
	}
}

// TestDOTAttributesOnce checks every statement of the golden drawings for an
// attribute given twice (Graphviz silently keeps the last one).
func TestDOTAttributesOnce(t *testing.T) {
	quoted := regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	key := regexp.MustCompile(`\b([a-z]+)=`)
	for _, tc := range goldenCases() {
		dot := dotOf(t, tc.events, tc.col, tc.opts)
		for i, l := range strings.Split(dot, "\n") {
			if j := strings.Index(l, "label=<"); j >= 0 {
				k := strings.LastIndex(l, ">>")
				l = l[:j] + "label=HTML" + l[k+2:]
			}
			l = quoted.ReplaceAllString(l, `""`)
			seen := map[string]bool{}
			for _, m := range key.FindAllStringSubmatch(l, -1) {
				if seen[m[1]] {
					t.Errorf("%s line %d: %s given twice: %s", tc.name, i+1, m[1], l)
				}
				seen[m[1]] = true
			}
		}
	}
}
