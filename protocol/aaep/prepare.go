package aaep

import "github.com/aaep-tools/aaepkit/protocol"

// prep is the AAEP model's preparation of one message (protocol.Prep):
// the message's Event and the hashes of its event_id and content, which
// depend on the message alone. The checker takes them instead of working
// them out on its own goroutine.
type prep struct {
	ev  Event
	err error // decode's result
	ok  bool  // ev and err are the message's
	// key and hash are keyOf and contentHash of an event with an event_id
	// (hashed).
	key    idKey
	hash   uint64
	hashed bool
}

// NewPrep implements protocol.Preparer.
func (model) NewPrep() protocol.Prep { return new(prep) }

// Prepare implements protocol.Prep. A message that is not a JSON object
// is left to the checker (it reports why).
func (p *prep) Prepare(m *protocol.Message) {
	p.ok, p.hashed = false, false
	if m.Doc == nil || !m.Doc.IsObject() {
		return
	}
	p.err = decode(m.Doc, &p.ev)
	p.ok = true
	if p.err == nil && p.ev.IsEvent && p.ev.EventID != "" {
		p.key, p.hash, p.hashed = keyOf(m.Source, p.ev.EventID), contentHash(&p.ev), true
	}
}
