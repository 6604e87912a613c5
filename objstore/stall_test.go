package objstore_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/objstore"
	"github.com/aaep-tools/aaepkit/objstore/s3test"
)

// openVia opens bucket through a fault-injecting proxy with a short stall
// timeout and no client retries.
func openVia(t *testing.T, srv *s3test.Server, p *s3test.Proxy, bucket string) objstore.Store {
	t.Helper()
	srv.SetEnv(t)
	st, err := objstore.Open(context.Background(), objstore.URL{Scheme: "s3", Bucket: bucket},
		objstore.Options{Endpoint: p.Endpoint, StallTimeout: time.Second, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// A server that accepts connections and never answers: every call is
// abandoned with ErrStalled (not by the test's own deadline), and works
// again once the server answers.
func TestStallBlackHole(t *testing.T) {
	srv := s3test.Start(t, "caps")
	p := s3test.StartProxy(t, srv)
	st := openVia(t, srv, p, "caps")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := st.Put(ctx, "a.aaep", bytes.NewReader([]byte("before")), 6); err != nil {
		t.Fatal(err)
	}
	p.SetFault(s3test.BlackHole)
	data := bytes.Repeat([]byte("x"), 100_000)
	calls := map[string]func() error{
		"put":  func() error { return st.Put(ctx, "b.aaep", bytes.NewReader(data), int64(len(data))) },
		"read": func() error { _, _, err := st.ReadRange(ctx, "a.aaep", 0, make([]byte, 4)); return err },
		"stat": func() error { _, err := st.Stat(ctx, "a.aaep"); return err },
		"list": func() error { _, err := st.List(ctx, ""); return err },
	}
	for name, call := range calls {
		err := call()
		if !errors.Is(err, objstore.ErrStalled) {
			t.Errorf("%s under a black hole: %v, want ErrStalled", name, err)
		}
		if err != nil && strings.Count(err.Error(), "no progress for") != 1 {
			t.Errorf("%s under a black hole: %q says the stall other than once", name, err)
		}
	}
	if ctx.Err() != nil {
		t.Fatal("the test's deadline ended the calls, not the stall timeout")
	}
	if p.Faulted(s3test.BlackHole) < len(calls) {
		t.Errorf("%d requests black-holed, want %d at least", p.Faulted(s3test.BlackHole), len(calls))
	}
	p.SetFault(s3test.Pass)
	if _, err := st.Stat(ctx, "a.aaep"); err != nil {
		t.Errorf("after the server came back: %v", err)
	}
	if keys, _ := srv.Objects("caps", ""); len(keys) != 1 {
		t.Errorf("objects %v, want a.aaep only", keys)
	}
}

// A transfer slower than the stall timeout but always moving is not cut
// off, either way.
func TestStallSlowTransferGoesOn(t *testing.T) {
	srv := s3test.Start(t, "caps")
	p := s3test.StartProxy(t, srv)
	st := openVia(t, srv, p, "caps")
	p.SetFault(s3test.Slow)
	// At SlowRate, 100 kB takes about 1.5 s each way: longer than the
	// one-second stall timeout.
	data := make([]byte, 100_000)
	fill(data, 7)
	ctx := context.Background()
	if err := st.Put(ctx, "slow.aaep", bytes.NewReader(data), int64(len(data))); err != nil {
		t.Fatalf("slow upload: %v", err)
	}
	buf := make([]byte, len(data))
	n, _, err := st.ReadRange(ctx, "slow.aaep", 0, buf)
	if err != nil || n != len(data) || !bytes.Equal(buf, data) {
		t.Fatalf("slow read: %d bytes, %v", n, err)
	}
	if p.Faulted(s3test.Slow) < 2 {
		t.Errorf("%d requests slowed, want 2", p.Faulted(s3test.Slow))
	}
}

// An upload that takes longer than the allowance after its last byte (2×
// the stall timeout) goes on as long as it moves: the connection holds
// little of it unsent (TCP_NOTSENT_LOWAT), so the stall timer sees its
// progress until the last bytes. (Without the limit the kernel took the
// whole body at once and the timer gave the rest 2 s, which a slow link or
// a loaded machine overran: TestStallSlowTransferGoesOn's flake.)
func TestStallSlowUploadLongerThanAllowance(t *testing.T) {
	srv := s3test.Start(t, "caps")
	p := s3test.StartProxy(t, srv)
	st := openVia(t, srv, p, "caps")
	p.SetFault(s3test.Slow)
	// About 3.8 s at SlowRate, with a one-second stall timeout.
	data := make([]byte, 250_000)
	fill(data, 9)
	if err := st.Put(context.Background(), "slower.aaep", bytes.NewReader(data), int64(len(data))); err != nil {
		t.Fatalf("slow upload: %v", err)
	}
	p.SetFault(s3test.Pass)
	buf := make([]byte, len(data))
	if n, _, err := st.ReadRange(context.Background(), "slower.aaep", 0, buf); err != nil || n != len(data) || !bytes.Equal(buf, data) {
		t.Fatalf("read back: %d bytes, %v", n, err)
	}
}

// Ctrl-C: the caller's context cancels a read the server never answers,
// well before the stall timeout.
func TestCallerCancelsHungRead(t *testing.T) {
	srv := s3test.Start(t, "caps")
	p := s3test.StartProxy(t, srv)
	srv.SetEnv(t)
	st, err := objstore.Open(context.Background(), objstore.URL{Scheme: "s3", Bucket: "caps"},
		objstore.Options{Endpoint: p.Endpoint, StallTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	p.SetFault(s3test.BlackHole)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	_, err = objstore.OpenRemote(ctx, st, "a.aaep")
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled read: %v, want context.Canceled", err)
	}
}

// Virtual-hosted addressing on a custom endpoint: the bucket goes in the
// host name (caps.s3.test), not in the path.
func TestVirtualHostOnCustomEndpoint(t *testing.T) {
	srv := s3test.Start(t, "caps")
	srv.SetEnv(t)
	addr := strings.TrimPrefix(srv.Endpoint, "http://")
	_, port, _ := net.SplitHostPort(addr)
	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr) // every name under s3.test is the server
	}}
	st, err := objstore.Open(context.Background(), objstore.URL{Scheme: "s3", Bucket: "caps"},
		objstore.Options{Endpoint: "http://" + s3test.VirtualHostBase + ":" + port, VirtualHost: true, Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := st.PutNew(ctx, "v/a.aaep", bytes.NewReader([]byte("hello")), 5); err != nil {
		t.Fatal(err)
	}
	if err := st.PutNew(ctx, "v/a.aaep", bytes.NewReader([]byte("other")), 5); !errors.Is(err, objstore.ErrExists) {
		t.Errorf("second PutNew: %v, want ErrExists", err)
	}
	buf := make([]byte, 5)
	if n, _, err := st.ReadRange(ctx, "v/a.aaep", 0, buf); err != nil || string(buf[:n]) != "hello" {
		t.Fatalf("read back %q, %v", buf[:n], err)
	}
	for _, r := range srv.Requests() {
		if strings.HasPrefix(r.Path, "/caps/") {
			t.Errorf("a path-style request: %s %s", r.Method, r.Path)
		}
	}
}
