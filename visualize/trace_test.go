package visualize_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/visualize"
	"github.com/aaep-tools/aaepkit/visualize/internal/fixture"
)

func step(index int64, from, to, label, detail string, kind protocol.StepKind) fixture.Event {
	return fixture.Event{Step: &protocol.Step{Protocol: "aaep", Session: "s1", Index: index,
		Offset: time.Duration(index) * time.Second, From: from, To: to, Label: label, Detail: detail, Kind: kind}}
}

func finding(index int64, rule string, level protocol.Level, short string) fixture.Event {
	return fixture.Event{Finding: &protocol.Finding{Protocol: "aaep", Session: "s1", RuleID: rule, Level: level,
		Index: index, Short: short, Message: short + " (sentence)"}}
}

func collect(t *testing.T, events []fixture.Event, opts visualize.CollectorOptions) []*visualize.Trace {
	t.Helper()
	c := visualize.NewCollector(opts)
	fixture.Feed(events, c.Sink())
	return c.Traces()
}

// edgeString is a compact description of an edge for comparisons.
func edgeString(e *visualize.Edge) string {
	s := fmt.Sprintf("%s->%s %s", e.From, e.To, e.Label)
	if e.Detail != "" {
		s += " " + e.Detail
	}
	s += fmt.Sprintf(" ×%d #%d", e.Count, e.First)
	for _, n := range e.Notes.List {
		s += fmt.Sprintf(" [%s×%d]", n.RuleID, n.Count)
	}
	return s
}

func edgeStrings(t *visualize.Trace) []string {
	var out []string
	for _, e := range t.Edges() {
		out = append(out, edgeString(e))
	}
	return out
}

func nodeNotes(t *visualize.Trace) map[string][]string {
	out := map[string][]string{}
	for _, n := range t.Nodes() {
		for _, x := range n.Notes.List {
			out[n.Name] = append(out[n.Name], x.RuleID)
		}
	}
	return out
}

func TestTraceAttachesFindings(t *testing.T) {
	const st, tool = protocol.StepState, protocol.StepTool
	tests := []struct {
		name      string
		events    []fixture.Event
		wantEdges []string
		wantNodes map[string][]string
		wantEnd   []string
	}{
		{
			name: "finding after its step",
			events: []fixture.Event{
				step(0, "a", "b", "go", "", st),
				step(1, "b", "b", "tool.completed", "x", tool), finding(1, "R1", protocol.Must, "bad"),
				step(2, "b", "c", "go", "", st),
			},
			wantEdges: []string{"a->b go ×1 #1", "b->b tool.completed x ×1 #2 [R1×1]", "b->c go ×1 #3"},
		},
		{
			name: "finding before its step",
			events: []fixture.Event{
				step(0, "a", "b", "go", "", st),
				finding(1, "R1", protocol.Must, "bad"), step(1, "b", "c", "go", "", st),
				step(2, "c", "d", "go", "", st),
			},
			wantEdges: []string{"a->b go ×1 #1", "b->c go ×1 #2 [R1×1]", "c->d go ×1 #3"},
		},
		{
			name: "finding on a message without a step goes to the current state",
			events: []fixture.Event{
				step(0, "a", "b", "go", "", st),
				finding(1, "R1", protocol.Must, "bad"),
				step(2, "b", "c", "go", "", st),
			},
			wantEdges: []string{"a->b go ×1 #1", "b->c go ×1 #2"},
			wantNodes: map[string][]string{"b": {"R1"}},
		},
		{
			name: "late finding goes to the edge of its message",
			events: []fixture.Event{
				step(0, "a", "b", "tool.invoked", "x", tool),
				step(1, "b", "c", "go", "", st),
				step(2, "c", "d", "go", "", st),
				finding(0, "R1", protocol.Should, "never completed"),
			},
			wantEdges: []string{"a->b tool.invoked x ×1 #1 [R1×1]", "b->c go ×1 #2", "c->d go ×1 #3"},
		},
		{
			name: "end of session finding",
			events: []fixture.Event{
				step(0, "a", "b", "go", "", st),
				finding(-1, "R-END", protocol.Must, "no terminal event"),
			},
			wantEdges: []string{"a->b go ×1 #1"},
			wantEnd:   []string{"R-END"},
		},
		{
			name: "violating steps do not merge with clean ones",
			events: []fixture.Event{
				step(0, "a", "a", "tick", "", st),
				step(1, "a", "a", "tick", "", st), finding(1, "R1", protocol.Must, "bad"),
				step(2, "a", "a", "tick", "", st),
				step(3, "a", "a", "tick", "", st), finding(3, "R1", protocol.Must, "bad"),
				step(4, "a", "a", "tick", "", st),
			},
			wantEdges: []string{"a->a tick ×3 #1", "a->a tick ×2 #2 [R1×2]"},
		},
		{
			name: "several steps of one message: the finding goes to the last",
			events: []fixture.Event{
				step(0, "a", "b", "started", "", protocol.StepLifecycle),
				step(0, "b", "c", "go", "", st),
				finding(0, "R1", protocol.Must, "bad"),
				step(1, "c", "d", "go", "", st),
			},
			wantEdges: []string{"a->b started ×1 #1", "b->c go ×1 #2 [R1×1]", "c->d go ×1 #3"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			traces := collect(t, tt.events, visualize.CollectorOptions{})
			if len(traces) != 1 {
				t.Fatalf("got %d traces, want 1", len(traces))
			}
			tr := traces[0]
			if got := edgeStrings(tr); strings.Join(got, "\n") != strings.Join(tt.wantEdges, "\n") {
				t.Errorf("edges:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.wantEdges, "\n"))
			}
			if got := nodeNotes(tr); fmt.Sprint(got) != fmt.Sprint(orEmpty(tt.wantNodes)) {
				t.Errorf("node notes = %v, want %v", got, tt.wantNodes)
			}
			var end []string
			for _, n := range tr.EndNotes().List {
				end = append(end, n.RuleID)
			}
			if fmt.Sprint(end) != fmt.Sprint(tt.wantEnd) {
				t.Errorf("end notes = %v, want %v", end, tt.wantEnd)
			}
		})
	}
}

func orEmpty(m map[string][]string) map[string][]string {
	if m == nil {
		return map[string][]string{}
	}
	return m
}

// TestTraceMemoryIsBounded feeds a session of a million steps: its trace has
// exactly the nodes and edges of a 10,000-step session of the same loop, with
// counts that add up to every step.
func TestTraceMemoryIsBounded(t *testing.T) {
	shape := func(n int) (nodes, edges int, steps int64, tr *visualize.Trace) {
		c := visualize.NewCollector(visualize.CollectorOptions{})
		sink := c.Sink()
		fixture.LongFunc("long", n, func(e fixture.Event) { fixture.Feed([]fixture.Event{e}, sink) })
		traces := c.Traces()
		if len(traces) != 1 {
			t.Fatalf("%d steps: got %d traces, want 1", n, len(traces))
		}
		tr = traces[0]
		for _, e := range tr.Edges() {
			steps += e.Count
		}
		return len(tr.Nodes()), len(tr.Edges()), steps, tr
	}
	n1, e1, _, _ := shape(10_000)
	n2, e2, steps, tr := shape(1_000_000)
	if n1 != n2 || e1 != e2 {
		t.Errorf("1,000,000 steps: %d nodes, %d edges; 10,000 steps: %d nodes, %d edges (want the same)", n2, e2, n1, e1)
	}
	if e2 > visualize.DefaultMaxEdges {
		t.Errorf("%d edges, more than the limit %d", e2, visualize.DefaultMaxEdges)
	}
	if steps != 1_000_000 || tr.Steps != 1_000_000 {
		t.Errorf("edges count %d steps, trace counted %d, want 1,000,000", steps, tr.Steps)
	}
	var flagged int64
	for _, e := range tr.Edges() {
		for _, n := range e.Notes.List {
			flagged += n.Count
		}
	}
	if flagged != tr.Findings || flagged == 0 {
		t.Errorf("%d findings on edges, trace got %d", flagged, tr.Findings)
	}
}

func TestTraceLimits(t *testing.T) {
	t.Run("states beyond MaxStates fold into one node", func(t *testing.T) {
		var ev []fixture.Event
		for i := 0; i < 50; i++ {
			ev = append(ev, step(int64(i), fmt.Sprintf("s%d", i), fmt.Sprintf("s%d", i+1), "go", "", protocol.StepState))
		}
		tr := collect(t, ev, visualize.CollectorOptions{Limits: visualize.Limits{MaxStates: 10}})[0]
		nodes := tr.Nodes()
		if len(nodes) != 11 {
			t.Fatalf("%d nodes, want 10 states and %q", len(nodes), visualize.OtherStates)
		}
		if nodes[10].Name != visualize.OtherStates {
			t.Errorf("last node %q, want %q", nodes[10].Name, visualize.OtherStates)
		}
		var total int64
		for _, e := range tr.Edges() {
			total += e.Count
		}
		if total != 50 {
			t.Errorf("edges count %d steps, want 50", total)
		}
	})
	t.Run("transitions beyond MaxEdges merge without their detail", func(t *testing.T) {
		var ev []fixture.Event
		for i := 0; i < 40; i++ {
			ev = append(ev, step(int64(i), "a", "a", "tool.invoked", fmt.Sprintf("tool%d", i), protocol.StepTool))
		}
		tr := collect(t, ev, visualize.CollectorOptions{Limits: visualize.Limits{MaxEdges: 5, MaxDetails: 100}})[0]
		got := edgeStrings(tr)
		want := []string{
			"a->a tool.invoked tool0 ×1 #1", "a->a tool.invoked tool1 ×1 #2", "a->a tool.invoked tool2 ×1 #3",
			"a->a tool.invoked tool3 ×1 #4", "a->a tool.invoked tool4 ×1 #5", "a->a tool.invoked (various) ×35 #6",
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("edges:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
	t.Run("details beyond MaxDetails merge", func(t *testing.T) {
		var ev []fixture.Event
		for i := 0; i < 1000; i++ {
			ev = append(ev, step(int64(i), "w", "w", "output.streaming", fmt.Sprintf("out_1 @%d", i), protocol.StepOutput))
		}
		ev = append(ev, step(1000, "w", "x", "state.changed", "", protocol.StepState))
		tr := collect(t, ev, visualize.CollectorOptions{})[0]
		got := edgeStrings(tr)
		want := []string{
			"w->w output.streaming out_1 @0 ×1 #1", "w->w output.streaming out_1 @1 ×1 #2", "w->w output.streaming out_1 @2 ×1 #3",
			"w->w output.streaming out_1 @3 ×1 #4", "w->w output.streaming (various) ×996 #5", "w->x state.changed ×1 #1001",
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("edges:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
	t.Run("labels beyond twice MaxEdges merge per pair of states", func(t *testing.T) {
		var ev []fixture.Event
		for i := 0; i < 30; i++ {
			ev = append(ev, step(int64(i), "a", "b", fmt.Sprintf("label%d", i), "", protocol.StepState))
		}
		tr := collect(t, ev, visualize.CollectorOptions{Limits: visualize.Limits{MaxEdges: 3}})[0]
		got := edgeStrings(tr)
		// 3 distinct, then 3 more (detail dropped, but there is none to
		// drop), then everything else in one edge per pair of states.
		want := []string{
			"a->b label0 ×1 #1", "a->b label1 ×1 #2", "a->b label2 ×1 #3",
			"a->b label3 ×1 #4", "a->b label4 ×1 #5", "a->b label5 ×1 #6",
			"a->b (various) ×24 #7",
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("edges:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
	t.Run("distinct findings beyond MaxNotes are counted", func(t *testing.T) {
		ev := []fixture.Event{step(0, "a", "b", "go", "", protocol.StepState)}
		for i := 0; i < 7; i++ {
			ev = append(ev, finding(0, fmt.Sprintf("R%d", i), protocol.Must, "bad"))
		}
		ev = append(ev, finding(0, "R0", protocol.Must, "bad"))
		tr := collect(t, ev, visualize.CollectorOptions{Limits: visualize.Limits{MaxNotes: 3}})[0]
		e := tr.Edges()[0]
		if len(e.Notes.List) != 3 || e.Notes.More != 4 || e.Notes.List[0].Count != 2 || e.Notes.Total() != 8 {
			t.Errorf("notes %+v more %d, want 3 kept (R0 twice), 4 more, 8 in all", e.Notes.List, e.Notes.More)
		}
	})
}

func TestCollector(t *testing.T) {
	events := fixture.Sessions()
	t.Run("one trace per session, sorted", func(t *testing.T) {
		traces := collect(t, events, visualize.CollectorOptions{})
		var got []string
		for _, tr := range traces {
			got = append(got, tr.Protocol+"/"+tr.Session)
		}
		want := "[aaep/sess_broken aaep/sess_clean asp/asp-7f3a]"
		if fmt.Sprint(got) != want {
			t.Errorf("traces %v, want %s", got, want)
		}
		for _, tr := range traces {
			if !tr.Done {
				t.Errorf("%s: not done", tr.Session)
			}
		}
	})
	t.Run("session filter", func(t *testing.T) {
		traces := collect(t, events, visualize.CollectorOptions{Session: "sess_broken"})
		if len(traces) != 1 || traces[0].Session != "sess_broken" {
			t.Fatalf("got %d traces, want only sess_broken", len(traces))
		}
		if traces[0].Findings != 5 || traces[0].Levels[protocol.Must] != 4 {
			t.Errorf("findings %d (MUST %d), want 5 (MUST 4)", traces[0].Findings, traces[0].Levels[protocol.Must])
		}
	})
	t.Run("sessions beyond MaxSessions are counted, not traced", func(t *testing.T) {
		var ev []fixture.Event
		for i := 0; i < 5; i++ {
			id := fmt.Sprintf("s%d", i)
			ev = append(ev,
				fixture.Event{Step: &protocol.Step{Protocol: "aaep", Session: id, Index: int64(i), From: "a", To: "b", Label: "go", Kind: protocol.StepState}},
				fixture.Event{Done: &protocol.SessionSummary{Protocol: "aaep", Session: id, Messages: 1, State: "b", Complete: true}})
		}
		c := visualize.NewCollector(visualize.CollectorOptions{MaxSessions: 2})
		fixture.Feed(ev, c.Sink())
		if n := len(c.Traces()); n != 2 || c.Dropped() != 3 {
			t.Errorf("%d traces, %d dropped; want 2 and 3", n, c.Dropped())
		}
		c = visualize.NewCollector(visualize.CollectorOptions{MaxSessions: -1})
		fixture.Feed(ev, c.Sink())
		if n := len(c.Traces()); n != 5 || c.Dropped() != 0 {
			t.Errorf("no limit: %d traces, %d dropped; want 5 and 0", n, c.Dropped())
		}
	})
	t.Run("many steps of one message", func(t *testing.T) {
		var ev []fixture.Event
		for i := 0; i < 40; i++ {
			ev = append(ev, step(7, "a", "a", "tick", "", protocol.StepState))
		}
		ev = append(ev, finding(7, "R1", protocol.Must, "bad"))
		tr := collect(t, ev, visualize.CollectorOptions{})[0]
		got := edgeStrings(tr)
		want := []string{"a->a tick ×39 #1", "a->a tick ×1 #40 [R1×1]"}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("edges:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
	t.Run("stream findings join the trace of their session", func(t *testing.T) {
		ev := []fixture.Event{
			step(0, "a", "b", "go", "", protocol.StepState),
			{Finding: &protocol.Finding{Protocol: protocol.StreamProtocol, Session: "s1", RuleID: "STREAM-UNKNOWN-PROTOCOL", Level: protocol.Should, Index: 1}},
			{Finding: &protocol.Finding{Protocol: protocol.StreamProtocol, Session: "", RuleID: "STREAM-NOT-JSON", Level: protocol.Must, Index: 2}},
			step(3, "b", "c", "go", "", protocol.StepState),
		}
		traces := collect(t, ev, visualize.CollectorOptions{})
		if len(traces) != 2 {
			t.Fatalf("got %d traces, want aaep/s1 and a stream trace", len(traces))
		}
		if got := nodeNotes(traces[0]); fmt.Sprint(got) != "map[b:[STREAM-UNKNOWN-PROTOCOL]]" {
			t.Errorf("aaep/s1 node notes %v, want the unknown-protocol finding on b", got)
		}
		if traces[1].Protocol != protocol.StreamProtocol || traces[1].Findings != 1 {
			t.Errorf("second trace %s/%q with %d findings, want the stream trace with 1", traces[1].Protocol, traces[1].Session, traces[1].Findings)
		}
	})
}
