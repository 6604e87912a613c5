package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// DefaultStallTimeout is how long a request may go without progress (no
// connection made, no request byte taken, no response byte received)
// before it is abandoned. A transfer that keeps moving, however slowly,
// is never cut off by it.
const DefaultStallTimeout = 30 * time.Second

// cleanupGrace bounds a cleanup request (aborting a failed multipart
// upload), which runs even after the caller's context ended.
const cleanupGrace = 5 * time.Second

// ErrStalled reports a request abandoned because nothing moved for the
// store's stall timeout: a hung server or load balancer that accepted the
// connection and stopped answering.
var ErrStalled = errors.New("no progress")

// stallError is the cause a stalled request is cancelled with.
type stallError struct{ d time.Duration }

func (e stallError) Error() string {
	return fmt.Sprintf("%v for %v: the server stopped answering", ErrStalled, e.d)
}

func (e stallError) Unwrap() error { return ErrStalled }

// stallTransport abandons a request when nothing moves for d: one timer per
// request, from before the connection is made until its response body is
// closed, reset by every byte of request body the connection takes and
// every byte of response body read. Between the last byte of the request
// and the first of the answer it allows 2*d: the request's last bytes may
// still sit in socket buffers, draining at the link's pace.
type stallTransport struct {
	base http.RoundTripper
	d    time.Duration
}

// newTransport returns the transport of a Store: base (or a clone of
// http.DefaultTransport with bounded dial, TLS and response-header waits)
// under a stall timeout of d.
func newTransport(base http.RoundTripper, d time.Duration) http.RoundTripper {
	if base == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		dial := &net.Dialer{Timeout: min(d, 30*time.Second), KeepAlive: 30 * time.Second, Control: limitUnsent}
		tr.DialContext = dial.DialContext
		tr.TLSHandshakeTimeout = min(d, 10*time.Second)
		// A backstop behind the stall timer, which allows 2*d once the
		// request is written (see sendBody).
		tr.ResponseHeaderTimeout = 3 * d
		tr.ExpectContinueTimeout = time.Second
		tr.DisableCompression = true // objects are read byte for byte
		base = tr
	}
	return &stallTransport{base: base, d: d}
}

// unsentLimit is how many bytes of a request the kernel may hold unsent on
// a store's connection (TCP_NOTSENT_LOWAT, where the system has it). The
// stall timer sees a request body's progress only as the connection takes
// its bytes; without a limit the kernel takes a whole body of megabytes at
// once into a send buffer it grows itself, and the body then crosses a slow
// link unseen, within the allowance after its last byte (2×d), or is cut
// off. With the limit, what is left unseen once the body is taken is this
// much plus what the link holds in flight.
const unsentLimit = 16 << 10

// watch is the stall timer of one request.
type watch struct {
	d      time.Duration
	timer  *time.Timer
	ctx    context.Context
	cancel context.CancelCauseFunc
	once   sync.Once
}

func (w *watch) progress() { w.timer.Reset(w.d) }

func (w *watch) done() {
	w.once.Do(func() {
		w.timer.Stop()
		w.cancel(nil)
	})
}

// stalled returns the stall error when the request was abandoned for it.
// The transport's own error often says the cause already (it is the
// context's): then it is not said twice.
func (w *watch) stalled(err error) error {
	var se stallError
	if cause := context.Cause(w.ctx); errors.As(cause, &se) {
		if strings.Contains(err.Error(), se.Error()) {
			return stalledError{se: se, err: err}
		}
		return fmt.Errorf("%w (%v)", se, err)
	}
	return err
}

// stalledError is a transport error that names its stall cause itself.
type stalledError struct {
	se  stallError
	err error
}

func (e stalledError) Error() string   { return e.err.Error() }
func (e stalledError) Unwrap() []error { return []error{e.se, e.err} }

func (t *stallTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	w := &watch{d: t.d, ctx: ctx, cancel: cancel}
	w.timer = time.AfterFunc(t.d, func() { cancel(stallError{t.d}) })
	req = req.WithContext(ctx)
	if req.Body != nil && req.Body != http.NoBody {
		req.Body = &sendBody{ReadCloser: req.Body, w: w}
		if gb := req.GetBody; gb != nil {
			req.GetBody = func() (io.ReadCloser, error) {
				b, err := gb()
				if err != nil || b == nil || b == http.NoBody {
					return b, err
				}
				return &sendBody{ReadCloser: b, w: w}, nil
			}
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		err = w.stalled(err)
		w.done()
		return nil, err
	}
	resp.Body = &recvBody{rc: resp.Body, w: w}
	return resp, nil
}

// sendBody is a request body that counts as progress as the connection
// takes it.
type sendBody struct {
	io.ReadCloser
	w *watch
}

func (b *sendBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == io.EOF:
		// The whole body is taken, but what the socket buffers hold
		// still has to reach the server, unseen from here: the answer
		// gets twice the stall timeout.
		b.w.timer.Reset(2 * b.w.d)
	case n > 0:
		b.w.progress()
	}
	return n, err
}

// recvBody is a response body whose bytes count as progress; closing it
// ends the request's watch.
type recvBody struct {
	rc io.ReadCloser
	w  *watch
}

func (b *recvBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.w.progress()
	}
	if err != nil && err != io.EOF {
		err = b.w.stalled(err)
	}
	return n, err
}

func (b *recvBody) Close() error {
	err := b.rc.Close()
	b.w.done()
	return err
}
