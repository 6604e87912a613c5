package otlpexport

// How the checker's steps map onto a session's trace: the root span's
// attributes and end, tool and wait spans, and the root's events.

import (
	"cmp"
	"strings"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol"
)

// apply maps the message of a step onto t.
func (b *builder) apply(t *trace, step *protocol.Step, m *protocol.Message, fl *fields, ns uint64) {
	text := b.opts.IncludeText
	switch step.Kind {
	case protocol.StepLifecycle:
		if strings.HasSuffix(step.Label, "started") {
			a := attrs(t.root.Attributes)
			b.num(&a, "aaep.session.expected_duration_ms", fl.get(fExpectedDurationMS))
			if v := fl.get(fToolsAvailable); v.Kind() == payload.Array {
				a = append(a, b.toolsAvailable(v))
			}
			if text {
				a.docStr("aaep.session.summary", fl, fSummaryNormal)
			}
			t.root.Attributes = a
			return
		}
		b.terminal(t, step, fl, ns)
	case protocol.StepTool:
		b.tool(t, step, m, fl, ns)
	case protocol.StepConfirmation, protocol.StepClarification:
		confirm := step.Kind == protocol.StepConfirmation
		name := "await_clarification"
		if confirm {
			name = "await_confirmation"
		}
		s := b.child(t, kindWait, m.Index, name, ns)
		a := b.attrList(spanAttrs)
		a = append(a, b.kv("aaep.wait.kind", strings.TrimPrefix(name, "await_")))
		b.enum(&a, "aaep.confirmation.default_decision", fl, fDefaultDecision)
		b.num(&a, "aaep.wait.timeout_seconds", fl.get(fTimeoutSeconds))
		b.enum(&a, "aaep.risk_level", fl, fRiskLevel)
		b.enum(&a, "aaep.reversibility", fl, fReversibility)
		a.boolean("aaep.irreversible", fl.get(fIrreversible))
		if text {
			a.docStr("aaep.confirmation.action", fl, fAction)
			a.docStr("aaep.confirmation.consequence", fl, fConsequence)
			a.docStr("aaep.clarification.question", fl, fQuestion)
		}
		s.Attributes = a
		token := fieldString(fl, fReplyToken)
		if token != "" {
			t.waits.set(token, wait{span: s, confirm: confirm})
			t.tokens = append(t.tokens, token)
		}
	case protocol.StepReply:
		token, _ := fl.get(fReplyToken).Text()
		i := t.waits.find(token)
		if i < 0 {
			return
		}
		w := t.waits.list[i].val
		t.spanAt.put(m.Index, w.span)
		if strings.HasSuffix(step.Detail, "(ignored)") {
			b.addEvent(w.span, "aaep.reply.ignored", ns, nil)
			return
		}
		t.waits.take(i)
		a := attrs(w.span.Attributes)
		a = append(a, b.kv("aaep.wait.outcome", "replied"))
		if w.confirm {
			b.enum(&a, "aaep.confirmation.decision", fl, fDecision)
			a = append(a, b.kvBool("aaep.confirmation.default_applied", false))
		} else if text {
			a.docStr("aaep.clarification.response", fl, fResponse)
		}
		w.span.Attributes = a
		w.span.EndTimeUnixNano = ns
	case protocol.StepState:
		var a attrs
		from, _ := fl.get(fFromState).Text()
		to, _ := fl.get(fToState).Text()
		var fromKV, toKV *commonpb.KeyValue
		if len(from) == 0 && len(to) == 0 {
			fromKV, toKV = b.kv("aaep.state.from", step.From), b.kv("aaep.state.to", step.To)
		} else {
			fromKV, toKV = b.kvText("aaep.state.from", from), b.kvText("aaep.state.to", to)
		}
		if text {
			a = append(b.attrList(3), fromKV, toKV)
			a.docStr("aaep.summary", fl, fSummaryNormal)
		} else {
			a = b.stateAttrs(fromKV, toKV)
		}
		b.addEvent(t.root, "aaep.state.changed", ns, a)
	case protocol.StepProgress:
		a := b.attrList(4)
		p := fl.get(fProgress)
		b.num(&a, "aaep.progress.percent", p.Get("percent"))
		b.num(&a, "aaep.progress.step", p.Get("step"))
		b.num(&a, "aaep.progress.total_steps", p.Get("total_steps"))
		if text {
			a.str("aaep.progress.description", p, "description")
		}
		b.addEvent(t.root, "aaep.progress.updated", ns, a)
	case protocol.StepOutput:
		b.output(t, fl, ns)
	case protocol.StepHandoff:
		var a attrs
		b.enum(&a, "aaep.handoff.target_kind", fl, fTargetKind)
		b.addEvent(t.root, "aaep.handoff.requested", ns, a)
	}
}

// terminal ends t's root at its terminal event.
func (b *builder) terminal(t *trace, step *protocol.Step, fl *fields, ns uint64) {
	if t.ended {
		return
	}
	t.ended = true
	t.root.EndTimeUnixNano = ns
	t.state = step.Label
	switch {
	case strings.HasSuffix(step.Label, "completed"):
		t.root.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_OK}
	case strings.HasSuffix(step.Label, "errored"):
		var a attrs
		code, cat := fieldString(fl, fErrorCode), fieldString(fl, fErrorCategory)
		b.enum(&a, "aaep.error.category", fl, fErrorCategory)
		b.enum(&a, "aaep.error.code", fl, fErrorCode)
		a.boolean("aaep.error.recoverable", fl.get(fRecoverable))
		etype := cmp.Or(code, cat, "errored")
		a = append(a, b.str(attrErrorType, etype))
		msg := etype
		if b.opts.IncludeText {
			if s := fieldString(fl, fSummaryNormal); s != "" {
				msg = s
			}
		}
		t.root.Attributes = append(t.root.Attributes, a...)
		t.root.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: msg}
	}
}

// tool opens or closes a tool call's span. The tool's name, call id and
// status are read without copying (Text) where a lookup is all they are
// for.
func (b *builder) tool(t *trace, step *protocol.Step, m *protocol.Message, fl *fields, ns uint64) {
	invoked := strings.HasSuffix(step.Label, "invoked")
	if !invoked && !strings.HasSuffix(step.Label, "completed") {
		b.addEvent(t.root, "aaep."+step.Label, ns, nil)
		return
	}
	name, _ := fl.get(fTool).Text()
	if len(name) == 0 {
		name = []byte(step.Detail)
	}
	callID, _ := fl.get(fToolCallID).Text()
	if invoked {
		nameKV := b.kvText(attrToolName, name)
		s := b.child(t, kindTool, m.Index, b.toolSpanName(nameKV), ns)
		a := b.attrList(spanAttrs)
		a = append(a, b.kv(attrOperation, opExecuteTool), nameKV)
		key := ""
		if len(callID) > 0 {
			kv := b.str(attrToolCallID, string(callID))
			key = kv.Value.GetStringValue()
			a = append(a, kv)
		} else {
			key = "\x00" + nameKV.Value.GetStringValue()
		}
		b.enum(&a, "aaep.tool.risk_level", fl, fRiskLevel)
		b.enum(&a, "aaep.tool.reversibility", fl, fReversibility)
		a.boolean("aaep.tool.irreversible", fl.get(fIrreversible))
		if b.opts.IncludeText {
			a.docStr("aaep.tool.args_summary", fl, fArgsSummary)
		}
		s.Attributes = a
		t.tools.set(key, s)
		return
	}
	var i int
	if len(callID) > 0 {
		i = t.tools.find(callID)
	} else {
		i = t.tools.findString("\x00" + string(name))
	}
	if i < 0 {
		return // a completion of no recorded invocation: the finding says so
	}
	s := t.tools.take(i)
	t.spanAt.put(m.Index, s)
	s.EndTimeUnixNano = ns
	a := attrs(s.Attributes)
	status, _ := fl.get(fStatus).Text()
	var statusKV *commonpb.KeyValue
	if len(status) > 0 {
		statusKV = b.kvText("aaep.tool.status", status)
		a = append(a, statusKV)
	}
	b.num(&a, "aaep.tool.duration_ms", fl.get(fDurationMS))
	if b.opts.IncludeText {
		a.docStr("aaep.tool.result_summary", fl, fSummaryNormal)
	}
	switch string(status) {
	case "", "success":
		s.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_OK}
	default:
		st := statusKV.Value.GetStringValue()
		a = append(a, b.kv(attrErrorType, st))
		msg := st
		if b.opts.IncludeText {
			msg = cmp.Or(fieldString(fl, fErrorMessage), st)
		}
		s.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: msg}
	}
	s.Attributes = a
}

// toolsAvailable returns the attribute of a session's tools_available,
// the array v: one shared value for each text of the array (a producer
// sends the same list in every session).
func (b *builder) toolsAvailable(v payload.Value) *commonpb.KeyValue {
	if kv, ok := b.toolLists[string(v)]; ok {
		return kv
	}
	var names []string
	v.Elements(func(_ int, e payload.Value) bool {
		if s, ok := e.Str(); ok {
			names = append(names, s)
		}
		return true
	})
	kv := kvStrs("aaep.session.tools_available", names)
	if len(b.toolLists) >= maxShared {
		clear(b.toolLists)
	}
	b.toolLists[string(v)] = kv
	return kv
}

// toolSpanName returns "execute_tool {tool}" for the tool named by the
// shared attribute nameKV: one string for each name (shared values are
// few; the names are held while their attribute is).
func (b *builder) toolSpanName(nameKV *commonpb.KeyValue) string {
	if n, ok := b.toolNames[nameKV]; ok {
		return n
	}
	if len(b.toolNames) >= maxShared {
		clear(b.toolNames)
	}
	n := opExecuteTool + " " + nameKV.Value.GetStringValue()
	b.toolNames[nameKV] = n
	return n
}

// output counts a streaming output's chunk; a complete output becomes
// its event.
func (b *builder) output(t *trace, fl *fields, ns uint64) {
	idText, _ := fl.get(fOutputID).Text()
	o, _ := t.outputs.get(idText) // copies nothing
	if o == nil {
		id := string(idText)
		o = &output{id: id, first: ns, contentType: fieldString(fl, fContentType)}
		t.outputs.set(id, o)
		t.order = append(t.order, id)
	}
	o.chunks++
	o.last = ns
	if c, ok := fl.get(fChunk).Text(); ok {
		o.bytes += int64(len(c))
		if b.opts.IncludeText && !o.clipped {
			if o.text.Len()+len(c) > maxOutputText {
				o.clipped = true
			} else {
				o.text.Write(c)
			}
		}
	}
	if done, _ := fl.get(fComplete).Bool(); done {
		o.complete = true
		b.outputEvent(t, o)
		t.outputs.take(t.outputs.findString(o.id))
	}
}

func (b *builder) outputEvent(t *trace, o *output) {
	a := b.attrList(8)
	a = append(a, b.kvInt("aaep.output.chunks", o.chunks), b.kvInt("aaep.output.bytes", o.bytes),
		b.kvBool("aaep.output.complete", o.complete), b.newInt("aaep.output.duration_ns", int64(o.last-o.first)))
	if o.id != "" {
		a = append(a, b.str("aaep.output.id", o.id))
	}
	if o.contentType != "" {
		a = append(a, b.kv("aaep.output.content_type", o.contentType))
	}
	if b.opts.IncludeText {
		a = append(a, kvStr("aaep.output.text", o.text.String()))
		if o.clipped {
			a = append(a, kvBool("aaep.output.text_clipped", true))
		}
	}
	b.addEvent(t.root, "aaep.output.streaming", o.first, a)
}
