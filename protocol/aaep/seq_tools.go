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

// toolTable holds a session's tool calls. Sessions have few calls open at
// once, so open calls are a slice searched linearly.
type toolTable struct {
	open      []*toolCall // open invocations, oldest first
	seenQ     []string    // tool_call_ids invoked in the session, oldest first (bounded)
	seen      map[string]bool
	doneNames []nameCount // completed id-less invocations per tool name
}

type nameCount struct {
	name string
	n    int
}

// oldestOpen returns the earliest open invocation, or nil.
func (t *toolTable) oldestOpen() *toolCall {
	if len(t.open) == 0 {
		return nil
	}
	return t.open[0]
}

// find returns the index of the earliest open invocation with tool_call_id
// id (id != "") or, with id == "", of the earliest id-less invocation of
// tool; -1 when there is none.
func (t *toolTable) find(id, tool string) int {
	for i, c := range t.open {
		if (id != "" && c.id == id) || (id == "" && c.id == "" && c.tool == tool) {
			return i
		}
	}
	return -1
}

// findIDForTool returns the index of the earliest open id-keyed invocation of tool, or -1.
func (t *toolTable) findIDForTool(tool string) int {
	for i, c := range t.open {
		if c.id != "" && c.tool == tool {
			return i
		}
	}
	return -1
}

func (t *toolTable) remove(i int) *toolCall {
	c := t.open[i]
	copy(t.open[i:], t.open[i+1:])
	t.open[len(t.open)-1] = nil
	t.open = t.open[:len(t.open)-1]
	return c
}

func (t *toolTable) wasSeen(id string) bool {
	if t.seen != nil {
		return t.seen[id]
	}
	for _, s := range t.seenQ {
		if s == id {
			return true
		}
	}
	return false
}

func (t *toolTable) markSeen(id string) {
	if t.seen == nil && len(t.seenQ) >= 32 {
		t.seen = make(map[string]bool, 64)
		for _, s := range t.seenQ {
			t.seen[s] = true
		}
	}
	if len(t.seenQ) >= maxCallIDsPerSession {
		if t.seen != nil {
			delete(t.seen, t.seenQ[0])
		}
		t.seenQ = t.seenQ[1:]
	}
	t.seenQ = append(t.seenQ, id)
	if t.seen != nil {
		t.seen[id] = true
	}
}

func (t *toolTable) done(tool string) int {
	for _, d := range t.doneNames {
		if d.name == tool {
			return d.n
		}
	}
	return 0
}

func (t *toolTable) addDone(tool string) {
	for i := range t.doneNames {
		if t.doneNames[i].name == tool {
			t.doneNames[i].n++
			return
		}
	}
	if len(t.doneNames) < 1024 {
		t.doneNames = append(t.doneNames, nameCount{tool, 1})
	}
}

func (s *seqChecker) onToolInvoked(ss *session, m *protocol.Message, ev *Event, now instant) string {
	tool, _ := field(ev, kTool)
	id, _ := field(ev, kToolCallID)
	irrev, _ := ev.vals[kIrreversible].Bool()
	ss.sawTI = true
	ss.tiCount++
	if ss.toolsAvail != nil && tool != "" && !ss.toolsAvail[tool] {
		s.report(seqToolAvailable, ss.id, m, "tool not announced",
			"tool %q is invoked but is not in the session's tools_available list from session.started", tool)
	}
	t := &ss.tools
	c := &toolCall{tool: tool, id: id, at: refOf(m), when: now, irreversible: irrev}
	register := true
	if id != "" {
		if t.wasSeen(id) {
			if i := t.find(id, ""); i >= 0 {
				s.report(seqToolCallIDUnique, ss.id, m, "tool_call_id reused",
					"tool_call_id %s of this %s invocation was already used by an invocation still open (message %d); a tool_call_id is unique within the session", id, tool, t.open[i].at.related())
				register = false
			} else {
				s.report(seqToolCallIDUnique, ss.id, m, "tool_call_id reused",
					"tool_call_id %s of this %s invocation was already used by an earlier invocation; a tool_call_id is unique within the session", id, tool)
			}
		} else {
			t.markSeen(id)
		}
	} else if i := t.find("", tool); i >= 0 {
		s.report(seqToolIDShould, ss.id, m, "concurrent calls without tool_call_id",
			"tool %s is invoked again without a tool_call_id while an earlier id-less invocation of it (message %d) is still open; use tool_call_id so completions pair unambiguously",
			tool, t.open[i].at.related())
	}
	if register {
		t.open = append(t.open, c)
	}
	conf := s.attributeAction(ss, m, tool, id, irrev)
	ss.state = impliedState(ev.Core)
	detail := tool
	if id != "" {
		detail += " " + id
	}
	if irrev {
		detail += " irreversible"
	}
	if conf != "" {
		detail += " for " + conf // the confirmation it was matched to
	}
	return detail
}

func (s *seqChecker) onToolCompleted(ss *session, m *protocol.Message, ev *Event, now instant) string {
	tool, _ := field(ev, kTool)
	id, _ := field(ev, kToolCallID)
	status, _ := field(ev, kStatus)
	t := &ss.tools
	var c *toolCall
	if i := t.find(id, tool); i >= 0 {
		c = t.remove(i)
		if id == "" {
			t.addDone(tool)
		} else if c.tool != tool {
			s.report(seqToolNameMatch, ss.id, m, "tool name differs",
				"the completion of %s names tool %q but the invocation (message %d) named %q; a completion carries the same tool as its invocation",
				id, tool, c.at.related(), c.tool)
		}
	} else if id != "" && t.wasSeen(id) {
		s.report(seqToolCompleteOnce, ss.id, m, "second completion",
			"tool call %s (%s) was already completed; each invocation gets exactly one tool.completed", id, tool)
	} else if i := t.findIDForTool(tool); i >= 0 {
		c = t.remove(i)
		if id == "" {
			s.report(seqToolCallIDEcho, ss.id, m, "tool_call_id not echoed",
				"this completion of %s carries no tool_call_id, but its invocation (message %d) used %s; the completion must carry the same tool_call_id",
				tool, c.at.related(), c.id)
		} else {
			s.report(seqToolCallIDEcho, ss.id, m, "tool_call_id differs",
				"this completion of %s carries tool_call_id %s, but the open invocation of %s (message %d) used %s; the completion must echo the invocation's tool_call_id",
				tool, id, tool, c.at.related(), c.id)
		}
	} else if id == "" && t.done(tool) > 0 {
		s.report(seqToolCompleteOnce, ss.id, m, "second completion",
			"tool %s completes again, but every invocation of it is already completed; each invocation gets exactly one tool.completed", tool)
	} else {
		what := "tool " + tool
		if id != "" {
			what += " with tool_call_id " + id
		}
		s.report(seqToolPairPreceded, ss.id, m, "no matching tool.invoked",
			"%s completes, but no open agent.tool.invoked matches it; every tool.completed must be preceded by its invocation", what)
	}
	if c != nil {
		if d, ok := ev.Int("duration_ms"); ok {
			took := since(c.when, now)
			if time.Duration(d)*time.Millisecond > took+time.Second {
				s.report(seqCompletedCounts, ss.id, m, "duration longer than elapsed",
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
	for _, c := range ss.tools.open {
		s.report(seqToolPairCompleted, ss.id, m, "tool never completed",
			"tool %s invoked at message %d never completed before the session ended; every tool.invoked needs a tool.completed (status \"timeout\" if abandoned)",
			c.describe(), c.at.related())
	}
}

// checkCompletedCounts: SEQ-COMPLETED-COUNTS on session.completed.
func (s *seqChecker) checkCompletedCounts(ss *session, m *protocol.Message, ev *Event, now instant) {
	if ev.Core != TypeSessionCompleted {
		return
	}
	if n, ok := ev.Int("tool_invocations_count"); ok && n != int64(ss.tiCount) {
		s.report(seqCompletedCounts, ss.id, m, "tool count differs",
			"session.completed reports tool_invocations_count %d, but the session invoked %d tools", n, ss.tiCount)
	}
	if d, ok := ev.Int("duration_ms"); ok && ss.started {
		took := since(ss.start, now)
		diff := time.Duration(d)*time.Millisecond - took
		if diff < 0 {
			diff = -diff
		}
		if diff > max(time.Second, took/10) {
			s.report(seqCompletedCounts, ss.id, m, "duration differs",
				"session.completed reports duration_ms %d, but %s passed between session.started and session.completed", d, took.Round(time.Millisecond))
		}
	}
}
