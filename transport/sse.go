package transport

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/payload"
)

// Paths tried, in order, when an SSE endpoint is a bare origin.
var ssePaths = []string{"/aaep/v1/events", "/events"}

// SubscriptionsPath is where --subscribe POSTs the subscription.request.
const SubscriptionsPath = "/aaep/v1/subscriptions"

// sseSource reads a Server-Sent Events stream (AAEP Appendix B.1).
type sseSource struct {
	opts       Options
	base       *url.URL // the endpoint as given
	candidates []*url.URL
	client     *http.Client
}

func newSSE(u *url.URL, opts Options) *sseSource {
	s := &sseSource{opts: opts, base: u}
	if u.Path == "" || u.Path == "/" {
		for _, p := range ssePaths {
			c := *u
			c.Path = p
			s.candidates = append(s.candidates, &c)
		}
	} else {
		s.candidates = []*url.URL{u}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = opts.TLS
	tr.ReadBufferSize = readBufferSize
	// Only connecting has a time limit (the transport's dial and TLS
	// handshake timeouts): a producer may send no response headers until
	// its first event (Node's HTTP server buffers them), and curl, browsers
	// and the reference tools wait for them as long as it takes.
	tr.ResponseHeaderTimeout = 0
	s.client = &http.Client{Transport: tr}
	return s
}

func (s *sseSource) Info() Info {
	return Info{Transport: "sse", Endpoint: safeURL(s.base)}
}

func (s *sseSource) Run(ctx context.Context, emit Emit) error {
	defer s.client.CloseIdleConnections()
	e := newEmitter(s.opts.Clock, emit)
	e.url = safeURL(s.base)
	st := &sseState{}
	return runRetrying(ctx, e, s.opts.Retry, func() time.Duration { return st.retry },
		func(ctx context.Context, n int) outcome { return s.attempt(ctx, e, st, n) })
}

// sseState survives reconnections.
type sseState struct {
	subscribed bool
	url        *url.URL // the stream URL once known
	lastID     string
	retry      time.Duration // from the stream's "retry:" field
}

func (s *sseSource) attempt(ctx context.Context, e *emitter, st *sseState, n int) outcome {
	if s.opts.Subscribe && !st.subscribed {
		if o, ok := s.subscribe(ctx, e, st); !ok {
			return o
		}
	}
	candidates := s.candidates
	if st.url != nil {
		candidates = []*url.URL{st.url}
	}
	var resp *http.Response
	var notFound []string
	for _, u := range candidates {
		e.url = safeURL(u)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return outcome{err: err, permanent: true}
		}
		for k, vs := range s.opts.Header {
			req.Header[k] = vs
		}
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Cache-Control", "no-cache")
		if st.lastID != "" {
			req.Header.Set("Last-Event-ID", st.lastID)
		}
		r, err := s.do(req, e.url)
		if err != nil {
			return outcome{err: err}
		}
		if o, retry, ok := sseStatus(r); !ok {
			r.Body.Close()
			if st.subscribed && (r.StatusCode == http.StatusNotFound || r.StatusCode == http.StatusGone) {
				// The subscription is gone (a producer restart): subscribe
				// again on the next attempt.
				st.subscribed, st.url = false, nil
				o.permanent = false
				return o
			}
			if retry && len(candidates) > 1 {
				notFound = append(notFound, fmt.Sprintf("%s: %s", safeURL(u), o.err))
				continue
			}
			return o
		}
		st.url = u
		resp = r
		break
	}
	if resp == nil {
		return outcome{err: fmt.Errorf("no event stream found: %s", strings.Join(notFound, "; ")), permanent: true}
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNoContent {
		// The SSE standard's way to tell a client not to reconnect.
		return outcome{ev: ConnEvent{Event: capfile.ConnClosed, Code: resp.StatusCode, Reason: "no content: producer asks not to reconnect"}, stop: true}
	}
	if err := e.conn(ConnEvent{Event: capfile.ConnConnected, Attempt: n, LastEventID: st.lastID}); err != nil {
		return outcome{err: err}
	}
	p := newSSEParser(resp.Body, s.opts.maxMessageSize())
	o := outcome{connected: true}
	for {
		ev, err := p.next()
		if p.retry > 0 {
			st.retry = p.retry
		}
		if p.lastID != "" || p.idSeen {
			st.lastID = p.lastID
		}
		var tooLarge *FrameTooLargeError
		switch {
		case err == nil:
		case errors.As(err, &tooLarge):
			if err := e.conn(ConnEvent{Event: capfile.ConnRefused, Size: tooLarge.Size, Limit: tooLarge.Limit, Reason: "message too large"}); err != nil {
				return outcome{err: err}
			}
			continue
		case err == io.EOF:
			o.err = errors.New("end of stream")
			o.ev.Partial = p.partial
			return o
		default:
			o.err = err
			o.ev.Partial = p.partial
			return o
		}
		o.delivered = true
		if err := e.message(capfile.KindReceived, e.clock.Now(), ev.data, ev.attrs); err != nil {
			return outcome{err: err}
		}
	}
}

// do sends a stream request, telling Options.Status while the response
// headers are awaited.
func (s *sseSource) do(req *http.Request, url string) (*http.Response, error) {
	if s.opts.Status == nil {
		return s.client.Do(req)
	}
	var waiting atomic.Bool
	stopWaiting := func() {
		if waiting.CompareAndSwap(true, false) {
			s.opts.status(Status{URL: url})
		}
	}
	trace := &httptrace.ClientTrace{
		WroteRequest: func(httptrace.WroteRequestInfo) {
			if waiting.CompareAndSwap(false, true) {
				s.opts.status(Status{URL: url, Waiting: true, Since: time.Now()})
			}
		},
		GotFirstResponseByte: stopWaiting,
	}
	r, err := s.client.Do(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
	stopWaiting()
	return r, err
}

// sseStatus classifies a stream response. ok means a stream (or 204) to read;
// otherwise retry says whether the next candidate path is worth a try.
func sseStatus(r *http.Response) (o outcome, next, ok bool) {
	switch {
	case r.StatusCode == http.StatusNoContent:
		return outcome{}, false, true
	case r.StatusCode == http.StatusOK:
		mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if mt == "text/event-stream" {
			return outcome{}, false, true
		}
		return outcome{err: fmt.Errorf("content type %q is not text/event-stream", r.Header.Get("Content-Type")), permanent: true}, true, false
	case r.StatusCode == http.StatusUnauthorized || r.StatusCode == http.StatusForbidden:
		return outcome{ev: ConnEvent{Code: r.StatusCode}, err: fmt.Errorf("%w: HTTP %s", ErrRejected, r.Status), permanent: true}, false, false
	case r.StatusCode == http.StatusNotFound || r.StatusCode == http.StatusMethodNotAllowed || r.StatusCode == http.StatusNotAcceptable:
		return outcome{ev: ConnEvent{Code: r.StatusCode}, err: fmt.Errorf("HTTP %s", r.Status), permanent: true}, true, false
	case r.StatusCode == http.StatusTooManyRequests || r.StatusCode == http.StatusRequestTimeout || r.StatusCode >= 500:
		return outcome{ev: ConnEvent{Code: r.StatusCode}, err: fmt.Errorf("HTTP %s", r.Status)}, false, false
	default:
		return outcome{ev: ConnEvent{Code: r.StatusCode}, err: fmt.Errorf("HTTP %s", r.Status), permanent: true}, false, false
	}
}

// subscribe POSTs the subscription.request and records both directions. It
// returns ok when the stream URL is known (from Location, or the default
// candidates).
func (s *sseSource) subscribe(ctx context.Context, e *emitter, st *sseState) (outcome, bool) {
	u := *s.base
	u.Path = SubscriptionsPath
	u.RawQuery = ""
	e.url = safeURL(&u)
	body := s.opts.request()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return outcome{err: err, permanent: true}, false
	}
	for k, vs := range s.opts.Header {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return outcome{err: err}, false
	}
	defer resp.Body.Close()
	sentAt := e.clock.Now()
	if err := e.message(capfile.KindSent, sentAt, body, []capfile.Attr{{Key: "http", Value: "POST " + SubscriptionsPath}}); err != nil {
		return outcome{err: err}, false
	}
	limit := s.opts.maxMessageSize()
	reply, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return outcome{err: fmt.Errorf("read subscription response: %w", err)}, false
	}
	status := []capfile.Attr{{Key: "status", Value: strconv.Itoa(resp.StatusCode)}}
	if int64(len(reply)) > limit {
		if err := e.conn(ConnEvent{Event: capfile.ConnRefused, Size: int64(len(reply)), Limit: limit, Reason: "subscription response too large"}); err != nil {
			return outcome{err: err}, false
		}
	} else if len(reply) > 0 {
		if err := e.message(capfile.KindReceived, e.clock.Now(), reply, status); err != nil {
			return outcome{err: err}, false
		}
	}
	switch {
	case payload.Decode(reply).Routing.Type == "subscription.rejected" || resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return outcome{ev: ConnEvent{Code: resp.StatusCode}, err: fmt.Errorf("%w: HTTP %s", ErrRejected, resp.Status), permanent: true}, false
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
		return outcome{ev: ConnEvent{Code: resp.StatusCode}, err: fmt.Errorf("subscribe: HTTP %s", resp.Status)}, false
	case resp.StatusCode >= 300:
		return outcome{ev: ConnEvent{Code: resp.StatusCode}, err: fmt.Errorf("subscribe: HTTP %s", resp.Status), permanent: true}, false
	}
	st.subscribed = true
	if loc := resp.Header.Get("Location"); loc != "" {
		lu, err := u.Parse(loc)
		if err != nil {
			return outcome{err: fmt.Errorf("subscription Location %q: %w", SafeURL(loc), err), permanent: true}, false
		}
		st.url = lu
	}
	return outcome{}, true
}

// sseEvent is one dispatched event; its slices are valid until the next call.
type sseEvent struct {
	data  []byte
	attrs []capfile.Attr
}

// sseParser implements the event-stream interpretation of the HTML
// standard for lines ending in LF or CRLF (a lone CR is not a line end).
type sseParser struct {
	br  *bufio.Reader
	max int64

	data      []byte
	over      bool  // the event's data exceeded max
	overSize  int64 // data bytes seen for an oversized event
	eventType []byte
	hasType   bool
	id        []byte
	hasID     bool
	pending   bool // a field line was seen since the last dispatch

	lastID  string // last event ID buffer (persists across events)
	idSeen  bool   // an id field was ever seen (the last ID may be "")
	typeStr string // interned event type
	retry   time.Duration
	line    []byte // long lines
	attrs   [2]capfile.Attr
	started bool
	partial int64
}

func newSSEParser(r io.Reader, max int64) *sseParser {
	return &sseParser{br: bufio.NewReaderSize(r, readBufferSize), max: max}
}

// next returns the next event with data. io.EOF (or another read error)
// ends the stream; partial then holds the bytes of an unfinished event.
func (p *sseParser) next() (sseEvent, error) {
	if !p.started {
		p.started = true
		if b, err := p.br.Peek(3); err == nil && bytes.Equal(b, []byte("\xEF\xBB\xBF")) {
			_, _ = p.br.Discard(3)
		}
	}
	for {
		line, long, err := p.readLine()
		if err != nil {
			p.partial += int64(len(p.data))
			if p.over {
				p.partial += p.overSize
			}
			return sseEvent{}, err
		}
		if long == 0 && len(line) == 0 {
			if ev, err, ok := p.dispatch(); ok {
				return ev, err
			}
			continue
		}
		p.field(line, long)
	}
}

// readLine returns a line without its terminator. For a line longer than
// the limit it returns the line's first bytes and its full length in long.
func (p *sseParser) readLine() (line []byte, long int64, err error) {
	b, err := p.br.ReadSlice('\n')
	if err == nil {
		return trimEOL(b), 0, nil
	}
	if err != bufio.ErrBufferFull {
		p.partial = int64(len(b))
		return nil, 0, err
	}
	limit := p.max + 64
	p.line = append(p.line[:0], b...)
	total := int64(len(b))
	for {
		b, err = p.br.ReadSlice('\n')
		total += int64(len(b))
		if int64(len(p.line)) <= limit {
			p.line = append(p.line, b...)
		}
		if err == nil {
			break
		}
		if err != bufio.ErrBufferFull {
			p.partial = total
			return nil, 0, err
		}
	}
	if int64(len(p.line)) > limit {
		return p.line[:64], total - eolLen(b), nil
	}
	return trimEOL(p.line), 0, nil
}

// field processes one non-empty line. long > 0 means the line was too long
// to keep: only a data field counts it (as oversized data).
func (p *sseParser) field(line []byte, long int64) {
	if line[0] == ':' {
		return // comment
	}
	p.pending = true
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "data":
		size := int64(len(value))
		if long > 0 {
			size = long - int64(len(line)-len(value)) // the value's share of the long line
		}
		if !p.over && int64(len(p.data))+size > p.max {
			p.over = true
			p.overSize = int64(len(p.data))
			p.data = p.data[:0]
		}
		if p.over {
			p.overSize += size + 1
			return
		}
		p.data = append(p.data, value...)
		p.data = append(p.data, '\n')
	case "event":
		if long == 0 {
			p.eventType = append(p.eventType[:0], value...)
			p.hasType = true
		}
	case "id":
		if long == 0 && bytes.IndexByte(value, 0) < 0 {
			p.id = append(p.id[:0], value...)
			p.hasID = true
		}
	case "retry":
		if long == 0 {
			if ms, err := strconv.ParseUint(string(value), 10, 32); err == nil && len(value) > 0 && value[0] != '+' {
				p.retry = time.Duration(ms) * time.Millisecond
			}
		}
	}
}

// dispatch ends the current event at a blank line. ok is false when there
// is nothing to deliver.
func (p *sseParser) dispatch() (ev sseEvent, err error, ok bool) {
	defer func() {
		p.data = p.data[:0]
		p.over, p.overSize = false, 0
		p.hasType, p.hasID, p.pending = false, false, false
	}()
	var idStr string
	if p.hasID {
		if string(p.id) == p.lastID && p.idSeen {
			idStr = p.lastID
		} else {
			idStr = string(p.id)
		}
		p.lastID = idStr
		p.idSeen = true
	}
	if p.over {
		return sseEvent{}, &FrameTooLargeError{Size: p.overSize - 1, Limit: p.max}, true
	}
	if len(p.data) == 0 {
		return sseEvent{}, nil, false
	}
	attrs := p.attrs[:0]
	if p.hasType {
		if string(p.eventType) != p.typeStr {
			p.typeStr = string(p.eventType)
		}
		attrs = append(attrs, capfile.Attr{Key: "event", Value: p.typeStr})
	}
	if p.hasID {
		attrs = append(attrs, capfile.Attr{Key: "id", Value: idStr})
	}
	return sseEvent{data: p.data[:len(p.data)-1], attrs: attrs}, nil, true
}
