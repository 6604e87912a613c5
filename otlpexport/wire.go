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
// reflection first and then encodes it, twice the work: an attribute's
// size is worked out from its key and value, which are written after it;
// any other nested message is written after the room its length most
// often takes (one byte, two for a span, three for a request's resource
// and scope spans), and moved when the length takes other room, so every
// message is visited once. A request with a field the exporter never sets
// (entity references, string-table indexes) is handed to proto.Marshal.
// Strings that are not UTF-8 are written with each run of invalid bytes as
// U+FFFD (proto.Marshal refuses them; a receiver refuses the request
// holding one).
func MarshalProto(b []byte, req *coltracepb.ExportTraceServiceRequest) ([]byte, error) {
	e := wireEncoder{b: b}
	for _, rs := range req.ResourceSpans {
		at := e.openN(1, bigLen)
		e.resourceSpans(rs)
		e.closeN(at, bigLen)
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

// Room kept for a message's length: a span most often takes two bytes
// (128 bytes to 16 KiB), a request's resource and scope spans three (16 KiB
// to 2 MiB). A length that needs other room moves the message along.
const (
	spanLen = 2
	bigLen  = 3
)

// tag appends the tag of field num, a number below 16 (one byte), as all
// the exporter's are but a span's flags (fixed32 writes those).
func (e *wireEncoder) tag(num protowire.Number, typ protowire.Type) {
	e.b = append(e.b, byte(num)<<3|byte(typ))
}

// uvarint appends v, a byte at once for the small values most are.
func (e *wireEncoder) uvarint(v uint64) {
	if v < 0x80 {
		e.b = append(e.b, byte(v))
		return
	}
	e.b = protowire.AppendVarint(e.b, v)
}

// open writes the tag of message field num and a byte for its length, and
// returns where the message starts.
func (e *wireEncoder) open(num protowire.Number) int { return e.openN(num, 1) }

// openN is open keeping room for a length of k bytes.
func (e *wireEncoder) openN(num protowire.Number, k int) int {
	e.tag(num, protowire.BytesType)
	for range k {
		e.b = append(e.b, 0)
	}
	return len(e.b)
}

// close writes the length of the message that starts at at, moving it
// along when the length needs more than the byte open kept.
func (e *wireEncoder) close(at int) { e.closeN(at, 1) }

// closeN is close for a message opened by openN with room for k bytes:
// the message moves along (or back) when its length needs other room.
func (e *wireEncoder) closeN(at, k int) {
	n := len(e.b) - at
	if k == 1 && n < 0x80 {
		e.b[at-1] = byte(n)
		return
	}
	need := protowire.SizeVarint(uint64(n))
	start := at - k
	if need > k {
		for range need - k {
			e.b = append(e.b, 0)
		}
	}
	if need != k {
		copy(e.b[start+need:], e.b[at:at+n])
		e.b = e.b[:start+need+n]
	}
	protowire.AppendVarint(e.b[:start], uint64(n))
}

// str writes a string field, made valid UTF-8 (see validUTF8).
func (e *wireEncoder) str(num protowire.Number, s string) {
	e.validStr(num, validUTF8(s))
}

// validStr is str for a string already valid UTF-8.
func (e *wireEncoder) validStr(num protowire.Number, s string) {
	if s != "" {
		e.tag(num, protowire.BytesType)
		e.uvarint(uint64(len(s)))
		e.b = append(e.b, s...)
	}
}

func (e *wireEncoder) bytes(num protowire.Number, v []byte) {
	if len(v) > 0 {
		e.tag(num, protowire.BytesType)
		e.uvarint(uint64(len(v)))
		e.b = append(e.b, v...)
	}
}

// bytesAlways is bytes for a oneof member, written when empty too.
func (e *wireEncoder) bytesAlways(num protowire.Number, v []byte) {
	e.tag(num, protowire.BytesType)
	e.uvarint(uint64(len(v)))
	e.b = append(e.b, v...)
}

func (e *wireEncoder) varint(num protowire.Number, v uint64) {
	if v != 0 {
		e.tag(num, protowire.VarintType)
		e.uvarint(v)
	}
}

func (e *wireEncoder) fixed64(num protowire.Number, v uint64) {
	if v != 0 {
		e.tag(num, protowire.Fixed64Type)
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
		at := e.openN(2, bigLen)
		e.scopeSpans(ss)
		e.closeN(at, bigLen)
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
		at := e.openN(2, spanLen)
		e.span(sp)
		e.closeN(at, spanLen)
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
		e.keyValue(num, kv)
	}
}

// keyValue writes kv as field num. A scalar value's length is worked out
// first and written before it, as most attributes are: a string, an
// integer, a boolean or a double; the others are written as messages
// whose length is known once they are.
func (e *wireEncoder) keyValue(num protowire.Number, kv *commonpb.KeyValue) {
	if kv.KeyStrindex != 0 {
		e.other = true
	}
	key := validUTF8(kv.Key)
	n := 0
	if key != "" {
		n = 1 + protowire.SizeBytes(len(key))
	}
	if sv, ok := kv.Value.GetValue().(*commonpb.AnyValue_StringValue); ok {
		// Most attributes: their string made valid once.
		s := validUTF8(sv.StringValue)
		inner := 1 + protowire.SizeBytes(len(s))
		e.tag(num, protowire.BytesType)
		e.uvarint(uint64(n + 1 + protowire.SizeBytes(inner)))
		e.validStr(1, key)
		e.tag(2, protowire.BytesType)
		e.uvarint(uint64(inner))
		e.tag(1, protowire.BytesType)
		e.uvarint(uint64(len(s)))
		e.b = append(e.b, s...)
		return
	}
	inner := 0
	if kv.Value != nil {
		var ok bool
		if inner, ok = scalarSize(kv.Value); !ok {
			at := e.open(num)
			e.validStr(1, key)
			vat := e.open(2)
			e.anyValue(kv.Value)
			e.close(vat)
			e.close(at)
			return
		}
		n += 1 + protowire.SizeBytes(inner)
	}
	e.tag(num, protowire.BytesType)
	e.uvarint(uint64(n))
	e.validStr(1, key)
	if kv.Value != nil {
		e.tag(2, protowire.BytesType)
		e.uvarint(uint64(inner))
		e.anyValue(kv.Value)
	}
}

// scalarSize returns the encoded size of v when it holds an integer, a
// boolean, a double or nothing (keyValue writes strings itself).
func scalarSize(v *commonpb.AnyValue) (int, bool) {
	switch v := v.Value.(type) {
	case nil:
		return 0, true
	case *commonpb.AnyValue_BoolValue:
		return 2, true
	case *commonpb.AnyValue_IntValue:
		return 1 + protowire.SizeVarint(uint64(v.IntValue)), true
	case *commonpb.AnyValue_DoubleValue:
		return 9, true
	}
	return 0, false
}

// anyValue writes the one member of the oneof that is set, zero or not.
func (e *wireEncoder) anyValue(v *commonpb.AnyValue) {
	switch v := v.Value.(type) {
	case nil:
	case *commonpb.AnyValue_StringValue:
		s := validUTF8(v.StringValue)
		e.tag(1, protowire.BytesType)
		e.uvarint(uint64(len(s)))
		e.b = append(e.b, s...)
	case *commonpb.AnyValue_BoolValue:
		e.tag(2, protowire.VarintType)
		e.b = append(e.b, byte(protowire.EncodeBool(v.BoolValue)))
	case *commonpb.AnyValue_IntValue:
		e.tag(3, protowire.VarintType)
		e.uvarint(uint64(v.IntValue))
	case *commonpb.AnyValue_DoubleValue:
		e.tag(4, protowire.Fixed64Type)
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
		e.bytesAlways(7, v.BytesValue)
	default:
		e.other = true
	}
}
