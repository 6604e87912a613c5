package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
)

// unixSource reads a Unix domain socket carrying length-prefixed or NDJSON
// frames (AAEP Appendix B.4).
type unixSource struct {
	opts Options
	path string
}

func newUnix(path string, opts Options) *unixSource { return &unixSource{opts: opts, path: path} }

func (s *unixSource) Info() Info {
	return Info{Transport: "unix", Endpoint: "unix://" + s.path}
}

func (s *unixSource) Run(ctx context.Context, emit Emit) error {
	e := newEmitter(s.opts.Clock, emit)
	e.url = "unix://" + s.path
	return runRetrying(ctx, e, s.opts.Retry, nil, func(ctx context.Context, n int) outcome {
		return s.attempt(ctx, e, n)
	})
}

func (s *unixSource) attempt(ctx context.Context, e *emitter, n int) outcome {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", s.path)
	if err != nil {
		return outcome{err: err}
	}
	defer conn.Close()
	if err := e.conn(ConnEvent{Event: capfile.ConnConnected, Attempt: n}); err != nil {
		return outcome{err: err}
	}
	o := outcome{connected: true}
	stopRead := context.AfterFunc(ctx, func() { _ = conn.SetReadDeadline(time.Now()) })
	defer stopRead()

	fr := newFrameReader(conn, s.opts.Framing, s.opts.maxMessageSize())
	if s.opts.Subscribe {
		req := s.opts.request()
		var out []byte
		if s.opts.Framing == FramingNDJSON {
			out = append(append(out, req...), '\n')
		} else {
			out = appendLP(out, req)
		}
		_ = conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
		if _, err := conn.Write(out); err != nil {
			o.err = fmt.Errorf("send subscription.request: %w", err)
			return o
		}
		if err := e.message(capfile.KindSent, e.clock.Now(), req, nil); err != nil {
			return outcome{err: err}
		}
	}
	return readFrames(ctx, e, fr, o)
}

// readFrames delivers the frames of fr until the stream ends. A clean end
// (EOF between frames) stops the source; a torn frame or a read error is a
// lost connection.
func readFrames(ctx context.Context, e *emitter, fr *frameReader, o outcome) outcome {
	for {
		b, err := fr.next()
		t := e.clock.Now()
		var tooLarge *FrameTooLargeError
		switch {
		case err == nil:
		case errors.As(err, &tooLarge):
			if err := e.conn(ConnEvent{Event: capfile.ConnRefused, Size: tooLarge.Size, Limit: tooLarge.Limit, Reason: "message too large"}); err != nil {
				return outcome{err: err}
			}
			continue
		case err == io.EOF:
			o.ev = ConnEvent{Event: capfile.ConnClosed, Reason: "end of stream"}
			o.stop = true
			return o
		default:
			if ctx.Err() == nil {
				o.ev.Partial = fr.partial
			}
			var fe *FramingError
			o.err, o.permanent = err, errors.As(err, &fe)
			return o
		}
		o.delivered = true
		if err := e.message(capfile.KindReceived, t, b, nil); err != nil {
			return outcome{err: err}
		}
	}
}
