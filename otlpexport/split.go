package otlpexport

import (
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// spanCount is how many spans req holds.
func spanCount(req *coltracepb.ExportTraceServiceRequest) int {
	n := 0
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			n += len(ss.Spans)
		}
	}
	return n
}

// halves splits req into two requests, the first with its first half of
// spans, the second with the rest, each span under its resource and scope
// as in req. req is not changed: the halves share its spans and headers
// (their span lists are req's, cut with no room past their end).
func halves(req *coltracepb.ExportTraceServiceRequest) (a, b *coltracepb.ExportTraceServiceRequest) {
	left := spanCount(req) / 2
	a, b = &coltracepb.ExportTraceServiceRequest{}, &coltracepb.ExportTraceServiceRequest{}
	for _, rs := range req.ResourceSpans {
		var ra, rb *tracepb.ResourceSpans
		for _, ss := range rs.ScopeSpans {
			k := min(left, len(ss.Spans))
			left -= k
			if k > 0 {
				if ra == nil {
					ra = &tracepb.ResourceSpans{Resource: rs.Resource, SchemaUrl: rs.SchemaUrl}
				}
				ra.ScopeSpans = append(ra.ScopeSpans, &tracepb.ScopeSpans{Scope: ss.Scope, SchemaUrl: ss.SchemaUrl, Spans: ss.Spans[:k:k]})
			}
			if k < len(ss.Spans) {
				if rb == nil {
					rb = &tracepb.ResourceSpans{Resource: rs.Resource, SchemaUrl: rs.SchemaUrl}
				}
				rest := ss.Spans[k:]
				rb.ScopeSpans = append(rb.ScopeSpans, &tracepb.ScopeSpans{Scope: ss.Scope, SchemaUrl: ss.SchemaUrl, Spans: rest[:len(rest):len(rest)]})
			}
		}
		if ra != nil {
			a.ResourceSpans = append(a.ResourceSpans, ra)
		}
		if rb != nil {
			b.ResourceSpans = append(b.ResourceSpans, rb)
		}
	}
	return a, b
}
