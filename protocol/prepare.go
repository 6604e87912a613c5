package protocol

// Preparing messages ahead of the engine. A model's work on a message
// splits into what depends on that message alone (its own reading of the
// decoded payload, hashes of it) and what depends on the stream so far
// (sessions, sequences, replies). The first part can run on the goroutine
// that reads and decodes messages ahead of the engine (recording.Recording.Read),
// so that the checking goroutine, the bound of a check, does less. A
// message that arrives unprepared is checked the same way: the checker
// then does the whole work itself.

// A Preparer is a Model that prepares messages ahead of its checker.
type Preparer interface {
	// NewPrep returns an empty preparation for one message, reused for
	// message after message, for a run with opts (as NewChecker's).
	NewPrep(opts *Options) Prep
}

// Prep is one model's preparation of one message.
type Prep interface {
	// Prepare works out, from m (whose Doc is decoded) alone, what the
	// model's checker will read. It may run on another goroutine than the
	// checker's, at the same time as the checker, so it reads nothing but
	// m and immutable package data. With ahead set the preparing side is
	// ahead of the checking one and may take on more of the work (work
	// the checker does itself for a message prepared without it); without
	// it, it should do what is cheap, so as not to become the bound.
	Prepare(m *Message, ahead bool)
}

// Preparation prepares messages for the models of an engine. It holds no
// state of its own: one Preparation serves any number of goroutines, each
// with slots of its own.
type Preparation struct {
	models []Preparer
	opts   *Options
}

// Preparation returns what prepares messages for e's models, or nil when
// none of them prepares.
func (e *Engine) Preparation() *Preparation {
	p := Preparation{opts: e.opts}
	for _, m := range e.models {
		if pr, ok := m.(Preparer); ok {
			p.models = append(p.models, pr)
		}
	}
	if len(p.models) == 0 {
		return nil
	}
	return &p
}

// Slot holds the preparations of one message at a time.
type Slot struct {
	preps []Prep
	raw   []byte // the payload the preparations were made from
}

// NewSlot returns an empty slot.
func (p *Preparation) NewSlot() *Slot {
	s := &Slot{preps: make([]Prep, len(p.models))}
	for i, m := range p.models {
		s.preps[i] = m.NewPrep(p.opts)
	}
	return s
}

// Prepare prepares m into s and attaches s to m (Message.Prep); ahead says
// whether the caller is ahead of the engine (see Prep). m must be decoded
// (Message.Decode): a message that is not is left unprepared, and its
// checker does the whole work. s must not be attached to a message that is
// still being checked.
func (p *Preparation) Prepare(m *Message, s *Slot, ahead bool) {
	if !m.decoded() {
		m.Prep = nil
		return
	}
	for _, pr := range s.preps {
		pr.Prepare(m, ahead)
	}
	s.raw = m.Raw
	m.Prep = s
}

// PrepOf returns the preparation of type T that m carries, if m was
// prepared (and has not changed since).
func PrepOf[T Prep](m *Message) (T, bool) {
	var zero T
	s := m.Prep
	if s == nil || !sameBytes(s.raw, m.Raw) {
		return zero, false
	}
	for _, p := range s.preps {
		if t, ok := p.(T); ok {
			return t, true
		}
	}
	return zero, false
}

// sameBytes reports whether a and b are the same bytes in memory.
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
