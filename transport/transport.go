// Package transport speaks the capture side of the AAEP transport bindings: it
// connects to a producer over Server-Sent Events, WebSocket, a Unix domain
// socket, stdio JSON-RPC (a child process) or an NDJSON file, and hands every
// message to the caller exactly as received, with its monotonic receive time.
//
// Each transport is a Source. Run blocks until the context is cancelled, the
// stream ends cleanly, or the source gives up; it calls emit once per message,
// from one goroutine, in receive order. Three kinds of messages come out:
//
//   - capfile.KindReceived: a message from the producer, payload byte-for-byte
//     (for SSE: the joined data field; for JSON-RPC: the unwrapped params or
//     result; for framed streams: the frame without its framing).
//   - capfile.KindSent: a message the recorder sent (subscription.request,
//     subscription.close), byte-for-byte as sent.
//   - capfile.KindConn: a connection event; its payload is the JSON encoding
//     of a ConnEvent.
//
// A source never drops a message for being invalid JSON or UTF-8: validation
// is the caller's job. A message larger than the size limit is not delivered;
// a "refused" connection event describes it instead and reading continues.
//
// Credentials never leave a source: request header values are not reported,
// and every URL in a connection event or in Info has its user info removed
// and credential-like query values replaced (see SafeURL).
package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
)

// Message is one message delivered by a source. Payload and Attrs belong to
// the source and are valid only until emit returns: a consumer that keeps them
// must copy them.
type Message struct {
	// Kind is KindReceived, KindSent or KindConn.
	Kind capfile.Kind
	// Time is the receive (or send) time in nanoseconds on the source's
	// Clock, taken when the message was complete.
	Time int64
	// Payload is the message exactly as received or sent; for KindConn it is
	// the JSON encoding of Conn.
	Payload []byte
	// Attrs are transport attributes: SSE "id" and "event", JSON-RPC
	// "method", WebSocket "opcode" for binary frames, HTTP "status".
	Attrs []capfile.Attr
	// Conn is the decoded connection event for KindConn, nil otherwise.
	Conn *ConnEvent
}

// Emit receives the messages of a source. An error stops the source, which
// returns that error from Run. m and its Payload are the source's only
// during the call: sources reuse their buffers for the next message.
type Emit func(m *Message) error

// Source is one producer endpoint.
type Source interface {
	// Run connects, reads and reconnects until ctx is done (returns nil),
	// the stream ends cleanly (returns nil), emit fails (returns that
	// error), or the source gives up (returns an error wrapping ErrFailed).
	Run(ctx context.Context, emit Emit) error
	// Info describes the source for a capture header; it holds no credentials.
	Info() Info
}

// Info describes a source without credentials.
type Info struct {
	Transport   string // "sse", "websocket", "unix", "stdio", "file"
	Endpoint    string // safe to store: see SafeURL
	Subprotocol string // requested WebSocket subprotocol, if any
}

// ConnEvent is the payload of a KindConn record: a small JSON object whose
// "event" field is one of capfile's Conn* names. Only the fields that apply are
// present.
type ConnEvent struct {
	Event string `json:"event"`
	// URL is the endpoint (without credentials).
	URL string `json:"url,omitempty"`
	// Code is a WebSocket close code, an HTTP status or a process exit status.
	Code int `json:"code,omitempty"`
	// Reason is the close reason, or a short explanation.
	Reason string `json:"reason,omitempty"`
	// Error is the error that ended or failed a connection.
	Error string `json:"error,omitempty"`
	// Attempt numbers connection attempts since the last delivered message
	// (1 is the first attempt).
	Attempt int `json:"attempt,omitempty"`
	// Size is the size of a refused message in bytes (at least Limit+1 when
	// the full size is unknown), Limit the limit it exceeded.
	Size  int64 `json:"size,omitempty"`
	Limit int64 `json:"limit,omitempty"`
	// Partial is the number of bytes of an incomplete message discarded
	// when the connection was lost.
	Partial int64 `json:"partial_bytes,omitempty"`
	// Subprotocol is the negotiated WebSocket subprotocol.
	Subprotocol string `json:"subprotocol,omitempty"`
	// LastEventID is the SSE Last-Event-ID sent when reconnecting.
	LastEventID string `json:"last_event_id,omitempty"`
	// Retry is the wait before the next attempt, in milliseconds.
	RetryMS int64 `json:"retry_ms,omitempty"`
}

// Errors.
var (
	// ErrFailed wraps the error of a source that gave up: retries exhausted,
	// or a failure that retrying cannot fix (authentication, rejection).
	ErrFailed = errors.New("source failed")
	// ErrFrameTooLarge is the cause of a refused message.
	ErrFrameTooLarge = errors.New("message larger than the size limit")
	// ErrRejected means the producer refused the subscription (a
	// subscription.rejected message, an HTTP 401/403, or a WebSocket close
	// code 4001-4004).
	ErrRejected = errors.New("subscription rejected")
)

// FrameTooLargeError describes a message that exceeded the size limit.
type FrameTooLargeError struct {
	Size  int64 // bytes seen (at least Limit+1)
	Limit int64
}

func (e *FrameTooLargeError) Error() string {
	return fmt.Sprintf("message of %d bytes exceeds the limit of %d bytes", e.Size, e.Limit)
}

func (e *FrameTooLargeError) Unwrap() error { return ErrFrameTooLarge }

// DefaultMaxMessageSize is the default size limit of one message (16 MiB).
const DefaultMaxMessageSize = 16 << 20

// Clock gives monotonic receive times, in nanoseconds since its start. One
// clock is shared by all sources of a capture so that their times compare.
type Clock struct{ start time.Time }

// NewClock starts a clock now.
func NewClock() *Clock { return &Clock{start: time.Now()} }

// Start is the wall-clock time of the clock's start (it also carries Go's
// monotonic reading, which Now uses).
func (c *Clock) Start() time.Time { return c.start }

// Now returns the nanoseconds elapsed since the clock's start on the
// monotonic clock.
func (c *Clock) Now() int64 { return int64(time.Since(c.start)) }

// CloseCodeName names the AAEP WebSocket close codes (4000-4005) and the
// common standard ones; it returns "" for other codes.
func CloseCodeName(code int) string {
	switch code {
	case 1000:
		return "normal closure"
	case 1001:
		return "going away"
	case 1002:
		return "protocol error"
	case 1003:
		return "unsupported data"
	case 1006:
		return "abnormal closure"
	case 1008:
		return "policy violation"
	case 1009:
		return "message too big"
	case 1011:
		return "internal error"
	case 4000:
		return "subscription closed"
	case 4001:
		return "subscription rejected"
	case 4002:
		return "authentication failed"
	case 4003:
		return "authorization denied"
	case 4004:
		return "terminated for violation"
	case 4005:
		return "terminated by subscriber"
	}
	return ""
}

// emitter is what every transport uses to deliver messages: it stamps
// times, encodes connection events and remembers an emit failure so that the
// retry loop stops instead of reconnecting.
type emitter struct {
	clock *Clock
	emit  Emit
	url   string // safe URL of the current connection, for connection events
	err   error  // first emit error; sticky
	msg   Message
}

func newEmitter(clock *Clock, emit Emit) *emitter {
	return &emitter{clock: clock, emit: emit}
}

// message delivers a received or sent payload stamped at time t.
func (e *emitter) message(kind capfile.Kind, t int64, payload []byte, attrs []capfile.Attr) error {
	if e.err != nil {
		return e.err
	}
	e.msg = Message{Kind: kind, Time: t, Payload: payload, Attrs: attrs}
	if err := e.emit(&e.msg); err != nil {
		e.err = err
		return err
	}
	return nil
}

// conn delivers a connection event stamped now. The URL defaults to the
// current connection's.
func (e *emitter) conn(ev ConnEvent) error {
	if e.err != nil {
		return e.err
	}
	if ev.URL == "" {
		ev.URL = e.url
	}
	payload, err := json.Marshal(&ev)
	if err != nil {
		return fmt.Errorf("encode connection event: %w", err)
	}
	e.msg = Message{Kind: capfile.KindConn, Time: e.clock.Now(), Payload: payload, Conn: &ev}
	if err := e.emit(&e.msg); err != nil {
		e.err = err
		return err
	}
	return nil
}
