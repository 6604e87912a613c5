// Package s3test runs a real S3 server on 127.0.0.1 for tests and
// measurements: github.com/johannesboyne/gofakes3 (an in-memory S3
// implementation) served over HTTP, behind a check of every request's AWS
// Signature Version 4 against the server's one key pair, so that wrong
// credentials are refused as AWS refuses them. The server can be stopped and
// started again on the same address with its objects kept, to test clients
// through an outage, and it logs every request it answered. It honours
// If-None-Match: * on writes, as AWS S3 does.
package s3test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// VirtualHostBase is the domain under which a Server also answers
// virtual-hosted requests: BUCKET.s3.test:PORT (a client dials the server's
// address for any name under it; see objstore's tests).
const VirtualHostBase = "s3.test"

// Credentials of every Server.
const (
	AccessKey = "AKIAAAEPTEST00000001"
	SecretKey = "aaep-test-secret-key-0123456789abcdef0000"
	Region    = "us-east-1"
)

// Request is one request the server answered.
type Request struct {
	Method string
	Path   string // path and query
	// Range is the request's Range header ("bytes=0-65535"), "" for a
	// request without one.
	Range  string
	Status int
	// Bytes is the size of the answer's body as written.
	Bytes int64
}

// Server is a running S3 server.
type Server struct {
	// Endpoint is its URL, http://127.0.0.1:PORT.
	Endpoint string

	backend *s3mem.Backend
	handler http.Handler
	addr    string

	mu       sync.Mutex
	srv      *http.Server
	ln       net.Listener
	log      []Request
	down     bool
	inFlight int        // requests being answered, not logged yet
	idle     *sync.Cond // on mu: signalled when inFlight drops to 0
}

// Start starts a server holding the given buckets (created empty) and stops
// it when the test ends.
func Start(tb testing.TB, buckets ...string) *Server {
	tb.Helper()
	s, err := New(buckets...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Close)
	return s
}

// New starts a server holding the given buckets; Close stops it.
func New(buckets ...string) (*Server, error) {
	s := &Server{backend: s3mem.New()}
	s.idle = sync.NewCond(&s.mu)
	for _, b := range buckets {
		if err := s.backend.CreateBucket(b); err != nil {
			return nil, fmt.Errorf("s3test: create bucket %s: %w", b, err)
		}
	}
	fake := gofakes3.New(s.backend, gofakes3.WithLogger(gofakes3.DiscardLog()))
	s.handler = fake.Server()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("s3test: listen: %w", err)
	}
	s.addr = ln.Addr().String()
	s.Endpoint = "http://" + s.addr
	s.serve(ln)
	return s, nil
}

func (s *Server) serve(ln net.Listener) {
	srv := &http.Server{Handler: http.HandlerFunc(s.serveHTTP), ReadHeaderTimeout: 10 * time.Second}
	s.srv, s.ln, s.down = srv, ln, false
	go srv.Serve(ln)
}

// Stop makes the server unreachable (connections are refused) until
// Restart; its objects are kept.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return
	}
	s.down = true
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
	_ = s.srv.Close()
}

// Restart serves again on the same address after Stop.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.down {
		return nil
	}
	var ln net.Listener
	var err error
	for i := 0; i < 50; i++ { // the port may linger for a moment
		if ln, err = net.Listen("tcp", s.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("s3test: listen again on %s: %w", s.addr, err)
	}
	s.serve(ln)
	return nil
}

// Close stops the server for good.
func (s *Server) Close() { s.Stop() }

// Requests returns the requests answered so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.log...)
}

// Settled returns the requests answered so far once none is being
// answered. A client has its answer before the server has logged it; a
// test that counts what a command asked for calls Settled after the
// command, so that its last requests are in the log.
func (s *Server) Settled() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.inFlight > 0 {
		s.idle.Wait()
	}
	return append([]Request(nil), s.log...)
}

// Env returns the environment a client process needs to reach the server
// with valid credentials: keys, region and AWS_ENDPOINT_URL_S3.
func (s *Server) Env() []string {
	return []string{
		"AWS_ACCESS_KEY_ID=" + AccessKey,
		"AWS_SECRET_ACCESS_KEY=" + SecretKey,
		"AWS_REGION=" + Region,
		"AWS_ENDPOINT_URL_S3=" + s.Endpoint,
		"AWS_SESSION_TOKEN=",
		"AWS_PROFILE=",
		"AWS_SHARED_CREDENTIALS_FILE=" + os.DevNull,
	}
}

// SetEnv sets the environment of this process as Env says, for the test.
func (s *Server) SetEnv(t *testing.T) {
	for _, kv := range s.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}

// Objects lists the keys in bucket under prefix, in key order.
func (s *Server) Objects(bucket, prefix string) ([]string, error) {
	list, err := s.backend.ListBucket(bucket, &gofakes3.Prefix{Prefix: prefix, HasPrefix: true}, gofakes3.ListBucketPage{})
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, c := range list.Contents {
		keys = append(keys, c.Key)
	}
	sort.Strings(keys)
	return keys, nil
}

// Get returns the content of an object.
func (s *Server) Get(bucket, key string) ([]byte, error) {
	obj, err := s.backend.GetObject(bucket, key, nil)
	if err != nil {
		return nil, err
	}
	defer obj.Contents.Close()
	return io.ReadAll(obj.Contents)
}

// Put stores an object directly (not through HTTP).
func (s *Server) Put(bucket, key string, data []byte) error {
	meta := map[string]string{"Last-Modified": time.Now().UTC().Format(http.TimeFormat)}
	_, err := s.backend.PutObject(bucket, key, meta, bytes.NewReader(data), int64(len(data)), nil)
	return err
}

type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(p)
	w.bytes += int64(n)
	return n, err
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	sw := &statusWriter{ResponseWriter: w}
	s.mu.Lock()
	s.inFlight++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.log = append(s.log, Request{Method: r.Method, Path: r.RequestURI, Range: r.Header.Get("Range"), Status: sw.status, Bytes: sw.bytes})
		if s.inFlight--; s.inFlight == 0 {
			s.idle.Broadcast()
		}
		s.mu.Unlock()
	}()
	if code, msg := verify(r, AccessKey, SecretKey); code != "" {
		s3Error(sw, http.StatusForbidden, code, msg, r.URL.Path)
		return
	}
	if host, _, _ := strings.Cut(r.Host, ":"); strings.HasSuffix(host, "."+VirtualHostBase) {
		// Virtual-hosted (signature checked): route as path-style.
		r.URL.Path = "/" + strings.TrimSuffix(host, "."+VirtualHostBase) + r.URL.Path
		r.URL.RawPath = ""
	}
	if r.Header.Get("If-None-Match") == "*" && (r.Method == http.MethodPut && r.URL.Query().Get("uploadId") == "" ||
		r.Method == http.MethodPost && r.URL.Query().Has("uploadId")) {
		// A conditional write, as AWS S3 answers it (gofakes3 ignores
		// the condition): no object of that name may exist.
		bucket, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		if _, err := s.backend.HeadObject(bucket, key); err == nil {
			s3Error(sw, http.StatusPreconditionFailed, "PreconditionFailed", "At least one of the pre-conditions you specified did not hold", r.URL.Path)
			return
		}
	}
	s.handler.ServeHTTP(sw, r)
}

// errUnsigned is the code of a request without a signature.
var errUnsigned = errors.New("AccessDenied")
