package visualize

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/aaep-tools/aaepkit/protocol"
)

// DOTOptions configure DOT.
type DOTOptions struct {
	// Title heads the drawing, e.g. the input file's name (optional).
	Title string
	// Sources names where the recording was recorded from (transports and
	// endpoints, e.g. "#0 grpc grpc://127.0.0.1:8766"), a line under the
	// title (optional).
	Sources string
	// Machines are the protocols' state machines by protocol name. They give
	// the states their kinds (initial, terminal, error) and, unless
	// HideMachine is set, add faint context around each path: the model's
	// states one transition after a state the session reached (where it
	// could have gone instead), and those transitions.
	Machines map[string]protocol.Machine
	// HideMachine draws only what the sessions did.
	HideMachine bool
	// NoLegend leaves the legend out.
	NoLegend bool
	// EdgeIDs gives every drawn transition the SVG id EdgeID returns, so
	// that a page can find the edge of a step (and the steps of an edge).
	EdgeIDs bool
}

// EdgeID is the id a transition of trace number ci (0 for a drawing of one
// session) gets with DOTOptions.EdgeIDs. Transitions drawn as one edge share
// it: those between the same two states of one kind, and every transition
// that leaves a state unchanged.
func EdgeID(ci int, from, to string, kind protocol.StepKind, synthetic bool) string {
	id := fmt.Sprintf("c%d_tr:%s>%s", ci, from, to)
	if from == to {
		return id
	}
	id += ":" + kind.String()
	if synthetic {
		id += ":inferred"
	}
	return id
}

// DOT returns the Graphviz DOT text of traces: one graph, with one cluster
// per trace when there is more than one. It is deterministic: traces are
// drawn in the order given (Collector.Traces sorts them), states in the
// order the session first reached them, transitions in the order of their
// first step. DOT flushes each trace's last pending message (Trace.Flush).
func DOT(traces []*Trace, opts DOTOptions) []byte {
	w := &dotWriter{opts: opts}
	w.graph(traces)
	return w.buf.Bytes()
}

type dotWriter struct {
	buf  bytes.Buffer
	opts DOTOptions
}

func (w *dotWriter) printf(format string, args ...any) { fmt.Fprintf(&w.buf, format, args...) }

func (w *dotWriter) graph(traces []*Trace) {
	w.printf("digraph aaep_trace {\n")
	var head []string
	if w.opts.Title != "" {
		head = append(head, clean(w.opts.Title, maxTitleRunes))
	}
	if w.opts.Sources != "" {
		head = append(head, "sources: "+clean(w.opts.Sources, maxTitleRunes))
	}
	var findings int64
	for _, t := range traces {
		findings += t.Findings
	}
	if len(traces) != 1 {
		n := SessionCount(traces)
		what := plural(n, "session")
		if other := int64(len(traces)) - n; other > 0 {
			what += " · " + plural(other, "block") + " about the stream"
		}
		head = append(head, what+" · "+plural(findings, "finding"))
	} else {
		head = append(head, sessionTitle(traces[0]))
		head = append(head, sessionLines(traces[0])...)
	}
	title := label(head, `\n`)
	if !w.opts.NoLegend {
		title = w.legend(head)
	}
	w.printf("\tgraph [fontname=%s fontsize=13 labelloc=t labeljust=l label=%s rankdir=TB nodesep=0.35 ranksep=0.45 newrank=true];\n",
		quote(fontName), title)
	w.printf("\tnode [fontname=%s fontsize=11 shape=box style=\"rounded,filled\" fillcolor=white color=%s];\n", quote(fontName), quote(colorState))
	w.printf("\tedge [fontname=%s fontsize=9 color=%s];\n", quote(fontName), quote(colorState))
	if len(traces) == 0 {
		w.printf("\tempty [shape=plaintext style=\"\" label=\"no session steps or findings\"];\n")
	}
	for i, t := range traces {
		w.trace(i, t, len(traces) > 1)
	}
	w.printf("}\n")
}

func sessionTitle(t *Trace) string {
	id := t.Session
	if id == "" {
		id = "(no session id)"
	}
	in := ""
	if t.Stream != "" {
		in = " · " + clean(t.Stream, maxTitleRunes)
	}
	if t.Protocol == protocol.StreamProtocol {
		return "stream findings · " + clean(id, maxTitleRunes) + in
	}
	if t.Done && t.Summary.Handshake {
		return t.Protocol + " subscription handshake " + clean(id, maxTitleRunes) + in
	}
	return t.Protocol + " session " + clean(id, maxTitleRunes) + in
}

// sessionLines describe a session under its title.
func sessionLines(t *Trace) []string {
	var parts []string
	if t.Done {
		parts = append(parts, plural(int64(t.Summary.Messages), "message"))
		parts = append(parts, fmt.Sprintf("capture +%s → +%s", offset(t.Summary.First), offset(t.Summary.Last)))
		switch {
		case !t.Summary.Complete:
			parts = append(parts, "incomplete: stream ended in "+clean(t.Summary.State, maxStateRunes))
		case t.Summary.State != "":
			parts = append(parts, "ended in "+clean(t.Summary.State, maxStateRunes))
		}
	} else {
		parts = append(parts, plural(t.Steps, "step"))
		parts = append(parts, "first at capture +"+offset(t.FirstOffset()))
	}
	ls := []string{strings.Join(parts, " · ")}
	if t.Findings == 0 {
		ls = append(ls, "no findings")
	} else {
		var f []string
		for _, l := range []protocol.Level{protocol.Must, protocol.Should, protocol.Info} {
			if n := t.Levels[l]; n > 0 {
				f = append(f, count(n)+" "+l.String())
			}
		}
		ls = append(ls, "findings: "+strings.Join(f, ", "))
	}
	return ls
}

// nodeInfo is what the writer knows of a state while drawing one trace.
type nodeInfo struct {
	id       string
	name     string
	node     *Node // nil for a model state the session did not reach
	kind     protocol.StateKind
	inModel  bool // the state is one of the model's
	hasModel bool // the trace's protocol has a model machine
}

func (w *dotWriter) trace(ci int, t *Trace, cluster bool) {
	p := fmt.Sprintf("c%d_", ci)
	indent := "\t"
	if cluster {
		w.printf("\tsubgraph cluster_%d {\n", ci)
		w.printf("\t\tgraph [label=%s style=rounded color=%s fontsize=12];\n",
			label(append([]string{sessionTitle(t)}, sessionLines(t)...), `\n`), quote(colorQuiet))
		indent = "\t\t"
	}
	machine, hasMachine := w.opts.Machines[t.Protocol]
	kinds := map[string]protocol.StateKind{}
	for _, s := range machine.States {
		kinds[s.Name] = s.Kind
	}
	nodes := t.Nodes()
	edges := t.Edges()
	final := t.Final()

	infos := map[string]*nodeInfo{}
	var order []*nodeInfo
	add := func(name string, n *Node) *nodeInfo {
		if ni := infos[name]; ni != nil {
			return ni
		}
		k, in := kinds[name]
		ni := &nodeInfo{id: fmt.Sprintf("%sn%d", p, len(order)), name: name, node: n, kind: k, inModel: in, hasModel: hasMachine}
		infos[name] = ni
		order = append(order, ni)
		return ni
	}
	for _, n := range nodes {
		add(n.Name, n)
	}
	if final != "" && infos[final] == nil {
		add(final, &Node{Name: final})
	}
	// The model around the path: the states one model transition after a
	// state the session reached, and those transitions, faint. (The whole
	// machine would bury the path under its edges; a session without steps
	// gets no model at all.)
	showMachine := hasMachine && !w.opts.HideMachine && len(edges) > 0
	visited := map[string]bool{}
	for _, n := range nodes {
		visited[n.Name] = true
	}
	if showMachine {
		near := map[string]bool{}
		for _, tr := range machine.Transitions {
			if visited[tr.From] && !visited[tr.To] {
				near[tr.To] = true
			}
		}
		for _, s := range machine.States {
			if near[s.Name] {
				add(s.Name, nil)
			}
		}
	}

	// States.
	for _, ni := range order {
		w.printf("%s%s [%s];\n", indent, ni.id, stateAttrs(ni, ni.name == final, t))
	}
	// Where the session started.
	if start := t.Start(); start != "" {
		w.printf("%s%sstart [shape=point width=0.12 label=\"\" color=%s tooltip=\"session start\"];\n", indent, p, quote(colorState))
		w.printf("%s%sstart -> %s [arrowhead=normal];\n", indent, p, infos[start].id)
	}
	// The session's transitions.
	base := t.FirstOffset()
	taken := map[[2]string]bool{}
	for _, g := range groupEdges(edges) {
		for _, e := range g {
			taken[[2]string{e.From, e.To}] = true
		}
		from, to := infos[g[0].From].id, infos[g[0].To].id
		attrs := ""
		if len(g) == 1 {
			attrs = edgeAttrs(g[0], base)
		} else {
			attrs = groupAttrs(g, base)
		}
		if w.opts.EdgeIDs {
			attrs += " id=" + quote(EdgeID(ci, g[0].From, g[0].To, g[0].Kind, g[0].Synthetic))
		}
		w.printf("%s%s -> %s [%s];\n", indent, from, to, attrs)
	}
	// The model's transitions the session did not take.
	if showMachine {
		for _, tr := range machine.Transitions {
			from, to := infos[tr.From], infos[tr.To]
			if from == nil || to == nil || taken[[2]string{tr.From, tr.To}] || !visited[tr.From] || visited[tr.To] {
				continue
			}
			taken[[2]string{tr.From, tr.To}] = true
			tip := "model transition not taken"
			if tr.Label != "" {
				tip += ": " + tr.Label
			}
			w.printf("%s%s -> %s [color=%s style=dotted arrowhead=open weight=0 tooltip=%s];\n", indent, from.id, to.id, quote(colorFaint), quote(clean(tip, maxTipRunes)))
		}
	}
	// Findings about messages without a step, attached to their state.
	for _, ni := range order {
		if ni.node == nil || len(ni.node.Notes.List) == 0 && ni.node.Notes.More == 0 {
			continue
		}
		w.note(indent, ni.id, ni.id+"_notes", "findings on messages without a step:", &ni.node.Notes, true)
	}
	// Findings about the end of the session, attached to its final state.
	if end := t.EndNotes(); end.Total() > 0 && final != "" {
		w.note(indent, infos[final].id, p+"end_notes", "end of session:", end, false)
	}
	if cluster {
		w.printf("\t}\n")
	}
}

// stateAttrs styles one state.
func stateAttrs(ni *nodeInfo, final bool, t *Trace) string {
	name := ni.name
	var a []string
	ls := []string{clean(name, maxStateRunes)}
	tip := trunc(name, maxStateRunes)
	// The default style (rounded, filled) comes from the graph's node
	// defaults; rounded corners suit boxes only.
	rounded := "rounded,"
	switch ni.kind {
	case protocol.StateInitial:
		a = append(a, "fillcolor="+quote(fillInitial))
		tip += " (initial state)"
	case protocol.StateTerminal:
		a = append(a, "peripheries=2", "fillcolor="+quote(fillTerminal))
		tip += " (terminal state)"
	case protocol.StateError:
		a = append(a, "shape=doubleoctagon", "fillcolor="+quote(fillError))
		tip += " (error state)"
		rounded = ""
	}
	style := ""
	if rounded == "" {
		style = "filled"
	}
	switch {
	case ni.node == nil:
		// A state of the model the session never reached.
		style = rounded + "dashed,filled"
		a = append(a, "color="+quote(colorFaint), "fontcolor="+quote(colorFaint))
		tip += ": a state of the model this session did not reach"
	case name == OtherStates:
		style = "dashed,filled"
		tip += fmt.Sprintf(": the session used more than %d distinct states; the rest are folded into this node", t.limits.MaxStates)
	case name == noState:
		style = "dashed,filled"
		tip += ": no message of the session caused a step"
	default:
		if ni.node.Visits > 0 {
			tip += ": entered " + plural(ni.node.Visits, "time")
		}
		if ni.hasModel && !ni.inModel {
			tip += " (not a state of the protocol model)"
		}
	}
	if style != "" {
		a = append(a, "style="+quote(style))
	}
	if final {
		a = append(a, "penwidth=3")
		switch {
		case name == noState:
		case !t.Done:
			ls = append(ls, "(last state seen)")
		case !t.Summary.Complete:
			ls = append(ls, "(stream ended here)")
		default:
			ls = append(ls, "(session ended here)")
		}
	}
	worst := protocol.Level(0)
	if ni.node != nil {
		worst = ni.node.Notes.Worst()
	}
	if final {
		if e := t.EndNotes().Worst(); e > worst {
			worst = e
		}
	}
	if worst >= protocol.Should {
		a = append(a, "color="+quote(colorViolation), "fontcolor="+quote(colorViolation))
		if !final {
			a = append(a, "penwidth=2")
		}
	}
	return strings.Join(append([]string{"label=" + label(ls, `\n`)}, append(a, "tooltip="+quote(clean(tip, maxTipRunes)))...), " ")
}

// edgeText is what one transition says: its step lines, its finding lines
// and its tooltip.
type edgeText struct {
	steps, notes []string
	tip          string
}

func describeEdge(e *Edge, base time.Duration) edgeText {
	var x edgeText
	raw := trunc(e.Label, maxLabelRunes)
	if e.Detail != "" {
		raw += " " + trunc(e.Detail, maxDetailRunes)
	}
	what := clean(raw, maxLabelRunes+maxDetailRunes+2)
	if e.Count == 1 {
		x.steps = []string{fmt.Sprintf("%d. %s +%s", e.First, what, offset(e.FirstOffset-base))}
		x.tip = fmt.Sprintf("step %d", e.First)
	} else {
		x.steps = []string{what, fmt.Sprintf("×%s, first #%d +%s", count(e.Count), e.First, offset(e.FirstOffset-base))}
		// (a group's label joins the two lines into one)
		x.tip = fmt.Sprintf("%s steps, #%d to #%d (+%s to +%s)", count(e.Count), e.First, e.Last, offset(e.FirstOffset-base), offset(e.LastOffset-base))
	}
	x.tip += fmt.Sprintf(": %s; first at message %d, capture +%s", raw, e.FirstIndex, offset(e.FirstOffset))
	if e.Synthetic {
		x.tip += "; inferred by the checker, not a message"
	}
	for _, n := range e.Notes.List {
		x.notes = append(x.notes, noteLine(&n, e.Count > 1 || n.Count > 1, false))
		x.tip += "; " + n.RuleID + " (" + n.Level.String() + "): " + n.Message
	}
	if e.Notes.More > 0 {
		x.notes = append(x.notes, fmt.Sprintf("and %s more", plural(e.Notes.More, "finding")))
	}
	return x
}

// edgeColors returns an edge's line and text colours.
func edgeColors(e *Edge) (line, font string) {
	st := styleOf(e.Kind)
	switch e.Notes.Worst() {
	case protocol.Must, protocol.Should:
		return colorViolation, colorViolation
	case protocol.Info:
		return st.color, colorInfo
	}
	return st.color, st.color
}

// edgeWidth grows slowly with the number of merged steps.
func edgeWidth(e *Edge) float64 {
	w := 1 + math.Min(2.5, math.Log10(float64(e.Count)))
	if e.Notes.Worst() >= protocol.Should {
		w = math.Max(w, 2.5)
	}
	if styleOf(e.Kind).bold {
		w = math.Max(w, 2)
	}
	return w
}

// edgeAttrs styles one transition between two different states; base is
// the session's first offset.
func edgeAttrs(e *Edge, base time.Duration) string {
	x := describeEdge(e, base)
	line, font := edgeColors(e)
	a := []string{"label=" + label(append(x.steps, x.notes...), `\n`),
		"color=" + quote(line), "fontcolor=" + quote(font), "arrowhead=" + styleOf(e.Kind).arrowhead}
	if w := edgeWidth(e); w != 1 {
		a = append(a, fmt.Sprintf("penwidth=%.1f", w))
	}
	if e.Synthetic {
		a = append(a, "style=dashed")
	}
	a = append(a, "tooltip="+quote(clean(x.tip, maxTipRunes)))
	return strings.Join(a, " ")
}

// groupEdges groups the transitions drawn as one edge, in the order of
// their first step: the transitions between the same two states with the
// same kind (parallel edges of one kind say more as one list), and all the
// transitions that left a state unchanged (Graphviz places the labels of
// several loops on one state over each other).
func groupEdges(edges []*Edge) [][]*Edge {
	type key struct {
		from, to  string
		kind      protocol.StepKind
		synthetic bool
	}
	idx := map[key]int{}
	var groups [][]*Edge
	for _, e := range edges {
		k := key{e.From, e.To, e.Kind, e.Synthetic}
		if e.From == e.To {
			k.kind, k.synthetic = 0, false
		}
		i, ok := idx[k]
		if !ok {
			i = len(groups)
			idx[k] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], e)
	}
	return groups
}

// maxGroupEntries bounds the transitions listed on one drawn edge.
const maxGroupEntries = 12

// groupAttrs styles one drawn edge that stands for several transitions:
// an HTML label lists them, each in its own colour.
func groupAttrs(loops []*Edge, base time.Duration) string {
	shown := loops
	if len(loops) > maxGroupEntries {
		// Keep the ones that break rules first, then the earliest.
		var bad, good []*Edge
		for _, e := range loops {
			if e.Notes.Worst() >= protocol.Should {
				bad = append(bad, e)
			} else {
				good = append(good, e)
			}
		}
		shown = append(bad, good...)[:maxGroupEntries]
		sort.SliceStable(shown, func(i, j int) bool { return shown[i].First < shown[j].First })
	}
	var b strings.Builder
	b.WriteString(`<<table border="0" cellborder="0" cellspacing="0" cellpadding="1">`)
	row := func(color, text string) {
		fmt.Fprintf(&b, `<tr><td align="left"><font color="%s">%s</font></td></tr>`, color, htmlText(text))
	}
	var tips []string
	line := ""
	kinds := map[protocol.StepKind]bool{}
	synthetic, width := true, 1.0
	for _, e := range shown {
		x := describeEdge(e, base)
		_, font := edgeColors(e)
		stepColor := styleOf(e.Kind).color
		if font == colorViolation {
			stepColor = colorViolation
		}
		row(stepColor, strings.Join(x.steps, " "))
		for _, l := range x.notes {
			row(font, l)
		}
		tips = append(tips, x.tip)
		kinds[e.Kind] = true
		synthetic = synthetic && e.Synthetic
		width = math.Max(width, edgeWidth(e))
		if l, _ := edgeColors(e); l == colorViolation {
			line = colorViolation
		}
	}
	if more := len(loops) - len(shown); more > 0 {
		var steps int64
		for _, e := range loops {
			steps += e.Count
		}
		for _, e := range shown {
			steps -= e.Count
		}
		row(colorQuiet, fmt.Sprintf("and %s more (%s)", plural(int64(more), "transition"), plural(steps, "step")))
	}
	b.WriteString("</table>>")
	arrow := "normal"
	if len(kinds) == 1 {
		arrow = styleOf(shown[0].Kind).arrowhead
		if line == "" {
			line = styleOf(shown[0].Kind).color
		}
	}
	if line == "" {
		line = colorState
	}
	a := []string{"label=" + b.String(), "color=" + quote(line), "arrowhead=" + arrow}
	if width != 1 {
		a = append(a, fmt.Sprintf("penwidth=%.1f", width))
	}
	if synthetic {
		a = append(a, "style=dashed")
	}
	a = append(a, "tooltip="+quote(clean(strings.Join(tips, " | "), maxTipRunes)))
	return strings.Join(a, " ")
}

// htmlText escapes cleaned text for an HTML-like label. Graphviz expands
// escapes such as \G (the graph's name) even in HTML-like labels, after
// decoding entities, so a word joiner (U+2060, invisible) follows each
// backslash to keep the text as written.
func htmlText(s string) string {
	return htmlEscaper.Replace(s)
}

var htmlEscaper = strings.NewReplacer("<", "&lt;", ">", "&gt;", `"`, "&quot;", `\`, "\\\u2060")

// noteLine is one finding as a label line: "RULE-ID: reason ×3 (#12)".
func noteLine(n *Note, showCount, showIndex bool) string {
	s := clean(n.RuleID, maxLabelRunes)
	if n.Short != "" {
		s += ": " + clean(n.Short, maxShortRunes)
	}
	if n.Level == protocol.Info {
		s += " (info)"
	}
	if showCount && n.Count > 1 {
		s += " ×" + count(n.Count)
	}
	if showIndex && n.Index >= 0 {
		s += fmt.Sprintf(" (message %d)", n.Index)
	}
	return s
}

// note draws findings as a note attached to the state with id to.
func (w *dotWriter) note(indent, to, id, head string, notes *Notes, showIndex bool) {
	ls := []string{head}
	var tip []string
	for _, n := range notes.List {
		ls = append(ls, noteLine(&n, true, showIndex))
		tip = append(tip, n.RuleID+" ("+n.Level.String()+"): "+n.Message)
	}
	if notes.More > 0 {
		ls = append(ls, fmt.Sprintf("and %s more", plural(notes.More, "finding")))
	}
	color, fill := colorViolation, fillNote
	if notes.Worst() < protocol.Should {
		color, fill = colorInfo, fillInfoNote
	}
	w.printf("%s%s [shape=note style=filled fillcolor=%s color=%s fontcolor=%s fontsize=10 label=%s tooltip=%s];\n",
		indent, id, quote(fill), quote(color), quote(color), label(ls, `\l`), quote(clean(strings.Join(tip, "; "), maxTipRunes)))
	w.printf("%s%s -> %s [style=dashed color=%s arrowhead=none];\n", indent, to, id, quote(color))
}

// legend returns the graph's label: the title lines head and, beside
// them, a table that explains the colours and shapes. (As a node, the legend
// would take a rank of its own, and ranks are shared with the sessions'
// drawings, which it would stretch.)
func (w *dotWriter) legend(head []string) string {
	var b strings.Builder
	b.WriteString(`<table border="1" color="` + colorFaint + `" style="rounded" cellborder="0" cellspacing="3" cellpadding="2">`)
	b.WriteString(`<tr><td colspan="2"><b>Legend</b></td></tr>`)
	row := func(sample, text string) {
		fmt.Fprintf(&b, `<tr><td>%s</td><td align="left">%s</td></tr>`, sample, text)
	}
	font := func(color, text string) string { return `<font color="` + color + `">` + text + `</font>` }
	// box draws a sample state: a one-cell table with the state's border and fill.
	box := func(border, style, color, fill, text string) string {
		a := `border="` + border + `" style="` + style + `" color="` + color + `"`
		if fill != "" {
			a += ` bgcolor="` + fill + `"`
		}
		return `<table ` + a + ` cellborder="0" cellpadding="2"><tr><td>` + text + `</td></tr></table>`
	}
	row(font(colorState, "●"), "where a session starts")
	row(box("1", "rounded", colorState, fillInitial, "initial"), "initial state of the protocol")
	row(box("1", "rounded", colorState, "", "state"), "state the session reached")
	row(`<table border="1" style="rounded" cellborder="0" cellpadding="1" color="`+colorState+`"><tr><td>`+
		box("1", "rounded", colorState, fillTerminal, "terminal")+`</td></tr></table>`, "terminal state (double border)")
	row(box("1", "solid", colorState, fillError, "error"), "error state (double octagon)")
	row(box("3", "rounded", colorState, "", "ended here"), "state the session ended in (bold border)")
	row(box("1", "dashed", colorFaint, "", font(colorFaint, "not reached")), "model state the session did not reach")
	row(box("1", "solid", colorViolation, fillNote, font(colorViolation, "RULE: reason")), font(colorViolation, "findings with no step of their own"))
	arrow := func(color, head string) string { return font(color, "━━━━"+head) }
	row("", "<b>transitions</b>: 3. event detail +1.204s = step 3, 1.204 s into the session")
	row(arrow(colorState, "▶"), "×12, first #3 = 12 identical steps merged (thicker)")
	seen := map[string]bool{}
	for _, k := range []protocol.StepKind{protocol.StepLifecycle, protocol.StepState, protocol.StepTool, protocol.StepConfirmation,
		protocol.StepReply, protocol.StepOutput, protocol.StepHandoff, protocol.StepProgress} {
		st := styleOf(k)
		if seen[st.legend] {
			continue
		}
		seen[st.legend] = true
		head := "▶"
		switch st.arrowhead {
		case "empty":
			head = "▷"
		case "vee":
			head = "&gt;"
		}
		sample := arrow(st.color, head)
		if st.bold {
			sample = "<b>" + sample + "</b>"
		}
		row(sample, font(st.color, st.legend))
	}
	row(font(colorQuiet, "╌╌╌╌▶"), "inferred by the checker (a timeout), dashed")
	row(arrow(colorViolation, "▶"), font(colorViolation, "breaks a rule: RULE-ID: reason"))
	row(arrow(colorState, "▶"), font(colorInfo, "informative finding (info)"))
	row(font(colorFaint, "┈┈┈┈&gt;"), "model transition the session did not take")
	b.WriteString("</table>")
	var t strings.Builder
	t.WriteString(`<<table border="0" cellspacing="6"><tr><td valign="top" align="left">`)
	for i, l := range head {
		if i > 0 {
			t.WriteString(`<br align="left"/>`)
		}
		t.WriteString(htmlText(l))
	}
	t.WriteString(`<br align="left"/></td><td valign="top"><font point-size="9">`)
	t.WriteString(b.String())
	t.WriteString("</font></td></tr></table>>")
	return t.String()
}
