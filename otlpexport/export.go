package otlpexport

import (
	"context"
	"fmt"
	"slices"
	"strings"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/aaep-tools/aaepkit/internal/progress"
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/check"
	"github.com/aaep-tools/aaepkit/recording"
)

// ScopeName names the instrumentation scope of every span exported.
const ScopeName = "github.com/aaep-tools/aaepkit/otlpexport"

// Defaults of Options.
const (
	DefaultBatchSpans = 2048
	DefaultMaxEvents  = 10000
)

// DefaultPostSpans is the Options.BatchSpans that aaep-replay export
// --format otlp posts with: the OpenTelemetry Collector batch processor's
// default send_batch_size. A quarter as many requests as DefaultBatchSpans
// makes is less work per span for the exporter and the receiver alike
// (docs/otel.md, Speed).
const DefaultPostSpans = 8192

// Options say how recordings are exported.
type Options struct {
	// Check configures the analysis driver whose findings become events
	// (check.Config; Models is required).
	Check check.Config
	// IncludeText adds the text the recording holds (summaries, questions,
	// answers, output, tool arguments) to the attributes; left out by
	// default.
	IncludeText bool
	// BatchSpans is about how many spans one request holds (whole traces:
	// a request may hold more); 0 is DefaultBatchSpans.
	BatchSpans int
	// MaxEvents bounds the events of one span; past it they are counted
	// in the span's dropped_events_count. 0 is DefaultMaxEvents.
	MaxEvents int
	// Version is the exporting tool's version, written as the scope's.
	Version string
	// Progress counts the records read (nil: none).
	Progress *progress.Meter
}

func (o *Options) maxEvents() int {
	if o.MaxEvents > 0 {
		return o.MaxEvents
	}
	return DefaultMaxEvents
}

// Stats counts what an export read and made.
type Stats struct {
	Recordings int
	Messages   int64
	// Traces counts every trace, Sessions those of sessions (the others
	// hold a stream's findings that concern no session, a subscription
	// handshake's among them).
	Traces   int64
	Sessions int64
	Spans    int64
	Events   int64
	Findings int64
	Requests int64
	// Incomplete says, one sentence each with the recording's name, why
	// part of a recording was not read.
	Incomplete []string
}

// Export reads each recording through the analysis driver and hands its
// traces to emit, a request of about Options.BatchSpans spans at a time,
// in a defined order (two exports of a recording emit equal requests).
// emit runs on a goroutine of its own, one request at a time, so that
// encoding and sending overlap the reading and checking; it owns the
// request. An error of emit stops the export and is returned. Damage
// part-way is not an error: the traces of what was read are emitted and
// Stats.Incomplete says why the rest was not.
func Export(ctx context.Context, recs []*recording.Recording, opts Options, emit func(*coltracepb.ExportTraceServiceRequest) error) (*Stats, error) {
	stats := &Stats{}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	bat := &batcher{limit: opts.BatchSpans, scope: &commonpb.InstrumentationScope{Name: ScopeName, Version: opts.Version}}
	if bat.limit <= 0 {
		bat.limit = DefaultBatchSpans
	}
	// The sender: requests in order, until the first error.
	queue := make(chan *coltracepb.ExportTraceServiceRequest, 2)
	sent := make(chan struct{})
	var emitErr error // the sender's, read after sent is closed
	go func() {
		defer close(sent)
		for req := range queue {
			if emitErr != nil {
				continue
			}
			if err := emit(req); err != nil {
				emitErr = err
				cancel()
			}
		}
	}()
	bat.emit = func(req *coltracepb.ExportTraceServiceRequest) {
		stats.Requests++
		select {
		case queue <- req:
		case <-ctx.Done():
		}
	}
	finish := func(err error) (*Stats, error) {
		close(queue)
		<-sent
		if emitErr != nil {
			return stats, emitErr
		}
		return stats, err
	}
	for _, rec := range recs {
		stats.Recordings++
		var b *builder
		b = newBuilder(&opts, rec, stats, func(t *trace) {
			stats.Traces++
			if !t.pseudo {
				stats.Sessions++
			}
			stats.Spans += int64(1 + len(t.spans))
			bat.add(b.resource(t), t)
		})
		sink := protocol.Sink{Finding: b.finding, Step: b.step, SessionDone: b.sessionDone}
		obs := &check.Observer{Message: b.message, Progress: opts.Progress}
		res, err := check.Run(ctx, rec, opts.Check, sink, obs)
		if err != nil {
			return finish(fmt.Errorf("%s: %w", rec.Name, err))
		}
		b.close()
		for _, why := range res.Incomplete {
			stats.Incomplete = append(stats.Incomplete, rec.Name+": "+why)
		}
	}
	bat.flush()
	return finish(context.Cause(ctx))
}

// batcher gathers traces into requests, one ResourceSpans per resource.
type batcher struct {
	limit int
	scope *commonpb.InstrumentationScope
	emit  func(*coltracepb.ExportTraceServiceRequest)
	res   []*tracepb.ResourceSpans
	keys  []string
	spans int
}

// add adds the spans of t, under resource r, and sends a request when
// it holds enough spans.
func (b *batcher) add(r resource, t *trace) {
	attrs, key := r.attrs, r.key
	i := slices.Index(b.keys, key)
	if i < 0 {
		i = len(b.keys)
		b.keys = append(b.keys, key)
		b.res = append(b.res, &tracepb.ResourceSpans{
			Resource:   &resourcepb.Resource{Attributes: attrs},
			ScopeSpans: []*tracepb.ScopeSpans{{Scope: b.scope}},
		})
	}
	ss := b.res[i].ScopeSpans[0]
	ss.Spans = append(ss.Spans, t.root)
	ss.Spans = append(ss.Spans, t.spans...)
	b.spans += 1 + len(t.spans)
	if b.spans >= b.limit {
		b.flush()
	}
}

func (b *batcher) flush() {
	if b.spans == 0 {
		return
	}
	req := &coltracepb.ExportTraceServiceRequest{ResourceSpans: b.res}
	b.res, b.keys, b.spans = nil, nil, 0
	b.emit(req)
}

// resourceKey is a text that equal attribute lists share.
func resourceKey(attrs []*commonpb.KeyValue) string {
	var sb strings.Builder
	for _, kv := range attrs {
		sb.WriteString(kv.Key)
		sb.WriteByte(0)
		sb.WriteString(kv.Value.GetStringValue())
		sb.WriteByte(0)
	}
	return sb.String()
}

// sortTraces orders traces by their first message, then key.
func sortTraces(ts []*trace) {
	slices.SortFunc(ts, func(a, b *trace) int {
		switch {
		case a.first != b.first:
			if a.first < b.first {
				return -1
			}
			return 1
		case a.key.stream != b.key.stream:
			return strings.Compare(a.key.stream, b.key.stream)
		}
		return strings.Compare(a.key.id, b.key.id)
	})
}

func sortStrings(s []string) { slices.Sort(s) }
