package aaep

import (
	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol"
)

// Field names a top-level member of a message for Event.Field: a key the
// AAEP model knows, read from the Event's table of them in one step, or
// any other name, searched among the message's other members. Make one
// with FieldOf, once, and read it from many Events.
type Field struct {
	name string
	key  key
}

// FieldOf returns the Field of top-level member name.
func FieldOf(name string) Field { return Field{name: name, key: lookupKey(name)} }

// Name returns the member's name.
func (f Field) Name() string { return f.name }

// Field returns the raw value of top-level member f, or nil when the
// message has none; of repeated members, the last (as payload.Doc.Get).
func (e *Event) Field(f Field) payload.Value {
	if f.key != kUnknown {
		return e.vals[f.key]
	}
	if i := e.unknownIndex(f.name); i >= 0 {
		return e.unknownVals[i]
	}
	return nil
}

// Prepared returns the Event that the AAEP model's preparation decoded
// for m, or nil when m carries no such preparation (it was not prepared,
// or it is not a JSON object). Preparing is what a reading goroutine does
// ahead of the checker (recording.ReadOptions.Prepare), so a reader of m
// after its check finds its top-level members here in one step each,
// where payload.Doc.Get searches them. The Event is valid as long as m
// is, and must not be changed.
func Prepared(m *protocol.Message) *Event {
	p, ok := protocol.PrepOf[*prep](m)
	if !ok || !p.ok || p.err != nil {
		return nil
	}
	return &p.c.own
}
