package aaep

// Compact stream builders for the sequence-rule tests. A stream is a list
// of *tm; run fills in what a case leaves out (event ids, timestamps,
// offsets, envelope fields) and feeds the stream through protocol.NewEngine
// with New(), collecting findings, steps and session summaries.
//
// Notation follows the rule catalog: S, C, E, X (lifecycle), SC(from,to),
// PU, TI(tool,id), TC(tool,id,status), OS(out,pos,chunk,complete),
// AC(token,default,timeout), AQ(token,timeout), HR, CR(token,decision),
// QR(token,response), SREQ/SACC/SREJ/SRENEG/SCLOSE.

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/protocol"
)

// tm is one test message.
type tm struct {
	fields   map[string]any
	dir      protocol.Direction
	source   int
	offset   time.Duration // absolute offset when hasAt
	hasAt    bool
	stamp    bool // fill in timestamp from the offset
	envelope bool // an event: fill in the envelope
	attrs    map[string]string
	raw      []byte // send these bytes instead of encoding fields
}

var (
	testStart = time.Date(2026, 5, 24, 14, 22, 0, 0, time.UTC)
	defSess   = "sess_a"
)

func event(typ string, kv ...any) *tm {
	t := &tm{fields: map[string]any{"type": "aaep:agent." + typ}, stamp: true, envelope: true}
	for i := 0; i+1 < len(kv); i += 2 {
		t.fields[kv[i].(string)] = kv[i+1]
	}
	return t
}

func message(typ string, dir protocol.Direction, kv ...any) *tm {
	t := &tm{fields: map[string]any{"type": typ}, dir: dir}
	for i := 0; i+1 < len(kv); i += 2 {
		t.fields[kv[i].(string)] = kv[i+1]
	}
	return t
}

// set sets (or, with value nil, removes) fields.
func (t *tm) set(kv ...any) *tm {
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(t.fields, kv[i].(string))
			continue
		}
		t.fields[kv[i].(string)] = kv[i+1]
	}
	return t
}

func (t *tm) sess(id string) *tm     { return t.set("session_id", id) }
func (t *tm) id(id string) *tm       { return t.set("event_id", id) }
func (t *tm) src(n int) *tm          { t.source = n; return t }
func (t *tm) at(d time.Duration) *tm { t.offset, t.hasAt = d, true; return t }
func (t *tm) attr(k, v string) *tm {
	if t.attrs == nil {
		t.attrs = map[string]string{}
	}
	t.attrs[k] = v
	return t
}
func (t *tm) seq(n int) *tm                 { return t.set("sequence_number", n) }
func (t *tm) ts(d time.Duration) *tm        { t.stamp = false; return t.set("timestamp", stamp(d)) }
func (t *tm) dirn(d protocol.Direction) *tm { t.dir = d; return t }

func stamp(d time.Duration) string { return testStart.Add(d).UTC().Format("2006-01-02T15:04:05.000Z") }

// Lifecycle.
func S(kv ...any) *tm {
	return event("session.started", append([]any{"summary_normal", "Started."}, kv...)...)
}
func C(kv ...any) *tm {
	return event("session.completed", append([]any{"summary_normal", "Done."}, kv...)...)
}
func E() *tm {
	return event("session.errored", "summary_normal", "Failed.", "error_category", "transient", "urgency", "critical")
}
func X() *tm {
	return event("session.cancelled", "summary_normal", "Cancelled.", "cancelled_by", "user")
}

// SC is agent.state.changed.
func SC(from, to string) *tm {
	return event("state.changed", "from_state", from, "to_state", to, "summary_normal", from+" to "+to)
}

// PU is agent.progress.updated.
func PU() *tm {
	return event("progress.updated", "progress", map[string]any{"percent": 50}, "summary_normal", "Half way.", "urgency", "background")
}

// pct is agent.progress.updated at percent p.
func pct(p float64) *tm {
	return event("progress.updated", "progress", map[string]any{"percent": p}, "summary_normal", "Working.", "urgency", "background")
}

// TI is agent.tool.invoked; id "" leaves tool_call_id out.
func TI(tool, id string) *tm {
	t := event("tool.invoked", "tool", tool, "summary_normal", "Calling "+tool+".")
	if id != "" {
		t.set("tool_call_id", id)
	}
	return t
}

// TIrr is an irreversible, high-risk tool.invoked.
func TIrr(tool, id string) *tm { return TI(tool, id).set("irreversible", true, "risk_level", "high") }

// TC is agent.tool.completed; id "" leaves tool_call_id out.
func TC(tool, id, status string) *tm {
	t := event("tool.completed", "tool", tool, "status", status, "summary_normal", tool+" finished.")
	if id != "" {
		t.set("tool_call_id", id)
	}
	if status != "success" {
		t.set("error_message", "It failed.")
	}
	return t
}

// OS is agent.output.streaming; out "" leaves output_id out.
func OS(out string, pos int, chunk string, complete bool) *tm {
	t := event("output.streaming", "chunk", chunk, "position", pos, "complete", complete)
	if out != "" {
		t.set("output_id", out)
	}
	return t
}

// AC is agent.awaiting.confirmation (irreversible, high risk).
func AC(token, def string, timeout int) *tm {
	return event("awaiting.confirmation", "action", "Transfer $500 to savings.", "consequence", "Money moves at once.",
		"reply_token", token, "timeout_seconds", timeout, "default_decision", def, "urgency", "critical",
		"risk_level", "high", "irreversible", true, "summary_normal", "Confirm the transfer?")
}

// AQ is agent.awaiting.clarification; kinds default to freetext.
func AQ(token string, timeout int, kinds ...string) *tm {
	t := event("awaiting.clarification", "question", "Which account?", "reply_token", token,
		"timeout_seconds", timeout, "urgency", "critical", "summary_normal", "Which account?")
	if len(kinds) > 0 {
		t.set("accepted_response_kinds", kinds)
	}
	return t
}

// HR is agent.handoff.requested.
func HR() *tm {
	return event("handoff.requested", "reason", "Needs a human.", "target_kind", "human", "urgency", "critical", "summary_normal", "Handing off.")
}

// CR is a confirmation.reply from the subscriber.
func CR(token, decision string) *tm {
	t := message(MsgConfirmationReply, protocol.ToProducer, "reply_token", token, "decision", decision, "subscription_id", "sub_1")
	t.stamp = true
	return t
}

// QR is a clarification.reply from the subscriber.
func QR(token string, response any) *tm {
	t := message(MsgClarificationReply, protocol.ToProducer, "reply_token", token, "response", response, "subscription_id", "sub_1")
	t.stamp = true
	return t
}

// errorAnswer is an untyped answer from the producer, like the reply
// endpoint's 400 body of B.1.4.
func errorAnswer(kv ...any) *tm {
	t := &tm{fields: map[string]any{}, dir: protocol.FromProducer}
	for i := 0; i+1 < len(kv); i += 2 {
		t.fields[kv[i].(string)] = kv[i+1]
	}
	return t
}

// SREQ is a subscription.request with capabilities caps.
func SREQ(caps map[string]any) *tm {
	return message(MsgSubscriptionRequest, protocol.ToProducer, "aaep_version", "1.0.0", "subscriber_id", "narrator", "capabilities", caps)
}

// SACC is a subscription.accepted with honored capabilities.
func SACC(sub string, honored map[string]any) *tm {
	return message(MsgSubscriptionAccepted, protocol.FromProducer, "subscription_id", sub, "aaep_version", "1.0.0",
		"producer", map[string]any{"agent_id": "agent"}, "honored_capabilities", honored)
}

func SREJ(code string) *tm {
	return message(MsgSubscriptionRejected, protocol.FromProducer, "reason_code", code, "reason_message", "No.")
}

func SRENEG(sub string, caps map[string]any) *tm {
	return message(MsgSubscriptionRenegotiate, protocol.ToProducer, "subscription_id", sub, "capabilities", caps)
}

func SCLOSE(sub string) *tm {
	return message(MsgSubscriptionClose, protocol.ToProducer, "subscription_id", sub, "reason_code", "subscriber_shutdown")
}

// producerClose is a subscription.close sent by the producer (§5.8.1).
func producerClose(sub string) *tm {
	return message(MsgSubscriptionClose, protocol.FromProducer, "subscription_id", sub, "reason_code", "producer_shutdown")
}

type caps = map[string]any

// withReplies is a capability object that supports both kinds of reply,
// with more (may be nil) added.
func withReplies(more caps) caps {
	c := caps{"supports_confirmation_reply": true, "supports_clarification_reply": true}
	for k, v := range more {
		c[k] = v
	}
	return c
}

// exclude is the event_filters capability excluding types.
func exclude(types ...string) caps {
	return caps{"event_filters": map[string]any{"exclude": types}}
}

// result is what a run produced.
type result struct {
	findings  []protocol.Finding
	steps     []protocol.Step
	summaries []protocol.SessionSummary
}

// build fills in defaults and returns the messages to feed.
func build(msgs []*tm) []*protocol.Message {
	out := make([]*protocol.Message, 0, len(msgs))
	var off time.Duration
	for i, t := range msgs {
		if t.hasAt {
			off = t.offset
		} else if i > 0 {
			off += 100 * time.Millisecond
		}
		f := map[string]any{}
		for k, v := range t.fields {
			f[k] = v
		}
		if t.envelope {
			defaults := map[string]any{
				"@context":   ContextV1,
				"event_id":   fmt.Sprintf("evt_%d", i),
				"session_id": defSess,
				"producer":   map[string]any{"agent_id": "agent"},
				"urgency":    "normal",
			}
			for k, v := range defaults {
				if _, ok := f[k]; !ok {
					f[k] = v
				}
			}
		}
		if t.stamp {
			if _, ok := f["timestamp"]; !ok {
				f["timestamp"] = stamp(off)
			}
		}
		raw := t.raw
		if raw == nil {
			var err error
			raw, err = json.Marshal(f)
			if err != nil {
				panic(err)
			}
		}
		out = append(out, &protocol.Message{Index: int64(i), Offset: off, Received: testStart.Add(off), Dir: t.dir,
			Source: t.source, Raw: raw, Attrs: t.attrs})
	}
	return out
}

// run checks msgs with the profile and returns everything reported.
func run(t testing.TB, profile string, msgs ...*tm) result {
	t.Helper()
	return runMessages(t, profile, protocol.StreamInfo{}, build(msgs))
}

// runMessages checks built messages of a stream described by info.
func runMessages(t testing.TB, profile string, info protocol.StreamInfo, ms []*protocol.Message) result {
	t.Helper()
	var res result
	sink := protocol.Sink{
		Finding:     func(f protocol.Finding) { res.findings = append(res.findings, f) },
		Step:        func(s protocol.Step) { res.steps = append(res.steps, s) },
		SessionDone: func(s protocol.SessionSummary) { res.summaries = append(res.summaries, s) },
	}
	eng, err := protocol.NewEngine([]protocol.Model{New()}, "", &protocol.Options{Profile: protocol.Profile(profile)}, info, sink)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		eng.Feed(m)
	}
	eng.Finish()
	return res
}

// seqIDs returns the sorted IDs of the sequence-level findings (SEQ, NEG,
// TRN), the rules this checker owns.
func (r result) seqIDs() []string {
	var ids []string
	for _, f := range r.findings {
		if strings.HasPrefix(f.RuleID, "SEQ-") || strings.HasPrefix(f.RuleID, "NEG-") || strings.HasPrefix(f.RuleID, "TRN-") {
			ids = append(ids, f.RuleID)
		}
	}
	sort.Strings(ids)
	return ids
}

func (r result) describe() string {
	var b strings.Builder
	for _, f := range r.findings {
		fmt.Fprintf(&b, "  %s %s #%d [%s]: %s\n", f.Level, f.RuleID, f.Index, f.Session, f.Message)
	}
	return b.String()
}

// stream concatenates parts (single messages or slices) into one list.
func stream(parts ...any) []*tm {
	var out []*tm
	for _, p := range parts {
		switch v := p.(type) {
		case *tm:
			out = append(out, v)
		case []*tm:
			out = append(out, v...)
		default:
			panic(fmt.Sprintf("stream: unexpected %T", p))
		}
	}
	return out
}

// on returns a copy of t sent on source src (same fields, so the same
// event_id when t sets one).
func (t *tm) on(src int) *tm {
	c := *t
	c.fields = map[string]any{}
	for k, v := range t.fields {
		c.fields[k] = v
	}
	c.source = src
	c.hasAt = false
	return &c
}
