package objstore_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/sample"
	"github.com/aaep-tools/aaepkit/objstore"
	"github.com/aaep-tools/aaepkit/objstore/s3test"
)

func openStore(t *testing.T, srv *s3test.Server, bucket string) objstore.Store {
	t.Helper()
	srv.SetEnv(t)
	st, err := objstore.Open(context.Background(), objstore.URL{Scheme: "s3", Bucket: bucket}, objstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestParse(t *testing.T) {
	tests := []struct {
		in     string
		want   objstore.URL
		prefix bool
		err    string
	}{
		{in: "s3://bkt/k.aaep", want: objstore.URL{Scheme: "s3", Bucket: "bkt", Key: "k.aaep"}},
		{in: "S3://bkt/dir/", want: objstore.URL{Scheme: "s3", Bucket: "bkt", Key: "dir/"}, prefix: true},
		{in: "s3://bkt", want: objstore.URL{Scheme: "s3", Bucket: "bkt"}, prefix: true},
		{in: "s3:///k", err: "no bucket"},
		{in: "s3://key:secret@host/b/k", err: "[REDACTED]@"},
		{in: "gs://b/k", err: "unknown storage scheme"},
		{in: "s3://bkt/a//c", err: "empty path segment"},
		// Bucket names minio-go would refuse on every request (issue 34:
		// recording went on after a warning).
		{in: "s3://b/k", err: `"b" is not a valid bucket name`},
		{in: "s3://Bad_Bucket!/k", err: `"Bad_Bucket!" is not a valid bucket name`},
		{in: "s3://-bkt/k", err: "is not a valid bucket name"},
	}
	for _, tt := range tests {
		got, err := objstore.Parse(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Parse(%q) error %v, want one containing %q", tt.in, err, tt.err)
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Errorf("Parse(%q) error shows the secret: %v", tt.in, err)
			}
			continue
		}
		if err != nil || got != tt.want || got.IsPrefix() != tt.prefix {
			t.Errorf("Parse(%q) = %+v (prefix %v), %v; want %+v (prefix %v)", tt.in, got, got.IsPrefix(), err, tt.want, tt.prefix)
		}
	}
	if !objstore.IsURL("s3://b/k") || objstore.IsURL("/tmp/s3:/x") || objstore.IsURL("http://h/x") {
		t.Error("IsURL misjudges")
	}
}

func TestPutReadListDelete(t *testing.T) {
	srv := s3test.Start(t, "caps")
	st := openStore(t, srv, "caps")
	ctx := context.Background()
	data := make([]byte, 300_000)
	fill(data, 1)
	if err := st.Put(ctx, "run/b.aaep", bytes.NewReader(data), int64(len(data))); err != nil {
		t.Fatal(err)
	}
	if err := st.Put(ctx, "run/a.aaep", bytes.NewReader(data[:10]), 10); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1000)
	n, size, err := st.ReadRange(ctx, "run/b.aaep", 299_500, buf)
	if err != nil || n != 500 || size != int64(len(data)) || !bytes.Equal(buf[:n], data[299_500:]) {
		t.Fatalf("ReadRange at the end: n %d size %d err %v", n, size, err)
	}
	n, size, err = st.ReadRange(ctx, "run/b.aaep", int64(len(data)), buf)
	if err != nil || n != 0 || size != int64(len(data)) {
		t.Fatalf("ReadRange past the end: n %d size %d err %v", n, size, err)
	}
	list, err := st.List(ctx, "run/")
	if err != nil || len(list) != 2 || list[0].Key != "run/a.aaep" || list[1].Size != int64(len(data)) {
		t.Fatalf("List = %+v, %v", list, err)
	}
	if _, _, err := st.ReadRange(ctx, "run/none", 0, buf); !errors.Is(err, objstore.ErrNotFound) || !strings.Contains(err.Error(), "s3://caps/run/none") {
		t.Fatalf("missing object: %v, want ErrNotFound naming it", err)
	}
	if err := st.Delete(ctx, "run/a.aaep"); err != nil {
		t.Fatal(err)
	}
	if keys, _ := srv.Objects("caps", ""); len(keys) != 1 {
		t.Fatalf("after Delete: %v", keys)
	}
}

// An object larger than the part size goes up in parts, and reads back whole.
func TestMultipartUpload(t *testing.T) {
	srv := s3test.Start(t, "caps")
	st := openStore(t, srv, "caps")
	data := make([]byte, 11<<20+123)
	fill(data, 3)
	if err := st.Put(context.Background(), "big.aaep", bytes.NewReader(data), int64(len(data))); err != nil {
		t.Fatal(err)
	}
	got, err := srv.Get("caps", "big.aaep")
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("multipart object: %d bytes, %v; want %d bytes equal", len(got), err, len(data))
	}
	parts := 0
	for _, r := range srv.Requests() {
		if r.Method == "PUT" && strings.Contains(r.Path, "partNumber=") {
			parts++
		}
	}
	if parts != 3 {
		t.Errorf("%d part uploads, want 3 (5 MiB parts)", parts)
	}
}

// Wrong keys: a clear error that matches ErrAccess, never showing the
// secret, and nothing stored.
func TestWrongCredentials(t *testing.T) {
	srv := s3test.Start(t, "caps")
	for _, tc := range []struct{ id, secret, code string }{
		{s3test.AccessKey, "not-the-secret-key-00000000000000000000000", "SignatureDoesNotMatch"},
		{"AKIAWRONGWRONGWRONG0", s3test.SecretKey, "InvalidAccessKeyId"},
	} {
		srv.SetEnv(t)
		t.Setenv("AWS_ACCESS_KEY_ID", tc.id)
		t.Setenv("AWS_SECRET_ACCESS_KEY", tc.secret)
		st, err := objstore.Open(context.Background(), objstore.URL{Scheme: "s3", Bucket: "caps"}, objstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		err = st.Put(context.Background(), "x.aaep", strings.NewReader("data"), 4)
		if !errors.Is(err, objstore.ErrAccess) || !strings.Contains(err.Error(), tc.code) {
			t.Errorf("Put with wrong keys: %v, want ErrAccess with %s", err, tc.code)
		}
		if err != nil && strings.Contains(err.Error(), tc.secret) {
			t.Errorf("error shows the secret key: %v", err)
		}
		if keys, _ := srv.Objects("caps", ""); len(keys) != 0 {
			t.Errorf("objects stored with wrong keys: %v", keys)
		}
	}
}

// Remote reads an object through few ranged requests and serves reads at
// any offset.
func TestRemoteReadAt(t *testing.T) {
	srv := s3test.Start(t, "caps")
	st := openStore(t, srv, "caps")
	ctx := context.Background()
	data := make([]byte, 5<<20)
	fill(data, 5)
	if err := srv.Put("caps", "obj", data); err != nil {
		t.Fatal(err)
	}
	r, err := objstore.OpenRemote(ctx, st, "obj")
	if err != nil {
		t.Fatal(err)
	}
	if r.Size() != int64(len(data)) || r.Stats().Requests != 1 {
		t.Fatalf("size %d after %d requests", r.Size(), r.Stats().Requests)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for i := 0; i < 200; i++ {
		off := rng.Int64N(int64(len(data)))
		n := rng.IntN(100_000)
		buf := make([]byte, n)
		got, err := r.ReadAt(buf, off)
		want := min(int64(n), int64(len(data))-off)
		if int64(got) != want || (err != nil && (err != io.EOF || int64(n) == want)) || !bytes.Equal(buf[:got], data[off:off+want]) {
			t.Fatalf("ReadAt(%d bytes at %d) = %d, %v; want %d bytes", n, off, got, err, want)
		}
	}
	// A scan from the start reads ahead more and more.
	before := r.Stats().Requests
	if _, err := io.Copy(io.Discard, io.NewSectionReader(r, 0, r.Size())); err != nil {
		t.Fatal(err)
	}
	if n := r.Stats().Requests - before; n > 8 {
		t.Errorf("scanning 5 MiB took %d requests, want at most 8", n)
	}
}

func fill(b []byte, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
}

// Opening a remote capture and reading the record at the middle of its
// time span takes at most three requests: the head (header and size), the
// tail (trailer and index), and the frame holding the record.
func TestRemoteCaptureSeek(t *testing.T) {
	srv := s3test.Start(t, "caps")
	st := openStore(t, srv, "caps")
	var buf bytes.Buffer
	w, err := capfile.NewWriter(&buf, capfile.Header{Tool: "objstore-test"}, &capfile.WriterOptions{FlushInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	events := sample.Events(2048, 3)
	const n = 60_000
	for i := 0; i < n; i++ {
		if err := w.Append(&capfile.Record{Kind: capfile.KindReceived, Time: int64(i) * int64(time.Millisecond), Payload: events[i%len(events)]}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Put("caps", "big.aaep", buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r, err := objstore.OpenRemote(ctx, st, "big.aaep")
	if err != nil {
		t.Fatal(err)
	}
	cr, err := capfile.NewReaderAt(r, r.Size())
	if err != nil {
		t.Fatal(err)
	}
	defer cr.Close()
	mid := int64(n/2) * int64(time.Millisecond)
	if err := cr.SeekTime(mid); err != nil {
		t.Fatal(err)
	}
	rec, err := cr.Next()
	if err != nil || rec.Time != mid || !bytes.Equal(rec.Payload, events[(n/2)%len(events)]) {
		t.Fatalf("record at the middle: %v, %v", rec, err)
	}
	if s := r.Stats(); s.Requests > 3 || s.Bytes > 1<<20 {
		t.Errorf("open and seek to the middle of a %d-byte capture took %d requests and %d bytes; want at most 3 and 1 MiB", buf.Len(), s.Requests, s.Bytes)
	}
}

// A Remote opened with the size an earlier open gave makes no request
// until it is read; the tail, once fetched, stays while a scan passes
// through the other blocks, so that the scan stops before it; with
// SetReadAhead, a scan stops where asked and the tail is not fetched as a
// whole. A size that changed fails the read.
func TestRemoteOpenSize(t *testing.T) {
	srv := s3test.Start(t, "caps")
	st := openStore(t, srv, "caps")
	ctx := context.Background()
	data := make([]byte, 6<<20)
	fill(data, 9)
	if err := srv.Put("caps", "obj", data); err != nil {
		t.Fatal(err)
	}
	size := int64(len(data))
	r := objstore.OpenRemoteSize(ctx, st, "obj", size)
	if s := r.Stats(); s.Requests != 0 || r.Size() != size {
		t.Fatalf("open with the size: %+v, size %d", s, r.Size())
	}
	// The trailer's bytes: the whole tail, then a scan from the start.
	var last [40]byte
	if _, err := r.ReadAt(last[:], size-40); err != nil || !bytes.Equal(last[:], data[size-40:]) {
		t.Fatalf("read at the end: %v", err)
	}
	got, err := io.ReadAll(io.NewSectionReader(r, 0, size))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("scan: %d bytes, %v", len(got), err)
	}
	if s := r.Stats(); s.Bytes != size {
		t.Errorf("read the end, then scanned: %+v, want each of the %d bytes fetched once", s, size)
	}

	// Reads ahead stop at the end set; past it only what is asked.
	end := size - 100_000
	r = objstore.OpenRemoteSize(ctx, st, "obj", size)
	r.SetReadAhead(end)
	if got, err = io.ReadAll(io.NewSectionReader(r, 0, end)); err != nil || !bytes.Equal(got, data[:end]) {
		t.Fatalf("scan to %d: %d bytes, %v", end, len(got), err)
	}
	if s := r.Stats(); s.Bytes != end {
		t.Errorf("scan to %d: %+v, want only those bytes", end, s)
	}
	if _, err := r.ReadAt(last[:], size-40); err != nil || !bytes.Equal(last[:], data[size-40:]) {
		t.Fatalf("read at the end: %v", err)
	}
	if s := r.Stats(); s.Bytes != end+40 {
		t.Errorf("then 40 bytes at the end: %+v, want %d bytes in all", s, end+40)
	}

	// The object replaced by a shorter one while being read.
	r = objstore.OpenRemoteSize(ctx, st, "obj", size)
	if err := srv.Put("caps", "obj", data[:size/2]); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadAt(last[:], 0); err == nil || !strings.Contains(err.Error(), "changed") {
		t.Errorf("read of a changed object: %v", err)
	}
}
