package input

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
	if rec.Kind == capfile.KindConn {
		r.connRec = protocol.Conn{Index: rd.Index(), Offset: time.Duration(rec.Time), Source: int(rec.Source), Raw: rec.Payload}
		return nil, &r.connRec, true, nil
	}
	if rec.Kind != capfile.KindReceived && rec.Kind != capfile.KindSent {
		return nil, nil, true, nil
	}
	r.msg = protocol.Message{
		Index:  rd.Index(),
		Offset: time.Duration(rec.Time),
		Source: int(rec.Source),
		Raw:    rec.Payload,
	}
	if !r.hdr.Start.IsZero() {
		r.msg.Received = r.hdr.Start.Add(r.msg.Offset)
	}
	// Every capture is written from the subscriber's side: received
	// records came from the producer, sent ones went to it. That holds
	// for aaep-capture and for aaep-replay's --record alike.
	if rec.Kind == capfile.KindSent {
		r.msg.Dir = protocol.ToProducer
	}
	if len(rec.Attrs) > 0 {
		if r.attrs == nil {
			r.attrs = map[string]string{}
		}
		clear(r.attrs)
		for _, a := range rec.Attrs {
			r.attrs[a.Key] = a.Value
		}
		r.msg.Attrs = r.attrs
	}
	return &r.msg, nil, true, nil
}
