package otlpexport

// Settling and ending traces: what the checker reported after a message
// (defaults applied, findings placed on their spans, sessions ended), each
// trace's last spans and status, and its resource.

import (
	"cmp"
	"strings"

	"github.com/aaep-tools/aaepkit/protocol"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// settle applies what the checker reported while the last message was
// read: waits resolved by a default, findings, sessions that ended.
func (b *builder) settle() {
	for _, s := range b.steps {
		if s.Synthetic && s.Kind == protocol.StepTimeout {
			b.timeout(s)
		}
	}
	b.steps = b.steps[:0]
	for i := range b.findings {
		b.placeFinding(&b.findings[i])
	}
	b.findings = b.findings[:0]
	for _, sum := range b.done {
		b.end(sum)
	}
	b.done = b.done[:0]
}

// lookup returns the trace of a session open or recently ended, or nil.
func (b *builder) lookup(k skey) *trace {
	if t := b.open[k]; t != nil {
		return t
	}
	for i := len(b.recent) - 1; i >= 0; i-- {
		if b.recent[i].key == k {
			return b.recent[i]
		}
	}
	return nil
}

// timeout resolves a wait by the default the checker applied (its step's
// detail: the token, then "→ default accept" or "→ default reject").
func (b *builder) timeout(s protocol.Step) {
	t := b.lookup(skey{s.Stream, s.Session})
	if t == nil {
		return
	}
	token, rest, _ := strings.Cut(s.Detail, " ")
	i := t.waits.findString(token)
	if i < 0 {
		return
	}
	w := t.waits.take(i)
	outcome := "timeout"
	if s.Label != "timeout" {
		outcome = "subscription_closed"
	}
	a := attrs{b.kv("aaep.wait.outcome", outcome)}
	if d, ok := strings.CutPrefix(rest, "→ default "); ok {
		a = append(a, b.kv("aaep.confirmation.decision", d), b.kvBool("aaep.confirmation.default_applied", true))
	}
	w.span.Attributes = append(w.span.Attributes, a...)
	w.span.EndTimeUnixNano = b.at(s.Offset)
}

// placeFinding adds a finding as an event of the span of the message it
// concerns (the session's root when no span is filed under it).
func (b *builder) placeFinding(f *protocol.Finding) {
	b.stats.Findings++
	t := (*trace)(nil)
	if f.Session != "" {
		t = b.lookup(skey{f.Stream, f.Session})
	}
	if t == nil {
		st := b.stream(f.Stream)
		if st.trace == nil {
			st.trace = b.newTrace(skey{f.Stream, ""}, 0, true)
		}
		t = st.trace
	}
	span := t.root
	if s := t.spanAt.get(f.Index); s != nil && f.Index >= 0 {
		span = s
	}
	msg := f.Message
	for _, tok := range t.tokens {
		msg = strings.ReplaceAll(msg, tok, "(reply token)")
	}
	a := append(b.attrList(7),
		b.kv("aaep.finding.rule", f.RuleID), b.kv("aaep.finding.level", f.Level.String()),
		b.kv("aaep.finding.party", f.Party.String()), b.str("aaep.finding.message", msg),
		b.kv("aaep.finding.protocol", f.Protocol), b.kvInt("aaep.finding.index", f.Index),
	)
	if t.pseudo && f.Session != "" {
		a = append(a, b.str(attrConversation, f.Session))
	}
	b.addEvent(span, eventFinding, b.at(f.Offset), a)
	if f.Party == protocol.Producer && f.Level == protocol.Must {
		desc := "producer MUST " + f.RuleID + ": " + f.Short
		if span.Status == nil || span.Status.Code != tracepb.Status_STATUS_CODE_ERROR {
			span.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: desc}
		}
		if t.mustErr == "" {
			t.mustErr = desc
		}
	}
}

// end closes a session the checker is done with; it is held a while for
// late replies and findings, then sent.
func (b *builder) end(sum protocol.SessionSummary) {
	k := skey{sum.Stream, sum.Session}
	t := b.open[k]
	if t == nil {
		return
	}
	delete(b.open, k)
	b.ended[k]++
	t.complete = sum.Complete
	if sum.State != "" {
		t.state = sum.State
	}
	b.recent = append(b.recent, t)
	if len(b.recent) > recentDone {
		old := b.recent[0]
		b.recent = b.recent[1:]
		b.finish(old)
	}
}

// finish completes t's spans and hands the trace on.
func (b *builder) finish(t *trace) {
	end := t.last
	if t.pseudo {
		st := b.streams[t.key.stream]
		t.first, end, t.prod = st.first, st.last, st.prod
		name := "aaep.stream"
		if t.key.stream != "" {
			name += " " + t.key.stream
		}
		t.root.Name = name
	} else {
		agent := cmp.Or(t.prod.name, t.prod.id)
		t.root.Name = b.rootName(agent)
		a := attrs(t.root.Attributes)
		if t.prod.id != "" {
			a = append(a, b.kv(attrAgentID, t.prod.id))
		}
		if agent != "" {
			a = append(a, b.kv(attrAgentName, agent))
		}
		if t.prod.model != "" {
			a = append(a, b.kv(attrModel, t.prod.model))
		}
		a = append(a, b.kv("aaep.session.state", t.state), b.kvBool("aaep.session.complete", t.complete),
			b.kvInt("aaep.session.messages", t.messages))
		t.root.Attributes = a
	}
	t.root.StartTimeUnixNano = t.first
	if !t.ended {
		t.root.EndTimeUnixNano = end
	}
	for _, e := range t.tools.list {
		s := e.val
		s.EndTimeUnixNano = end
		s.Attributes = append(s.Attributes, b.kvBool("aaep.tool.completed", false))
	}
	for _, e := range t.waits.list {
		w := e.val
		w.span.EndTimeUnixNano = end
		w.span.Attributes = append(w.span.Attributes, b.kv("aaep.wait.outcome", "unanswered"))
	}
	for _, id := range t.order {
		if i := t.outputs.findString(id); i >= 0 {
			b.outputEvent(t, t.outputs.list[i].val)
		}
	}
	if t.mustErr != "" && (t.root.Status == nil || t.root.Status.Code != tracepb.Status_STATUS_CODE_ERROR) {
		t.root.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: t.mustErr}
	}
	for _, s := range t.spans {
		if s.EndTimeUnixNano < s.StartTimeUnixNano {
			s.EndTimeUnixNano = s.StartTimeUnixNano
		}
	}
	if t.root.EndTimeUnixNano < t.root.StartTimeUnixNano {
		t.root.EndTimeUnixNano = t.root.StartTimeUnixNano
	}
	b.emit(t)
}

// rootName returns the name of a session's root span, "invoke_agent
// {agent}": one string for each agent.
func (b *builder) rootName(agent string) string {
	if n, ok := b.rootNames[agent]; ok {
		return n
	}
	if len(b.rootNames) >= maxShared {
		clear(b.rootNames)
	}
	n := strings.TrimSpace(opInvokeAgent + " " + agent)
	b.rootNames[agent] = n
	return n
}

// close ends the recording: what the driver reported last is applied,
// then every session still held is sent, and the streams' traces of
// findings that concern no session.
func (b *builder) close() {
	b.settle()
	for _, t := range b.recent {
		b.finish(t)
	}
	b.recent = nil
	// Sessions the checker never ended (it ends every one at Finish;
	// this is for a reading stopped part-way).
	var rest []*trace
	for _, t := range b.open {
		rest = append(rest, t)
	}
	sortTraces(rest)
	for _, t := range rest {
		b.finish(t)
	}
	var names []string
	for name, st := range b.streams {
		if st.trace != nil {
			names = append(names, name)
		}
	}
	sortStrings(names)
	for _, name := range names {
		b.finish(b.streams[name].trace)
	}
}

// resource returns the resource attributes of t, its producer and the
// recording, and their key: one list for each producer (shared by its
// traces and never changed).
func (b *builder) resource(t *trace) resource {
	k := [2]string{t.prod.id, t.prod.version}
	if r, ok := b.resources[k]; ok {
		return r
	}
	svc := t.prod.id
	if svc == "" {
		svc = "aaep"
	}
	a := []*commonpb.KeyValue{kvStr(attrServiceName, svc)}
	if t.prod.version != "" {
		a = append(a, kvStr(attrServiceVersion, t.prod.version))
	}
	a = append(a, b.res...)
	if len(b.resources) >= maxShared {
		clear(b.resources)
	}
	r := resource{attrs: a, key: resourceKey(a)}
	b.resources[k] = r
	return r
}
