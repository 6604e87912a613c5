package aaep

// Tool pairing: SEQ-TOOL-*, SEQ-COMPLETED-COUNTS.
//
// Pairing (catalog §3.4): an invocation with a tool_call_id is keyed by that
// id; an invocation without one is keyed by its tool name and open name-keyed
// invocations are matched first in, first out. A completion that carries a
// tool_call_id never pairs by name with an id-less invocation. A completion
// that names no id (or an unknown id) while an id-keyed invocation of the
// same tool is open pairs with that invocation and is reported as
// SEQ-TOOL-CALL-ID-ECHO, so the one mistake does not also count as an
// unpaired invocation and an unpaired completion.

import (
	"sort"
	"time"

	"github.com/aaep-tools/aaepkit/protocol"
)

type toolCall struct {
	tool, id     string
	at           ref
	when         instant
	irreversible bool
}

func (c *toolCall) describe() string {
	if c.id != "" {
		return c.tool + " (" + c.id + ")"
	}
	return c.tool
}

type toolTable struct {
	byID      map[string]*toolCall   // open invocations with a tool_call_id
	byName    map[string][]*toolCall // open invocations without one, oldest first
	open      int
	seen      map[string]bool // tool_call_ids ever invoked in the session (bounded)
	seenQ     []string
	doneNames map[string]int // completed id-less invocations per tool name
}

// oldestOpen returns the earliest open invocation, or nil.
func (t *toolTable) oldestOpen() *toolCall {
	if t.open == 0 {
		return nil
	}
	var best *toolCall
	for _, c := range t.byID {
		if best == nil || c.at.index < best.at.index {
			best = c
		}
	}
	for _, q := range t.byName {
		if len(q) > 0 && (best == nil || q[0].at.index < best.at.index) {
			best = q[0]
		}
	}
	return best
}

// openByIDForTool returns the earliest open id-keyed invocation of tool.
func (t *toolTable) openByIDForTool(tool string) *toolCall {
	var best *toolCall
	for _, c := range t.byID {
		if c.tool == tool && (best == nil || c.at.index < best.at.index) {
			best = c
		}
	}
	return best
}

func (t *toolTable) markSeen(id string) {
	if t.seen == nil {
		t.seen = map[string]bool{}
	}
	if len(t.seenQ) >= maxCallIDsPerSession {
		delete(t.seen, t.seenQ[0])
		t.seenQ = t.seenQ[1:]
	}
	t.seen[id] = true
	t.seenQ = append(t.seenQ, id)
}

func (t *toolTable) all() []*toolCall {
	var out []*toolCall
	for _, c := range t.byID {
		out = append(out, c)
	}
	for _, q := range t.byName {
		out = append(out, q...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].at.index < out[j].at.index })
	return out
}

func (s *seqChecker) onToolInvoked(ss *session, m *protocol.Message, ev *Event, now instant) string {
	tool, _ := ev.Str("tool")
	id, _ := ev.Str("tool_call_id")
	irrev, _ := ev.Bool("irreversible")
	ss.sawTI = true
	ss.tiCount++
	if ss.toolsAvail != nil && tool != "" && !ss.toolsAvail[tool] {
		s.report("SEQ-TOOL-AVAILABLE", ss.id, m, "tool not announced",
			"tool %q is invoked but is not in the session's tools_available list from session.started", tool)
	}
	t := &ss.tools
	c := &toolCall{tool: tool, id: id, at: refOf(m), when: now, irreversible: irrev}
	if id != "" {
		register := true
		if t.seen[id] {
			prev := t.byID[id]
			where := "an earlier invocation"
			if prev != nil {
				where = "an invocation still open (message " + itoa(prev.at.index) + ")"
				register = false
			}
			s.report("SEQ-TOOL-CALL-ID-UNIQUE", ss.id, m, "tool_call_id reused",
				"tool_call_id %s of this %s invocation was already used by %s; a tool_call_id is unique within the session", id, tool, where)
		}
		if register {
			if t.byID == nil {
				t.byID = map[string]*toolCall{}
			}
			t.byID[id] = c
			t.open++
			t.markSeen(id)
		}
	} else {
		if t.byName == nil {
			t.byName = map[string][]*toolCall{}
		}
		if q := t.byName[tool]; len(q) > 0 {
			s.report("SEQ-TOOL-ID-SHOULD", ss.id, m, "concurrent calls without tool_call_id",
				"tool %s is invoked again without a tool_call_id while an earlier id-less invocation of it (message %d) is still open; use tool_call_id so completions pair unambiguously",
				tool, q[0].at.index)
		}
		t.byName[tool] = append(t.byName[tool], c)
		t.open++
	}
	s.attributeAction(ss, m, tool, irrev)
	ss.state = stateCallingTool
	detail := tool
	if id != "" {
		detail += " " + id
	}
	if irrev {
		detail += " irreversible"
	}
	return detail
}

func (s *seqChecker) onToolCompleted(ss *session, m *protocol.Message, ev *Event, now instant) string {
	tool, _ := ev.Str("tool")
	id, _ := ev.Str("tool_call_id")
	status, _ := ev.Str("status")
	t := &ss.tools
	var c *toolCall
	switch {
	case id != "" && t.byID[id] != nil:
		c = t.byID[id]
		delete(t.byID, id)
		t.open--
		if c.tool != tool {
			s.report("SEQ-TOOL-NAME-MATCH", ss.id, m, "tool name differs",
				"the completion of %s names tool %q but the invocation (message %d) named %q; a completion carries the same tool as its invocation",
				id, tool, c.at.index, c.tool)
		}
	case id != "" && t.seen[id]:
		s.report("SEQ-TOOL-COMPLETE-ONCE", ss.id, m, "second completion",
			"tool call %s (%s) was already completed; each invocation gets exactly one tool.completed", id, tool)
	case id == "" && len(t.byName[tool]) > 0:
		q := t.byName[tool]
		c = q[0]
		if len(q) == 1 {
			delete(t.byName, tool)
		} else {
			t.byName[tool] = q[1:]
		}
		t.open--
		if t.doneNames == nil {
			t.doneNames = map[string]int{}
		}
		t.doneNames[tool]++
	default:
		if open := t.openByIDForTool(tool); open != nil {
			c = open
			delete(t.byID, open.id)
			t.open--
			if id == "" {
				s.report("SEQ-TOOL-CALL-ID-ECHO", ss.id, m, "tool_call_id not echoed",
					"this completion of %s carries no tool_call_id, but its invocation (message %d) used %s; the completion must carry the same tool_call_id",
					tool, open.at.index, open.id)
			} else {
				s.report("SEQ-TOOL-CALL-ID-ECHO", ss.id, m, "tool_call_id differs",
					"this completion of %s carries tool_call_id %s, but the open invocation of %s (message %d) used %s; the completion must echo the invocation's tool_call_id",
					tool, id, tool, open.at.index, open.id)
			}
		} else if id == "" && t.doneNames[tool] > 0 {
			s.report("SEQ-TOOL-COMPLETE-ONCE", ss.id, m, "second completion",
				"tool %s completes again, but every invocation of it is already completed; each invocation gets exactly one tool.completed", tool)
		} else {
			what := "tool " + tool
			if id != "" {
				what += " with tool_call_id " + id
			}
			s.report("SEQ-TOOL-PAIR-PRECEDED", ss.id, m, "no matching tool.invoked",
				"%s completes, but no open agent.tool.invoked matches it; every tool.completed must be preceded by its invocation", what)
		}
	}
	if c != nil {
		if d, ok := ev.Int("duration_ms"); ok {
			took := since(c.when, now)
			if time.Duration(d)*time.Millisecond > took+time.Second {
				s.report("SEQ-COMPLETED-COUNTS", ss.id, m, "duration longer than elapsed",
					"tool %s reports duration_ms %d, but only %s passed between its invocation and completion", c.describe(), d, took.Round(time.Millisecond))
			}
		}
	}
	detail := tool
	if id != "" {
		detail += " " + id
	}
	if status != "" {
		detail += " " + status
	}
	return detail
}

// finalizeTools: SEQ-TOOL-PAIR-COMPLETED at the terminal event.
func (s *seqChecker) finalizeTools(ss *session, m *protocol.Message) {
	if ss.tools.open == 0 {
		return
	}
	for _, c := range ss.tools.all() {
		s.report("SEQ-TOOL-PAIR-COMPLETED", ss.id, m, "tool never completed",
			"tool %s invoked at message %d never completed before the session ended; every tool.invoked needs a tool.completed (status \"timeout\" if abandoned)",
			c.describe(), c.at.index)
	}
}

// checkCompletedCounts: SEQ-COMPLETED-COUNTS on session.completed.
func (s *seqChecker) checkCompletedCounts(ss *session, m *protocol.Message, ev *Event, now instant) {
	if ev.Core != TypeSessionCompleted {
		return
	}
	if n, ok := ev.Int("tool_invocations_count"); ok && n != int64(ss.tiCount) {
		s.report("SEQ-COMPLETED-COUNTS", ss.id, m, "tool count differs",
			"session.completed reports tool_invocations_count %d, but the session invoked %d tools", n, ss.tiCount)
	}
	if d, ok := ev.Int("duration_ms"); ok && ss.started {
		took := since(ss.start, now)
		diff := time.Duration(d)*time.Millisecond - took
		if diff < 0 {
			diff = -diff
		}
		if diff > max(time.Second, took/10) {
			s.report("SEQ-COMPLETED-COUNTS", ss.id, m, "duration differs",
				"session.completed reports duration_ms %d, but %s passed between session.started and session.completed", d, took.Round(time.Millisecond))
		}
	}
}
