package recording

import (
	"fmt"
	"io"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/protocol"
)

// captureItem holds what the capture reader keeps between records.
type captureItem struct {
	attrs    map[string]string
	msg      protocol.Message
	connRec  protocol.Conn
	lastTime time.Duration
}

// nextRecord reads the capture's next record: a message (m non-nil), a
// connection record (c non-nil) or another record (both nil, ok true). A
// torn tail ends the input and is kept in r.torn.
func (r *reader) nextRecord() (m *protocol.Message, c *protocol.Conn, ok bool, err error) {
	rd := r.cap
	rec, err := rd.Next()
	if err == io.EOF {
		return nil, nil, false, nil
	}
	if err != nil {
		if capfile.IsTorn(err) {
			r.torn = err
			return nil, nil, false, nil
		}
		return nil, nil, false, fmt.Errorf("%s: %w (aaep-replay repair can save the intact records)", r.name, err)
	}
	r.lastTime = time.Duration(rec.Time)
	r.meter.Record(r.lastTime)
	if r.attrs == nil {
		r.attrs = map[string]string{}
	}
	if rec.Kind == capfile.KindConn {
		ConnFromRecord(&r.connRec, rec, rd.Index(), r.attrs)
		return nil, &r.connRec, true, nil
	}
	if rec.Kind != capfile.KindReceived && rec.Kind != capfile.KindSent {
		return nil, nil, true, nil
	}
	FromRecord(&r.msg, rec, rd.Index(), r.hdr.Start, r.attrs)
	return &r.msg, nil, true, nil
}

// FromRecord makes m the message of capture record rec (of kind
// KindReceived or KindSent), number index, in a capture that started at
// start (zero when unknown). m.Attrs is attrs, refilled, when the record has
// attributes; m.Raw is rec.Payload, valid as long as the record is.
func FromRecord(m *protocol.Message, rec *capfile.Record, index int64, start time.Time, attrs map[string]string) {
	*m = protocol.Message{
		Index:  index,
		Offset: time.Duration(rec.Time),
		Source: int(rec.Origin),
		Raw:    rec.Payload,
	}
	if !start.IsZero() {
		m.Received = start.Add(m.Offset)
	}
	// Every capture is written from the subscriber's side: received
	// records came from the producer, sent ones went to it. That holds
	// for aaep-capture and for aaep-replay's --record alike.
	if rec.Kind == capfile.KindSent {
		m.Dir = protocol.ToProducer
	}
	if len(rec.Attrs) > 0 {
		clear(attrs)
		for _, a := range rec.Attrs {
			attrs[a.Key] = a.Value
		}
		m.Attrs = attrs
	}
}

// ConnFromRecord makes c the connection record rec (of kind KindConn),
// number index. c.Attrs is attrs, refilled, when the record has
// attributes; c.Raw is rec.Payload, valid as long as the record is.
func ConnFromRecord(c *protocol.Conn, rec *capfile.Record, index int64, attrs map[string]string) {
	*c = protocol.Conn{Index: index, Offset: time.Duration(rec.Time), Source: int(rec.Origin), Raw: rec.Payload}
	if len(rec.Attrs) > 0 {
		clear(attrs)
		for _, a := range rec.Attrs {
			attrs[a.Key] = a.Value
		}
		c.Attrs = attrs
	}
}
