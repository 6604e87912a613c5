package otlpexport

import (
	"encoding/base64"
	"encoding/hex"
	"math"
	"strconv"
	"unicode/utf8"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// AppendJSON appends req in the OTLP JSON encoding, compact, on one line,
// to b: byte for byte what protojson (enums as numbers) writes once its
// spacing is taken out and the ids are made hexadecimal. Members come in
// protojson's order, the order of the fields' declaration in the .proto
// files (a span's flags, field 16, after its parentSpanId), with proto3
// zero values left out and the one member of a oneof written even when
// zero; 64-bit integers are quoted decimal strings, bytes base64 but for
// the trace and span ids (hexadecimal), doubles as protojson formats them
// (NaN and the infinities as quoted names), strings escaped as protojson
// escapes them. It walks the OTLP types directly, as MarshalProto does,
// where protojson works through reflection and the ids were recoded in a
// second pass.
//
// A string that is not valid UTF-8 (protojson refused one) is written
// with each run of invalid bytes replaced by U+FFFD, as MarshalProto writes
// it (see validUTF8), so AppendJSON cannot fail.
func AppendJSON(b []byte, req *coltracepb.ExportTraceServiceRequest) []byte {
	e := jsonEncoder{b: b}
	e.request(req)
	return e.b
}

// jsonEncoder appends JSON to b.
type jsonEncoder struct {
	b []byte
}

// name writes the member name lit (quoted, with its colon), after a comma
// unless it is the first member of its object.
func (e *jsonEncoder) name(lit string) {
	if e.b[len(e.b)-1] != '{' {
		e.b = append(e.b, ',')
	}
	e.b = append(e.b, lit...)
}

// elem starts an element of an array, after a comma unless it is the first.
func (e *jsonEncoder) elem() {
	if e.b[len(e.b)-1] != '[' {
		e.b = append(e.b, ',')
	}
}

func (e *jsonEncoder) str(lit, s string) {
	if s != "" {
		e.name(lit)
		e.string(s)
	}
}

// id writes an id in hexadecimal, as OTLP JSON wants it.
func (e *jsonEncoder) id(lit string, v []byte) {
	if len(v) > 0 {
		e.name(lit)
		e.b = append(e.b, '"')
		e.b = hex.AppendEncode(e.b, v)
		e.b = append(e.b, '"')
	}
}

// uint32 writes a uint32 or a fixed32 as a number.
func (e *jsonEncoder) uint32(lit string, v uint32) {
	if v != 0 {
		e.name(lit)
		e.b = strconv.AppendUint(e.b, uint64(v), 10)
	}
}

// int32 writes an int32 or an enum's number as a number.
func (e *jsonEncoder) int32(lit string, v int32) {
	if v != 0 {
		e.name(lit)
		e.b = strconv.AppendInt(e.b, int64(v), 10)
	}
}

// uint64 writes a fixed64 as a quoted decimal string.
func (e *jsonEncoder) uint64(lit string, v uint64) {
	if v != 0 {
		e.name(lit)
		e.b = append(e.b, '"')
		e.b = strconv.AppendUint(e.b, v, 10)
		e.b = append(e.b, '"')
	}
}

func (e *jsonEncoder) strings(lit string, v []string) {
	if len(v) > 0 {
		e.name(lit)
		e.b = append(e.b, '[')
		for _, s := range v {
			e.elem()
			e.string(s)
		}
		e.b = append(e.b, ']')
	}
}

// string writes s quoted, escaped as protojson escapes it: the quote, the
// backslash and the control characters, \b \f \n \r \t by name and the
// others as \u00xx; everything else, DEL and U+2028 included, as it is;
// a run of bytes that are not UTF-8 as U+FFFD.
func (e *jsonEncoder) string(s string) {
	e.b = append(e.b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				// Not UTF-8: the rest is written again, made valid.
				e.b = append(e.b, s[start:i]...)
				s, i, start = validUTF8(s[i:]), 0, 0
				continue
			}
			i += n
			continue
		}
		if c >= ' ' && c != '"' && c != '\\' {
			i++
			continue
		}
		e.b = append(e.b, s[start:i]...)
		switch c {
		case '"', '\\':
			e.b = append(e.b, '\\', c)
		case '\b':
			e.b = append(e.b, '\\', 'b')
		case '\f':
			e.b = append(e.b, '\\', 'f')
		case '\n':
			e.b = append(e.b, '\\', 'n')
		case '\r':
			e.b = append(e.b, '\\', 'r')
		case '\t':
			e.b = append(e.b, '\\', 't')
		default:
			e.b = append(e.b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	e.b = append(e.b, s[start:]...)
	e.b = append(e.b, '"')
}

const hexDigits = "0123456789abcdef"

// double writes v as protojson does: NaN and the infinities as quoted
// names, others as encoding/json formats them (exponent form below 1e-6
// and from 1e21, its exponent without a leading zero).
func (e *jsonEncoder) double(v float64) {
	switch {
	case math.IsNaN(v):
		e.b = append(e.b, `"NaN"`...)
		return
	case math.IsInf(v, 1):
		e.b = append(e.b, `"Infinity"`...)
		return
	case math.IsInf(v, -1):
		e.b = append(e.b, `"-Infinity"`...)
		return
	}
	format := byte('f')
	if abs := math.Abs(v); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	e.b = strconv.AppendFloat(e.b, v, format, -1, 64)
	if format == 'e' {
		// e-07 -> e-7
		if n := len(e.b); n >= 4 && e.b[n-4] == 'e' && e.b[n-3] == '-' && e.b[n-2] == '0' {
			e.b[n-2] = e.b[n-1]
			e.b = e.b[:n-1]
		}
	}
}

func (e *jsonEncoder) request(req *coltracepb.ExportTraceServiceRequest) {
	e.b = append(e.b, '{')
	if req != nil && len(req.ResourceSpans) > 0 {
		e.name(`"resourceSpans":[`)
		for _, rs := range req.ResourceSpans {
			e.elem()
			e.resourceSpans(rs)
		}
		e.b = append(e.b, ']')
	}
	e.b = append(e.b, '}')
}

// Each message writer below takes a nil message as an empty one, as
// protojson does for a nil element of a list.

func (e *jsonEncoder) resourceSpans(rs *tracepb.ResourceSpans) {
	e.b = append(e.b, '{')
	if rs != nil {
		if rs.Resource != nil {
			e.name(`"resource":`)
			e.resource(rs.Resource)
		}
		if len(rs.ScopeSpans) > 0 {
			e.name(`"scopeSpans":[`)
			for _, ss := range rs.ScopeSpans {
				e.elem()
				e.scopeSpans(ss)
			}
			e.b = append(e.b, ']')
		}
		e.str(`"schemaUrl":`, rs.SchemaUrl)
	}
	e.b = append(e.b, '}')
}

func (e *jsonEncoder) resource(r *resourcepb.Resource) {
	e.b = append(e.b, '{')
	if r != nil {
		e.attributes(`"attributes":[`, r.Attributes)
		e.uint32(`"droppedAttributesCount":`, r.DroppedAttributesCount)
		if len(r.EntityRefs) > 0 {
			e.name(`"entityRefs":[`)
			for _, ref := range r.EntityRefs {
				e.elem()
				e.b = append(e.b, '{')
				if ref != nil {
					e.str(`"schemaUrl":`, ref.SchemaUrl)
					e.str(`"type":`, ref.Type)
					e.strings(`"idKeys":`, ref.IdKeys)
					e.strings(`"descriptionKeys":`, ref.DescriptionKeys)
				}
				e.b = append(e.b, '}')
			}
			e.b = append(e.b, ']')
		}
	}
	e.b = append(e.b, '}')
}

func (e *jsonEncoder) scopeSpans(ss *tracepb.ScopeSpans) {
	e.b = append(e.b, '{')
	if ss != nil {
		if s := ss.Scope; s != nil {
			e.name(`"scope":{`)
			e.str(`"name":`, s.Name)
			e.str(`"version":`, s.Version)
			e.attributes(`"attributes":[`, s.Attributes)
			e.uint32(`"droppedAttributesCount":`, s.DroppedAttributesCount)
			e.b = append(e.b, '}')
		}
		if len(ss.Spans) > 0 {
			e.name(`"spans":[`)
			for _, sp := range ss.Spans {
				e.elem()
				e.span(sp)
			}
			e.b = append(e.b, ']')
		}
		e.str(`"schemaUrl":`, ss.SchemaUrl)
	}
	e.b = append(e.b, '}')
}

func (e *jsonEncoder) span(s *tracepb.Span) {
	e.b = append(e.b, '{')
	if s == nil {
		e.b = append(e.b, '}')
		return
	}
	e.id(`"traceId":`, s.TraceId)
	e.id(`"spanId":`, s.SpanId)
	e.str(`"traceState":`, s.TraceState)
	e.id(`"parentSpanId":`, s.ParentSpanId)
	e.uint32(`"flags":`, s.Flags)
	e.str(`"name":`, s.Name)
	e.int32(`"kind":`, int32(s.Kind))
	e.uint64(`"startTimeUnixNano":`, s.StartTimeUnixNano)
	e.uint64(`"endTimeUnixNano":`, s.EndTimeUnixNano)
	e.attributes(`"attributes":[`, s.Attributes)
	e.uint32(`"droppedAttributesCount":`, s.DroppedAttributesCount)
	if len(s.Events) > 0 {
		e.name(`"events":[`)
		for _, ev := range s.Events {
			e.elem()
			e.b = append(e.b, '{')
			if ev != nil {
				e.uint64(`"timeUnixNano":`, ev.TimeUnixNano)
				e.str(`"name":`, ev.Name)
				e.attributes(`"attributes":[`, ev.Attributes)
				e.uint32(`"droppedAttributesCount":`, ev.DroppedAttributesCount)
			}
			e.b = append(e.b, '}')
		}
		e.b = append(e.b, ']')
	}
	e.uint32(`"droppedEventsCount":`, s.DroppedEventsCount)
	if len(s.Links) > 0 {
		e.name(`"links":[`)
		for _, l := range s.Links {
			e.elem()
			e.b = append(e.b, '{')
			if l != nil {
				e.id(`"traceId":`, l.TraceId)
				e.id(`"spanId":`, l.SpanId)
				e.str(`"traceState":`, l.TraceState)
				e.attributes(`"attributes":[`, l.Attributes)
				e.uint32(`"droppedAttributesCount":`, l.DroppedAttributesCount)
				e.uint32(`"flags":`, l.Flags)
			}
			e.b = append(e.b, '}')
		}
		e.b = append(e.b, ']')
	}
	e.uint32(`"droppedLinksCount":`, s.DroppedLinksCount)
	if st := s.Status; st != nil {
		e.name(`"status":{`)
		e.str(`"message":`, st.Message)
		e.int32(`"code":`, int32(st.Code))
		e.b = append(e.b, '}')
	}
	e.b = append(e.b, '}')
}

// attributes writes a list of key-values under lit (its name and the
// opening bracket), if there are any.
func (e *jsonEncoder) attributes(lit string, kvs []*commonpb.KeyValue) {
	if len(kvs) == 0 {
		return
	}
	e.name(lit)
	for _, kv := range kvs {
		e.elem()
		e.keyValue(kv)
	}
	e.b = append(e.b, ']')
}

func (e *jsonEncoder) keyValue(kv *commonpb.KeyValue) {
	e.b = append(e.b, '{')
	if kv != nil {
		e.str(`"key":`, kv.Key)
		if kv.Value != nil {
			e.name(`"value":`)
			e.anyValue(kv.Value)
		}
		e.int32(`"keyStrindex":`, kv.KeyStrindex)
	}
	e.b = append(e.b, '}')
}

// anyValue writes the one member of the oneof that is set, zero or not; a
// member set to a nil wrapper is no member, as for protojson.
func (e *jsonEncoder) anyValue(v *commonpb.AnyValue) {
	e.b = append(e.b, '{')
	if v == nil {
		e.b = append(e.b, '}')
		return
	}
	switch v := v.Value.(type) {
	case *commonpb.AnyValue_StringValue:
		if v != nil {
			e.b = append(e.b, `"stringValue":`...)
			e.string(v.StringValue)
		}
	case *commonpb.AnyValue_BoolValue:
		if v != nil {
			e.b = append(e.b, `"boolValue":`...)
			e.b = strconv.AppendBool(e.b, v.BoolValue)
		}
	case *commonpb.AnyValue_IntValue:
		if v != nil {
			e.b = append(e.b, `"intValue":"`...)
			e.b = strconv.AppendInt(e.b, v.IntValue, 10)
			e.b = append(e.b, '"')
		}
	case *commonpb.AnyValue_DoubleValue:
		if v != nil {
			e.b = append(e.b, `"doubleValue":`...)
			e.double(v.DoubleValue)
		}
	case *commonpb.AnyValue_ArrayValue:
		if v != nil {
			e.b = append(e.b, `"arrayValue":{`...)
			if a := v.ArrayValue; a != nil && len(a.Values) > 0 {
				e.b = append(e.b, `"values":[`...)
				for _, x := range a.Values {
					e.elem()
					e.anyValue(x)
				}
				e.b = append(e.b, ']')
			}
			e.b = append(e.b, '}')
		}
	case *commonpb.AnyValue_KvlistValue:
		if v != nil {
			e.b = append(e.b, `"kvlistValue":{`...)
			if l := v.KvlistValue; l != nil {
				e.attributes(`"values":[`, l.Values)
			}
			e.b = append(e.b, '}')
		}
	case *commonpb.AnyValue_BytesValue:
		if v != nil {
			e.b = append(e.b, `"bytesValue":"`...)
			e.b = base64.StdEncoding.AppendEncode(e.b, v.BytesValue)
			e.b = append(e.b, '"')
		}
	case *commonpb.AnyValue_StringValueStrindex:
		if v != nil {
			e.b = append(e.b, `"stringValueStrindex":`...)
			e.b = strconv.AppendInt(e.b, int64(v.StringValueStrindex), 10)
		}
	}
	e.b = append(e.b, '}')
}
