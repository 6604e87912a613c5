// Package aaep is the protocol model of the Agent Accessibility Event
// Protocol (AAEP) for the protocol engine: how AAEP messages are recognised,
// the state machine of Appendix A, and the rules of the AAEP rule catalog
// (envelope ENV-*, payload EVT-*, handshake/reply MSG-* rules per message;
// SEQ-*, NEG-*, TRN-* rules across messages).
//
// Recognition: a message is AAEP when its "type" has the "aaep:" prefix or
// the full-URI form "https://aaep-protocol.org/types/", when it is one of
// the seven bare handshake/reply types (subscription.*,
// confirmation.reply, clarification.reply) or another bare
// "subscription."/"confirmation."/"clarification." type (reported by
// MSG-TYPE-KNOWN), or when it has no AAEP type but carries an AAEP
// identifier ("evt_" event_id or "sess_" session_id), which covers
// extension-typed events and events with a missing or broken type.
// JSON-RPC 2.0 envelopes (stdio binding, Appendix B.6) are not unwrapped
// here: the capture side records their params as the message and keeps the
// method as a transport attribute.
package aaep

import (
	"strings"
	"unicode/utf8"

	"github.com/aaep-tools/aaepkit/protocol"
)

// New returns the AAEP protocol model.
func New() protocol.Model { return model{} }

type model struct{}

func (model) Name() string { return "aaep" }

func (model) Rules() []protocol.Rule { return append(singleRules(), seqRules()...) }

func (model) Machine() protocol.Machine { return machine }

// Recognize implements protocol.Model; see the package documentation.
func (model) Recognize(m *protocol.Message) bool {
	f := &m.Fields
	t := f.Type
	switch {
	case strings.HasPrefix(t, CorePrefix), strings.HasPrefix(t, TypeURIPrefix):
		return true
	case messageTypes[t]:
		return true
	case strings.HasPrefix(t, "subscription."), strings.HasPrefix(t, "confirmation."), strings.HasPrefix(t, "clarification."):
		return true
	}
	return strings.HasPrefix(f.EventID, "evt_") || strings.HasPrefix(f.SessionID, "sess_")
}

func (model) NewChecker(r protocol.Reporter, opts *protocol.Options) protocol.Checker {
	if opts == nil {
		opts = &protocol.Options{}
	}
	return &checker{r: r, opts: opts, seq: newSeqChecker(r, opts)}
}

// checker checks one run: single-message rules here, sequence rules in seq.
type checker struct {
	r    protocol.Reporter
	opts *protocol.Options
	seq  *seqChecker
	ev   Event
}

func (c *checker) Handle(m *protocol.Message) {
	if !utf8.Valid(m.Raw) {
		c.r.Report("ENV-UTF8", m.Fields.SessionKey(), m, "not UTF-8",
			"message %d is not valid UTF-8; AAEP messages are UTF-8 JSON (RFC 8259), other encodings are forbidden", m.Index)
		return
	}
	if !decode(m.Raw, &c.ev) {
		c.r.Report("ENV-JSON-OBJECT", m.Fields.SessionKey(), m, "not a JSON object",
			"message %d is not a JSON object; every AAEP message must be a strict RFC 8259 JSON object", m.Index)
		return
	}
	c.checkSingle(m, &c.ev)
	c.seq.handle(m, &c.ev)
}

func (c *checker) Finish() { c.seq.finish() }

// checkSingle runs the single-message rules (envelope, payload, handshake).
func (c *checker) checkSingle(m *protocol.Message, ev *Event) {}

func singleRules() []protocol.Rule {
	return []protocol.Rule{
		{ID: "ENV-JSON-OBJECT", Level: protocol.Must, Summary: "The message parses as strict RFC 8259 JSON and is an object."},
		{ID: "ENV-UTF8", Level: protocol.Must, Summary: "The message bytes are valid UTF-8."},
	}
}

// Lifecycle and standard internal states (Appendix A).
const (
	StateStarted   = "started"
	StateCompleted = "completed"
	StateErrored   = "errored"
	StateCancelled = "cancelled"
)

var machine = protocol.Machine{
	States: []protocol.State{
		{Name: StateStarted, Kind: protocol.StateInitial},
		{Name: "idle"}, {Name: "thinking"}, {Name: "calling_tool"}, {Name: "writing_output"},
		{Name: "awaiting_input"}, {Name: "deciding"}, {Name: "handing_off"},
		{Name: StateCompleted, Kind: protocol.StateTerminal},
		{Name: StateErrored, Kind: protocol.StateError},
		{Name: StateCancelled, Kind: protocol.StateTerminal},
	},
}
