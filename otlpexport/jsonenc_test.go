package otlpexport

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// marshalJSONReference is how MarshalJSON wrote OTLP JSON before
// AppendJSON: protojson (enums as numbers), compacted (protojson varies
// its spacing from build to build on purpose), then the ids recoded from
// base64 to hexadecimal. AppendJSON must write what it writes, byte for
// byte.
func marshalJSONReference(req *coltracepb.ExportTraceServiceRequest) ([]byte, error) {
	raw, err := protojson.MarshalOptions{UseEnumNumbers: true}.Marshal(req)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.Grow(len(raw))
	if err := json.Compact(&buf, raw); err != nil {
		return nil, err
	}
	return recodeIDs(buf.Bytes(), func(s []byte) ([]byte, error) {
		id, err := base64.StdEncoding.AppendDecode(nil, s)
		return hex.AppendEncode(nil, id), err
	})
}

// sameAsReference fails unless AppendJSON writes req as the reference
// does, byte for byte, after what was in the buffer. A request with
// strings that are not UTF-8, which the reference refuses, must be written
// as the reference writes it with those strings made valid (validCopy). It
// reports whether every string of req was valid UTF-8.
func sameAsReference(t testing.TB, what string, req *coltracepb.ExportTraceServiceRequest) bool {
	t.Helper()
	valid := true
	want, werr := marshalJSONReference(req)
	if werr != nil && strings.Contains(werr.Error(), "invalid UTF-8") {
		valid = false
		want, werr = marshalJSONReference(validCopy(req))
	}
	if werr != nil {
		t.Fatalf("%s: the reference fails: %v", what, werr)
	}
	prefix := []byte("kept")
	got := AppendJSON(append(make([]byte, 0, 64), prefix...), req)
	if !bytes.HasPrefix(got, prefix) {
		t.Fatalf("%s: what was in the buffer before is lost", what)
	}
	got = got[len(prefix):]
	if !bytes.Equal(got, want) {
		i := 0
		for i < min(len(got), len(want)) && got[i] == want[i] {
			i++
		}
		t.Fatalf("%s: differs from the reference at byte %d:\n got  %s\n want %s", what, i, clip(got, i), clip(want, i))
	}
	if !utf8.Valid(got) {
		t.Fatalf("%s: the JSON written is not UTF-8", what)
	}
	return valid
}

// validCopy returns a copy of m with every string field made valid UTF-8
// as strings.ToValidUTF8 makes it (each run of invalid bytes one U+FFFD).
func validCopy[M proto.Message](m M) M {
	c := proto.Clone(m).(M)
	validStrings(c.ProtoReflect())
	return c
}

func validStrings(m protoreflect.Message) {
	type set struct {
		fd protoreflect.FieldDescriptor
		v  protoreflect.Value
	}
	var sets []set
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList():
			l := v.List()
			for i := range l.Len() {
				switch fd.Kind() {
				case protoreflect.StringKind:
					l.Set(i, protoreflect.ValueOfString(strings.ToValidUTF8(l.Get(i).String(), "\uFFFD")))
				case protoreflect.MessageKind:
					validStrings(l.Get(i).Message())
				}
			}
		case fd.Kind() == protoreflect.StringKind:
			sets = append(sets, set{fd, protoreflect.ValueOfString(strings.ToValidUTF8(v.String(), "\uFFFD"))})
		case fd.Kind() == protoreflect.MessageKind:
			validStrings(v.Message())
		}
		return true
	})
	for _, s := range sets {
		m.Set(s.fd, s.v)
	}
}

// clip shows b around byte i.
func clip(b []byte, i int) string {
	lo, hi := max(0, i-60), min(len(b), i+60)
	return string(b[lo:hi])
}

func jstr(k, v string) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
}

func dblKV(k string, v float64) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: v}}}
}

// everyField is a request with every field of every message set, zero
// values where proto3 leaves them out and where a oneof keeps them, and
// nested arrays and key-value lists.
func everyField() (*coltracepb.ExportTraceServiceRequest, []*commonpb.KeyValue) {
	all := []*commonpb.KeyValue{
		jstr("s", "x"), jstr("empty", ""), jstr("", "no key"), jstr("long", strings.Repeat("é", 100)),
		{Key: "t", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: true}}},
		{Key: "f", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{}}},
		{Key: "i", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: -5}}},
		{Key: "i0", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{}}},
		{Key: "max", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: math.MaxInt64}}},
		{Key: "min", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: math.MinInt64}}},
		dblKV("d", 0.25), dblKV("d0", 0),
		{Key: "b", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_BytesValue{BytesValue: []byte{0, 1, 0xfb, 0xff}}}},
		{Key: "b0", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_BytesValue{}}},
		{Key: "a", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: []*commonpb.AnyValue{
			{Value: &commonpb.AnyValue_StringValue{StringValue: "e"}}, {}, {Value: &commonpb.AnyValue_IntValue{IntValue: 7}},
			{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: []*commonpb.AnyValue{{Value: &commonpb.AnyValue_BoolValue{}}}}}},
		}}}}},
		{Key: "a0", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{}}}},
		{Key: "anil", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{}}},
		{Key: "kv", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: []*commonpb.KeyValue{
			jstr("in", "side"), {Key: "deeper", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: []*commonpb.KeyValue{{}}}}}},
		}}}}},
		{Key: "kv0", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{}}}},
		{Key: "kvnil", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{}}},
		{Key: "strindex", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValueStrindex{StringValueStrindex: -3}}},
		{Key: "strindex0", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValueStrindex{}}},
		{Key: "unset", Value: &commonpb.AnyValue{}},
		{Key: "keyindex", KeyStrindex: 4},
		{Key: "novalue"},
		{},
	}
	span := &tracepb.Span{
		TraceId: bytes.Repeat([]byte{0xab}, 16), SpanId: bytes.Repeat([]byte{2}, 8), TraceState: "k=v", ParentSpanId: bytes.Repeat([]byte{0xf3}, 8),
		Flags: 0x301, Name: "execute_tool search", Kind: tracepb.Span_SPAN_KIND_CLIENT, StartTimeUnixNano: 1, EndTimeUnixNano: math.MaxUint64,
		Attributes: all, DroppedAttributesCount: 3,
		Events:             []*tracepb.Span_Event{{TimeUnixNano: 5, Name: "aaep.finding", Attributes: all[:3], DroppedAttributesCount: 1}, {}},
		DroppedEventsCount: 300,
		Links:              []*tracepb.Span_Link{{TraceId: []byte{9}, SpanId: []byte{8}, TraceState: "a=b", Attributes: all[:2], DroppedAttributesCount: 2, Flags: 1}, {}},
		DroppedLinksCount:  math.MaxUint32,
		Status:             &tracepb.Status{Message: "MUST", Code: tracepb.Status_STATUS_CODE_ERROR},
	}
	req := &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{
		{
			Resource: &resourcepb.Resource{Attributes: all[:4], DroppedAttributesCount: 2, EntityRefs: []*commonpb.EntityRef{
				{SchemaUrl: "s", Type: "service", IdKeys: []string{"service.name", ""}, DescriptionKeys: []string{"d"}}, {},
			}},
			ScopeSpans: []*tracepb.ScopeSpans{
				{Scope: &commonpb.InstrumentationScope{Name: "n", Version: "v", Attributes: all[4:6], DroppedAttributesCount: 1}, Spans: []*tracepb.Span{span, {}, {Status: &tracepb.Status{}}, {Kind: -1}}, SchemaUrl: "u"},
				{Scope: &commonpb.InstrumentationScope{}}, {},
			},
			SchemaUrl: "https://opentelemetry.io/schemas/1.0.0",
		},
		{Resource: &resourcepb.Resource{}},
		{},
	}}
	return req, all
}

// TestAppendJSONFields: every field of every message, each kind of value
// and its edges, written as the reference writes them.
func TestAppendJSONFields(t *testing.T) {
	req, all := everyField()
	sameAsReference(t, "every field", req)
	sameAsReference(t, "no resource spans", &coltracepb.ExportTraceServiceRequest{})
	sameAsReference(t, "a nil request", nil)
	if b := AppendJSON(nil, req); !bytes.Contains(b, []byte(`"parentSpanId":"f3f3f3f3f3f3f3f3","flags":769,"name":`)) {
		t.Errorf("a span's flags (field 16) are not where protojson writes them, after parentSpanId: %s", b)
	}

	// Strings: protojson's escapes; valid UTF-8 of every width as it is.
	for _, s := range []string{
		`"`, `\`, `\"`, "\x00", "\x01\x1f\x7f", "\b\f\n\r\t", "\v", "a\u2028b\u2029c", "<>&'", "é€𝄞", "\uFFFD", "\U0010FFFF",
		`"traceId":"`, `{"spanId":"00"}`, strings.Repeat("x", 70000), "\x1fend",
	} {
		all[0].Value = &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}}
		all[0].Key = s
		sameAsReference(t, "string "+quoted(s), req)
	}

	// Doubles: protojson's formatting, exponents, the smallest and largest,
	// negative zero; NaN and the infinities as quoted names.
	for _, d := range []float64{
		-0.0, math.Copysign(0, -1), 1, -1.5, 0.1, 1e-6, 9.99e-7, 1e-7, 1.5e-10, 5e-324, math.SmallestNonzeroFloat64,
		1e20, 1e21, 123456789012345678901234567890.0, math.MaxFloat64, -math.MaxFloat64, 1e100, 1e-100, 123456789.125,
		float64(1 << 53), math.NaN(), math.Inf(1), math.Inf(-1),
	} {
		all[10] = dblKV("d", d)
		sameAsReference(t, "double "+floatBits(d), req)
	}

	// Ids of every length, zero bytes included; each written in hexadecimal.
	for _, n := range []int{1, 8, 16, 33} {
		id := make([]byte, n)
		span := req.ResourceSpans[0].ScopeSpans[0].Spans[0]
		span.TraceId, span.SpanId, span.ParentSpanId = id, id, id
		span.Links[0].TraceId, span.Links[0].SpanId = id, id
		sameAsReference(t, "ids of zero bytes", req)
	}
}

// TestAppendJSONNil: a nil element of a list, and a oneof set to a nil
// wrapper, are written as protojson writes them (an empty object; no
// member).
func TestAppendJSONNil(t *testing.T) {
	cases := map[string]*coltracepb.ExportTraceServiceRequest{
		"resource spans": {ResourceSpans: []*tracepb.ResourceSpans{nil}},
		"scope spans":    {ResourceSpans: []*tracepb.ResourceSpans{{ScopeSpans: []*tracepb.ScopeSpans{nil, {}}}}},
		"span, event, link": {ResourceSpans: []*tracepb.ResourceSpans{{ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{
			nil, {Events: []*tracepb.Span_Event{nil}, Links: []*tracepb.Span_Link{nil, nil}, Attributes: []*commonpb.KeyValue{nil}},
		}}}}}},
		"entity ref": {ResourceSpans: []*tracepb.ResourceSpans{{Resource: &resourcepb.Resource{EntityRefs: []*commonpb.EntityRef{nil}}}}},
	}
	wrappers := []*commonpb.AnyValue{
		{Value: (*commonpb.AnyValue_StringValue)(nil)}, {Value: (*commonpb.AnyValue_BoolValue)(nil)},
		{Value: (*commonpb.AnyValue_IntValue)(nil)}, {Value: (*commonpb.AnyValue_DoubleValue)(nil)},
		{Value: (*commonpb.AnyValue_ArrayValue)(nil)}, {Value: (*commonpb.AnyValue_KvlistValue)(nil)},
		{Value: (*commonpb.AnyValue_BytesValue)(nil)}, {Value: (*commonpb.AnyValue_StringValueStrindex)(nil)},
	}
	wrappers = append(wrappers, nil)
	var kvs []*commonpb.KeyValue
	for _, w := range wrappers {
		kvs = append(kvs, &commonpb.KeyValue{Key: "k", Value: w})
	}
	kvs = append(kvs, &commonpb.KeyValue{Key: "in an array", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: wrappers}}}})
	cases["oneof wrappers"] = &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{Resource: &resourcepb.Resource{Attributes: kvs}}}}
	for what, req := range cases {
		sameAsReference(t, "nil "+what, req)
	}
}

// TestAppendJSONInvalidUTF8: a string that is not valid UTF-8, in any
// string field, is written with its invalid bytes replaced by U+FFFD (a
// recording's payloads are kept byte for byte, so a session id or a tool
// name may hold such bytes): protojson refused the whole request.
func TestAppendJSONInvalidUTF8(t *testing.T) {
	const bad = "ok\xffok"
	set := []struct {
		field string
		set   func(req *coltracepb.ExportTraceServiceRequest, kvs []*commonpb.KeyValue)
	}{
		{"trace.v1.ResourceSpans.schema_url", func(r *coltracepb.ExportTraceServiceRequest, _ []*commonpb.KeyValue) {
			r.ResourceSpans[0].SchemaUrl = bad
		}},
		{"trace.v1.ScopeSpans.schema_url", func(r *coltracepb.ExportTraceServiceRequest, _ []*commonpb.KeyValue) {
			r.ResourceSpans[0].ScopeSpans[0].SchemaUrl = bad
		}},
		{"common.v1.InstrumentationScope.version", func(r *coltracepb.ExportTraceServiceRequest, _ []*commonpb.KeyValue) {
			r.ResourceSpans[0].ScopeSpans[0].Scope.Version = bad
		}},
		{"common.v1.EntityRef.description_keys", func(r *coltracepb.ExportTraceServiceRequest, _ []*commonpb.KeyValue) {
			r.ResourceSpans[0].Resource.EntityRefs[0].DescriptionKeys[0] = bad
		}},
		{"trace.v1.Span.name", func(r *coltracepb.ExportTraceServiceRequest, _ []*commonpb.KeyValue) {
			r.ResourceSpans[0].ScopeSpans[0].Spans[0].Name = bad
		}},
		{"trace.v1.Span.trace_state", func(r *coltracepb.ExportTraceServiceRequest, _ []*commonpb.KeyValue) {
			r.ResourceSpans[0].ScopeSpans[0].Spans[0].TraceState = bad
		}},
		{"trace.v1.Span.Event.name", func(r *coltracepb.ExportTraceServiceRequest, _ []*commonpb.KeyValue) {
			r.ResourceSpans[0].ScopeSpans[0].Spans[0].Events[0].Name = bad
		}},
		{"trace.v1.Span.Link.trace_state", func(r *coltracepb.ExportTraceServiceRequest, _ []*commonpb.KeyValue) {
			r.ResourceSpans[0].ScopeSpans[0].Spans[0].Links[0].TraceState = bad
		}},
		{"trace.v1.Status.message", func(r *coltracepb.ExportTraceServiceRequest, _ []*commonpb.KeyValue) {
			r.ResourceSpans[0].ScopeSpans[0].Spans[0].Status.Message = bad
		}},
		{"common.v1.KeyValue.key", func(_ *coltracepb.ExportTraceServiceRequest, kvs []*commonpb.KeyValue) {
			kvs[len(kvs)-1].Key = bad
		}},
		{"common.v1.AnyValue.string_value", func(_ *coltracepb.ExportTraceServiceRequest, kvs []*commonpb.KeyValue) {
			kvs[14].Value.GetArrayValue().Values[0].Value = &commonpb.AnyValue_StringValue{StringValue: "\xc3"}
		}},
	}
	for _, c := range set {
		req, all := everyField()
		c.set(req, all)
		if sameAsReference(t, c.field, req) {
			t.Fatalf("%s: the request holds no invalid UTF-8", c.field)
		}
		b, err := MarshalJSON(req)
		if err != nil {
			t.Fatalf("%s: MarshalJSON: %v", c.field, err)
		}
		if !bytes.Contains(b, []byte("\uFFFD")) || bytes.Contains(b, []byte("\xff")) {
			t.Errorf("%s: no U+FFFD in %s", c.field, b)
		}
	}
}

// TestAppendJSONRecordings: every recording in the repository's testdata,
// exported with and without text, each request written as the reference
// writes it; and JSONWriter writes them one per line, reusing its buffer.
func TestAppendJSONRecordings(t *testing.T) {
	var names []string
	for _, dir := range []string{"../testdata", "../capfile/testdata", "../internal/recdiff/testdata"} {
		m, err := filepath.Glob(filepath.Join(dir, "*.aaep"))
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, m...)
	}
	if len(names) < 8 {
		t.Fatalf("%d recordings found: %v", len(names), names)
	}
	for _, name := range names {
		for _, text := range []bool{false, true} {
			reqs, _ := export(t, Options{IncludeText: text}, name)
			if len(reqs) == 0 {
				t.Fatalf("%s: nothing exported", name)
			}
			var want, got bytes.Buffer
			jw := NewJSONWriter(&got)
			for _, r := range reqs {
				sameAsReference(t, name, r)
				b, err := marshalJSONReference(r)
				if err != nil {
					t.Fatal(err)
				}
				want.Write(b)
				want.WriteByte('\n')
				if err := jw.Write(r); err != nil {
					t.Fatal(err)
				}
			}
			if err := jw.Flush(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Fatalf("%s (text %v): JSONWriter's file differs from the reference's", name, text)
			}
		}
	}
}

func quoted(s string) string {
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	b, _ := json.Marshal(s)
	return string(b)
}

func floatBits(d float64) string {
	return strconv.FormatFloat(d, 'g', -1, 64) + " (" + strconv.FormatUint(math.Float64bits(d), 16) + ")"
}

// FuzzAppendJSON builds requests from the fuzz input (every field, any
// string bytes, any double, lists and nested values) and compares
// AppendJSON with the reference. The seeds run in go test.
//
//	go test -run XXX -fuzz FuzzAppendJSON ./otlpexport
func FuzzAppendJSON(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f"))
	f.Add([]byte("\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8\xf7\xf6\xf5\xf4\xf3\xf2\xf1\xf0\xef"))
	f.Add([]byte("\x03\x07\x05hello\x06\x02\"\\\x09\x0a\x00\x08\x7f\xf0\x00\x00\x00\x00\x00\x00\x05\x06\x07"))
	f.Add(bytes.Repeat([]byte("\x05\x06\x07\x08\x09\xe2\x80\xa8\x0f\xc3\xa9"), 20))
	f.Add(bytes.Repeat([]byte{0x09, 0x8f, 0x3e, 0x7f, 0xf8, 0, 0, 0, 0, 0, 1}, 30))
	var nan [8]byte
	binary.LittleEndian.PutUint64(nan[:], math.Float64bits(math.Inf(-1)))
	f.Add(append(bytes.Repeat([]byte{4, 4, 4, 4, 4, 4, 1, 1}, 4), bytes.Repeat(nan[:], 8)...))
	// Pseudo-random inputs, fixed: requests of a few spans, every kind of
	// value; one in four strings kept as it is, valid UTF-8 or not, when
	// the top bits are let through.
	r := rand.New(rand.NewPCG(38, 0))
	for i := range 16 {
		b := make([]byte, 2000)
		for j := range b {
			b[j] = byte(r.Uint32())
			if i%4 != 3 {
				b[j] &= 0x7f
			}
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &gen{data: data}
		sameAsReference(t, "fuzz", g.request())
	})
}

// gen builds OTLP messages from bytes; past the end it reads zeros.
type gen struct {
	data  []byte
	depth int
}

func (g *gen) byte() byte {
	if len(g.data) == 0 {
		return 0
	}
	c := g.data[0]
	g.data = g.data[1:]
	return c
}

// n is a count up to max.
func (g *gen) n(max int) int { return int(g.byte()) % (max + 1) }

func (g *gen) u64() uint64 {
	var b [8]byte
	for i := range b {
		b[i] = g.byte()
	}
	return binary.LittleEndian.Uint64(b[:])
}

// u32 is zero, small or any.
func (g *gen) u32() uint32 {
	switch g.byte() % 4 {
	case 0:
		return 0
	case 1:
		return uint32(g.byte())
	default:
		return uint32(g.u64())
	}
}

// str is empty or up to 31 bytes of the input, made valid UTF-8 unless
// the byte giving the length has its top bit set.
func (g *gen) str() string {
	c := g.byte()
	n := min(int(c&31), len(g.data))
	s := string(g.data[:n])
	g.data = g.data[n:]
	if c&0x80 == 0 {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return s
}

func (g *gen) bytes() []byte {
	if s := g.str(); s != "" {
		return []byte(s)
	}
	return nil
}

func (g *gen) request() *coltracepb.ExportTraceServiceRequest {
	req := &coltracepb.ExportTraceServiceRequest{}
	for range g.n(2) {
		rs := &tracepb.ResourceSpans{SchemaUrl: g.str()}
		if g.byte()%2 == 1 {
			rs.Resource = &resourcepb.Resource{Attributes: g.kvs(), DroppedAttributesCount: g.u32()}
			for range g.n(1) {
				rs.Resource.EntityRefs = append(rs.Resource.EntityRefs, &commonpb.EntityRef{SchemaUrl: g.str(), Type: g.str(), IdKeys: g.strs(), DescriptionKeys: g.strs()})
			}
		}
		for range g.n(2) {
			ss := &tracepb.ScopeSpans{SchemaUrl: g.str()}
			if g.byte()%2 == 1 {
				ss.Scope = &commonpb.InstrumentationScope{Name: g.str(), Version: g.str(), Attributes: g.kvs(), DroppedAttributesCount: g.u32()}
			}
			for range g.n(3) {
				ss.Spans = append(ss.Spans, g.span())
			}
			rs.ScopeSpans = append(rs.ScopeSpans, ss)
		}
		req.ResourceSpans = append(req.ResourceSpans, rs)
	}
	return req
}

func (g *gen) strs() []string {
	var out []string
	for range g.n(2) {
		out = append(out, g.str())
	}
	return out
}

func (g *gen) span() *tracepb.Span {
	s := &tracepb.Span{
		TraceId: g.bytes(), SpanId: g.bytes(), TraceState: g.str(), ParentSpanId: g.bytes(), Flags: g.u32(), Name: g.str(),
		Kind: tracepb.Span_SpanKind(int32(g.u32())), StartTimeUnixNano: g.u64(), EndTimeUnixNano: g.u64(),
		Attributes: g.kvs(), DroppedAttributesCount: g.u32(), DroppedEventsCount: g.u32(), DroppedLinksCount: g.u32(),
	}
	for range g.n(2) {
		s.Events = append(s.Events, &tracepb.Span_Event{TimeUnixNano: g.u64(), Name: g.str(), Attributes: g.kvs(), DroppedAttributesCount: g.u32()})
	}
	for range g.n(1) {
		s.Links = append(s.Links, &tracepb.Span_Link{TraceId: g.bytes(), SpanId: g.bytes(), TraceState: g.str(), Attributes: g.kvs(), DroppedAttributesCount: g.u32(), Flags: g.u32()})
	}
	if g.byte()%2 == 1 {
		s.Status = &tracepb.Status{Message: g.str(), Code: tracepb.Status_StatusCode(int32(g.u32()))}
	}
	return s
}

func (g *gen) kvs() []*commonpb.KeyValue {
	var out []*commonpb.KeyValue
	for range g.n(3) {
		kv := &commonpb.KeyValue{Key: g.str()}
		if g.byte()%4 != 0 {
			kv.Value = g.value()
		}
		if g.byte()%8 == 0 {
			kv.KeyStrindex = int32(g.u32())
		}
		out = append(out, kv)
	}
	return out
}

// value is any kind of AnyValue, arrays and lists nested up to 3 deep.
func (g *gen) value() *commonpb.AnyValue {
	v := &commonpb.AnyValue{}
	switch g.byte() % 10 {
	case 1:
		v.Value = &commonpb.AnyValue_StringValue{StringValue: g.str()}
	case 2:
		v.Value = &commonpb.AnyValue_BoolValue{BoolValue: g.byte()%2 == 1}
	case 3:
		v.Value = &commonpb.AnyValue_IntValue{IntValue: int64(g.u64())}
	case 4:
		v.Value = &commonpb.AnyValue_DoubleValue{DoubleValue: math.Float64frombits(g.u64())}
	case 5:
		a := &commonpb.ArrayValue{}
		if g.depth < 3 {
			g.depth++
			for range g.n(3) {
				a.Values = append(a.Values, g.value())
			}
			g.depth--
		}
		v.Value = &commonpb.AnyValue_ArrayValue{ArrayValue: a}
	case 6:
		l := &commonpb.KeyValueList{}
		if g.depth < 3 {
			g.depth++
			l.Values = g.kvs()
			g.depth--
		}
		v.Value = &commonpb.AnyValue_KvlistValue{KvlistValue: l}
	case 7:
		v.Value = &commonpb.AnyValue_BytesValue{BytesValue: g.bytes()}
	case 8:
		v.Value = &commonpb.AnyValue_StringValueStrindex{StringValueStrindex: int32(g.u32())}
	case 9:
		// A double of the input's choosing among the edges.
		edges := []float64{0, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1), 1e-7, 1e21, 1e-6, 5e-324}
		v.Value = &commonpb.AnyValue_DoubleValue{DoubleValue: edges[g.n(len(edges)-1)]}
	}
	return v
}
