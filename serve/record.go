package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
)

// record appends one message to the recording (no-op without one).
func (s *Server) record(sub *subscriber, kind capfile.Kind, ev *event) {
	if s.opts.Record == nil {
		return
	}
	attrs := []capfile.Attr{{Key: "subscription", Value: sub.id}}
	if sub.transport == TransportSSE && !ev.Control {
		name, named, id := s.sseFrame(ev)
		if named {
			attrs = append(attrs, capfile.Attr{Key: "event", Value: name})
		}
		if id != "" {
			attrs = append(attrs, capfile.Attr{Key: "id", Value: id})
		}
	}
	var flags capfile.Flags
	if ev.Binary {
		flags |= capfile.FlagInvalidUTF8
	}
	s.appendRecord(&capfile.Record{Kind: kind, Flags: flags, Origin: sub.num, Session: ev.Session, Attrs: attrs, Payload: ev.Payload})
}

// recordMessage records a message a subscriber sent (sub may be nil for a
// POST that names no active subscription).
func (s *Server) recordMessage(sub *subscriber, raw []byte, session string, extra ...capfile.Attr) {
	s.recordMessageFor(sub, "", raw, session, extra...)
}

// recordMessageFor is recordMessage for a message that names subscription
// named when sub is nil (a POST naming a subscription serve does not know:
// source 0, as a handshake by POST is). A reply that comes while its
// subscriber's SSE stream is cut is given its closed subscriber as sub
// (handleReply), and is filed under it.
func (s *Server) recordMessageFor(sub *subscriber, named string, raw []byte, session string, extra ...capfile.Attr) {
	if s.opts.Record == nil {
		return
	}
	var src uint16
	id := named
	if sub != nil {
		src, id = sub.num, sub.id
	}
	attrs := append([]capfile.Attr{{Key: "subscription", Value: id}}, extra...)
	s.appendRecord(&capfile.Record{Kind: capfile.KindSent, Origin: src, Session: session, Attrs: attrs, Payload: raw})
}

// recordHandshake records a handshake made by POST, before its stream
// exists (source 0, attribute subscription set).
func (s *Server) recordHandshake(id string, req, resp []byte) {
	if s.opts.Record == nil {
		return
	}
	attrs := []capfile.Attr{{Key: "subscription", Value: id}}
	s.appendRecord(&capfile.Record{Kind: capfile.KindSent, Attrs: attrs, Payload: req})
	s.appendRecord(&capfile.Record{Kind: capfile.KindReceived, Attrs: attrs, Payload: resp})
}

func (s *Server) recordConn(sub *subscriber, fields map[string]any) {
	if s.opts.Record == nil {
		return
	}
	fields["subscription"] = sub.id
	b, _ := json.Marshal(fields)
	s.appendRecord(&capfile.Record{Kind: capfile.KindConn, Origin: sub.num, Attrs: []capfile.Attr{{Key: "subscription", Value: sub.id}}, Payload: b})
}

func (s *Server) appendRecord(rec *capfile.Record) {
	s.recMu.Lock()
	defer s.recMu.Unlock()
	if s.recErr != nil {
		return
	}
	rec.Time = int64(time.Since(s.recStart))
	if err := s.opts.Record.Append(rec); err != nil {
		s.recErr = fmt.Errorf("record: %w", err)
	}
}

// listOrigin adds sub to the recording's origin table, so that every
// origin id used in a record is listed in the header; when the table cannot
// grow, sub is recorded as origin 0 (the operator is told once).
func (s *Server) listOrigin(sub *subscriber) {
	if s.opts.Record == nil {
		return
	}
	transport, endpoint := sub.transport, sub.remote
	if transport == TransportPush {
		transport = TransportWebSocket
	} else {
		endpoint = "subscriber " + sub.remote
	}
	err := errors.New("the recording cannot list sources")
	if oa, ok := s.opts.Record.(OriginAdder); ok && sub.num != 0 {
		src := capfile.Origin{ID: sub.num, Transport: transport, Endpoint: endpoint}
		if transport == TransportWebSocket {
			src.Subprotocol = Subprotocol
		}
		err = oa.AddOrigin(src)
	}
	if err == nil {
		return
	}
	sub.num = 0
	if s.unlisted.CompareAndSwap(false, true) {
		s.notify(Notice{Kind: NoticeWarning, Subscription: sub.id, Transport: sub.transport,
			Reason: "recording: " + err.Error() + "; this and further subscribers are recorded as source 0, told apart by their subscription attribute"})
	}
}
