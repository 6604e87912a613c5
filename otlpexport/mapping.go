package otlpexport

import (
	"cmp"
	"path/filepath"
	"slices"
	"strings"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/recording"
)

// skey is a session's key in its recording: its stream and id.
type skey struct{ stream, id string }

// producer is who emitted a session's events (the envelope's "producer").
type producer struct{ id, name, version, model string }

// trace is one session's trace while it is built.
type trace struct {
	key     skey
	pseudo  bool // the stream's trace: findings that concern no session
	traceID []byte
	root    *tracepb.Span
	spans   []*tracepb.Span // children, in the order they opened
	prod    producer
	// tools and waits are the open tool calls (by tool_call_id, else tool
	// name) and waits for the user (by reply_token).
	tools map[string]*tracepb.Span
	waits map[string]*wait
	// outputs are the streaming outputs not yet complete, by output_id.
	outputs map[string]*output
	order   []string // output ids in order of their first chunk
	// spanAt files the tool and wait spans under the messages that
	// opened or closed them, for the findings about those messages.
	spanAt spanIndex
	// tokens are the reply tokens the session issued, masked in findings.
	tokens   []string
	ended    bool // the terminal event was read
	first    uint64
	last     uint64
	messages int64
	state    string
	complete bool
	mustErr  string // the first producer MUST finding, for the root's status
}

// spanIndex files spans under message numbers. Messages come in order,
// so the list is sorted by index and searched by halves, where a map cost
// every trace an allocation and each span a hash.
type spanIndex []indexedSpan

type indexedSpan struct {
	index int64
	span  *tracepb.Span
}

// put files s under message index, an index no smaller than the last
// one's; a later put of the same index wins.
func (x *spanIndex) put(index int64, s *tracepb.Span) {
	if n := len(*x); n > 0 && (*x)[n-1].index > index {
		// Out of order (never, as messages are read): keep it sorted.
		i, _ := slices.BinarySearchFunc(*x, index+1, func(e indexedSpan, t int64) int { return cmp.Compare(e.index, t) })
		*x = slices.Insert(*x, i, indexedSpan{index, s})
		return
	}
	*x = append(*x, indexedSpan{index, s})
}

// get returns the span filed last under index, or nil.
func (x spanIndex) get(index int64) *tracepb.Span {
	i, _ := slices.BinarySearchFunc(x, index+1, func(e indexedSpan, t int64) int { return cmp.Compare(e.index, t) })
	if i > 0 && x[i-1].index == index {
		return x[i-1].span
	}
	return nil
}

// wait is an open wait for the user's confirmation or clarification.
type wait struct {
	span    *tracepb.Span
	confirm bool
}

// output counts one streaming output's chunks.
type output struct {
	id          string
	first, last uint64
	chunks      int64
	bytes       int64
	complete    bool
	contentType string
	text        strings.Builder
	clipped     bool
}

// maxOutputText bounds the text an output event carries (--include-text).
const maxOutputText = 64 << 10

// recentDone is how many ended sessions are held before they are sent,
// so that a late reply or a finding reported after the end still finds
// its trace.
const recentDone = 64

// builder builds the traces of one recording from what the analysis
// driver reports: its steps, findings and session ends arrive for a
// message before the observer sees it, so they are held (pending) and
// applied once the message is placed.
type builder struct {
	opts   *Options
	rec    *recording.Recording
	recKey string
	start  time.Time
	res    []*commonpb.KeyValue // the recording's resource attributes
	emit   func(*trace)

	open    map[skey]*trace
	recent  []*trace // ended, oldest first
	ended   map[skey]int
	streams map[string]*streamTrace

	steps    []protocol.Step
	findings []protocol.Finding
	done     []protocol.SessionSummary

	doc    payload.Doc
	kvs    map[string]map[string]*commonpb.KeyValue        // shared attributes by name and value (kv)
	bools  map[string][2]*commonpb.KeyValue                // shared boolean attributes (kvBool)
	ints   map[string]*[maxSmallInt + 1]*commonpb.KeyValue // shared small integers (num)
	states map[[2]*commonpb.KeyValue][]*commonpb.KeyValue  // shared state changes' attributes (stateAttrs)
	// resources are the resource attributes by producer (resource).
	resources map[[2]string]resource
	toolNames map[*commonpb.KeyValue]string // span names by the tool's shared name attribute (toolSpanName)
	toolLists map[string]*commonpb.KeyValue // tools_available attributes by the array's text (toolsAvailable)
	rootNames map[string]string             // root span names by agent (finish)
	eventSlab []tracepb.Span_Event          // events not yet used (addEvent)
	spanSlab  []tracepb.Span                // spans not yet used (child)
	listSlab  []*commonpb.KeyValue          // room for attribute lists not yet used (attrList)
	eventList []*tracepb.Span_Event         // room for spans' event lists not yet used (addEvent)
	idSlab    []byte                        // room for span ids not yet used (spanID)
	strSlab   []strKV                       // string and integer attributes not yet used (str, kvInt)
	intSlab   []intKV
	indexSlab []indexedSpan       // room for spanAt lists not yet used (child)
	spanList  []*tracepb.Span     // room for child span lists not yet used (child)
	producers map[string]producer // producers by the envelope's text (message)
	idBuf     []byte              // traceID's input
	lastName  string              // the stream of the last message, and its streamTrace
	lastSt    *streamTrace
	stats     *Stats
}

// resource is a resource's attributes and the key the batcher groups
// them by.
type resource struct {
	attrs []*commonpb.KeyValue
	key   string
}

// streamTrace is what the builder knows of a stream besides its sessions.
type streamTrace struct {
	first, last uint64
	prod        producer
	trace       *trace // made for the first finding that concerns no session
}

func newBuilder(opts *Options, rec *recording.Recording, stats *Stats, emit func(*trace)) *builder {
	h := rec.Header()
	b := &builder{opts: opts, rec: rec, recKey: recordingKey(rec), start: h.Start, emit: emit, stats: stats,
		open: map[skey]*trace{}, ended: map[skey]int{}, streams: map[string]*streamTrace{}, kvs: map[string]map[string]*commonpb.KeyValue{}, bools: map[string][2]*commonpb.KeyValue{},
		ints: map[string]*[maxSmallInt + 1]*commonpb.KeyValue{}, states: map[[2]*commonpb.KeyValue][]*commonpb.KeyValue{},
		resources: map[[2]string]resource{}, toolNames: map[*commonpb.KeyValue]string{},
		toolLists: map[string]*commonpb.KeyValue{}, rootNames: map[string]string{}, producers: map[string]producer{}}
	b.res = append(b.res, kvStr("aaep.recording.name", filepath.Base(rec.Name)))
	if h.Tool != "" {
		b.res = append(b.res, kvStr("aaep.recording.tool", h.Tool))
	}
	if !h.Start.IsZero() {
		b.res = append(b.res, kvStr("aaep.recording.start", h.Start.UTC().Format(time.RFC3339Nano)))
	}
	for _, k := range []string{"host", "hostname", "host.name"} {
		if v := h.Meta[k]; v != "" {
			b.res = append(b.res, kvStr(attrHostName, v))
			break
		}
	}
	return b
}

// kv returns the string attribute k=v, one shared value for each pair
// (the attributes repeat: operation, tool and state names, levels), so
// that a recording's millions of them are not each allocated. Shared
// values are never changed.
func (b *builder) kv(k, v string) *commonpb.KeyValue {
	vals := b.values(k)
	if kv := vals[v]; kv != nil {
		return kv
	}
	kv := kvStr(k, v)
	vals[v] = kv
	return kv
}

// kvText is kv for a value read from a message: the lookup of a value
// already shared copies nothing.
func (b *builder) kvText(k string, v []byte) *commonpb.KeyValue {
	vals := b.values(k)
	if kv := vals[string(v)]; kv != nil {
		return kv
	}
	s := string(v)
	kv := kvStr(k, s)
	vals[s] = kv
	return kv
}

// values returns the shared values of attribute k, emptied when it has
// grown past maxShared (a member whose values are not from a short list).
func (b *builder) values(k string) map[string]*commonpb.KeyValue {
	vals := b.kvs[k]
	if vals == nil {
		vals = map[string]*commonpb.KeyValue{}
		b.kvs[k] = vals
	} else if len(vals) >= maxShared {
		clear(vals)
	}
	return vals
}

// maxShared bounds the shared values of one attribute.
const maxShared = 1024

// enum adds the string member name of doc as attribute k, a shared value
// (kv): for the members whose values come from a short list.
func (b *builder) enum(a *attrs, k string, doc *payload.Doc, name string) {
	if v, ok := doc.Get(name).Text(); ok && len(v) > 0 {
		*a = append(*a, b.kvText(k, v))
	}
}

// kvBool is kv for a boolean attribute.
func (b *builder) kvBool(k string, v bool) *commonpb.KeyValue {
	i := 0
	if v {
		i = 1
	}
	pair := b.bools[k]
	if pair[i] == nil {
		pair[i] = kvBool(k, v)
		b.bools[k] = pair
	}
	return pair[i]
}

// at is the wall-clock time of an offset into the recording.
func (b *builder) at(off time.Duration) uint64 { return unixNano(b.start.Add(off)) }

func (b *builder) step(s protocol.Step) { b.steps = append(b.steps, s) }

func (b *builder) finding(f protocol.Finding) { b.findings = append(b.findings, f) }

func (b *builder) sessionDone(s protocol.SessionSummary) {
	// A block about the stream (a subscription handshake, a connection
	// without one) is no session: it has no trace; its findings are the
	// stream's trace's.
	if !s.ConnectionOnly() && !s.Handshake {
		b.done = append(b.done, s)
	}
}

func (b *builder) stream(name string) *streamTrace {
	if b.lastSt != nil && name == b.lastName {
		return b.lastSt // the stream of the last message, most often
	}
	st := b.streams[name]
	if st == nil {
		st = &streamTrace{}
		b.streams[name] = st
	}
	b.lastName, b.lastSt = name, st
	return st
}

// message places one message: in its session's trace, as the step the
// checker reported for it says.
func (b *builder) message(stream string, m *protocol.Message) {
	b.stats.Messages++
	ns := unixNano(m.Received)
	if m.Received.IsZero() {
		ns = b.at(m.Offset)
	}
	st := b.stream(stream)
	if st.first == 0 || ns < st.first {
		st.first = ns
	}
	st.last = max(st.last, ns)
	doc := m.Doc
	const need = payload.NeedMembers | payload.NeedSession
	if doc == nil || doc.Decoded()&need != need {
		b.doc.DecodeOnly(m.Raw, need)
		doc = &b.doc
	}
	var step *protocol.Step
	for i := range b.steps {
		if s := &b.steps[i]; !s.Synthetic && s.Index == m.Index && s.Stream == stream && s.Kind != protocol.StepHandshake {
			step = s
		}
	}
	id := doc.Routing.SessionKey()
	if step != nil && step.Session != "" {
		id = step.Session
	}
	if id != "" {
		starts := step != nil && step.Kind == protocol.StepLifecycle && strings.HasSuffix(step.Label, "started")
		t := b.session(stream, id, starts)
		t.messages++
		if t.first == 0 {
			t.first = ns
		}
		t.last = max(t.last, ns)
		if t.prod.id == "" {
			if pv := doc.Get("producer"); pv.Kind() == payload.Object {
				t.prod = b.producer(pv)
				st.prod = t.prod
			}
		}
		if step != nil {
			b.apply(t, step, m, doc, ns)
		}
	}
	b.settle()
}

// producer returns producerOf(v), one for each text of the object (a
// producer writes the same in every message).
func (b *builder) producer(v payload.Value) producer {
	if p, ok := b.producers[string(v)]; ok {
		return p
	}
	p := producerOf(v)
	if len(b.producers) >= maxShared {
		clear(b.producers)
	}
	b.producers[string(v)] = p
	return p
}

// producerOf reads an envelope's producer object.
func producerOf(v payload.Value) producer {
	get := func(name string) string { s, _ := v.Get(name).Str(); return s }
	return producer{id: get("agent_id"), name: get("agent_name"), version: get("agent_version"), model: get("model")}
}

// session returns the trace of session id of stream: the open one, else
// one that ended recently (a late reply or event joins it) unless starts,
// else a new one.
func (b *builder) session(stream, id string, starts bool) *trace {
	k := skey{stream, id}
	if t := b.open[k]; t != nil {
		return t
	}
	if !starts {
		for i := len(b.recent) - 1; i >= 0; i-- {
			if b.recent[i].key == k {
				return b.recent[i]
			}
		}
	}
	occ := b.ended[k]
	t := b.newTrace(k, occ, false)
	b.open[k] = t
	return t
}

func (b *builder) newTrace(k skey, occ int, pseudo bool) *trace {
	tid := b.traceID(k.stream, k.id, occ)
	root := b.span()
	root.TraceId, root.SpanId, root.Kind, root.Attributes = tid, b.spanID(tid, kindRoot, 0), tracepb.Span_SPAN_KIND_INTERNAL, b.attrList(rootAttrs)
	if pseudo {
		root.Attributes = append(root.Attributes, b.str("aaep.scope", "stream"))
	} else {
		root.Attributes = append(root.Attributes, b.kv(attrOperation, opInvokeAgent), b.str(attrConversation, k.id))
	}
	if k.stream != "" {
		root.Attributes = append(root.Attributes, b.str("aaep.stream", k.stream))
	}
	return &trace{key: k, pseudo: pseudo, traceID: tid, root: root}
}

// rootAttrs and spanAttrs are room for the attributes a root span and a
// tool or wait span get in the mapping (at most 16 and 12, fewer without
// --include-text), made at once: later ones are appended in place, not
// to a list that grows by copying.
const (
	rootAttrs = 16
	spanAttrs = 12
)

// child opens a child span of t's root at ns.
func (b *builder) child(t *trace, kind byte, index int64, name string, ns uint64) *tracepb.Span {
	s := b.span()
	s.TraceId, s.SpanId, s.ParentSpanId = t.traceID, b.spanID(t.traceID, kind, index), t.root.SpanId
	s.Name, s.Kind, s.StartTimeUnixNano = name, tracepb.Span_SPAN_KIND_INTERNAL, ns
	if t.spans == nil {
		// Room for the first few, cut from lists for many (as attrList).
		if len(b.spanList) < childList {
			b.spanList = make([]*tracepb.Span, listSlab)
		}
		if len(b.indexSlab) < childList {
			b.indexSlab = make([]indexedSpan, listSlab/2)
		}
		t.spans, t.spanAt = b.spanList[:0:childList], b.indexSlab[:0:childList]
		b.spanList, b.indexSlab = b.spanList[childList:], b.indexSlab[childList:]
	}
	t.spans = append(t.spans, s)
	t.spanAt.put(index, s)
	return s
}

// str is kvStr for an attribute that is not shared, allocated kvSlab at
// a time as events are.
func (b *builder) str(k, v string) *commonpb.KeyValue {
	if len(b.strSlab) == 0 {
		b.strSlab = make([]strKV, kvSlab)
	}
	p := &b.strSlab[0]
	b.strSlab = b.strSlab[1:]
	p.v.StringValue = v
	p.av.Value = &p.v
	p.kv.Key, p.kv.Value = k, &p.av
	return &p.kv
}

// newInt is str for an integer.
func (b *builder) newInt(k string, n int64) *commonpb.KeyValue {
	if len(b.intSlab) == 0 {
		b.intSlab = make([]intKV, kvSlab)
	}
	p := &b.intSlab[0]
	b.intSlab = b.intSlab[1:]
	p.v.IntValue = n
	p.av.Value = &p.v
	p.kv.Key, p.kv.Value = k, &p.av
	return &p.kv
}

// span returns a new span, allocated spanSlab at a time as events are.
func (b *builder) span() *tracepb.Span {
	if len(b.spanSlab) == 0 {
		b.spanSlab = make([]tracepb.Span, spanSlab)
	}
	s := &b.spanSlab[0]
	b.spanSlab = b.spanSlab[1:]
	return s
}

// attrList returns an empty attribute list with room for n, cut from a
// list allocated for many (a full slice: an append past n moves it to
// memory of its own, never into the next list's room).
func (b *builder) attrList(n int) attrs {
	if len(b.listSlab) < n {
		b.listSlab = make([]*commonpb.KeyValue, listSlab)
	}
	a := b.listSlab[:0:n]
	b.listSlab = b.listSlab[n:]
	return a
}

// Slab sizes: spans, and the attribute pointers and event pointers lists
// are cut from.
const (
	spanSlab  = 64
	listSlab  = 2048
	eventList = 8
	childList = 4
	kvSlab    = 128
)

// addEvent adds an event to s, or counts it as dropped past the limit.
func (b *builder) addEvent(s *tracepb.Span, name string, ns uint64, as []*commonpb.KeyValue) {
	if len(s.Events) >= b.opts.maxEvents() {
		s.DroppedEventsCount++
		return
	}
	if len(b.eventSlab) == 0 {
		b.eventSlab = make([]tracepb.Span_Event, eventSlab)
	}
	e := &b.eventSlab[0]
	b.eventSlab = b.eventSlab[1:]
	e.TimeUnixNano, e.Name, e.Attributes = ns, name, as
	if s.Events == nil {
		// Room for the first few, cut from a list for many (as attrList).
		if len(b.eventList) < eventList {
			b.eventList = make([]*tracepb.Span_Event, eventSlab*eventList/2)
		}
		s.Events = b.eventList[:0:eventList]
		b.eventList = b.eventList[eventList:]
	}
	s.Events = append(s.Events, e)
	b.stats.Events++
}

// eventSlab is how many events are allocated at once: a recording has
// about one for every two messages, and one allocation for many of them
// is less for the allocator and the collector to do than one each.
const eventSlab = 256

// stateAttrs returns the attributes of a state change from one state to
// another: one list shared by every change between the same two states
// (the states come from a short list; an event's attributes are never
// changed once it is added).
func (b *builder) stateAttrs(from, to *commonpb.KeyValue) []*commonpb.KeyValue {
	k := [2]*commonpb.KeyValue{from, to}
	if a, ok := b.states[k]; ok {
		return a
	}
	if len(b.states) >= maxShared {
		clear(b.states)
	}
	a := []*commonpb.KeyValue{from, to}
	b.states[k] = a
	return a
}

// num is attrs.num with the small integers (0 to maxSmallInt: percents,
// steps) shared, one value for each attribute and number.
func (b *builder) num(a *attrs, k string, v payload.Value) {
	n, ok := v.Int()
	if !ok {
		a.num(k, v)
		return
	}
	*a = append(*a, b.kvInt(k, n))
}

// kvInt is kvInt with the small integers shared (as num), the others
// allocated as str's.
func (b *builder) kvInt(k string, n int64) *commonpb.KeyValue {
	if n < 0 || n > maxSmallInt {
		return b.newInt(k, n)
	}
	vals := b.ints[k]
	if vals == nil {
		vals = new([maxSmallInt + 1]*commonpb.KeyValue)
		b.ints[k] = vals
	}
	if vals[n] == nil {
		vals[n] = kvInt(k, n)
	}
	return vals[n]
}

// maxSmallInt is the largest integer num shares.
const maxSmallInt = 255

// apply maps the message of a step onto t.
func (b *builder) apply(t *trace, step *protocol.Step, m *protocol.Message, doc *payload.Doc, ns uint64) {
	text := b.opts.IncludeText
	switch step.Kind {
	case protocol.StepLifecycle:
		if strings.HasSuffix(step.Label, "started") {
			a := attrs(t.root.Attributes)
			b.num(&a, "aaep.session.expected_duration_ms", doc.Get("expected_duration_ms"))
			if v := doc.Get("tools_available"); v.Kind() == payload.Array {
				a = append(a, b.toolsAvailable(v))
			}
			if text {
				a.docStr("aaep.session.summary", doc, "summary_normal")
			}
			t.root.Attributes = a
			return
		}
		b.terminal(t, step, doc, ns)
	case protocol.StepTool:
		b.tool(t, step, m, doc, ns)
	case protocol.StepConfirmation, protocol.StepClarification:
		confirm := step.Kind == protocol.StepConfirmation
		name := "await_clarification"
		if confirm {
			name = "await_confirmation"
		}
		s := b.child(t, kindWait, m.Index, name, ns)
		a := b.attrList(spanAttrs)
		a = append(a, b.kv("aaep.wait.kind", strings.TrimPrefix(name, "await_")))
		b.enum(&a, "aaep.confirmation.default_decision", doc, "default_decision")
		b.num(&a, "aaep.wait.timeout_seconds", doc.Get("timeout_seconds"))
		b.enum(&a, "aaep.risk_level", doc, "risk_level")
		b.enum(&a, "aaep.reversibility", doc, "reversibility")
		a.boolean("aaep.irreversible", doc.Get("irreversible"))
		if text {
			a.docStr("aaep.confirmation.action", doc, "action")
			a.docStr("aaep.confirmation.consequence", doc, "consequence")
			a.docStr("aaep.clarification.question", doc, "question")
		}
		s.Attributes = a
		token := docString(doc, "reply_token")
		if token != "" {
			if t.waits == nil {
				t.waits = map[string]*wait{}
			}
			t.waits[token] = &wait{span: s, confirm: confirm}
			t.tokens = append(t.tokens, token)
		}
	case protocol.StepReply:
		token, _ := doc.Get("reply_token").Text()
		w := t.waits[string(token)]
		if w == nil {
			return
		}
		t.spanAt.put(m.Index, w.span)
		if strings.HasSuffix(step.Detail, "(ignored)") {
			b.addEvent(w.span, "aaep.reply.ignored", ns, nil)
			return
		}
		delete(t.waits, string(token))
		a := attrs(w.span.Attributes)
		a = append(a, b.kv("aaep.wait.outcome", "replied"))
		if w.confirm {
			b.enum(&a, "aaep.confirmation.decision", doc, "decision")
			a = append(a, b.kvBool("aaep.confirmation.default_applied", false))
		} else if text {
			a.docStr("aaep.clarification.response", doc, "response")
		}
		w.span.Attributes = a
		w.span.EndTimeUnixNano = ns
	case protocol.StepState:
		var a attrs
		from, _ := doc.Get("from_state").Text()
		to, _ := doc.Get("to_state").Text()
		var fromKV, toKV *commonpb.KeyValue
		if len(from) == 0 && len(to) == 0 {
			fromKV, toKV = b.kv("aaep.state.from", step.From), b.kv("aaep.state.to", step.To)
		} else {
			fromKV, toKV = b.kvText("aaep.state.from", from), b.kvText("aaep.state.to", to)
		}
		if text {
			a = append(b.attrList(3), fromKV, toKV)
			a.docStr("aaep.summary", doc, "summary_normal")
		} else {
			a = b.stateAttrs(fromKV, toKV)
		}
		b.addEvent(t.root, "aaep.state.changed", ns, a)
	case protocol.StepProgress:
		a := b.attrList(4)
		p := doc.Get("progress")
		b.num(&a, "aaep.progress.percent", p.Get("percent"))
		b.num(&a, "aaep.progress.step", p.Get("step"))
		b.num(&a, "aaep.progress.total_steps", p.Get("total_steps"))
		if text {
			a.str("aaep.progress.description", p, "description")
		}
		b.addEvent(t.root, "aaep.progress.updated", ns, a)
	case protocol.StepOutput:
		b.output(t, doc, ns)
	case protocol.StepHandoff:
		var a attrs
		b.enum(&a, "aaep.handoff.target_kind", doc, "target_kind")
		b.addEvent(t.root, "aaep.handoff.requested", ns, a)
	}
}

// terminal ends t's root at its terminal event.
func (b *builder) terminal(t *trace, step *protocol.Step, doc *payload.Doc, ns uint64) {
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
		code, cat := docString(doc, "error_code"), docString(doc, "error_category")
		b.enum(&a, "aaep.error.category", doc, "error_category")
		b.enum(&a, "aaep.error.code", doc, "error_code")
		a.boolean("aaep.error.recoverable", doc.Get("recoverable"))
		etype := cmp.Or(code, cat, "errored")
		a = append(a, b.str(attrErrorType, etype))
		msg := etype
		if b.opts.IncludeText {
			if s := docString(doc, "summary_normal"); s != "" {
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
func (b *builder) tool(t *trace, step *protocol.Step, m *protocol.Message, doc *payload.Doc, ns uint64) {
	invoked := strings.HasSuffix(step.Label, "invoked")
	if !invoked && !strings.HasSuffix(step.Label, "completed") {
		b.addEvent(t.root, "aaep."+step.Label, ns, nil)
		return
	}
	name, _ := doc.Get("tool").Text()
	if len(name) == 0 {
		name = []byte(step.Detail)
	}
	callID, _ := doc.Get("tool_call_id").Text()
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
		b.enum(&a, "aaep.tool.risk_level", doc, "risk_level")
		b.enum(&a, "aaep.tool.reversibility", doc, "reversibility")
		a.boolean("aaep.tool.irreversible", doc.Get("irreversible"))
		if b.opts.IncludeText {
			a.docStr("aaep.tool.args_summary", doc, "args_summary")
		}
		s.Attributes = a
		if t.tools == nil {
			t.tools = map[string]*tracepb.Span{}
		}
		t.tools[key] = s
		return
	}
	var s *tracepb.Span
	if len(callID) > 0 {
		s = t.tools[string(callID)]
		if s != nil {
			delete(t.tools, string(callID))
		}
	} else {
		key := "\x00" + string(name)
		if s = t.tools[key]; s != nil {
			delete(t.tools, key)
		}
	}
	if s == nil {
		return // a completion of no recorded invocation: the finding says so
	}
	t.spanAt.put(m.Index, s)
	s.EndTimeUnixNano = ns
	a := attrs(s.Attributes)
	status, _ := doc.Get("status").Text()
	var statusKV *commonpb.KeyValue
	if len(status) > 0 {
		statusKV = b.kvText("aaep.tool.status", status)
		a = append(a, statusKV)
	}
	b.num(&a, "aaep.tool.duration_ms", doc.Get("duration_ms"))
	if b.opts.IncludeText {
		a.docStr("aaep.tool.result_summary", doc, "summary_normal")
	}
	switch string(status) {
	case "", "success":
		s.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_OK}
	default:
		st := statusKV.Value.GetStringValue()
		a = append(a, b.kv(attrErrorType, st))
		msg := st
		if b.opts.IncludeText {
			msg = cmp.Or(docString(doc, "error_message"), st)
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
func (b *builder) output(t *trace, doc *payload.Doc, ns uint64) {
	idText, _ := doc.Get("output_id").Text()
	o := t.outputs[string(idText)] // copies nothing
	if o == nil {
		if t.outputs == nil {
			t.outputs = map[string]*output{}
		}
		id := string(idText)
		o = &output{id: id, first: ns, contentType: docString(doc, "content_type")}
		t.outputs[id] = o
		t.order = append(t.order, id)
	}
	o.chunks++
	o.last = ns
	if c, ok := doc.Get("chunk").Text(); ok {
		o.bytes += int64(len(c))
		if b.opts.IncludeText && !o.clipped {
			if o.text.Len()+len(c) > maxOutputText {
				o.clipped = true
			} else {
				o.text.Write(c)
			}
		}
	}
	if done, _ := doc.Get("complete").Bool(); done {
		o.complete = true
		b.outputEvent(t, o)
		delete(t.outputs, o.id)
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
