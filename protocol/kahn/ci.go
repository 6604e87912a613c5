package kahn

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol"
)

// The CI sibling schema (contracts/schemas/transitions.schema.json, written
// by kahn_emit.py): the same {ts, run_id, event} base with the events
// run_start, node_transition, node_attempt and run_end, and no agent_id.
// Its rules are KC-* (shared/notes/asp-kahn.md §2.4).

// CI rule IDs.
var (
	ruleCB01 = &protocol.Rule{
		ID: "KC-B01", Level: protocol.Must, Party: protocol.Producer,
		Summary: "Every CI event has ts (RFC 3339 with milliseconds and Z), run_id and event (run_start, node_transition, node_attempt, run_end).",
		Doc:     "ts, run_id and event are present and well formed.",
		Spec:    "asp-kahn.md §2.4 (CI transitions.schema.json base)",
	}
	ruleCB02 = &protocol.Rule{
		ID: "KC-B02", Level: protocol.Must, Party: protocol.Producer,
		Summary: "Each CI event's required fields are present with their JSON types.",
		Doc:     "The variant's fields are present with their JSON types.",
		Spec:    "asp-kahn.md §2.4 (CI event variants)",
	}
	ruleCB03 = &protocol.Rule{
		ID: "KC-B03", Level: protocol.Must, Party: protocol.Producer,
		Summary: "from/to are NodeStatus values (pending, ready, running, done, failed, blocked) and outcome an Outcome (clean, clean_with_flake, partial, stuck, catastrophic).",
		Doc:     "from/to are NodeStatus values, outcome an Outcome.",
		Spec:    "asp-kahn.md §2.4 (NodeStatus, Outcome)",
	}
	ruleC01 = &protocol.Rule{
		ID: "KC-01", Level: protocol.Must, Party: protocol.Producer,
		Summary: "node_transition carries attempt if and only if it moves to running.",
		Doc:     "Node_transition.attempt is present if and only if to is running.",
		Spec:    "asp-kahn.md §2.4 KC-01",
	}
	ruleC02 = &protocol.Rule{
		ID: "KC-02", Level: protocol.Must, Party: protocol.Producer,
		Summary: "node_attempt has no backoff_s on attempt 1, and a given backoff_s is min(2^(attempt-1), 60) seconds.",
		Doc:     "Node_attempt.backoff_s is absent on attempt 1; when given it is min(2^(attempt-1), 60) seconds.",
		Spec:    "asp-kahn.md §2.4 KC-02",
	}
	ruleC02W = &protocol.Rule{
		ID: "KC-02W", Level: protocol.Should, Party: protocol.Producer,
		Summary: "node_attempt gives backoff_s on every attempt after the first [INFERRED].",
		Doc:     "backoff_s is present on attempts after the first [INFERRED].",
		Spec:    "asp-kahn.md §2.4 KC-02 ([INFERRED] half)",
	}
	ruleC03 = &protocol.Rule{
		ID: "KC-03", Level: protocol.Must, Party: protocol.Producer,
		Summary: "A done_when result has a tail only when rc is not 0, and the tail has at most 4096 characters.",
		Doc:     "A done_when result has a tail only when rc != 0, of at most 4096 characters.",
		Spec:    "asp-kahn.md §2.4 KC-03",
	}
	ruleC04 = &protocol.Rule{
		ID: "KC-04", Level: protocol.Must, Party: protocol.Producer,
		Summary: "run_end omits exit_code when it is 0 and gives it on stuck and catastrophic outcomes.",
		Doc:     "run_end.exit_code is omitted when 0 and present on stuck and catastrophic outcomes.",
		Spec:    "asp-kahn.md §2.4 KC-04",
	}
	ruleC05 = &protocol.Rule{
		ID: "KC-05", Level: protocol.Must, Party: protocol.Producer,
		Summary: "A node_transition reason reads <kind>[:<detail>].",
		Doc:     "reason reads <kind>[:<detail>].",
		Spec:    "asp-kahn.md §2.4 KC-05",
	}
	ruleC06 = &protocol.Rule{
		ID: "KC-06", Level: protocol.Should, Party: protocol.Producer,
		Summary: "A clean_with_flake outcome counts flake_retries above 0 [INFERRED].",
		Doc:     "A clean_with_flake outcome has flake_retries > 0 [INFERRED].",
		Spec:    "asp-kahn.md §2.4 KC-06 ([INFERRED])",
	}
	ruleCS01 = &protocol.Rule{
		ID: "KC-S01", Level: protocol.Should, Party: protocol.Producer,
		Summary: "Node transitions follow pending → ready → running → done/failed/running and pending|ready → blocked, continuously [INFERRED].",
		Doc:     "Node transitions follow pending → ready → running → done, failed or running (retry), pending|ready → blocked, each starting where the node's previous one ended [INFERRED graph: not published].",
		Spec:    "asp-kahn.md §2.4 (node transition graph, [INFERRED]: not published)",
	}
	ruleCR01 = &protocol.Rule{
		ID: "KC-R01", Level: protocol.Should, Party: protocol.Producer,
		Summary: "run_end's done, failed and blocked counts match the nodes' last statuses in the stream [INFERRED].",
		Doc:     "run_end's done/failed/blocked counts match the nodes' last statuses in the stream [INFERRED; producers may abbreviate].",
		Spec:    "asp-kahn.md §2.4 (run_end counts, [INFERRED])",
	}
)

var ciRules = []*protocol.Rule{ruleCB01, ruleCB02, ruleCB03, ruleC01, ruleC02, ruleC02W, ruleC03, ruleC04, ruleC05, ruleC06, ruleCS01, ruleCR01}

// CI events and enums.
const (
	ciRunStart   = "run_start"
	ciTransition = "node_transition"
	ciAttempt    = "node_attempt"
	ciRunEnd     = "run_end"
)

var ciEvents = map[string]bool{ciRunStart: true, ciTransition: true, ciAttempt: true, ciRunEnd: true}

const (
	nPending = "pending"
	nReady   = "ready"
	nRunning = "running"
	nDone    = "done"
	nFailed  = "failed"
	nBlocked = "blocked"
)

var nodeStatuses = map[string]bool{nPending: true, nReady: true, nRunning: true, nDone: true, nFailed: true, nBlocked: true}

var ciOutcomes = map[string]bool{"clean": true, "clean_with_flake": true, "partial": true, "stuck": true, "catastrophic": true}

var ciEdges = []protocol.Transition{
	{From: nPending, To: nReady, Label: "node_transition"},
	{From: nReady, To: nRunning, Label: "node_transition (attempt)"},
	{From: nRunning, To: nDone, Label: "node_transition"},
	{From: nRunning, To: nFailed, Label: "node_transition"},
	{From: nRunning, To: nRunning, Label: "retry (attempt)"},
	{From: nPending, To: nBlocked, Label: "dependency failed"},
	{From: nReady, To: nBlocked, Label: "dependency failed"},
}

var ciLegal = edgeSet(ciEdges)

var ciFields = map[string][]field{
	ciRunStart:   {{"total_nodes", tInt, true}},
	ciTransition: {{"node_id", tString, true}, {"from", tString, true}, {"to", tString, true}, {"attempt", tInt, false}, {"reason", tString, false}},
	ciAttempt: {{"node_id", tString, true}, {"attempt", tInt, true}, {"duration_s", tNumber, true}, {"converged", tBool, true},
		{"backoff_s", tNumber, false}},
	ciRunEnd: {{"outcome", tString, true}, {"done", tInt, true}, {"failed", tInt, true}, {"blocked", tInt, true},
		{"total_duration_s", tNumber, true}, {"total_attempts", tInt, false}, {"flake_retries", tInt, false}, {"exit_code", tInt, false}},
}

const maxTail = 4096

// NewCI returns the model of KAHN's CI transition events (name
// "kahn-ci"). Sessions are nodes, named "<run_id>/<node_id>"; run_start and
// run_end are drawn on the run's lane (the run_id), state "run". A run's
// nodes are finished at its run_end.
func NewCI() protocol.Model { return ciModel{} }

type ciModel struct{}

// Name returns "kahn-ci".
func (ciModel) Name() string { return "kahn-ci" }

// Rules lists the CI rules.
func (ciModel) Rules() []protocol.Rule { return protocol.Values(ciRules) }

// Recognize reports whether m is a KAHN CI event: event names one of the
// four CI variants, with run_id and ts strings.
func (ciModel) Recognize(m *protocol.Message) bool {
	f := &m.Doc.Routing
	return ciEvents[f.Event] && f.RunID != "" && f.TS != ""
}

// Machine returns the node lifecycle [INFERRED] and the run lane.
func (ciModel) Machine() protocol.Machine {
	return protocol.Machine{
		States: []protocol.State{
			{Name: nPending, Kind: protocol.StateInitial}, {Name: nReady}, {Name: nRunning},
			{Name: nDone, Kind: protocol.StateTerminal}, {Name: nFailed, Kind: protocol.StateError},
			{Name: nBlocked, Kind: protocol.StateError}, {Name: stRun},
		},
		Transitions: append(append([]protocol.Transition(nil), ciEdges...),
			protocol.Transition{From: stRun, To: stRun, Label: "run_start / run_end"}),
	}
}

// NewChecker starts a run of the CI checker.
func (ciModel) NewChecker(r protocol.Reporter, _ *protocol.Options) protocol.Checker {
	return &ciChecker{r: r, runs: map[string]*ciRun{}}
}

type ciNode struct {
	status      string
	messages    int
	first, last time.Duration
}

type ciRun struct {
	nodes       map[string]*ciNode
	messages    int
	first, last time.Duration
}

type ciChecker struct {
	r    protocol.Reporter
	runs map[string]*ciRun
}

// Handle checks one CI event.
func (c *ciChecker) Handle(m *protocol.Message) {
	if !isJSONObject(m) {
		c.r.Report(ruleCB01, m.Doc.Routing.RunID, m, "not JSON", "line %d is not a JSON object; KAHN streams hold one JSON object per line", m.Index+1)
		return
	}
	e := &event{m: m, obj: members(m.Doc)}
	if !c.base(e) {
		return
	}
	c.fields(e)
	run := c.runs[e.runID]
	if run == nil {
		run = &ciRun{nodes: map[string]*ciNode{}, first: m.Offset}
		c.runs[e.runID] = run
	}
	switch e.kind {
	case ciRunStart:
		run.messages++
		run.last = m.Offset
		c.step(e, e.runID, stRun, stRun, protocol.StepLifecycle, fmt.Sprintf("%d nodes", intOr(e, "total_nodes")))
	case ciTransition, ciAttempt:
		id := e.str("node_id")
		if id == "" {
			return
		}
		n := run.nodes[id]
		if n == nil {
			n = &ciNode{status: nPending, first: m.Offset}
			run.nodes[id] = n
		}
		n.messages++
		n.last = m.Offset
		sess := e.runID + "/" + id
		if e.kind == ciTransition {
			c.transition(e, sess, n)
		} else {
			c.attempt(e, sess, n)
		}
	case ciRunEnd:
		run.messages++
		run.last = m.Offset
		c.runEnd(e, run)
		c.step(e, e.runID, stRun, stRun, protocol.StepLifecycle, e.str("outcome"))
		c.finishRun(e.runID, run, true)
	}
}

func intOr(e *event, k string) int64 {
	n, _ := e.int(k)
	return n
}

func (c *ciChecker) base(e *event) bool {
	var bad []string
	runID, ok := e.obj["run_id"].Str()
	if !ok || !runIDRe.MatchString(runID) {
		bad = append(bad, fmt.Sprintf("run_id %s does not match ^[a-zA-Z0-9][a-zA-Z0-9_-]{0,63}$", protocol.Clip(string(e.obj["run_id"]), 70)))
	}
	ts, ok := e.obj["ts"].Str()
	if !ok || !tsRe.MatchString(ts) {
		bad = append(bad, fmt.Sprintf("ts %s is not an RFC 3339 UTC time with milliseconds", protocol.Clip(string(e.obj["ts"]), 40)))
	}
	ev, _ := e.obj["event"].Str()
	if !ciEvents[ev] {
		bad = append(bad, fmt.Sprintf("event %s is not one of run_start, node_transition, node_attempt, run_end", protocol.Clip(string(e.obj["event"]), 40)))
	}
	e.runID, e.kind = runID, ev
	if len(bad) > 0 {
		c.r.Report(ruleCB01, runID, e.m, "bad base fields", "%s", strings.Join(bad, "; "))
	}
	return runID != "" && ciEvents[ev]
}

func (c *ciChecker) fields(e *event) {
	sess := e.runID
	if id, ok := e.obj["node_id"].Str(); ok {
		sess += "/" + id
	}
	var problems []string
	for _, f := range ciFields[e.kind] {
		v, present := e.obj[f.name]
		if !present {
			if f.required {
				problems = append(problems, "missing "+f.name)
			}
			continue
		}
		if p := typeProblem(f, v); p != "" {
			problems = append(problems, p)
		}
	}
	if e.kind == ciAttempt {
		problems = append(problems, c.doneWhen(e, sess)...)
	}
	if len(problems) > 0 {
		c.r.Report(ruleCB02, sess, e.m, "bad "+e.kind+" fields", "%s: %s", e.kind, strings.Join(problems, "; "))
	}
	for _, k := range []string{"from", "to"} {
		if s, ok := e.obj[k].Str(); ok && e.kind == ciTransition && !nodeStatuses[s] {
			c.r.Report(ruleCB03, sess, e.m, "unknown node status", "%s %q is not a NodeStatus (pending, ready, running, done, failed, blocked)", k, protocol.Clip(s, 40))
		}
	}
	if s, ok := e.obj["outcome"].Str(); ok && e.kind == ciRunEnd && !ciOutcomes[s] {
		c.r.Report(ruleCB03, sess, e.m, "unknown outcome", "outcome %q is not an Outcome (clean, clean_with_flake, partial, stuck, catastrophic)", protocol.Clip(s, 40))
	}
}

// typeProblem describes a field of the wrong JSON type, or returns "".
func typeProblem(f field, v payload.Value) string {
	k := v.Kind()
	switch f.typ {
	case tString:
		if k != payload.String {
			return fmt.Sprintf("%s is a JSON %s, not a string", f.name, k)
		}
	case tInt:
		if _, ok := v.IntToken(); !ok { // an integer token, as Python's json.loads reads one (event.int)
			return fmt.Sprintf("%s is %s, not an integer", f.name, protocol.Clip(string(v), 20))
		}
	case tNumber:
		if k != payload.Number {
			return fmt.Sprintf("%s is a JSON %s, not a number", f.name, k)
		}
	case tBool:
		if k != payload.Bool {
			return fmt.Sprintf("%s is a JSON %s, not a boolean", f.name, k)
		}
	}
	return ""
}

// doneWhen checks node_attempt.done_when_results (types here, KC-03 rules
// reported directly).
func (c *ciChecker) doneWhen(e *event, sess string) []string {
	v, ok := e.obj["done_when_results"]
	if !ok {
		return []string{"missing done_when_results"}
	}
	if v.Kind() != payload.Array {
		return []string{fmt.Sprintf("done_when_results is a JSON %s, not an array", v.Kind())}
	}
	var items []payload.Value
	v.Elements(func(_ int, it payload.Value) bool { items = append(items, it); return true })
	var problems []string
	fields := []field{{"cmd", tString, true}, {"rc", tInt, true}, {"duration_s", tNumber, true}, {"tail", tString, false}, {"truncated", tBool, false}}
	for i, it := range items {
		obj, ok := it.Object()
		if !ok {
			problems = append(problems, fmt.Sprintf("done_when_results[%d] is not an object", i))
			continue
		}
		for _, f := range fields {
			fv, present := obj[f.name]
			if !present {
				if f.required {
					problems = append(problems, fmt.Sprintf("done_when_results[%d] lacks %s", i, f.name))
				}
				continue
			}
			if p := typeProblem(f, fv); p != "" {
				problems = append(problems, fmt.Sprintf("done_when_results[%d].%s", i, p))
			}
		}
		rc, hasRC := obj["rc"].IntToken()
		if tail, ok := obj["tail"].Str(); ok {
			if hasRC && rc == 0 {
				c.r.Report(ruleC03, sess, e.m, "tail with rc 0", "done_when_results[%d] (%s) has a tail although rc is 0; the tail is kept only for failing commands", i, protocol.Clip(strOf(obj["cmd"]), 40))
			}
			if n := utf8.RuneCountInString(tail); n > maxTail {
				c.r.Report(ruleC03, sess, e.m, "tail too long", "done_when_results[%d] has a tail of %d characters; it is cropped at %d (with truncated: true)", i, n, maxTail)
			}
		}
	}
	return problems
}

func strOf(r payload.Value) string {
	s, _ := r.Str()
	return s
}

func (c *ciChecker) transition(e *event, sess string, n *ciNode) {
	m := e.m
	from, to := e.str("from"), e.str("to")
	_, hasAttempt := e.obj["attempt"]
	switch {
	case to == nRunning && !hasAttempt:
		c.r.Report(ruleC01, sess, m, "running without attempt", "a node_transition to running carries the attempt number; this one has none")
	case to != nRunning && hasAttempt && to != "":
		c.r.Report(ruleC01, sess, m, "attempt without running", "attempt is given only on transitions to running; this one goes to %s", to)
	}
	if r := e.str("reason"); r != "" && !reasonRe.MatchString(r) {
		c.r.Report(ruleC05, sess, m, "reason grammar", "reason %q does not read <kind>[:<detail>] (e.g. max_ralph_iters_reached)", protocol.Clip(r, 60))
	}
	if nodeStatuses[from] && nodeStatuses[to] {
		switch {
		case n.messages > 1 && from != n.status:
			c.r.Report(ruleCS01, sess, m, "from ≠ previous to", "this transition starts at %s, but the node's previous transition ended at %s", from, n.status)
		case !ciLegal[[2]string{from, to}]:
			c.r.Report(ruleCS01, sess, m, from+" → "+to, "%s → %s is not in the node lifecycle this checker assumes (pending → ready → running → done/failed/running; pending|ready → blocked); the published schema does not give the graph", from, to)
		}
	}
	shownFrom := n.status
	if nodeStatuses[from] {
		shownFrom = from
	}
	if nodeStatuses[to] {
		n.status = to
	}
	det := e.str("reason")
	if a, ok := e.int("attempt"); ok {
		det = strings.TrimSpace(fmt.Sprintf("attempt %d %s", a, det))
	}
	kind := protocol.StepState
	if to == nDone || to == nFailed || to == nBlocked {
		kind = protocol.StepLifecycle
	}
	c.step(e, sess, shownFrom, n.status, kind, det)
}

func (c *ciChecker) attempt(e *event, sess string, n *ciNode) {
	a, hasA := e.int("attempt")
	b, hasB := e.obj["backoff_s"].Number()
	switch {
	case hasA && a == 1 && hasB:
		c.r.Report(ruleC02, sess, e.m, "backoff on attempt 1", "attempt 1 has backoff_s %g; the first attempt has no backoff, so backoff_s is omitted", b)
	case hasA && a >= 2 && !hasB:
		c.r.Report(ruleC02W, sess, e.m, "no backoff_s", "attempt %d has no backoff_s; retries wait min(2^(attempt-1), 60) s and are expected to say so", a)
	case hasA && a >= 2 && hasB:
		want := math.Min(math.Pow(2, float64(a-1)), 60)
		if math.Abs(b-want) > 1e-6 {
			c.r.Report(ruleC02, sess, e.m, "backoff_s off schedule", "attempt %d has backoff_s %g; the schedule is min(2^(attempt-1), 60) = %g s", a, b, want)
		}
	}
	det := fmt.Sprintf("attempt %d", a)
	if string(e.obj["converged"]) == "true" {
		det += " converged"
	}
	c.step(e, sess, n.status, n.status, protocol.StepProgress, det)
}

func (c *ciChecker) runEnd(e *event, run *ciRun) {
	m := e.m
	outcome := e.str("outcome")
	code, hasCode := e.int("exit_code")
	switch {
	case hasCode && code == 0:
		c.r.Report(ruleC04, e.runID, m, "exit_code 0 given", "run_end gives exit_code 0; a zero exit code is omitted")
	case !hasCode && (outcome == "stuck" || outcome == "catastrophic"):
		c.r.Report(ruleC04, e.runID, m, "no exit_code", "run_end with outcome %s gives no exit_code; stuck and catastrophic runs report theirs", outcome)
	}
	if outcome == "clean_with_flake" {
		if f, ok := e.int("flake_retries"); !ok || f <= 0 {
			c.r.Report(ruleC06, e.runID, m, "flake without retries", "outcome clean_with_flake, but flake_retries is %s; the outcome means some node passed only on a retry", protocol.Clip(string(e.obj["flake_retries"]), 20))
		}
	}
	counts := map[string]int64{}
	for _, n := range run.nodes {
		counts[n.status]++
	}
	var diffs []string
	for _, k := range []string{nDone, nFailed, nBlocked} {
		if got, ok := e.int(k); ok && got != counts[k] {
			diffs = append(diffs, fmt.Sprintf("%s is %d but %d nodes ended %s in the stream", k, got, counts[k], k))
		}
	}
	if len(diffs) > 0 {
		c.r.Report(ruleCR01, e.runID, m, "counts differ from stream", "run_end: %s (producers may abbreviate streams, hence a warning)", strings.Join(diffs, "; "))
	}
}

// finishRun reports the run's nodes and lane done and drops the run.
func (c *ciChecker) finishRun(id string, run *ciRun, complete bool) {
	ids := make([]string, 0, len(run.nodes))
	for n := range run.nodes {
		ids = append(ids, n)
	}
	slices.Sort(ids)
	for _, n := range ids {
		node := run.nodes[n]
		c.r.SessionDone(protocol.SessionSummary{Session: id + "/" + n, Messages: node.messages, First: node.first, Last: node.last, State: node.status, Complete: complete})
	}
	if run.messages > 0 {
		c.r.SessionDone(protocol.SessionSummary{Session: id, Messages: run.messages, First: run.first, Last: run.last, State: stRun, Complete: complete})
	}
	delete(c.runs, id)
}

func (c *ciChecker) step(e *event, session, from, to string, kind protocol.StepKind, detail string) {
	c.r.Step(protocol.Step{Session: session, Index: e.m.Index, Offset: e.m.Offset, From: from, To: to, Label: e.kind, Detail: detail, Kind: kind})
}

// Finish reports the runs whose run_end the stream did not hold.
func (c *ciChecker) Finish() {
	ids := make([]string, 0, len(c.runs))
	for id := range c.runs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		c.finishRun(id, c.runs[id], false)
	}
}
