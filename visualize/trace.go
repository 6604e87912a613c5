package visualize

import (
	"sort"
	"strings"
	"time"

	"github.com/aaep-tools/aaepkit/protocol"
)

// Limits bound what one session's Trace keeps, whatever the session's length.
// Zero fields take their defaults.
type Limits struct {
	// MaxStates is how many distinct states a trace draws (default 64).
	// Further new states are folded into one "other states" node.
	MaxStates int
	// MaxEdges is how many distinct transitions a trace keeps (default 120).
	// Beyond it, new transitions merge more coarsely: first ignoring their
	// detail, then, past twice the limit, their label and kind, so that the
	// edges never outnumber 2×MaxEdges plus one per pair of states.
	MaxEdges int
	// MaxNotes is how many distinct findings (rule and reason) one edge or
	// state lists (default 4); further ones are only counted.
	MaxNotes int
	// MaxDetails is how many distinct details (tool call, output chunk, ...)
	// one transition keeps apart (default 4): further steps of the same
	// transition with new details merge into one edge whose detail is
	// Various, so that a session of 10,000 chunks, each with its own
	// position, still draws as a few edges.
	MaxDetails int
}

// Default limits.
const (
	DefaultMaxStates  = 64
	DefaultMaxEdges   = 120
	DefaultMaxNotes   = 4
	DefaultMaxDetails = 4
)

// recentSteps is how many recent message indexes a trace remembers, to
// attach a late finding (one reported after later messages were seen) to
// the edge of the step it concerns.
const recentSteps = 256

// OtherStates is the name of the node that stands for the states beyond
// Limits.MaxStates.
const OtherStates = "(other states)"

// Various replaces a detail or label that differs between the steps merged
// into one edge once the edge limit is reached.
const Various = "(various)"

func (l Limits) withDefaults() Limits {
	if l.MaxStates <= 0 {
		l.MaxStates = DefaultMaxStates
	}
	if l.MaxEdges <= 0 {
		l.MaxEdges = DefaultMaxEdges
	}
	if l.MaxNotes <= 0 {
		l.MaxNotes = DefaultMaxNotes
	}
	if l.MaxDetails <= 0 {
		l.MaxDetails = DefaultMaxDetails
	}
	return l
}

// Note is one distinct finding shown on an edge or a state: the first
// finding of its rule and reason, and how many there were.
type Note struct {
	RuleID string
	Level  protocol.Level
	Short  string
	// Message is the first finding's full sentence (shown as a tooltip).
	Message string
	// Index and Offset locate the first finding (Index -1: end of session).
	Index  int64
	Offset time.Duration
	Count  int64
}

// Notes is a bounded list of distinct findings.
type Notes struct {
	List []Note
	// More counts findings that did not fit (beyond Limits.MaxNotes distinct ones).
	More int64
}

func (n *Notes) add(f *protocol.Finding, max int) {
	for i := range n.List {
		if n.List[i].RuleID == f.RuleID && n.List[i].Short == f.Short {
			n.List[i].Count++
			if f.Level > n.List[i].Level {
				n.List[i].Level = f.Level
			}
			return
		}
	}
	if len(n.List) >= max {
		n.More++
		return
	}
	n.List = append(n.List, Note{RuleID: f.RuleID, Level: f.Level, Short: f.Short, Message: f.Message, Index: f.Index, Offset: f.Offset, Count: 1})
}

// Worst returns the highest level among the notes (0 when empty).
func (n *Notes) Worst() protocol.Level {
	var w protocol.Level
	for _, x := range n.List {
		if x.Level > w {
			w = x.Level
		}
	}
	return w
}

// Total is the number of findings the notes stand for.
func (n *Notes) Total() int64 {
	t := n.More
	for _, x := range n.List {
		t += x.Count
	}
	return t
}

// Node is one state of a session's trace.
type Node struct {
	Name string
	// Visits counts the steps that entered the state.
	Visits int64
	// FirstStep is the number of the step that first touched the state.
	FirstStep int64
	// Notes are findings about messages that caused no step while the
	// session was in this state.
	Notes Notes
}

// Edge is one transition of a session's trace: one step, or several
// identical steps merged.
type Edge struct {
	From, To string
	// Label and Detail come from the steps (Various when merged steps differ).
	Label, Detail string
	Kind          protocol.StepKind
	// Synthetic marks steps inferred by the checker (timeouts).
	Synthetic bool
	// Count is how many steps the edge stands for.
	Count int64
	// First and Last are the numbers (1-based, within the session) of the
	// first and last step merged into the edge.
	First, Last int64
	// FirstIndex is the message index of the first step.
	FirstIndex int64
	// FirstOffset and LastOffset are the first and last step's offsets
	// since the capture's start.
	FirstOffset, LastOffset time.Duration
	// Notes are the rules the steps break.
	Notes Notes
}

type edgeKey struct {
	from, to, label, detail string
	kind                    protocol.StepKind
	synthetic               bool
	rules                   string
}

// pendingStep is a step whose message may still get findings.
type pendingStep struct {
	step protocol.Step
	num  int64
}

// Trace is one session's path through its protocol's state machine, with
// the findings that concern it. Its size is bounded by its Limits.
type Trace struct {
	// Stream is the stream of the recording the session is in (a
	// subscription of a serve --record recording; "" in a recording that
	// is one stream).
	Stream   string
	Protocol string
	Session  string
	// Summary is the session's summary, valid when Done is true.
	Summary protocol.SessionSummary
	Done    bool
	// Steps and Findings count everything the trace received.
	Steps    int64
	Findings int64
	// Levels counts findings per level.
	Levels map[protocol.Level]int64

	limits   Limits
	first    time.Duration
	hasFirst bool

	nodes   []*Node
	nodeIdx map[string]*Node
	edges   []*Edge
	edgeIdx map[edgeKey]*Edge
	// lastKey and lastEdge are the last step's key and edge.
	lastKey  edgeKey
	lastEdge *Edge
	// details counts the distinct details of each transition (its key
	// without the detail).
	details  map[edgeKey]int
	current  string // state after the last committed step; "" before any
	startAt  string // From of the first step
	endNotes Notes

	// The message being collected: its steps and findings wait until a
	// later message shows that the message is complete.
	pendIndex    int64
	pendActive   bool
	pendSteps    []pendingStep
	pendFindings []protocol.Finding

	// recent maps recent message indexes to the edge of their last step.
	recent        []recentEntry // grows to recentSteps, then wraps
	recentNext    int
	lastCommitted int64
	hasCommitted  bool
}

type recentEntry struct {
	index int64
	edge  *Edge
}

func newTrace(proto, session string, limits Limits) *Trace {
	return &Trace{
		Protocol: proto,
		Session:  session,
		Levels:   map[protocol.Level]int64{},
		limits:   limits.withDefaults(),
		nodeIdx:  map[string]*Node{},
		edgeIdx:  map[edgeKey]*Edge{},
		details:  map[edgeKey]int{},
	}
}

// NewTrace returns an empty trace of one session, for building traces by
// hand (tests, other tools); a Collector makes them from an engine run.
func NewTrace(proto, session string, limits Limits) *Trace {
	return newTrace(proto, session, limits)
}

// AddStep adds one step of the session.
func (t *Trace) AddStep(s protocol.Step) {
	t.Steps++
	t.seeTime(s.Offset, s.Index)
	if t.pendActive && s.Index != t.pendIndex {
		t.flush()
	}
	if !t.pendActive {
		t.pendActive, t.pendIndex = true, s.Index
	}
	if len(t.pendSteps) == maxPendingSteps {
		// Many steps for one message: commit the oldest now (findings go
		// to the last step anyway).
		t.commit(t.pendSteps[0], nil)
		copy(t.pendSteps, t.pendSteps[1:])
		t.pendSteps = t.pendSteps[:len(t.pendSteps)-1]
	}
	t.pendSteps = append(t.pendSteps, pendingStep{step: s, num: t.Steps})
}

// maxPendingSteps bounds the steps one message may hold pending.
const maxPendingSteps = 16

// AddFinding adds one finding about the session.
func (t *Trace) AddFinding(f protocol.Finding) {
	t.Findings++
	t.Levels[f.Level]++
	t.seeTime(f.Offset, f.Index)
	switch {
	case f.Index < 0:
		t.endNotes.add(&f, t.limits.MaxNotes)
	case t.pendActive && f.Index == t.pendIndex:
		t.addPendingFinding(f)
	case t.pendActive && f.Index < t.pendIndex, !t.pendActive && t.hasCommitted && f.Index <= t.lastCommitted:
		// A late finding about an earlier message.
		if e := t.recentEdge(f.Index); e != nil {
			e.Notes.add(&f, t.limits.MaxNotes)
			return
		}
		t.node(t.stateForNotes()).Notes.add(&f, t.limits.MaxNotes)
	default:
		// A finding about a message not seen yet: it becomes the pending
		// message, so that its step (if it comes next) carries it.
		t.flush()
		t.pendActive, t.pendIndex = true, f.Index
		t.addPendingFinding(f)
	}
}

// addPendingFinding keeps f with the pending message; the number kept is
// bounded, later ones go straight to their notes.
func (t *Trace) addPendingFinding(f protocol.Finding) {
	if len(t.pendFindings) < 4*t.limits.MaxNotes {
		t.pendFindings = append(t.pendFindings, f)
		return
	}
	t.node(t.stateForNotes()).Notes.add(&f, t.limits.MaxNotes)
}

// SetSummary records the session's summary (the session is done).
// IsSession reports whether t is a session's trace, not a block about the
// stream (protocol.SessionSummary.StreamLevel: a source's subscription
// handshake, the messages no protocol could take). Both are drawn; only
// sessions are counted as sessions.
func (t *Trace) IsSession() bool {
	return t.Protocol != protocol.StreamProtocol && t.Session != "" && !(t.Done && t.Summary.StreamLevel())
}

// SessionCount is the number of traces that are sessions (IsSession).
func SessionCount(traces []*Trace) int64 {
	var n int64
	for _, t := range traces {
		if t.IsSession() {
			n++
		}
	}
	return n
}

func (t *Trace) SetSummary(s protocol.SessionSummary) {
	t.flush()
	t.Summary, t.Done = s, true
	if s.State != "" {
		t.node(t.fold(s.State))
	}
	if s.Messages > 0 {
		t.seeTime(s.First, 0)
	}
}

func (t *Trace) seeTime(d time.Duration, index int64) {
	if index < 0 {
		return
	}
	if !t.hasFirst || d < t.first {
		t.first, t.hasFirst = d, true
	}
}

func (t *Trace) recentEdge(index int64) *Edge {
	for i := range t.recent {
		if t.recent[i].index == index {
			return t.recent[i].edge
		}
	}
	return nil
}

func (t *Trace) remember(index int64, e *Edge) {
	if !t.hasCommitted || index > t.lastCommitted {
		t.lastCommitted, t.hasCommitted = index, true
	}
	if len(t.recent) < recentSteps {
		t.recent = append(t.recent, recentEntry{index: index, edge: e})
		return
	}
	t.recent[t.recentNext] = recentEntry{index: index, edge: e}
	t.recentNext = (t.recentNext + 1) % recentSteps
}

// stateForNotes is the state a finding without a step attaches to.
func (t *Trace) stateForNotes() string {
	if t.current != "" {
		return t.current
	}
	if len(t.pendSteps) > 0 {
		return t.fold(t.pendSteps[0].step.From)
	}
	return noState
}

// noState names the node that holds findings of a session with no step.
const noState = "(no state)"

// flush commits the pending message: its steps become edges, its findings
// go to the last of its steps (or, when it had none, to the current state).
func (t *Trace) flush() {
	if !t.pendActive {
		return
	}
	if len(t.pendSteps) == 0 {
		n := t.node(t.stateForNotes())
		for i := range t.pendFindings {
			n.Notes.add(&t.pendFindings[i], t.limits.MaxNotes)
		}
	}
	for i, ps := range t.pendSteps {
		var fs []protocol.Finding
		if i == len(t.pendSteps)-1 {
			fs = t.pendFindings
		}
		e := t.commit(ps, fs)
		if i == len(t.pendSteps)-1 {
			t.remember(t.pendIndex, e)
		}
	}
	t.pendActive = false
	t.pendSteps = t.pendSteps[:0]
	t.pendFindings = t.pendFindings[:0]
}

func (t *Trace) commit(ps pendingStep, fs []protocol.Finding) *Edge {
	s := ps.step
	from, to := t.fold(s.From), t.fold(s.To)
	if t.startAt == "" {
		t.startAt = from
	}
	t.node(from)
	n := t.node(to)
	n.Visits++
	t.current = to
	k := edgeKey{from: from, to: to, label: s.Label, detail: s.Detail, kind: s.Kind, synthetic: s.Synthetic, rules: ruleSig(fs)}
	if t.lastEdge != nil && k == t.lastKey {
		// The same transition as the last step: the common case of long
		// sessions (streamed chunks, progress), without hashing the key.
		e := t.lastEdge
		e.Count++
		e.Last, e.LastOffset = ps.num, s.Offset
		return e
	}
	t.lastKey = k
	e := t.edgeIdx[k]
	if e == nil && k.detail != "" {
		// A new detail of this transition: keep it apart, up to MaxDetails.
		bare := k
		bare.detail = ""
		if t.details[bare] >= t.limits.MaxDetails {
			k.detail = Various
			e = t.edgeIdx[k]
		} else {
			t.details[bare]++
		}
	}
	if e == nil && len(t.edges) >= t.limits.MaxEdges {
		// Too many distinct transitions: merge more coarsely, first
		// ignoring the detail, then (past twice the limit) the label and
		// kind too, which leaves at most one edge per pair of states.
		if k.detail != "" {
			k.detail = Various
			e = t.edgeIdx[k]
		}
		if e == nil && len(t.edges) >= 2*t.limits.MaxEdges {
			k.label, k.kind = Various, protocol.StepOther
			if k.rules != "" {
				k.rules = "!"
			}
			e = t.edgeIdx[k]
		}
	}
	if e == nil {
		e = &Edge{From: from, To: to, Label: k.label, Detail: k.detail, Kind: k.kind, Synthetic: s.Synthetic,
			First: ps.num, FirstIndex: s.Index, FirstOffset: s.Offset}
		if k.label == Various {
			e.Detail = ""
		}
		t.edgeIdx[k] = e
		t.edges = append(t.edges, e)
	}
	e.Count++
	e.Last, e.LastOffset = ps.num, s.Offset
	for i := range fs {
		e.Notes.add(&fs[i], t.limits.MaxNotes)
	}
	t.lastEdge = e
	return e
}

// ruleSig is the sorted set of rule IDs (violations only) of fs.
func ruleSig(fs []protocol.Finding) string {
	if len(fs) == 0 {
		return ""
	}
	ids := make([]string, 0, len(fs))
	for _, f := range fs {
		ids = append(ids, f.RuleID)
	}
	sort.Strings(ids)
	out := ids[:0]
	for i, id := range ids {
		if i == 0 || id != ids[i-1] {
			out = append(out, id)
		}
	}
	return strings.Join(out, ",")
}

// fold maps a state name to itself, or to OtherStates once MaxStates
// distinct states are known.
func (t *Trace) fold(name string) string {
	if _, ok := t.nodeIdx[name]; ok {
		return name
	}
	if len(t.nodeIdx) >= t.limits.MaxStates {
		return OtherStates
	}
	return name
}

func (t *Trace) node(name string) *Node {
	n := t.nodeIdx[name]
	if n == nil {
		n = &Node{Name: name, FirstStep: t.Steps}
		t.nodeIdx[name] = n
		t.nodes = append(t.nodes, n)
	}
	return n
}

// Flush commits the last message received: until a later message arrives,
// its findings might still be followed by its step. The accessors, DOT and
// Collector.Traces flush; the trace can still receive more afterwards.
func (t *Trace) Flush() { t.flush() }

func (t *Trace) finish() { t.flush() }

// Nodes returns the trace's states in the order they were first reached.
func (t *Trace) Nodes() []*Node { t.finish(); return t.nodes }

// Edges returns the trace's transitions in the order of their first step.
func (t *Trace) Edges() []*Edge { t.finish(); return t.edges }

// EndNotes returns the findings about the end of the session.
func (t *Trace) EndNotes() *Notes { return &t.endNotes }

// Start returns the state the session's first step left ("" when there was none).
func (t *Trace) Start() string { t.finish(); return t.startAt }

// Final returns the state the session ended in: the summary's state when
// the session is done, else the state after its last step.
func (t *Trace) Final() string {
	t.finish()
	if t.Done && t.Summary.State != "" {
		return t.fold(t.Summary.State)
	}
	switch {
	case t.current != "":
		return t.current
	case len(t.nodes) > 0:
		return t.nodes[len(t.nodes)-1].Name
	case t.endNotes.Total() > 0:
		return noState
	}
	return ""
}

// FirstOffset is the offset of the session's first message (since the
// capture's start); edge offsets are drawn relative to it.
func (t *Trace) FirstOffset() time.Duration {
	if t.Done && t.Summary.Messages > 0 && t.Summary.First < t.first {
		return t.Summary.First
	}
	return t.first
}
