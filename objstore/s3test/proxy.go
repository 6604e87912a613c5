package s3test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"syscall"
	"time"
)

// Fault is what a Proxy does to the requests it receives.
type Fault int

const (
	// Pass forwards every request unchanged.
	Pass Fault = iota
	// BlackHole accepts the connection, reads the request head and never
	// answers: a hung server or load balancer.
	BlackHole
	// Slow forwards requests and answers at SlowRate bytes a second each
	// way.
	Slow
	// Reset closes the connection with a TCP reset after reading the
	// request head.
	Reset
	// Error500 answers every request 500 InternalError.
	Error500
	// ForbidWrites answers every PUT, POST and DELETE 403 AccessDenied and
	// forwards reads: a key that may read but no longer write.
	ForbidWrites
	// ForbidReads answers every GET and HEAD 403 AccessDenied and
	// forwards writes: a key that may only PutObject.
	ForbidReads
)

func (f Fault) String() string {
	return [...]string{"pass", "black-hole", "slow", "reset", "500", "403-on-writes", "403-on-reads"}[f]
}

// SlowRate is the bandwidth of the Slow fault, each way, per request.
const SlowRate = 64 << 10

// proxyRcvBuf is the receive buffer of the proxy's connections (the kernel
// may double it).
const proxyRcvBuf = 8 << 10

// Proxy stands between a client and a Server on its own 127.0.0.1 port
// and injects one Fault at a time. Requests keep their Host header, so
// their signatures stay valid.
type Proxy struct {
	// Endpoint is the proxy's URL, http://127.0.0.1:PORT.
	Endpoint string

	srv   *http.Server
	rp    *httputil.ReverseProxy
	mu    sync.Mutex
	fault Fault
	held  []net.Conn // black-holed connections, closed at Close
	count map[Fault]int
}

// StartProxy starts a proxy in front of s, passing requests until SetFault,
// and stops it when the test ends.
func StartProxy(tb interface {
	Helper()
	Fatal(...any)
	Cleanup(func())
}, s *Server) *Proxy {
	tb.Helper()
	target, _ := url.Parse(s.Endpoint)
	p := &Proxy{count: map[Fault]int{}}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = r.In.Host // the signature covers it
		},
		ErrorLog: log.New(io.Discard, "", 0),
	}
	// A small receive buffer, fixed before any connection is accepted:
	// what Slow lets through slowly then waits at the client, as it does
	// behind a slow link, instead of in this side's buffer, from where a
	// slow reader takes it unseen by the client.
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var err error
		if cerr := c.Control(func(fd uintptr) { err = setRcvBuf(fd, proxyRcvBuf) }); cerr != nil {
			return cerr
		}
		return err
	}}
	ln, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p.Endpoint = "http://" + ln.Addr().String()
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go p.srv.Serve(ln)
	tb.Cleanup(p.Close)
	return p
}

// SetFault makes the proxy inject f into the requests that follow.
func (p *Proxy) SetFault(f Fault) {
	p.mu.Lock()
	p.fault = f
	p.mu.Unlock()
}

// Faulted returns how many requests met fault f.
func (p *Proxy) Faulted(f Fault) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.count[f]
}

// Close stops the proxy and drops the connections it holds.
func (p *Proxy) Close() {
	p.mu.Lock()
	held := p.held
	p.held = nil
	p.mu.Unlock()
	for _, c := range held {
		c.Close()
	}
	_ = p.srv.Close()
}

// Env returns Server.Env with the proxy as the endpoint.
func (p *Proxy) Env(s *Server) []string {
	env := s.Env()
	for i, kv := range env {
		if len(kv) > len("AWS_ENDPOINT_URL_S3=") && kv[:len("AWS_ENDPOINT_URL_S3=")] == "AWS_ENDPOINT_URL_S3=" {
			env[i] = "AWS_ENDPOINT_URL_S3=" + p.Endpoint
		}
	}
	return env
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	f := p.fault
	p.count[f]++
	p.mu.Unlock()
	switch f {
	case BlackHole, Reset:
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		if f == Reset {
			if tc, ok := conn.(*net.TCPConn); ok {
				tc.SetLinger(0)
			}
			conn.Close()
			return
		}
		p.mu.Lock()
		p.held = append(p.held, conn)
		p.mu.Unlock()
	case Error500:
		s3Error(w, http.StatusInternalServerError, "InternalError", "injected by the test proxy", r.URL.Path)
	case ForbidWrites:
		if r.Method == http.MethodPut || r.Method == http.MethodPost || r.Method == http.MethodDelete {
			s3Error(w, http.StatusForbidden, "AccessDenied", "Access Denied", r.URL.Path)
			return
		}
		p.rp.ServeHTTP(w, r)
	case ForbidReads:
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			if r.Method == http.MethodHead {
				w.WriteHeader(http.StatusForbidden)
				return
			}
			s3Error(w, http.StatusForbidden, "AccessDenied", "Access Denied", r.URL.Path)
			return
		}
		p.rp.ServeHTTP(w, r)
	case Slow:
		r.Body = &slowBody{r: r.Body}
		p.rp.ServeHTTP(&slowWriter{ResponseWriter: w}, r)
	default:
		p.rp.ServeHTTP(w, r)
	}
}

// s3Error answers an S3 error document.
func s3Error(w http.ResponseWriter, status int, code, msg, resource string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>%s</Message><Resource>%s</Resource></Error>`, code, msg, resource)
}

// slowChunk is how many bytes move at a time at SlowRate.
const slowChunk = 4 << 10

type slowBody struct{ r io.ReadCloser }

func (b *slowBody) Read(p []byte) (int, error) {
	if len(p) > slowChunk {
		p = p[:slowChunk]
	}
	n, err := b.r.Read(p)
	time.Sleep(time.Duration(n) * time.Second / SlowRate)
	return n, err
}

func (b *slowBody) Close() error { return b.r.Close() }

type slowWriter struct{ http.ResponseWriter }

func (w *slowWriter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		n := min(len(p), slowChunk)
		m, err := w.ResponseWriter.Write(p[:n])
		written += m
		if err != nil {
			return written, err
		}
		if f, ok := w.ResponseWriter.(http.Flusher); ok {
			f.Flush()
		}
		time.Sleep(time.Duration(m) * time.Second / SlowRate)
		p = p[n:]
	}
	return written, nil
}
