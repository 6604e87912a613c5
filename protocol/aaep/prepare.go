package aaep

import (
	"fmt"

	"github.com/aaep-tools/aaepkit/protocol"
)

// prep is the AAEP model's preparation of one message (protocol.Prep):
// what depends on the message alone. That is the message's Event, the
// hashes of its event_id and content, and the findings of the
// single-message rules, which read nothing but the message (and the
// run's options). The checker takes them instead of working them out on
// its own goroutine, and files the findings where it would have checked
// the rules, or drops them when it judges the message no further (an
// identical redelivery, a claimed error answer).
type prep struct {
	// c.own is the message's Event; c checks the single-message rules
	// into found (checked).
	c   checker
	err error // decode's result
	ok  bool  // c.own and err are the message's
	// key and hash are keyOf and contentHash of an event with an event_id
	// (hashed).
	key     idKey
	hash    uint64
	hashed  bool
	found   []preFinding
	checked bool
}

// preFinding is a finding of a single-message rule, made ahead.
type preFinding struct {
	rule           *protocol.Rule
	session, short string
	msg            string
}

// NewPrep implements protocol.Preparer.
func (model) NewPrep(opts *protocol.Options) protocol.Prep {
	p := new(prep)
	p.c.setRules(opts)
	p.c.r = (*prepReporter)(p)
	return p
}

// Prepare implements protocol.Prep. A message that is not a JSON object
// is left to the checker (it reports why); the single-message rules are
// checked ahead only when the preparing side is ahead.
func (p *prep) Prepare(m *protocol.Message, ahead bool) {
	p.ok, p.hashed, p.checked = false, false, false
	p.found = p.found[:0]
	if m.Doc == nil || !m.Doc.IsObject() {
		return
	}
	ev := &p.c.own
	p.err = decode(m.Doc, ev)
	p.ok = true
	if p.err != nil {
		return
	}
	if ev.IsEvent && ev.EventID != "" {
		p.key, p.hash, p.hashed = keyOf(m.Source, ev.EventID), contentHash(ev), true
	}
	if ahead && ev.Type != TypeProducerManifest {
		p.c.m, p.c.ev, p.c.session = m, ev, ev.SessionID
		p.c.checkSingle()
		p.c.m = nil
		p.checked = true
	}
}

// replay files the findings made ahead with r, for message m; those made
// under session from are filed under session to.
func (p *prep) replay(r protocol.Reporter, m *protocol.Message, from, to string) {
	for i := range p.found {
		f := &p.found[i]
		session := f.session
		if session == from {
			session = to
		}
		r.Report(f.rule, session, m, f.short, "%s", f.msg)
	}
}

// prepReporter collects the findings of a prep's checker.
type prepReporter prep

func (r *prepReporter) Report(rule *protocol.Rule, session string, _ *protocol.Message, short, format string, args ...any) {
	r.found = append(r.found, preFinding{rule: rule, session: session, short: short, msg: fmt.Sprintf(format, args...)})
}

// Step and SessionDone are never called by single-message rules.
func (r *prepReporter) Step(protocol.Step)                  {}
func (r *prepReporter) SessionDone(protocol.SessionSummary) {}
