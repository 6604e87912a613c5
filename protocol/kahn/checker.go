package kahn

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol"
)

var (
	tsRe         = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)
	runIDRe      = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_-]{0,63}$`)
	agentIDRe    = regexp.MustCompile(`^[a-z0-9][a-z0-9:-]{0,63}$`)
	checkpointRe = regexp.MustCompile(`^[a-z0-9][a-z0-9:.-]{0,127}$`)
	reasonRe     = regexp.MustCompile(`^[a-z][a-z0-9_-]*(:.+)?$`)
)

const (
	maxOutputSummary = 2048
	maxEvidence      = 1024
	maxExtras        = 32
	// endedMemory bounds the memory of ended agents (for KA-R01).
	endedMemory = protocol.DefaultClosedMemory
)

// field types of the schema.
type ftype uint8

const (
	tString ftype = iota + 1
	tInt
	tNumber
	tBool
	tObject
	tAgentID // string, or null on audit_checkpoint
)

type field struct {
	name     string
	typ      ftype
	required bool
}

var baseFields = []field{{"ts", tString, true}, {"run_id", tString, true}, {"event", tString, true}}

// variantFields are each variant's fields after the base.
var variantFields = map[string][]field{
	evStart: {{"agent_id", tAgentID, true}, {"task", tString, true}, {"model", tString, false}},
	evTransition: {{"agent_id", tAgentID, true}, {"step", tInt, true}, {"from", tString, true}, {"to", tString, true},
		{"reason", tString, false}},
	evTool: {{"agent_id", tAgentID, true}, {"step", tInt, true}, {"tool_name", tString, true}, {"duration_s", tNumber, true},
		{"ok", tBool, true}, {"input_summary", tString, false}, {"output_summary", tString, false}, {"error", tString, false}},
	evAudit: {{"agent_id", tAgentID, false}, {"checkpoint_id", tString, true}, {"result", tString, true},
		{"duration_s", tNumber, true}, {"evidence", tObject, false}},
	evEnd: {{"agent_id", tAgentID, true}, {"outcome", tString, true}, {"total_steps", tInt, true}, {"total_tool_calls", tInt, true},
		{"total_audit_checkpoints", tInt, true}, {"audits_passed", tInt, true}, {"audits_failed", tInt, true},
		{"total_duration_s", tNumber, true}, {"convergence_score", tNumber, false}},
}

func (t ftype) String() string {
	return [...]string{"", "a string", "an integer", "a number", "a boolean", "an object", "an agent id string"}[t]
}

// agent is the state of one open (run_id, agent_id).
type agent struct {
	key, run, id string
	// status is the last status a transition reached; "" before the first.
	status  string
	started bool
	// messages counts the agent's events; first/last are their offsets.
	messages    int
	first, last time.Duration
	lastTS      time.Time

	maxStep         int64
	hasStep         bool
	lastTransStep   int64
	hasTrans        bool
	toolCallStep    int64
	hasToolCall     bool
	toolCallTool    string
	tools, audits   int
	passed, failedN int
	extras          []string
}

// shown is the status to draw: before the first transition an agent is
// thinking (the lifecycle's [*] → thinking).
func (a *agent) shown() string {
	if a.status == "" {
		return stThinking
	}
	return a.status
}

// run tracks a run's open agents and its lane of run-scoped audits.
type run struct {
	open        int
	unfinished  bool // an agent of the run was still open at the end
	lane        bool
	messages    int
	first, last time.Duration
	extras      []string
}

type checker struct {
	r      protocol.Reporter
	strict bool
	agents *protocol.Sessions[agent]
	ended  *protocol.Recent[string] // key → final status
	runs   map[string]*run
}

func newChecker(r protocol.Reporter, strict bool) *checker {
	return newCheckerSized(r, strict, endedMemory)
}

// newCheckerSized bounds the memory of ended agents at memory entries.
func newCheckerSized(r protocol.Reporter, strict bool, memory int) *checker {
	return &checker{r: r, strict: strict, agents: protocol.NewSessions[agent](memory),
		ended: protocol.NewRecent[string](memory), runs: map[string]*run{}}
}

// event is one decoded KAHN event.
type event struct {
	m       *protocol.Message
	obj     map[string]payload.Value
	kind    string
	runID   string
	ts      time.Time
	hasTS   bool
	agentID string
	session string
}

func (e *event) str(k string) string {
	s, _ := e.obj[k].Str()
	return s
}

// int reads an integer field of KAHN by its token, not by payload.Value's
// common reading: KAHN's reference is Python, whose json.loads reads 3.0 as
// a float, so a field typed int must be written as an integer (KC-B02,
// K-B02 and every rule that reads step, counts or rc).
func (e *event) int(k string) (int64, bool) { return e.obj[k].IntToken() }

// isJSONObject reports whether m is a JSON object as KAHN's Python
// reference reads one (json.loads): a byte-order mark is refused, and so is
// nesting past payload.MaxDepth, beyond Python's recursion limit.
func isJSONObject(m *protocol.Message) bool {
	return m.Doc.IsObject() && m.Doc.JSONValid()
}

// members returns the top-level members of d by name (the last of
// repeated names).
func members(d *payload.Doc) map[string]payload.Value {
	obj := make(map[string]payload.Value, len(d.Members()))
	for _, mb := range d.Members() {
		obj[string(mb.Name)] = mb.Value
	}
	return obj
}

// Handle checks one KAHN event.
func (c *checker) Handle(m *protocol.Message) {
	if !isJSONObject(m) {
		c.r.Report(ruleB01, m.Doc.Routing.RunID, m, "not JSON", "line %d is not a JSON object; KAHN streams hold one JSON object per line", m.Index+1)
		return
	}
	e := &event{m: m, obj: members(m.Doc)}
	if !c.base(e) {
		return
	}
	c.fields(e)
	if e.kind == evAudit && e.agentID == "" {
		c.laneAudit(e)
		return
	}
	if e.agentID == "" {
		return // reported by fields; no agent to attach it to
	}
	e.session = e.runID + "/" + e.agentID
	a := c.agents.Get(e.session)
	if a == nil {
		if final, ok := c.ended.Get(e.session); ok && e.kind != evStart {
			c.r.Report(ruleR01, e.session, m, e.kind+" after agent_run_end", "agent %s already ended run %s with agent_run_end; no event of it may follow", e.agentID, e.runID)
			c.step(e, e.session, final, final, protocol.StepOther, "after agent_run_end")
			return
		}
		a = c.open(e)
	}
	a.messages++
	a.last = m.Offset
	if e.hasTS {
		if !a.lastTS.IsZero() && e.ts.Before(a.lastTS) {
			c.r.Report(ruleR02, e.session, m, "ts went back", "ts %s is earlier than this agent's previous event (%s); the emitter appends in order, so the file was merged or reordered", e.ts.Format(tsLayout), a.lastTS.Format(tsLayout))
		} else {
			a.lastTS = e.ts
		}
	}
	c.extras(e, &a.extras)
	switch e.kind {
	case evStart:
		c.start(a, e)
	case evTransition:
		c.transition(a, e)
	case evTool:
		c.tool(a, e)
	case evAudit:
		c.audit(a, e)
	case evEnd:
		c.end(a, e)
	}
}

const tsLayout = "2006-01-02T15:04:05.000Z07:00"

// base checks ts, run_id and event; it returns false when the event cannot
// be placed (no run_id or no known event).
func (c *checker) base(e *event) bool {
	m := e.m
	var bad []string
	runID, ok := e.obj["run_id"].Str()
	switch {
	case !ok:
		bad = append(bad, fmt.Sprintf("run_id is %s, not a string", describe(e.obj["run_id"])))
	case !runIDRe.MatchString(runID):
		bad = append(bad, fmt.Sprintf("run_id %q does not match ^[a-zA-Z0-9][a-zA-Z0-9_-]{0,63}$", protocol.Clip(runID, 70)))
	}
	e.runID = runID
	ts, ok := e.obj["ts"].Str()
	switch {
	case !ok:
		bad = append(bad, fmt.Sprintf("ts is %s, not a string", describe(e.obj["ts"])))
	case !tsRe.MatchString(ts):
		bad = append(bad, fmt.Sprintf("ts %q is not an RFC 3339 UTC time with milliseconds (2026-05-05T09:00:00.000Z)", protocol.Clip(ts, 40)))
	default:
		if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
			e.ts, e.hasTS = t, true
		} else {
			bad = append(bad, fmt.Sprintf("ts %q is not a valid date and time", ts))
		}
	}
	ev, ok := e.obj["event"].Str()
	switch {
	case !ok:
		bad = append(bad, fmt.Sprintf("event is %s, not a string", describe(e.obj["event"])))
	case !events[ev]:
		bad = append(bad, fmt.Sprintf("event %q is not one of agent_run_start, agent_transition, tool_invocation, audit_checkpoint, agent_run_end", protocol.Clip(ev, 40)))
	}
	e.kind = ev
	if len(bad) > 0 {
		session := runID
		if id, ok := e.obj["agent_id"].Str(); ok && runID != "" {
			session = runID + "/" + id // the agent's session, where its other findings are
		}
		c.r.Report(ruleB01, session, m, "bad base fields", "%s", strings.Join(bad, "; "))
	}
	return runID != "" && events[ev]
}

func describe(r payload.Value) string {
	if k := r.Kind(); k != payload.Absent {
		return "a JSON " + k.String()
	}
	return "missing"
}

// fields checks the variant's fields: types (B02), enums (B03), patterns
// (B04) and limits (B06).
func (c *checker) fields(e *event) {
	m, sess := e.m, e.runID
	if id, ok := e.obj["agent_id"].Str(); ok {
		sess = e.runID + "/" + id
	}
	var missing, wrong []string
	for _, f := range variantFields[e.kind] {
		v, present := e.obj[f.name]
		if !present {
			if f.required {
				missing = append(missing, f.name)
			}
			continue
		}
		k := v.Kind()
		switch f.typ {
		case tAgentID:
			switch {
			case k == payload.String:
				id, _ := v.Str()
				if !agentIDRe.MatchString(id) {
					c.r.Report(ruleB04, sess, m, "bad agent_id", "agent_id %q does not match ^[a-z0-9][a-z0-9:-]{0,63}$ (lower case, digits, ':' and '-')", protocol.Clip(id, 70))
				}
				e.agentID = id
			case k == payload.Null && e.kind == evAudit:
				// run-scoped
			case k == payload.Null:
				c.r.Report(ruleB04, sess, m, "agent_id null", "agent_id is null on %s; only audit_checkpoint may have a null agent_id (a run-scoped checkpoint)", e.kind)
			default:
				wrong = append(wrong, fmt.Sprintf("agent_id is a JSON %s, not a string", k))
			}
		case tString:
			if k != payload.String {
				wrong = append(wrong, fmt.Sprintf("%s is a JSON %s, not a string", f.name, k))
			}
		case tInt:
			if _, ok := v.IntToken(); !ok { // an integer token, as Python reads one (event.int)
				if k == payload.Number {
					wrong = append(wrong, fmt.Sprintf("%s is %s, not an integer", f.name, protocol.Clip(string(v), 20)))
				} else {
					wrong = append(wrong, fmt.Sprintf("%s is a JSON %s, not an integer", f.name, k))
				}
			}
		case tNumber:
			if k != payload.Number {
				wrong = append(wrong, fmt.Sprintf("%s is a JSON %s, not a number", f.name, k))
			}
		case tBool:
			if k != payload.Bool {
				wrong = append(wrong, fmt.Sprintf("%s is a JSON %s, not a boolean", f.name, k))
			}
		case tObject:
			if k != payload.Object {
				wrong = append(wrong, fmt.Sprintf("%s is a JSON %s, not an object", f.name, k))
			}
		}
	}
	if len(missing) > 0 || len(wrong) > 0 {
		var parts []string
		if len(missing) > 0 {
			parts = append(parts, "missing "+strings.Join(missing, ", "))
		}
		parts = append(parts, wrong...)
		c.r.Report(ruleB02, sess, m, "bad "+e.kind+" fields", "%s: %s", e.kind, strings.Join(parts, "; "))
	}

	// Enums.
	for _, k := range []string{"from", "to"} {
		if e.kind != evTransition {
			break
		}
		if s, ok := e.obj[k].Str(); ok && !statuses[s] {
			if s == "blocked_on_clarification" && !c.strict {
				c.r.Report(ruleB03W, sess, m, "underscored status", "%s is %q; the AgentStatus enum spells it blocked-on-clarification, with hyphens (the lifecycle diagram's underscores come from mermaid); the lenient profile reads it as blocked-on-clarification", k, s)
				continue
			}
			hint := ""
			if s == "blocked_on_clarification" {
				hint = " (the enum spells it blocked-on-clarification, with hyphens)"
			}
			c.r.Report(ruleB03, sess, m, "unknown status "+protocol.Clip(s, 30), "%s %q is not an AgentStatus (thinking, tool_call, tool_result, response, reflect, blocked-on-clarification, converged, failed)%s", k, protocol.Clip(s, 40), hint)
		}
	}
	if s, ok := e.obj["outcome"].Str(); ok && e.kind == evEnd && !outcomes[s] {
		hint := ""
		if s == "unknown" {
			hint = " (\"unknown\" is what readers show for a missing outcome, not a value producers write)"
		}
		c.r.Report(ruleB03, sess, m, "unknown outcome", "outcome %q is not an AgentOutcome (converged, partial, escaped, aborted)%s", protocol.Clip(s, 40), hint)
	}
	if s, ok := e.obj["result"].Str(); ok && e.kind == evAudit && !auditResults[s] {
		c.r.Report(ruleB03, sess, m, "unknown audit result", "result %q is not an AuditResult (pass, fail, warn)", protocol.Clip(s, 40))
	}
	if s, ok := e.obj["checkpoint_id"].Str(); ok && e.kind == evAudit && !checkpointRe.MatchString(s) {
		c.r.Report(ruleB04, sess, m, "bad checkpoint_id", "checkpoint_id %q does not match ^[a-z0-9][a-z0-9:.-]{0,127}$", protocol.Clip(s, 70))
	}

	// Limits.
	if s, ok := e.obj["output_summary"].Str(); ok && e.kind == evTool {
		if n := utf8.RuneCountInString(s); n > maxOutputSummary {
			c.r.Report(ruleB06, sess, m, "output_summary too long", "output_summary has %d characters; the schema caps it at %d", n, maxOutputSummary)
		}
	}
	if v, ok := e.obj["convergence_score"].Number(); ok && e.kind == evEnd && (v < 0 || v > 1) {
		c.r.Report(ruleB06, sess, m, "convergence_score out of range", "convergence_score %g is outside [0,1]", v)
	}
	var negative []string
	for _, f := range variantFields[e.kind] {
		if f.typ != tNumber && f.typ != tInt || f.name == "step" {
			continue
		}
		if v, ok := e.obj[f.name].Number(); ok && v < 0 {
			negative = append(negative, fmt.Sprintf("%s is %g", f.name, v))
		}
	}
	if len(negative) > 0 {
		c.r.Report(ruleB06W, sess, m, "negative value", "%s; durations and counts cannot be negative", strings.Join(negative, ", "))
	}
	if v, ok := e.obj["evidence"]; ok && e.kind == evAudit && len(v) > maxEvidence {
		c.r.Report(ruleB06W, sess, m, "evidence too large", "evidence takes %d bytes; the schema asks to keep it under 1 KB", len(v))
	}
}

// extras notes fields outside the schema, once per agent (or lane).
func (c *checker) extras(e *event, seen *[]string) {
	var names []string
	known := variantFields[e.kind]
	for k := range e.obj {
		if slices.ContainsFunc(baseFields, func(f field) bool { return f.name == k }) ||
			slices.ContainsFunc(known, func(f field) bool { return f.name == k }) || slices.Contains(*seen, k) {
			continue
		}
		names = append(names, k)
	}
	if len(names) == 0 {
		return
	}
	slices.Sort(names)
	for _, n := range names {
		if len(*seen) < maxExtras {
			*seen = append(*seen, n)
		}
	}
	sess := e.session
	if sess == "" {
		sess = e.runID
	}
	c.r.Report(ruleB05, sess, e.m, "extra fields", "%s carries %s, outside the schema; KAHN keeps unknown fields, so this is only noted (once per agent)", e.kind, strings.Join(names, ", "))
}

// open starts tracking an agent at its first event.
func (c *checker) open(e *event) *agent {
	a := &agent{key: e.session, run: e.runID, id: e.agentID, first: e.m.Offset}
	c.agents.Open(e.session, a)
	r := c.runs[e.runID]
	if r == nil {
		r = &run{}
		c.runs[e.runID] = r
	}
	r.open++
	if e.kind != evStart {
		c.r.Report(ruleR01, e.session, e.m, "no agent_run_start", "the first event of agent %s in run %s is %s, not agent_run_start (the recording may have started late; totals are not checked for it)", e.agentID, e.runID, e.kind)
	}
	return a
}

func (c *checker) start(a *agent, e *event) {
	if a.started || a.messages > 1 {
		what := "a second agent_run_start"
		if !a.started {
			what = "agent_run_start after other events"
		}
		c.r.Report(ruleR01, a.key, e.m, "late agent_run_start", "%s for agent %s in run %s; an agent starts once, before its other events", what, a.id, a.run)
	}
	a.started = true
	det := protocol.Clip(e.str("task"), 60)
	if mdl := e.str("model"); mdl != "" {
		det += " [" + protocol.Clip(mdl, 30) + "]"
	}
	c.step(e, a.key, a.shown(), a.shown(), protocol.StepLifecycle, det)
}

// normal maps the underscored spelling to the enum value (lenient).
func (c *checker) normal(s string) string {
	if s == "blocked_on_clarification" && !c.strict {
		return stBlocked
	}
	return s
}

func (c *checker) transition(a *agent, e *event) {
	m := e.m
	from, to := c.normal(e.str("from")), c.normal(e.str("to"))
	step, hasStep := e.int("step")
	if hasStep {
		c.stepOrder(a, e, step)
		if a.hasTrans && step == a.lastTransStep {
			c.r.Report(ruleS01W, a.key, m, "transition step repeated", "this agent_transition has step %d like the agent's previous transition; transitions are expected to advance the step", step)
		}
		a.lastTransStep, a.hasTrans = step, true
	}
	if statuses[from] && statuses[to] {
		afterEnd := a.status == stConv || a.status == stFailed
		switch {
		case afterEnd:
			c.r.Report(ruleS04, a.key, m, "transition after "+a.status, "agent %s already reached %s, a terminal status; no transition may follow", a.id, a.status)
		case a.status != "" && from != a.status:
			c.r.Report(ruleS03, a.key, m, "from ≠ previous to", "this transition starts at %s, but the agent's previous transition ended at %s", from, a.status)
		case a.status == "" && a.started && from != stThinking:
			c.r.Report(ruleS03, a.key, m, "first transition not from thinking", "the agent's first transition after its agent_run_start starts at %s; the status lifecycle begins [*] → thinking, so an agent run begins thinking", from)
		case a.status == "" && from != stThinking:
			c.r.Report(ruleS03W, a.key, m, "first seen transition not from thinking", "the first transition recorded for agent %s starts at %s, and no agent_run_start was recorded: the recording may have begun after the agent's first transitions, so this may not be its first", a.id, from)
		}
		if !afterEnd && !legal[[2]string{from, to}] {
			if to == stFailed && from != stConv && !c.strict {
				c.r.Report(ruleS02W, a.key, m, from+" → failed", "%s → failed is not drawn in the status lifecycle (only thinking → failed is), but agents are aborted in any status; the lenient profile accepts it", from)
			} else {
				c.r.Report(ruleS02, a.key, m, from+" → "+to+" not allowed", "%s → %s is not an edge of the status lifecycle (thinking → tool_call → tool_result → response → reflect → thinking or converged; thinking ⇄ blocked-on-clarification; thinking → failed)", from, to)
			}
		}
	}
	if r := e.str("reason"); r != "" && !reasonRe.MatchString(r) {
		c.r.Report(ruleR05, a.key, m, "reason grammar", "reason %q does not read <kind>[:<detail>] (e.g. tool_call:Read)", protocol.Clip(r, 60))
	}
	if to == stToolCall && hasStep {
		a.toolCallStep, a.hasToolCall, a.toolCallTool = step, true, ""
		if kind, detail, ok := strings.Cut(e.str("reason"), ":"); ok && kind == "tool_call" {
			a.toolCallTool = detail
		}
	}
	shownFrom := from
	if !statuses[shownFrom] {
		shownFrom = a.shown()
	}
	if statuses[to] {
		a.status = to
	}
	kind := protocol.StepState
	switch to {
	case stToolCall:
		kind = protocol.StepTool
	case stBlocked:
		kind = protocol.StepClarification
	case stConv, stFailed:
		kind = protocol.StepLifecycle
	}
	c.step(e, a.key, shownFrom, a.shown(), kind, protocol.Clip(e.str("reason"), 60))
}

// stepOrder checks that step never decreases (KA-S01).
func (c *checker) stepOrder(a *agent, e *event, step int64) {
	switch {
	case step < 0:
		c.r.Report(ruleS01, a.key, e.m, "negative step", "step %d is negative; steps start at 0", step)
	case a.hasStep && step < a.maxStep:
		c.r.Report(ruleS01, a.key, e.m, "step went back", "step %d is lower than the agent's earlier step %d; steps never decrease within (run_id, agent_id)", step, a.maxStep)
	}
	if !a.hasStep || step > a.maxStep {
		a.maxStep, a.hasStep = step, true
	}
}

func (c *checker) tool(a *agent, e *event) {
	m := e.m
	a.tools++
	name := e.str("tool_name")
	if step, ok := e.int("step"); ok {
		c.stepOrder(a, e, step)
		switch {
		case !a.hasToolCall && !a.started && a.status == "":
			// recording started late: nothing to compare with
		case !a.hasToolCall || a.toolCallStep != step:
			c.r.Report(ruleR05, a.key, m, "no tool_call transition", "tool_invocation %s at step %d does not follow a transition into tool_call at step %d", protocol.Clip(name, 40), step, step)
		case a.toolCallTool != "" && name != "" && a.toolCallTool != name:
			c.r.Report(ruleR05, a.key, m, "tool name differs", "the transition into tool_call named %s (reason tool_call:%s), but the tool invoked is %s", protocol.Clip(a.toolCallTool, 40), protocol.Clip(a.toolCallTool, 40), protocol.Clip(name, 40))
		}
	}
	det := protocol.Clip(name, 40)
	if okv, present := e.obj["ok"]; present && string(okv) == "false" {
		det += " (failed)"
	}
	c.step(e, a.key, a.shown(), a.shown(), protocol.StepTool, det)
}

func (c *checker) audit(a *agent, e *event) {
	a.audits++
	switch e.str("result") {
	case "pass":
		a.passed++
	case "fail":
		a.failedN++
	}
	c.step(e, a.key, a.shown(), a.shown(), protocol.StepProgress, auditDetail(e))
}

func auditDetail(e *event) string {
	return protocol.Clip(e.str("checkpoint_id"), 50) + " " + e.str("result")
}

// laneAudit handles a run-scoped audit checkpoint (agent_id null or absent).
func (c *checker) laneAudit(e *event) {
	if _, ok := e.obj["agent_id"]; ok && e.obj["agent_id"].Kind() != payload.Null {
		return // a malformed agent_id, reported by fields
	}
	r := c.runs[e.runID]
	if r == nil {
		r = &run{}
		c.runs[e.runID] = r
	}
	if !r.lane {
		r.lane, r.first = true, e.m.Offset
	}
	r.messages++
	r.last = e.m.Offset
	e.session = e.runID
	c.extras(e, &r.extras)
	c.r.Report(ruleR06, e.runID, e.m, "run-scoped audit", "audit_checkpoint %s has agent_id null: it asserts a run-wide invariant, so it is drawn on run %s's lane and not counted for any agent", protocol.Clip(e.str("checkpoint_id"), 50), e.runID)
	c.step(e, e.runID, stRun, stRun, protocol.StepProgress, auditDetail(e))
}

func (c *checker) end(a *agent, e *event) {
	m := e.m
	outcome := e.str("outcome")
	score, hasScore := e.obj["convergence_score"].Number()
	switch outcome {
	case "converged":
		if a.status != stConv {
			last := a.status
			if last == "" {
				last = "no transition at all"
			}
			c.r.Report(ruleR03, a.key, m, "converged without converging", "outcome is converged, but the agent's last status was %s, not converged", last)
		}
		if hasScore && score != 1 {
			c.r.Report(ruleR03, a.key, m, "converged with score < 1", "outcome is converged, but convergence_score is %g; 1.0 means fully converged", score)
		}
	case "partial":
		if hasScore && score >= 1 {
			c.r.Report(ruleR03, a.key, m, "partial with score 1", "outcome is partial, but convergence_score is %g; a partial outcome scores below 1.0", score)
		}
	}
	if a.started {
		var diffs []string
		cmp := func(name string, want int) {
			if got, ok := e.int(name); ok && got != int64(want) {
				diffs = append(diffs, fmt.Sprintf("%s is %d but the stream shows %d", name, got, want))
			}
		}
		cmp("total_tool_calls", a.tools)
		cmp("total_audit_checkpoints", a.audits)
		cmp("audits_passed", a.passed)
		cmp("audits_failed", a.failedN)
		p, ok1 := e.int("audits_passed")
		f, ok2 := e.int("audits_failed")
		t, ok3 := e.int("total_audit_checkpoints")
		if ok1 && ok2 && ok3 && p+f > t {
			diffs = append(diffs, fmt.Sprintf("audits_passed + audits_failed (%d) exceed total_audit_checkpoints (%d)", p+f, t))
		}
		if len(diffs) > 0 {
			c.r.Report(ruleR04, a.key, m, "totals differ from stream", "agent_run_end: %s (producers may abbreviate streams, hence a warning)", strings.Join(diffs, "; "))
		}
	}
	c.step(e, a.key, a.shown(), a.shown(), protocol.StepLifecycle, outcome)
	c.done(a, true)
}

// done reports an agent finished and drops its state; when the run has no
// open agent left, its lane is finished too.
func (c *checker) done(a *agent, complete bool) {
	c.r.SessionDone(protocol.SessionSummary{Session: a.key, Messages: a.messages, First: a.first, Last: a.last, State: a.shown(), Complete: complete})
	c.agents.Close(a.key)
	c.ended.Put(a.key, a.shown())
	if r := c.runs[a.run]; r != nil {
		r.unfinished = r.unfinished || !complete
		if r.open--; r.open <= 0 {
			c.doneLane(a.run, r)
		}
	}
}

func (c *checker) doneLane(id string, r *run) {
	if r.lane {
		c.r.SessionDone(protocol.SessionSummary{Session: id, Messages: r.messages, First: r.first, Last: r.last, State: stRun, Complete: !r.unfinished})
	}
	delete(c.runs, id)
}

func (c *checker) step(e *event, session, from, to string, kind protocol.StepKind, detail string) {
	c.r.Step(protocol.Step{Session: session, Index: e.m.Index, Offset: e.m.Offset, From: from, To: to, Label: e.kind, Detail: detail, Kind: kind})
}

// Finish reports the agents (and lanes) still open: the stream ended
// before their agent_run_end.
func (c *checker) Finish() {
	for _, k := range c.agents.Keys() {
		c.done(c.agents.Get(k), false)
	}
	ids := make([]string, 0, len(c.runs))
	for id := range c.runs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		c.doneLane(id, c.runs[id])
	}
}
