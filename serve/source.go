package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/grpcbind"
	"github.com/aaep-tools/aaepkit/msgfilter"
	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol/aaep/vocab"
	"github.com/aaep-tools/aaepkit/recording"
	"github.com/aaep-tools/aaepkit/timing"
)

// Cursor reads a capture's records in order and seeks through its index.
// *capfile.Reader implements it, and so does *recording.Reader: a
// recording's parts (or several recordings, joined) read as one capture
// without merging them into a file.
type Cursor interface {
	// Next returns the next record, or io.EOF at a clean end. The record's
	// slices are valid only until the next call.
	Next() (*capfile.Record, error)
	// SeekTime positions the cursor at the first record whose Time is at least t.
	SeekTime(t int64) error
	// SeekRecord positions the cursor at record i (0-based).
	SeekRecord(i int64) error
	// Index returns the index of the record Next returned last.
	Index() int64
	Close() error
}

// Opener opens a fresh cursor over the capture. Every per-subscriber
// timeline opens its own, so that memory stays flat whatever the capture's size.
type Opener func() (Cursor, error)

// OpenFile returns an Opener for the capture file at path. (A command
// replays recordings through recording.Recording.Records.)
func OpenFile(path string) Opener {
	return func() (Cursor, error) {
		r, err := capfile.Open(path)
		if err != nil {
			return nil, err
		}
		return r, nil
	}
}

// Range selects the part of a capture to replay. Both ends are inclusive.
type Range struct {
	From, To timing.Position
}

// event is one message on its way to subscribers. Events are immutable once
// created; on a shared timeline one Event goes to every subscriber.
type event struct {
	// Index is the record index in the capture (-1 for control messages).
	Index int64
	// Offset is the record's time since the capture's start.
	Offset time.Duration
	// Deadline is when the event was due to be sent (zero for control messages).
	Deadline time.Time
	// Payload is the message exactly as captured.
	Payload []byte
	// Binary asks for a binary WebSocket frame (payload not valid UTF-8).
	Binary bool
	// Control marks a handshake message written by the replay itself.
	Control bool
	// Fields are the routing fields of the payload; routed says they were
	// read (an event read lazily has none until the writer needs them).
	Type, ID, Session, Urgency string
	routed                     bool
	// Blocking is set for awaiting.confirmation/clarification events.
	Blocking *blocking
	// SSE is the SSE framing the capture recorded for this message.
	SSE sseFraming
}

// sseFraming is how a message was framed on a recorded SSE stream.
// Recorded is false for messages that did not arrive over SSE (WebSocket,
// Unix, stdio, JSONL imports). Otherwise Named says whether the producer
// sent an event: line (without one the message was an unnamed "message"
// event, the only kind EventSource.onmessage sees), Name is its value and
// ID the id: value ("" when none).
type sseFraming struct {
	Recorded bool
	Named    bool
	Name     string
	ID       string
}

// matchesID reports whether id (a Last-Event-ID) names this event: its
// recorded SSE id, or its event_id.
func (e *event) matchesID(id string) bool {
	return id != "" && (e.ID == id || e.SSE.ID == id)
}

func (e *event) critical() bool { return e.Urgency == "critical" }

// blocking describes the reply an awaiting.confirmation or
// awaiting.clarification event asks for.
type blocking struct {
	// Kind is "confirmation" or "clarification".
	Kind  string
	Token string
	// AllowedReplies (confirmation) defaults to accept and reject.
	AllowedReplies []string
	// ResponseKinds (clarification) is accepted_response_kinds; empty means any.
	ResponseKinds []string
	// Choices are the values a multiple_choice response may take.
	Choices []string
}

// awaitingMarker is in both spellings (compact and full URI) of the type of
// both blocking events; a payload without it cannot be one.
var awaitingMarker = []byte("agent.awaiting.")

// fillEvent makes ev the event of a record, copying the payload into ev's
// own buffer. f holds the payload's routing fields, or is nil when nothing
// needs them yet (they stay empty until route is called); blocking events
// are recognised either way. Only the two blocking event types are decoded
// in full (for their reply token).
func fillEvent(ev *event, rec *capfile.Record, index int64, f *payload.Routing) {
	*ev = event{
		Index:   index,
		Offset:  rec.Offset(),
		Payload: append(ev.Payload[:0], rec.Payload...),
		Binary:  rec.Flags&capfile.FlagInvalidUTF8 != 0,
	}
	if f == nil {
		if !bytes.Contains(rec.Payload, awaitingMarker) {
			return
		}
		f = &payload.Decode(rec.Payload).Routing
	}
	ev.setRouting(f)
}

// route reads the routing fields of an event read without them, with doc
// (reused between calls). Only the goroutine that owns ev may call it: the
// writer of a subscriber's own timeline (a shared timeline's events are
// always read with their fields).
func (e *event) route(doc *payload.Doc) {
	if e.routed || e.Control {
		return
	}
	doc.DecodeOnly(e.Payload, payload.NeedRouting)
	e.setRouting(&doc.Routing)
}

// setRouting sets e's routing fields from f, and its reply terms when it
// is one of the two blocking events.
func (e *event) setRouting(f *payload.Routing) {
	e.routed = true
	e.Type, e.ID, e.Session, e.Urgency = f.Type, f.EventID, f.SessionKey(), f.Urgency
	switch vocab.Compact(f.Type) {
	case vocab.TypeAwaitingConfirmation:
		e.Blocking = decodeBlocking(e.Payload, "confirmation")
	case vocab.TypeAwaitingClarification:
		e.Blocking = decodeBlocking(e.Payload, "clarification")
	}
}

type blockingFields struct {
	ReplyToken            string          `json:"reply_token"`
	AllowedReplies        []string        `json:"allowed_replies"`
	AcceptedResponseKinds []string        `json:"accepted_response_kinds"`
	Choices               json.RawMessage `json:"choices"`
}

// decodeBlocking reads the reply terms of a blocking event. The fields sit at
// the top level (AAEP ch. 4); some producers nest them in "payload", which
// is read as a fallback. It returns nil when no reply token is found.
func decodeBlocking(payload []byte, kind string) *blocking {
	var top struct {
		blockingFields
		Payload *blockingFields `json:"payload"`
	}
	if err := json.Unmarshal(payload, &top); err != nil {
		return nil
	}
	f := top.blockingFields
	if f.ReplyToken == "" && top.Payload != nil {
		f = *top.Payload
	}
	if f.ReplyToken == "" {
		return nil
	}
	b := &blocking{Kind: kind, Token: f.ReplyToken, AllowedReplies: f.AllowedReplies, ResponseKinds: f.AcceptedResponseKinds}
	if len(f.Choices) > 0 {
		var objs []struct {
			Value json.RawMessage `json:"value"`
		}
		if json.Unmarshal(f.Choices, &objs) == nil {
			for _, o := range objs {
				var s string
				if json.Unmarshal(o.Value, &s) == nil {
					b.Choices = append(b.Choices, s)
				} else if len(o.Value) > 0 {
					b.Choices = append(b.Choices, string(o.Value))
				}
			}
		}
	}
	return b
}

// stream iterates over the events of one pass through a capture: records of
// kind KindReceived inside the range that pass the filter.
type stream struct {
	cur    Cursor
	rng    Range
	filter msgfilter.Filter
	doc    payload.Doc // decodes each record's routing fields
	seek   string      // single --session to seek to, when no From
	err    error
	// lazy skips reading routing fields that nothing needs yet (see
	// fillEvent); only a subscriber's own timeline sets it, as its writer
	// reads them if new terms come to need them (event.route).
	lazy bool
	// pool, when set, supplies recycled events (a subscriber's own timeline).
	pool chan *event
	// sse marks the capture's sources whose transport is SSE: their
	// records carry the stream's framing (or its absence).
	sse map[uint16]bool
	// gap, when set, is told of each damaged range the stream skips.
	gap func(recording.Gap)
}

// resume reads on after the damage that ended cur's Next, where the cursor
// can (*recording.Reader, *capfile.Reader); ok is false where it cannot.
func resume(cur Cursor) (g recording.Gap, ok bool, err error) {
	switch c := cur.(type) {
	case interface{ Resume() (recording.Gap, error) }:
		g, err = c.Resume()
		return g, true, err
	case *capfile.Reader:
		d, err := c.Resume()
		return recording.Gap{Part: "the capture", DroppedRange: d, End: err == io.EOF}, true, err
	}
	return recording.Gap{}, false, nil
}

// headerReader is implemented by cursors that know the capture's header
// (*capfile.Reader does); without it, only records with SSE attributes
// count as framed.
type headerReader interface{ Header() capfile.Header }

// openStream opens a cursor and positions it at the range's start.
func openStream(open Opener, rng Range, filter msgfilter.Filter) (*stream, error) {
	cur, err := open()
	if err != nil {
		return nil, err
	}
	s := &stream{cur: cur, rng: rng, filter: filter}
	if h, ok := cur.(headerReader); ok {
		for _, src := range h.Header().Origins {
			if src.Transport == "sse" {
				if s.sse == nil {
					s.sse = make(map[uint16]bool)
				}
				s.sse[src.ID] = true
			}
		}
	}
	if len(filter.Sessions) == 1 && !rng.From.Set {
		s.seek = filter.Sessions[0]
	}
	if err := s.rewind(); err != nil {
		cur.Close()
		return nil, err
	}
	return s, nil
}

// sessionSeeker is implemented by cursors with a session index.
type sessionSeeker interface{ SeekSession(id string) error }

// rewind positions the cursor at the range's start again (for loops).
func (s *stream) rewind() error {
	var err error
	switch {
	case s.rng.From.Set && s.rng.From.ByIndex:
		err = s.cur.SeekRecord(s.rng.From.Index)
		if err != nil {
			return fmt.Errorf("seek to record %d: %w", s.rng.From.Index, err)
		}
	case s.rng.From.Set:
		if err = s.cur.SeekTime(int64(s.rng.From.Time)); err != nil {
			return fmt.Errorf("seek to %v: %w", s.rng.From.Time, err)
		}
	default:
		if ss, ok := s.cur.(sessionSeeker); ok && s.seek != "" {
			if ss.SeekSession(s.seek) == nil {
				return nil
			}
			// Not in the index (or no index): scan from the start instead.
		}
		if err = s.cur.SeekRecord(0); err != nil {
			return fmt.Errorf("seek to the start: %w", err)
		}
	}
	return nil
}

// next returns the next event, or io.EOF after the range's last one.
func (s *stream) next() (*event, error) {
	if s.err != nil {
		return nil, s.err
	}
	for {
		rec, err := s.cur.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				gap, ok, rerr := resume(s.cur)
				switch {
				case ok && (rerr == nil || rerr == io.EOF):
					// Damage, skipped as repair skips it; a torn tail ends
					// the replay as the capture's end would.
					if s.gap != nil {
						s.gap(gap)
					}
					if rerr == nil {
						continue
					}
					err = io.EOF
				default:
					err = fmt.Errorf("read capture: %w", err)
				}
			}
			s.err = err
			return nil, err
		}
		idx := s.cur.Index()
		if s.rng.To.Set {
			if s.rng.To.ByIndex && idx > s.rng.To.Index || !s.rng.To.ByIndex && rec.Time > int64(s.rng.To.Time) {
				s.err = io.EOF
				return nil, io.EOF
			}
		}
		if rec.Kind != capfile.KindReceived || isUnaryAnswer(rec) || s.recordedHandshake(rec.Payload) {
			continue
		}
		var fp *payload.Routing
		if !s.lazy || !s.filter.Empty() {
			// The filter and the event read the routing fields only.
			s.doc.DecodeOnly(rec.Payload, payload.NeedRouting)
			if !s.filter.Match(&s.doc.Routing) {
				continue
			}
			fp = &s.doc.Routing
		}
		var ev *event
		select {
		case ev = <-s.pool:
		default:
			ev = new(event)
		}
		fillEvent(ev, rec, idx, fp)
		ev.SSE = s.framing(rec)
		return ev, nil
	}
}

// handshakeMarker is in the type of every subscription message; a payload
// without it cannot be one.
var handshakeMarker = []byte(`"subscription.`)

// recordedHandshake reports whether payload is a subscription message the
// recorded producer sent (subscription.accepted, subscription.rejected, any
// subscription.*): the recording's own handshake, which a replay never
// re-sends, since it speaks its own (and a subscriber would take a recorded
// accepted for its own, or get two). Only payloads that contain the marker
// are decoded for their type.
func (s *stream) recordedHandshake(p []byte) bool {
	if !bytes.Contains(p, handshakeMarker) {
		return false
	}
	s.doc.DecodeOnly(p, payload.NeedRouting)
	return strings.HasPrefix(s.doc.Routing.Type, "subscription.")
}

// isUnaryAnswer reports a record that holds the answer to a unary gRPC
// call (GetManifest), not a message of the stream: it is never replayed.
func isUnaryAnswer(rec *capfile.Record) bool {
	for _, a := range rec.Attrs {
		if a.Key == grpcbind.AttrMethod {
			return true
		}
	}
	return false
}

// framing returns the recorded SSE framing of rec: from its "event" and "id"
// attributes when its source is an SSE stream or it carries them (a replay's
// own recording); Recorded is false otherwise.
func (s *stream) framing(rec *capfile.Record) sseFraming {
	f := sseFraming{Recorded: s.sse[rec.Origin]}
	for _, a := range rec.Attrs {
		switch a.Key {
		case "event":
			f.Recorded, f.Named, f.Name = true, true, a.Value
		case "id":
			f.Recorded, f.ID = true, a.Value
		}
	}
	return f
}

// restart rewinds for another loop.
func (s *stream) restart() error {
	s.err = nil
	return s.rewind()
}

func (s *stream) close() error { return s.cur.Close() }
