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
	tools keyed[*tracepb.Span]
	waits keyed[wait]
	// outputs are the streaming outputs not yet complete, by output_id.
	outputs keyed[*output]
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
	fl := fieldsOf(m, doc)
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
			if pv := fl.get(fProducer); pv.Kind() == payload.Object {
				t.prod = b.producer(pv)
				st.prod = t.prod
			}
		}
		if step != nil {
			b.apply(t, step, m, &fl, ns)
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
