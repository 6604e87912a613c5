package otlpexport

import (
	"math"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// MarshalProto encodes req in the protobuf wire format, as proto.Marshal
// does, byte for byte (fields in number order, proto3 zero values left
// out), appending to b. It walks the OTLP types the exporter fills
// directly, where proto.Marshal works out each message's size through
// reflection first and then encodes it, twice the work: a nested message
// is written after one byte kept for its length, and moved along when the
// length takes more (a span, a scope's spans), so every message is
// visited once. A request with a field the exporter never sets (entity
// references, string-table indexes) is handed to proto.Marshal. Strings
// that are not UTF-8 are written with each run of invalid bytes as U+FFFD
// (proto.Marshal refuses them; a receiver refuses the request holding one).
func MarshalProto(b []byte, req *coltracepb.ExportTraceServiceRequest) ([]byte, error) {
	e := wireEncoder{b: b}
	for _, rs := range req.ResourceSpans {
		at := e.open(1)
		e.resourceSpans(rs)
		e.close(at)
	}
	if e.other {
		return proto.MarshalOptions{}.MarshalAppend(b, req)
	}
	return e.b, nil
}

// wireEncoder appends messages to b; other is set when a message holds a
// field it does not write.
type wireEncoder struct {
	b     []byte
	other bool
}

// open writes the tag of message field num and a byte for its length, and
// returns where the message starts.
func (e *wireEncoder) open(num protowire.Number) int {
	e.b = protowire.AppendTag(e.b, num, protowire.BytesType)
	e.b = append(e.b, 0)
	return len(e.b)
}

// close writes the length of the message that starts at at, moving it
// along when the length needs more than the byte open kept.
func (e *wireEncoder) close(at int) {
	n := len(e.b) - at
	if n < 0x80 {
		e.b[at-1] = byte(n)
		return
	}
	k := protowire.SizeVarint(uint64(n))
	for range k - 1 {
		e.b = append(e.b, 0)
	}
	copy(e.b[at+k-1:], e.b[at:at+n])
	protowire.AppendVarint(e.b[:at-1], uint64(n))
}

// str writes a string field, made valid UTF-8 (see validUTF8).
func (e *wireEncoder) str(num protowire.Number, s string) {
	if s != "" {
		e.b = protowire.AppendTag(e.b, num, protowire.BytesType)
		e.b = protowire.AppendString(e.b, validUTF8(s))
	}
}

func (e *wireEncoder) bytes(num protowire.Number, v []byte) {
	if len(v) > 0 {
		e.b = protowire.AppendTag(e.b, num, protowire.BytesType)
		e.b = protowire.AppendBytes(e.b, v)
	}
}

func (e *wireEncoder) varint(num protowire.Number, v uint64) {
	if v != 0 {
		e.b = protowire.AppendTag(e.b, num, protowire.VarintType)
		e.b = protowire.AppendVarint(e.b, v)
	}
}

func (e *wireEncoder) fixed64(num protowire.Number, v uint64) {
	if v != 0 {
		e.b = protowire.AppendTag(e.b, num, protowire.Fixed64Type)
		e.b = protowire.AppendFixed64(e.b, v)
	}
}

func (e *wireEncoder) fixed32(num protowire.Number, v uint32) {
	if v != 0 {
		e.b = protowire.AppendTag(e.b, num, protowire.Fixed32Type)
		e.b = protowire.AppendFixed32(e.b, v)
	}
}

func (e *wireEncoder) resourceSpans(rs *tracepb.ResourceSpans) {
	if rs.Resource != nil {
		at := e.open(1)
		e.resource(rs.Resource)
		e.close(at)
	}
	for _, ss := range rs.ScopeSpans {
		at := e.open(2)
		e.scopeSpans(ss)
		e.close(at)
	}
	e.str(3, rs.SchemaUrl)
}

func (e *wireEncoder) resource(r *resourcepb.Resource) {
	e.attributes(1, r.Attributes)
	e.varint(2, uint64(r.DroppedAttributesCount))
	if len(r.EntityRefs) > 0 {
		e.other = true
	}
}

func (e *wireEncoder) scopeSpans(ss *tracepb.ScopeSpans) {
	if s := ss.Scope; s != nil {
		at := e.open(1)
		e.str(1, s.Name)
		e.str(2, s.Version)
		e.attributes(3, s.Attributes)
		e.varint(4, uint64(s.DroppedAttributesCount))
		e.close(at)
	}
	for _, sp := range ss.Spans {
		at := e.open(2)
		e.span(sp)
		e.close(at)
	}
	e.str(3, ss.SchemaUrl)
}

func (e *wireEncoder) span(s *tracepb.Span) {
	e.bytes(1, s.TraceId)
	e.bytes(2, s.SpanId)
	e.str(3, s.TraceState)
	e.bytes(4, s.ParentSpanId)
	e.str(5, s.Name)
	e.varint(6, uint64(s.Kind))
	e.fixed64(7, s.StartTimeUnixNano)
	e.fixed64(8, s.EndTimeUnixNano)
	e.attributes(9, s.Attributes)
	e.varint(10, uint64(s.DroppedAttributesCount))
	for _, ev := range s.Events {
		at := e.open(11)
		e.fixed64(1, ev.TimeUnixNano)
		e.str(2, ev.Name)
		e.attributes(3, ev.Attributes)
		e.varint(4, uint64(ev.DroppedAttributesCount))
		e.close(at)
	}
	e.varint(12, uint64(s.DroppedEventsCount))
	for _, l := range s.Links {
		at := e.open(13)
		e.bytes(1, l.TraceId)
		e.bytes(2, l.SpanId)
		e.str(3, l.TraceState)
		e.attributes(4, l.Attributes)
		e.varint(5, uint64(l.DroppedAttributesCount))
		e.fixed32(6, l.Flags)
		e.close(at)
	}
	e.varint(14, uint64(s.DroppedLinksCount))
	if st := s.Status; st != nil {
		at := e.open(15)
		e.str(2, st.Message)
		e.varint(3, uint64(st.Code))
		e.close(at)
	}
	e.fixed32(16, s.Flags)
}

func (e *wireEncoder) attributes(num protowire.Number, kvs []*commonpb.KeyValue) {
	for _, kv := range kvs {
		at := e.open(num)
		e.keyValue(kv)
		e.close(at)
	}
}

func (e *wireEncoder) keyValue(kv *commonpb.KeyValue) {
	e.str(1, kv.Key)
	if kv.Value != nil {
		at := e.open(2)
		e.anyValue(kv.Value)
		e.close(at)
	}
	if kv.KeyStrindex != 0 {
		e.other = true
	}
}

// anyValue writes the one member of the oneof that is set, zero or not.
func (e *wireEncoder) anyValue(v *commonpb.AnyValue) {
	switch v := v.Value.(type) {
	case nil:
	case *commonpb.AnyValue_StringValue:
		e.b = protowire.AppendTag(e.b, 1, protowire.BytesType)
		e.b = protowire.AppendString(e.b, validUTF8(v.StringValue))
	case *commonpb.AnyValue_BoolValue:
		e.b = protowire.AppendTag(e.b, 2, protowire.VarintType)
		e.b = protowire.AppendVarint(e.b, protowire.EncodeBool(v.BoolValue))
	case *commonpb.AnyValue_IntValue:
		e.b = protowire.AppendTag(e.b, 3, protowire.VarintType)
		e.b = protowire.AppendVarint(e.b, uint64(v.IntValue))
	case *commonpb.AnyValue_DoubleValue:
		e.b = protowire.AppendTag(e.b, 4, protowire.Fixed64Type)
		e.b = protowire.AppendFixed64(e.b, math.Float64bits(v.DoubleValue))
	case *commonpb.AnyValue_ArrayValue:
		at := e.open(5)
		if v.ArrayValue != nil {
			for _, x := range v.ArrayValue.Values {
				vat := e.open(1)
				e.anyValue(x)
				e.close(vat)
			}
		}
		e.close(at)
	case *commonpb.AnyValue_KvlistValue:
		at := e.open(6)
		if v.KvlistValue != nil {
			e.attributes(1, v.KvlistValue.Values)
		}
		e.close(at)
	case *commonpb.AnyValue_BytesValue:
		e.b = protowire.AppendTag(e.b, 7, protowire.BytesType)
		e.b = protowire.AppendBytes(e.b, v.BytesValue)
	default:
		e.other = true
	}
}
