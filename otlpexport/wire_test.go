package otlpexport

import (
	"bytes"
	"math"
	"strings"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// sameAsProto fails unless MarshalProto writes req as proto.Marshal does,
// byte for byte, and the bytes read back equal to req with the official
// types.
func sameAsProto(t *testing.T, what string, req *coltracepb.ExportTraceServiceRequest) {
	t.Helper()
	want, err := proto.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	prefix := []byte("kept")
	got, err := MarshalProto(append([]byte(nil), prefix...), req)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(got, prefix) {
		t.Fatalf("%s: what was in the buffer before is lost", what)
	}
	got = got[len(prefix):]
	if !bytes.Equal(got, want) {
		i := 0
		for i < min(len(got), len(want)) && got[i] == want[i] {
			i++
		}
		t.Fatalf("%s: %d bytes, proto.Marshal %d; first difference at byte %d", what, len(got), len(want), i)
	}
	var back coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(got, &back); err != nil || !proto.Equal(&back, req) {
		t.Fatalf("%s: does not read back equal (%v)", what, err)
	}
}

// TestMarshalProtoDemo: the demo's requests, with and without text, and a
// request of many spans (lengths of two and three bytes), encode as
// proto.Marshal encodes them.
func TestMarshalProtoDemo(t *testing.T) {
	for _, text := range []bool{false, true} {
		reqs, _ := export(t, Options{IncludeText: text}, demo)
		for _, r := range reqs {
			sameAsProto(t, "demo", r)
		}
		one := &coltracepb.ExportTraceServiceRequest{}
		for _, r := range reqs {
			one.ResourceSpans = append(one.ResourceSpans, r.ResourceSpans...)
		}
		sameAsProto(t, "the demo's requests as one", one)
	}
}

// TestMarshalProtoFields: every field the encoder writes, zero values
// where proto3 leaves them out and where a oneof keeps them, lengths of
// one to three bytes; and a field it does not write (entity references,
// string-table indexes) hands the request to proto.Marshal.
func TestMarshalProtoFields(t *testing.T) {
	str := func(k, v string) *commonpb.KeyValue {
		return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
	}
	all := []*commonpb.KeyValue{
		str("s", "x"), str("empty", ""), str("long", strings.Repeat("é", 100)), str("longer", strings.Repeat("x", 20000)),
		{Key: "t", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: true}}},
		{Key: "f", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{}}},
		{Key: "i", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: -5}}},
		{Key: "i0", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{}}},
		{Key: "big", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: math.MaxInt64}}},
		{Key: "d", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: 0.25}}},
		{Key: "d0", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{}}},
		{Key: "b", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_BytesValue{BytesValue: []byte{0, 1}}}},
		{Key: "b0", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_BytesValue{}}},
		{Key: "a", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: []*commonpb.AnyValue{
			{Value: &commonpb.AnyValue_StringValue{StringValue: "e"}}, {}, {Value: &commonpb.AnyValue_IntValue{IntValue: 7}}}}}}},
		{Key: "a0", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{}}}},
		{Key: "kv", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: []*commonpb.KeyValue{str("in", "side")}}}}},
		{Key: "unset", Value: &commonpb.AnyValue{}},
		{Key: "novalue"},
		{},
	}
	span := &tracepb.Span{
		TraceId: bytes.Repeat([]byte{1}, 16), SpanId: bytes.Repeat([]byte{2}, 8), TraceState: "k=v", ParentSpanId: bytes.Repeat([]byte{3}, 8),
		Flags: 0x301, Name: "execute_tool search", Kind: tracepb.Span_SPAN_KIND_CLIENT, StartTimeUnixNano: 1, EndTimeUnixNano: math.MaxUint64,
		Attributes: all, DroppedAttributesCount: 3,
		Events:             []*tracepb.Span_Event{{TimeUnixNano: 5, Name: "aaep.finding", Attributes: all[:3], DroppedAttributesCount: 1}, {}},
		DroppedEventsCount: 300,
		Links:              []*tracepb.Span_Link{{TraceId: []byte{9}, SpanId: []byte{8}, TraceState: "a=b", Attributes: all[:2], DroppedAttributesCount: 2, Flags: 1}, {}},
		DroppedLinksCount:  4,
		Status:             &tracepb.Status{Message: "MUST", Code: tracepb.Status_STATUS_CODE_ERROR},
	}
	req := &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{
		{
			Resource:   &resourcepb.Resource{Attributes: all[:4], DroppedAttributesCount: 2},
			ScopeSpans: []*tracepb.ScopeSpans{{Scope: &commonpb.InstrumentationScope{Name: "n", Version: "v", Attributes: all[4:6], DroppedAttributesCount: 1}, Spans: []*tracepb.Span{span, {}, {Status: &tracepb.Status{}}}, SchemaUrl: "u"}, {}},
			SchemaUrl:  "https://opentelemetry.io/schemas/1.0.0",
		},
		{Resource: &resourcepb.Resource{}},
		{},
	}}
	sameAsProto(t, "every field", req)
	sameAsProto(t, "no request", &coltracepb.ExportTraceServiceRequest{})

	// Fields the exporter never sets: proto.Marshal encodes the request.
	req.ResourceSpans[0].Resource.EntityRefs = []*commonpb.EntityRef{{Type: "service"}}
	sameAsProto(t, "entity references", req)
	req.ResourceSpans[0].Resource.EntityRefs = nil
	all[0].KeyStrindex = 4
	sameAsProto(t, "a key's string-table index", req)
	all[0].KeyStrindex = 0
	all[1].Value = &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValueStrindex{StringValueStrindex: 2}}
	sameAsProto(t, "a value's string-table index", req)
}

// TestMarshalProtoInvalidUTF8: a string that is not UTF-8, in each string
// field the encoder writes, is written with each run of invalid bytes as
// U+FFFD: the bytes are proto.Marshal's of the request made valid, and
// they decode with the official types (which refuse invalid UTF-8).
func TestMarshalProtoInvalidUTF8(t *testing.T) {
	const bad = "ok\xff\xfeok"
	mk := func() (*coltracepb.ExportTraceServiceRequest, *tracepb.Span, *commonpb.KeyValue) {
		kv := &commonpb.KeyValue{Key: "k", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "v"}}}
		span := &tracepb.Span{Name: "s", TraceState: "t", Attributes: []*commonpb.KeyValue{kv},
			Events: []*tracepb.Span_Event{{Name: "e"}}, Links: []*tracepb.Span_Link{{TraceState: "l"}}, Status: &tracepb.Status{Message: "m"}}
		req := &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
			Resource:   &resourcepb.Resource{},
			ScopeSpans: []*tracepb.ScopeSpans{{Scope: &commonpb.InstrumentationScope{Name: "n", Version: "v"}, Spans: []*tracepb.Span{span}, SchemaUrl: "u"}},
			SchemaUrl:  "r",
		}}}
		return req, span, kv
	}
	for _, c := range []struct {
		field string
		set   func(*coltracepb.ExportTraceServiceRequest, *tracepb.Span, *commonpb.KeyValue)
	}{
		{"resource schema_url", func(r *coltracepb.ExportTraceServiceRequest, _ *tracepb.Span, _ *commonpb.KeyValue) {
			r.ResourceSpans[0].SchemaUrl = bad
		}},
		{"scope schema_url", func(r *coltracepb.ExportTraceServiceRequest, _ *tracepb.Span, _ *commonpb.KeyValue) {
			r.ResourceSpans[0].ScopeSpans[0].SchemaUrl = bad
		}},
		{"scope name", func(r *coltracepb.ExportTraceServiceRequest, _ *tracepb.Span, _ *commonpb.KeyValue) {
			r.ResourceSpans[0].ScopeSpans[0].Scope.Name = bad
		}},
		{"span name", func(_ *coltracepb.ExportTraceServiceRequest, s *tracepb.Span, _ *commonpb.KeyValue) { s.Name = bad }},
		{"trace state", func(_ *coltracepb.ExportTraceServiceRequest, s *tracepb.Span, _ *commonpb.KeyValue) {
			s.TraceState = bad
		}},
		{"event name", func(_ *coltracepb.ExportTraceServiceRequest, s *tracepb.Span, _ *commonpb.KeyValue) {
			s.Events[0].Name = bad
		}},
		{"link trace state", func(_ *coltracepb.ExportTraceServiceRequest, s *tracepb.Span, _ *commonpb.KeyValue) {
			s.Links[0].TraceState = bad
		}},
		{"status message", func(_ *coltracepb.ExportTraceServiceRequest, s *tracepb.Span, _ *commonpb.KeyValue) {
			s.Status.Message = bad
		}},
		{"attribute key", func(_ *coltracepb.ExportTraceServiceRequest, _ *tracepb.Span, kv *commonpb.KeyValue) { kv.Key = bad }},
		{"string value", func(_ *coltracepb.ExportTraceServiceRequest, _ *tracepb.Span, kv *commonpb.KeyValue) {
			kv.Value = &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "\xc3"}}
		}},
		{"string in an array", func(_ *coltracepb.ExportTraceServiceRequest, _ *tracepb.Span, kv *commonpb.KeyValue) {
			kv.Value = &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: []*commonpb.AnyValue{
				{Value: &commonpb.AnyValue_StringValue{StringValue: bad}}}}}}
		}},
	} {
		req, span, kv := mk()
		c.set(req, span, kv)
		if _, err := proto.Marshal(req); err == nil {
			t.Fatalf("%s: proto.Marshal takes the request: no invalid UTF-8 in it", c.field)
		}
		want, err := proto.Marshal(validCopy(req))
		if err != nil {
			t.Fatal(err)
		}
		got, err := MarshalProto(nil, req)
		if err != nil {
			t.Fatalf("%s: %v", c.field, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: written otherwise than the request made valid", c.field)
		}
		var back coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(got, &back); err != nil || !proto.Equal(&back, validCopy(req)) {
			t.Errorf("%s: does not read back as the request made valid (%v)", c.field, err)
		}
	}
}
