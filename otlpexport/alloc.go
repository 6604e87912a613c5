package otlpexport

// The builder's shared attribute values and the blocks its spans, events
// and attributes are allocated from.

import (
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol/aaep"
)

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

// enum adds the string member f as attribute k, a shared value (kv):
// for the members whose values come from a short list.
func (b *builder) enum(a *attrs, k string, fl *fields, f aaep.Field) {
	if v, ok := fl.get(f).Text(); ok && len(v) > 0 {
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
