package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"
)

// sseEventName is the SSE event name of AAEP events (Appendix B.1.3).
const sseEventName = "aaep.event"

// Values of Options.SSEEvent beside an event name.
const (
	// SSEEventRecorded frames each message as the capture recorded it: with
	// the producer's event name, or none when it sent none. Messages that
	// did not arrive over SSE are named aaep.event. This is the default.
	SSEEventRecorded = "recorded"
	// SSEEventNone sends every message unnamed (no event: line), the only
	// kind EventSource.onmessage receives.
	SSEEventNone = "none"
)

// CheckSSEEvent validates a value of Options.SSEEvent.
func CheckSSEEvent(v string) error {
	switch {
	case v == "" || v == SSEEventRecorded || v == SSEEventNone:
		return nil
	case strings.ContainsAny(v, "\r\n\x00"):
		return fmt.Errorf("SSE event name %q contains a line break or NUL", v)
	}
	return nil
}

// validSSEID reports whether id can go on an SSE id: line.
func validSSEID(id string) bool {
	return id != "" && !strings.ContainsAny(id, "\r\n\x00")
}

// sseFrame returns the event: and id: lines' values for ev under the
// server's SSEEvent policy: named says whether an event: line is written.
// The id is the recorded one, else the event_id, so that Last-Event-ID
// resumes even where the producer sent no ids.
func (s *Server) sseFrame(ev *event) (name string, named bool, id string) {
	switch p := s.opts.SSEEvent; p {
	case "", SSEEventRecorded:
		if ev.SSE.Recorded {
			name, named = ev.SSE.Name, ev.SSE.Named
		} else {
			name, named = sseEventName, true
		}
	case SSEEventNone:
	default:
		name, named = p, true
	}
	if named && !validSSEID(name) {
		// A recorded name cannot hold a line break; be safe anyway.
		name, named = "", false
	}
	id = ev.SSE.ID
	if !validSSEID(id) {
		id = ev.ID
	}
	if !validSSEID(id) {
		id = ""
	}
	return name, named, id
}

// sseWire is a subscriber's Server-Sent Events stream.
type sseWire struct {
	srv *Server
	rc  *http.ResponseController
	bw  *bufio.Writer // over dw
	dw  *deadlineWriter
}

// deadlineWriter renews the write deadline before every piece it writes
// to the response (sseWritePiece bytes at most), so that a flush fails only
// when the subscriber stops reading, not when it reads a large batch
// slowly, or once interrupted. (A WebSocket's batchConn renews its deadline
// whenever the peer accepts bytes, to the same end.)
type deadlineWriter struct {
	w           http.ResponseWriter
	rc          *http.ResponseController
	timeout     time.Duration
	interrupted atomic.Bool
}

// sseWritePiece bounds what must reach the subscriber within one write
// timeout.
const sseWritePiece = 8 << 10

func (d *deadlineWriter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		if d.interrupted.Load() {
			return written, os.ErrDeadlineExceeded
		}
		_ = d.rc.SetWriteDeadline(time.Now().Add(d.timeout))
		n, err := d.w.Write(p[:min(len(p), sseWritePiece)])
		written += n
		p = p[n:]
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

func newSSEWire(srv *Server, w http.ResponseWriter) *sseWire {
	rc := http.NewResponseController(w)
	dw := &deadlineWriter{w: w, rc: rc, timeout: srv.opts.WriteTimeout}
	return &sseWire{srv: srv, rc: rc, bw: bufio.NewWriterSize(dw, batchLimit), dw: dw}
}

func (w *sseWire) write(ev *event) error {
	if ev.Control {
		return nil // handshake answers go in POST responses, not on the stream
	}
	bw := w.bw
	name, named, id := w.srv.sseFrame(ev)
	if named {
		bw.WriteString("event: ")
		bw.WriteString(name)
		bw.WriteByte('\n')
	}
	if id != "" {
		bw.WriteString("id: ")
		bw.WriteString(id)
		bw.WriteByte('\n')
	}
	p := ev.Payload
	if bytes.IndexByte(p, '\n') < 0 && bytes.IndexByte(p, '\r') < 0 {
		bw.WriteString("data: ")
		bw.Write(p)
		bw.WriteString("\n\n")
		return nil
	}
	// SSE data cannot hold a line break: each line gets its own data: field,
	// and the subscriber joins them with "\n".
	for {
		i := bytes.IndexAny(p, "\r\n")
		if i < 0 {
			bw.WriteString("data: ")
			bw.Write(p)
			bw.WriteByte('\n')
			break
		}
		bw.WriteString("data: ")
		bw.Write(p[:i])
		bw.WriteByte('\n')
		if p[i] == '\r' && i+1 < len(p) && p[i+1] == '\n' {
			i++
		}
		p = p[i+1:]
	}
	_, err := bw.WriteString("\n")
	return err
}

func (w *sseWire) flush() error {
	if err := w.bw.Flush(); err != nil {
		return err
	}
	return w.rc.Flush()
}

// sseKeepalive is the comment a silent stream gets: EventSource ignores it,
// and it keeps read timeouts and proxies from ending the stream.
const sseKeepalive = ": keepalive\n\n"

func (w *sseWire) keepalive() error {
	if _, err := w.bw.WriteString(sseKeepalive); err != nil {
		return err
	}
	return w.flush()
}

func (w *sseWire) interrupt() {
	if w.dw != nil {
		w.dw.interrupted.Store(true)
	}
	_ = w.rc.SetWriteDeadline(time.Now())
}

// close ends nothing itself: the stream ends when the handler returns.
func (w *sseWire) close(int, string) {
	_ = w.rc.SetWriteDeadline(time.Now().Add(time.Second))
	_ = w.bw.Flush()
	_ = w.rc.Flush()
}

// serveSSE handles GET /aaep/v1/events and GET /events. The query parameter
// subscription_id selects the terms negotiated by POST /aaep/v1/subscriptions;
// without it the stream is unfiltered. Last-Event-ID (header, or the
// lastEventId query parameter) resumes after that event on a per-subscriber
// timeline, or on the shared one (after an event still to come, or with
// what it missed of one already sent); when nothing is left after it, the
// answer is 204, which tells an EventSource to stop reconnecting.
func (s *Server) serveSSE(w http.ResponseWriter, r *http.Request) {
	var terms *subscriptionTerms
	id := r.URL.Query().Get("subscription_id")
	var (
		subscriberID string
		caps         map[string]json.RawMessage
	)
	if id != "" {
		s.mu.Lock()
		p := s.pending[id]
		busy := p != nil && p.active
		if p != nil && !busy {
			p.active = true
			terms, subscriberID, caps = p.terms, p.subscriber, p.caps
		}
		s.mu.Unlock()
		switch {
		case p == nil:
			writeJSON(w, http.StatusNotFound, errorBody("unknown_subscription", "no subscription with that subscription_id; POST a subscription.request to /aaep/v1/subscriptions first"))
			return
		case busy:
			writeJSON(w, http.StatusConflict, errorBody("subscription_busy", "that subscription already has an open stream"))
			return
		}
	}
	release := func() {
		if id == "" {
			return
		}
		s.mu.Lock()
		if p := s.pending[id]; p != nil {
			p.active = false
			p.created = time.Now()
		}
		s.mu.Unlock()
	}
	resume := r.Header.Get("Last-Event-ID")
	if resume == "" {
		resume = r.URL.Query().Get("lastEventId")
	}
	var (
		st    *stream
		first *event
		after int64 = -1 // shared: the record index to resume after
	)
	if s.opts.Shared && resume != "" {
		idx, found, err := s.findEvent(resume)
		if err != nil {
			release()
			writeJSON(w, http.StatusInternalServerError, errorBody("capture_error", err.Error()))
			return
		}
		if found {
			if s.shared.locate(idx) == resumeOver {
				// The timeline is over: 204 stops an EventSource.
				release()
				w.WriteHeader(http.StatusNoContent)
				return
			}
			after = idx
		}
		// An id the range does not hold: join live.
	}
	if !s.opts.Shared {
		var err error
		st, first, err = s.openTimeline(resume)
		switch {
		case errors.Is(err, errResumeNotFound):
			// Start over: subscribers deduplicate by event_id (§8.2.4).
		case err != nil:
			release()
			writeJSON(w, http.StatusInternalServerError, errorBody("capture_error", err.Error()))
			return
		case first == nil && resume != "":
			st.close()
			release()
			w.WriteHeader(http.StatusNoContent)
			return
		}
	}
	wire := newSSEWire(s, w)
	rc := wire.rc
	sub, err := s.newSubscriberResuming(TransportSSE, r.RemoteAddr, id, wire, terms, resume)
	if err != nil {
		if st != nil {
			st.close()
		}
		release()
		writeJSON(w, http.StatusServiceUnavailable, errorBody("shutting_down", err.Error()))
		return
	}
	sub.mu.Lock()
	sub.subscriber, sub.caps = subscriberID, caps
	sub.mu.Unlock()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	_ = rc.Flush()
	// The client going away ends the subscription.
	stopWatch := context.AfterFunc(r.Context(), func() {
		sub.stop(CloseNormal, "connection lost", CauseDisconnected)
	})
	defer stopWatch()
	if s.opts.Shared {
		s.shared.joinAfter(sub, after)
	} else {
		s.launch(sub, st, first)
	}
	sub.writeLoop()
	release()
}
