package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/objstore"
	"github.com/aaep-tools/aaepkit/objstore/s3test"
)

// countingTransport counts the HTTP requests a client makes and the
// response body bytes it reads.
type countingTransport struct {
	next     http.RoundTripper
	requests atomic.Int64
	bytes    atomic.Int64
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.requests.Add(1)
	resp, err := c.next.RoundTrip(r)
	if err == nil && resp.Body != nil {
		resp.Body = &countingBody{ReadCloser: resp.Body, n: &c.bytes}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// RemoteSeek measures opening the capture at path as an object on a local
// S3 server (package s3test, on 127.0.0.1) and reading the record at time
// mid: the HTTP requests made, the response bytes read, and the time taken.
// Results: <name>/remote with requests, bytes and ms.
func RemoteSeek(ctx context.Context, e *Env, name, path string, mid time.Duration) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	srv, err := s3test.New("bench")
	if err != nil {
		return err
	}
	defer srv.Close()
	if err := srv.Put("bench", "seek.aaep", data); err != nil {
		return err
	}
	size := int64(len(data))
	data = nil
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
	for run := -1; run < e.Runs; run++ {
		ct := &countingTransport{next: http.DefaultTransport.(*http.Transport).Clone()}
		st, err := objstore.Open(ctx, objstore.URL{Scheme: "s3", Bucket: "bench"}, objstore.Options{Transport: ct})
		if err != nil {
			return err
		}
		start := time.Now()
		r, err := objstore.OpenRemote(ctx, st, "seek.aaep")
		if err != nil {
			return err
		}
		cr, err := capfile.NewReaderAt(r, r.Size())
		if err != nil {
			return err
		}
		if err := cr.SeekTime(int64(mid)); err != nil {
			return err
		}
		rec, err := cr.Next()
		if err != nil || rec.Time < int64(mid) {
			return fmt.Errorf("remote seek to %v: %v", mid, err)
		}
		d := time.Since(start)
		cr.Close()
		if run < 0 {
			continue // warm-up
		}
		e.logf("remote seek run %d: %d requests, %d bytes of a %d-byte object, %v", run+1, ct.requests.Load(), ct.bytes.Load(), size, d)
		e.Emit(Result{Name: name + "/remote", Metrics: []Metric{
			{float64(ct.requests.Load()), "requests"},
			{float64(ct.bytes.Load()) / (1 << 10), "KiB-read"},
			{ms(d), "open+middle-ms"},
		}})
	}
	return nil
}
