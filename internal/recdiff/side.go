package recdiff

import (
	"context"
	"fmt"
	"strings"

	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/check"
	"github.com/aaep-tools/aaepkit/recording"
)

// SessionRef says where a session is: its side's recording, stream and id,
// and what started it.
type SessionRef struct {
	// Recording is the name of the recording the session is in.
	Recording string `json:"recording"`
	// Stream is the stream of that recording (a subscription of a serve
	// --record recording; "" for a recording that is one stream).
	Stream string `json:"stream,omitempty"`
	// Session is the session id ("" for the messages of a stream that
	// belong to no session: its handshake, for one).
	Session string `json:"session"`
	// Start is what started the session: the request_text of its first
	// message, else the first summary_normal.
	Start string `json:"start,omitempty"`
	// Order is the session's position among its side's sessions, in the
	// order they started (from 1).
	Order int `json:"order"`

	streamOrd int
}

// skey is an open session's key on its side.
type skey struct {
	stream string
	id     string
}

// reader builds the sessions of one side, message by message, on the
// goroutine that runs the analysis driver over it, and hands each ended
// session to the matcher.
type reader struct {
	side int
	m    *matcher
	norm *normalizer
	cfg  *Options

	recName string
	streams map[string]int
	open    map[skey]*session
	tokens  map[skey]*session
	// closed counts the sessions of each id that ended (a session id
	// used again is another session), for a bounded number of ids.
	closed *protocol.Recent[int]
	// texts and fields count the sessions of each stream that started
	// with a given text (or --match value).
	texts  map[skey]int
	fields map[skey]int
	orders map[int]int
	// pseudos counts the stream pseudo-sessions (one per recording).
	pseudos map[int]int
	done    []*session
	// steps are the engine's steps of the message being read (they come
	// before the observer sees the message).
	steps []protocol.Step
	// order counts the sessions started on the side.
	order int
	// intern keeps one copy of each line; lineBuf is where a line is made.
	intern  map[string]string
	lineBuf []byte
}

func newReader(side int, m *matcher, cfg *Options, p *paths) *reader {
	return &reader{side: side, m: m, cfg: cfg, norm: newNormalizer(p), closed: protocol.NewRecent[int](protocol.DefaultClosedMemory),
		texts: map[skey]int{}, fields: map[skey]int{}, orders: map[int]int{}, pseudos: map[int]int{}, intern: map[string]string{}}
}

// read reads the side's recordings one after the other, each through the
// analysis driver.
func (r *reader) read(ctx context.Context, recs []*recording.Recording) ([]string, error) {
	var incomplete []string
	for _, rec := range recs {
		r.recName = rec.Name
		r.streams = map[string]int{}
		r.open = map[skey]*session{}
		r.tokens = map[skey]*session{}
		sink := protocol.Sink{
			Finding:     r.finding,
			Step:        r.step,
			SessionDone: r.sessionDone,
		}
		obs := &check.Observer{Message: r.message}
		res, err := check.Run(ctx, rec, r.cfg.Check, sink, obs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rec.Name, err)
		}
		for _, why := range res.Incomplete {
			incomplete = append(incomplete, rec.Name+": "+why)
		}
		if res.Err != nil && len(res.Incomplete) == 0 {
			incomplete = append(incomplete, rec.Name+": "+res.Err.Error())
		}
		// What is still open ends with the recording.
		r.flushDone()
		for _, s := range r.openInOrder() {
			r.finish(s)
		}
	}
	return incomplete, context.Cause(ctx)
}

// openInOrder lists the open sessions in the order they started.
func (r *reader) openInOrder() []*session {
	out := make([]*session, 0, len(r.open))
	for _, s := range r.open {
		out = append(out, s)
	}
	sortSessions(out)
	return out
}

func (r *reader) streamOrd(stream string) int {
	o, ok := r.streams[stream]
	if !ok {
		o = len(r.streams)
		r.streams[stream] = o
	}
	return o
}

func (r *reader) step(s protocol.Step) {
	if !s.Synthetic && s.Index >= 0 {
		r.steps = append(r.steps, s)
	}
}

func (r *reader) finding(f protocol.Finding) {
	s := r.open[skey{f.Stream, f.Session}]
	if s == nil {
		// A finding about the stream, or about a session already ended.
		s = r.sessionFor(f.Stream, "", 0)
	}
	if s.findings == nil {
		s.findings = map[FindingKey]int{}
	}
	s.findings[FindingKey{f.RuleID, f.Level}]++
}

func (r *reader) sessionDone(sum protocol.SessionSummary) {
	if sum.ConnectionOnly() || sum.Handshake { // a connection, a subscription handshake: no session
		return
	}
	s := r.open[skey{sum.Stream, sum.Session}]
	if s == nil || s.done {
		return
	}
	s.state, s.complete, s.done = sum.State, sum.Complete, true
	r.done = append(r.done, s)
}

// sessionFor returns the open session id of stream, starting it when
// there is none (id "": the stream's messages of no session).
func (r *reader) sessionFor(stream, id string, _ int) *session {
	k := skey{stream, id}
	if s := r.open[k]; s != nil {
		return s
	}
	r.order++
	ord := r.streamOrd(stream)
	s := &session{side: r.side, pseudo: id == "", ref: SessionRef{Recording: r.recName, Stream: stream, Session: id, Order: r.order, streamOrd: ord}}
	if s.pseudo {
		s.occ = r.pseudos[ord]
		r.pseudos[ord]++
	} else {
		s.occ, _ = r.closed.Get(r.recName + "\x00" + stream + "\x00" + id)
		s.order = r.orders[ord]
		r.orders[ord]++
	}
	r.open[k] = s
	r.m.started(r.side, s)
	return s
}

func (r *reader) message(stream string, m *protocol.Message) {
	doc := m.Doc
	var step *protocol.Step
	for i := range r.steps {
		if r.steps[i].Index == m.Index && r.steps[i].Stream == stream {
			step = &r.steps[i]
		}
	}
	id := doc.Routing.SessionKey()
	// A reply token routes a reply to its session, and an ask's is noted
	// for that.
	var token string
	if m.Dir == protocol.ToProducer || strings.HasPrefix(doc.Routing.Type, "aaep:agent.awaiting.") {
		token = str(doc, "reply_token")
	}
	var s *session
	switch {
	case id != "":
		s = r.sessionFor(stream, id, 0)
	case m.Dir == protocol.ToProducer && token != "":
		s = r.tokens[skey{stream, token}]
	}
	if s == nil {
		s = r.sessionFor(stream, "", 0)
	}
	if token != "" && m.Dir == protocol.FromProducer && !s.pseudo {
		r.tokens[skey{stream, token}] = s
	}
	if !s.pseudo {
		r.startKeys(s, m)
	}
	r.lineBuf = appendLine(r.lineBuf[:0], m, step)
	line, ok := r.intern[string(r.lineBuf)]
	if !ok {
		if len(r.intern) > 1<<16 {
			clear(r.intern)
		}
		line = string(r.lineBuf)
		r.intern[line] = line
	}
	s.add(m, line, r.norm.hash(doc))
	r.steps = r.steps[:0]
	r.flushDone()
}

// startKeys notes what started the session, from the first message that
// tells it.
func (r *reader) startKeys(s *session, m *protocol.Message) {
	doc := m.Doc
	if !s.hasText {
		text, ok := doc.Get("request_text").Str()
		if !ok {
			text, ok = doc.Get("summary_normal").Str()
		}
		if ok {
			s.text, s.hasText, s.ref.Start = text, true, text
			k := skey{fmt.Sprint(s.ref.streamOrd), text}
			s.textOcc = r.texts[k]
			r.texts[k]++
		}
	}
	if f := r.cfg.matchField(); f != "" && !s.hasField {
		if v := doc.Get(f); v != nil {
			s.field, s.hasField = valueText(v), true
			k := skey{fmt.Sprint(s.ref.streamOrd), s.field}
			s.fieldOcc = r.fields[k]
			r.fields[k]++
		}
	}
}

// flushDone ends the sessions their checker said were done.
func (r *reader) flushDone() {
	for _, s := range r.done {
		r.finish(s)
	}
	r.done = r.done[:0]
}

// finish ends s and hands it to the matcher.
func (r *reader) finish(s *session) {
	k := skey{s.ref.Stream, s.ref.Session}
	if r.open[k] != s {
		return
	}
	delete(r.open, k)
	for _, a := range s.asks {
		if a.token != "" && r.tokens[skey{s.ref.Stream, a.token}] == s {
			delete(r.tokens, skey{s.ref.Stream, a.token})
		}
	}
	if !s.pseudo {
		ck := r.recName + "\x00" + s.ref.Stream + "\x00" + s.ref.Session
		n, _ := r.closed.Get(ck)
		r.closed.Put(ck, n+1)
	}
	s.finish()
	if s.pseudo && len(s.events) == 0 && len(s.findings) == 0 {
		return
	}
	r.m.ended(r.side, s)
}
