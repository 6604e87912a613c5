package otlpexport

import (
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol/aaep"
)

// The attribute names the mapping writes: the OpenTelemetry semantic
// conventions' where one fits (gen_ai.*, error.type, service.*, host.name),
// aaep.* for the rest.
const (
	attrOperation    = "gen_ai.operation.name"
	attrAgentID      = "gen_ai.agent.id"
	attrAgentName    = "gen_ai.agent.name"
	attrConversation = "gen_ai.conversation.id"
	attrModel        = "gen_ai.request.model"
	attrToolName     = "gen_ai.tool.name"
	attrToolCallID   = "gen_ai.tool.call.id"
	attrErrorType    = "error.type"

	attrServiceName    = "service.name"
	attrServiceVersion = "service.version"
	attrHostName       = "host.name"

	opInvokeAgent = "invoke_agent"
	opExecuteTool = "execute_tool"

	// eventFinding is the event a finding of the check becomes.
	eventFinding = "aaep.finding"
)

// An attribute is one allocation: the key-value, its AnyValue and the
// oneof's wrapper live in one struct (a recording has millions of them).
type (
	strKV struct {
		kv commonpb.KeyValue
		av commonpb.AnyValue
		v  commonpb.AnyValue_StringValue
	}
	intKV struct {
		kv commonpb.KeyValue
		av commonpb.AnyValue
		v  commonpb.AnyValue_IntValue
	}
	boolKV struct {
		kv commonpb.KeyValue
		av commonpb.AnyValue
		v  commonpb.AnyValue_BoolValue
	}
	floatKV struct {
		kv commonpb.KeyValue
		av commonpb.AnyValue
		v  commonpb.AnyValue_DoubleValue
	}
)

func kvStr(k, v string) *commonpb.KeyValue {
	p := &strKV{}
	p.v.StringValue = v
	p.av.Value = &p.v
	p.kv.Key, p.kv.Value = k, &p.av
	return &p.kv
}

func kvInt(k string, v int64) *commonpb.KeyValue {
	p := &intKV{}
	p.v.IntValue = v
	p.av.Value = &p.v
	p.kv.Key, p.kv.Value = k, &p.av
	return &p.kv
}

func kvBool(k string, v bool) *commonpb.KeyValue {
	p := &boolKV{}
	p.v.BoolValue = v
	p.av.Value = &p.v
	p.kv.Key, p.kv.Value = k, &p.av
	return &p.kv
}

func kvFloat(k string, v float64) *commonpb.KeyValue {
	p := &floatKV{}
	p.v.DoubleValue = v
	p.av.Value = &p.v
	p.kv.Key, p.kv.Value = k, &p.av
	return &p.kv
}

func kvStrs(k string, vs []string) *commonpb.KeyValue {
	arr := &commonpb.ArrayValue{Values: make([]*commonpb.AnyValue, len(vs))}
	for i, v := range vs {
		arr.Values[i] = &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}
	}
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: arr}}}
}

// attrs collects the attributes a message gives, skipping what it lacks.
type attrs []*commonpb.KeyValue

// str adds the string member name of v as attribute k when present.
func (a *attrs) str(k string, v payload.Value, name string) {
	if s, ok := v.Get(name).Str(); ok && s != "" {
		*a = append(*a, kvStr(k, s))
	}
}

// docStr is str for top-level member f.
func (a *attrs) docStr(k string, fl *fields, f aaep.Field) {
	if s, ok := fl.get(f).Str(); ok && s != "" {
		*a = append(*a, kvStr(k, s))
	}
}

// num adds the number member name of v: an int64 attribute when it is
// an integer, a double otherwise.
func (a *attrs) num(k string, v payload.Value) {
	if n, ok := v.Int(); ok {
		*a = append(*a, kvInt(k, n))
	} else if f, ok := v.Number(); ok {
		*a = append(*a, kvFloat(k, f))
	}
}

// boolean adds the boolean v as attribute k when it is one.
func (a *attrs) boolean(k string, v payload.Value) {
	if b, ok := v.Bool(); ok {
		*a = append(*a, kvBool(k, b))
	}
}

// setAttr sets attribute k of span s, replacing an earlier value.
func setAttr(s *tracepb.Span, kv *commonpb.KeyValue) {
	for i, old := range s.Attributes {
		if old.Key == kv.Key {
			s.Attributes[i] = kv
			return
		}
	}
	s.Attributes = append(s.Attributes, kv)
}

// unixNano is t in nanoseconds since 1970 as OTLP counts them (0 for a
// time before 1970, which OTLP cannot hold).
func unixNano(t time.Time) uint64 {
	n := t.UnixNano()
	if n < 0 {
		return 0
	}
	return uint64(n)
}
