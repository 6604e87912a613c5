package transporttest

import (
	"bytes"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

// SSEProducer serves Frames as a Server-Sent Events stream on 127.0.0.1.
//
// A request with Last-Event-ID resumes after the frame with that id. When
// every frame has been sent the producer closes the stream (or, with Hold,
// keeps it open until the client leaves); a reconnection after the last
// frame is answered 204 No Content, which tells the client to stop.
type SSEProducer struct {
	// Frames are the events to send.
	Frames []Frame
	// Path is the stream path (default "/aaep/v1/events"). The origin "/"
	// answers 404.
	Path string
	// DropAt > 0: on the first connection, after DropAt frames, write half
	// of the next frame and drop the connection.
	DropAt int
	// Hold keeps the stream open after the last frame until the client
	// disconnects.
	Hold bool
	// Retry, when > 0, is sent as the stream's "retry:" field (milliseconds).
	Retry int
	// Subscribe serves POST /aaep/v1/subscriptions: it answers 201 with a
	// subscription.accepted and a Location of Path?subscription_id=sub_test.
	// With Reject it answers 403 with a subscription.rejected.
	Subscribe bool
	Reject    bool
	// ExpireOnDrop (with Subscribe and DropAt) forgets the subscription
	// when the connection is dropped: its stream then answers 404 until the
	// client subscribes again (and gets a new subscription id).
	ExpireOnDrop bool
	// RequireHeader, when set ("Name: value"), answers 401 to requests
	// without that header.
	RequireHeader [2]string

	srv      *httptest.Server
	mu       sync.Mutex
	requests []*http.Request
	bodies   [][]byte
	dropped  bool
	subs     int    // subscriptions granted
	current  string // the live subscription id ("" when expired)
}

// Start serves on a new loopback server closed at the end of the test and
// returns its URL (the origin, without path).
func (p *SSEProducer) Start(tb testing.TB) string {
	tb.Helper()
	p.srv = httptest.NewServer(p)
	tb.Cleanup(p.srv.Close)
	return p.srv.URL
}

// StartTLS serves over HTTPS with a self-signed certificate; it returns the
// origin and the path of a PEM file holding the certificate (for --cacert).
func (p *SSEProducer) StartTLS(tb testing.TB) (origin, caFile string) {
	tb.Helper()
	p.srv = httptest.NewTLSServer(p)
	tb.Cleanup(p.srv.Close)
	caFile = filepath.Join(tb.TempDir(), "ca.pem")
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.srv.Certificate().Raw})
	if err := os.WriteFile(caFile, cert, 0o600); err != nil {
		tb.Fatal(err)
	}
	return p.srv.URL, caFile
}

// Requests returns copies of the requests received so far (headers only).
func (p *SSEProducer) Requests() []*http.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*http.Request(nil), p.requests...)
}

// Bodies returns the bodies POSTed to the subscriptions endpoint.
func (p *SSEProducer) Bodies() [][]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([][]byte(nil), p.bodies...)
}

func (p *SSEProducer) path() string {
	if p.Path == "" {
		return "/aaep/v1/events"
	}
	return p.Path
}

// ServeHTTP implements the producer.
func (p *SSEProducer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.requests = append(p.requests, &http.Request{Method: r.Method, URL: r.URL, Header: r.Header.Clone()})
	p.mu.Unlock()
	if name := p.RequireHeader[0]; name != "" && r.Header.Get(name) != p.RequireHeader[1] {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	switch {
	case p.Subscribe && r.URL.Path == "/aaep/v1/subscriptions" && r.Method == http.MethodPost:
		p.subscribe(w, r)
	case r.URL.Path == p.path() && r.Method == http.MethodGet:
		p.stream(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (p *SSEProducer) subscribe(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	p.mu.Lock()
	p.bodies = append(p.bodies, body)
	p.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if p.Reject {
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, `{"type":"subscription.rejected","reason_code":"authorization_denied","reason_message":"not allowed"}`)
		return
	}
	p.mu.Lock()
	p.subs++
	id := "sub_test"
	if p.subs > 1 {
		id = fmt.Sprintf("sub_test%d", p.subs)
	}
	p.current = id
	p.mu.Unlock()
	w.Header().Set("Location", p.path()+"?subscription_id="+id)
	w.WriteHeader(http.StatusCreated)
	_, _ = fmt.Fprintf(w, `{"type":"subscription.accepted","subscription_id":%q,"aaep_version":"1.0.0","producer":{"agent_id":"retirement-planner"},"honored_capabilities":{}}`, id)
}

func (p *SSEProducer) stream(w http.ResponseWriter, r *http.Request) {
	if p.Subscribe {
		p.mu.Lock()
		current := p.current
		p.mu.Unlock()
		if current == "" || r.URL.Query().Get("subscription_id") != current {
			http.Error(w, "no such subscription", http.StatusNotFound)
			return
		}
	}
	start := 0
	if last := r.Header.Get("Last-Event-ID"); last != "" {
		for i := range p.Frames {
			if p.Frames[i].sseID() == last {
				start = i + 1
			}
		}
	}
	if start >= len(p.Frames) && len(p.Frames) > 0 {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	var buf []byte
	if p.Retry > 0 {
		buf = append(buf, "retry: "+strconv.Itoa(p.Retry)+"\n\n"...)
	}
	buf = append(buf, ": aaep test producer\n\n"...)
	p.mu.Lock()
	drop := p.DropAt > 0 && !p.dropped
	p.dropped = p.dropped || drop
	p.mu.Unlock()
	for i := start; i < len(p.Frames); i++ {
		buf = p.Frames[i].appendSSE(buf[:0])
		if drop && i-start == p.DropAt {
			if p.ExpireOnDrop {
				p.mu.Lock()
				p.current = ""
				p.mu.Unlock()
			}
			_, _ = w.Write(buf[:len(buf)/2])
			_ = rc.Flush()
			panic(http.ErrAbortHandler)
		}
		if _, err := w.Write(buf); err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
	}
	if p.Hold {
		<-r.Context().Done()
	}
}

// SSEBench streams n copies of events (cycled) as fast as the connection
// takes them, in large writes, then ends the stream; reconnections get 204.
// It is the producer of the throughput benchmarks.
type SSEBench struct {
	Events [][]byte
	N      int

	srv    *httptest.Server
	mu     sync.Mutex
	done   bool
	framed []byte
}

// chunk returns all Events framed as SSE, built once.
func (b *SSEBench) chunk() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.framed == nil {
		for i := range b.Events {
			b.framed = (&Frame{Data: b.Events[i]}).appendSSE(b.framed)
		}
	}
	return b.framed
}

// Start serves on a loopback server and returns the stream URL.
func (b *SSEBench) Start(tb testing.TB) string {
	tb.Helper()
	b.chunk()
	b.srv = httptest.NewServer(b)
	tb.Cleanup(b.srv.Close)
	return b.srv.URL + "/aaep/v1/events"
}

// ServeHTTP implements the producer.
func (b *SSEBench) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	done := b.done
	b.done = true
	b.mu.Unlock()
	if done {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := b.chunk()
	sent := 0
	for sent < b.N {
		part := chunk
		if left := b.N - sent; left < len(b.Events) {
			part = nil
			for i := 0; i < left; i++ {
				part = (&Frame{Data: b.Events[i]}).appendSSE(part)
			}
			sent += left
		} else {
			sent += len(b.Events)
		}
		if _, err := w.Write(part); err != nil {
			return
		}
	}
}

// SSEDiscard reads an SSE stream and discards it, counting events: the
// ceiling a recorder is compared with.
func SSEDiscard(url string) (events int, err error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("status %s", resp.Status)
	}
	buf := make([]byte, 64<<10)
	prevNL := false
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			events += bytes.Count(buf[:n], []byte("\n\n"))
			if prevNL && buf[0] == '\n' {
				events++
			}
			prevNL = buf[n-1] == '\n'
		}
		if err == io.EOF {
			return events, nil
		}
		if err != nil {
			return events, err
		}
	}
}
