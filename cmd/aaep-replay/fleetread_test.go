package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/objstore/s3test"
)

// incompressibleCapture writes a clean capture of 6,000 records with
// payloads that do not compress (a few MB on disk: its head, its tail with
// the index and its middle are different ranges of an object) to path and
// returns its bytes. The capture is made once per test binary (the first
// caller writes it) and copied for the others: the same bytes each time,
// as its records are.
func incompressibleCapture(t *testing.T, path string) []byte {
	t.Helper()
	written := false
	incompressible.once.Do(func() { incompressible.data, written = incompressibleRecords(t, path, 6000), true })
	data := bytes.Clone(incompressible.data)
	if len(data) < 2<<20 {
		t.Fatalf("the capture is %d bytes, want a few MB", len(data))
	}
	if !written {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return data
}

// incompressible is incompressibleCapture's capture, once written.
var incompressible struct {
	once sync.Once
	data []byte
}

// incompressibleRecords writes a clean capture of n records of about 1 KB
// each that do not compress, and returns its bytes.
func incompressibleRecords(t *testing.T, path string, n int) []byte {
	t.Helper()
	w, err := capfile.Create(path, capfile.Header{
		Start:   time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC),
		Tool:    "infoindex-test/1",
		Origins: []capfile.Origin{{ID: 0, Transport: "websocket", Endpoint: "ws://127.0.0.1:8765/aaep/v1/ws"}},
	}, &capfile.WriterOptions{FlushInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	var x uint64 = 88172645463325252
	for i := 0; i < n; i++ {
		var b strings.Builder
		fmt.Fprintf(&b, `{"type":"agent.progress.updated","session":"s%d","pad":"`, i%7)
		for j := 0; j < 64; j++ {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			fmt.Fprintf(&b, "%016x", x)
		}
		b.WriteString(`"}`)
		r := capfile.Record{Kind: capfile.KindReceived, Time: int64(i) * int64(time.Millisecond), Session: fmt.Sprintf("s%d", i%7), Payload: []byte(b.String())}
		if err := w.Append(&r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// fetches is what a command fetched of one object, from the server's log.
type fetches struct {
	Requests int
	Bytes    int64
	// Head counts the requests for byte 0 (the header), Index those for
	// the first byte of the stored index.
	Head, Index int
	// Union is how many distinct bytes of the object were fetched.
	Union int64
}

// objectFetches sums the ranged GETs of key in log; indexAt is where the
// object's index starts.
func objectFetches(t *testing.T, log []s3test.Request, key string, indexAt int64) fetches {
	t.Helper()
	var f fetches
	type span struct{ a, b int64 } // [a, b]
	var spans []span
	for _, r := range log {
		if p, _, _ := strings.Cut(r.Path, "?"); p != "/"+key || r.Method != http.MethodGet {
			continue
		}
		var a, b int64
		if _, err := fmt.Sscanf(r.Range, "bytes=%d-%d", &a, &b); err != nil {
			t.Fatalf("GET %s without a byte range (%q): an object is never read whole", key, r.Range)
		}
		b = min(b, a+r.Bytes-1) // the answer ends at the object's end
		f.Requests++
		f.Bytes += r.Bytes
		if a == 0 {
			f.Head++
		}
		if a <= indexAt && indexAt <= b {
			f.Index++
		}
		spans = append(spans, span{a, b})
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].a < spans[j].a })
	end := int64(-1)
	for _, s := range spans {
		if s.b > end {
			f.Union += s.b - max(s.a, end+1) + 1
			end = s.b
		}
	}
	return f
}

// bigObject stores incompressibleCapture as caps/big.aaep and returns its
// local copy's path, its size and where its index starts.
func bigObject(t *testing.T, srv *s3test.Server) (path string, size, indexAt int64) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "big.aaep")
	data := incompressibleCapture(t, path)
	if err := srv.Put("caps", "big.aaep", data); err != nil {
		t.Fatal(err)
	}
	r, err := capfile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	l, ok := r.Layout()
	if !ok {
		t.Fatal("the capture has no intact index")
	}
	return path, int64(len(data)), l.DataEnd()
}

// Each command fetches an object's header and its index once in a run,
// however often it opens the object (cut plans with the index and then
// reads; show and info open it to list it and again to read it), and
// reads its records at most once.
func TestS3IndexOncePerRun(t *testing.T) {
	srv := s3test.Start(t, "caps")
	srv.SetEnv(t)
	local, size, indexAt := bigObject(t, srv)
	dir := t.TempDir()
	const obj = "s3://caps/big.aaep"
	// objstore.Remote reads the head (64 KiB) when it opens an object,
	// the tail (at least 512 KiB: the index and trailer) at the first read
	// near the end, a frame's worth (256 KiB) elsewhere, and a scan in
	// reads that double up to 8 MiB, stopping where the records end.
	for _, tc := range []struct {
		name     string
		args     []string
		requests int
		all      bool  // every record read: every byte up to the index, once
		bytes    int64 // at most, when not all
	}{
		// The head and the tail.
		{"info --index-only", []string{"info", "--index-only", obj}, 2, false, 64<<10 + 512<<10},
		// The head, the tail, the frame holding the range.
		{"cut by record number", []string{"cut", obj, "--from", "#3000", "--until", "#3010", "-o", filepath.Join(dir, "n.aaep")}, 3, false, 64<<10 + 512<<10 + 256<<10},
		{"cut by time", []string{"cut", obj, "--from", "3s", "--until", "3.1s", "-o", filepath.Join(dir, "t.aaep")}, 3, false, 64<<10 + 512<<10 + 256<<10},
		// The head, the tail, the records before the tail in 5 reads.
		{"info", []string{"info", obj}, 7, true, 0},
		{"show", []string{"show", obj}, 7, true, 0},
		{"check", []string{"check", "--summary", obj}, 7, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			from := len(srv.Settled())
			code, _, errs := replay(t, tc.args...)
			if code != 0 && !(tc.args[0] == "check" && code == 1) { // check: the sample breaks rules
				t.Fatalf("exit %d: %s", code, errs)
			}
			f := objectFetches(t, srv.Settled()[from:], "caps/big.aaep", indexAt)
			if f.Head != 1 || f.Index != 1 || f.Requests != tc.requests {
				t.Errorf("%+v: want the head and the index once each, %d requests in all", f, tc.requests)
			}
			if tc.all && (f.Union < indexAt || f.Union > size || f.Bytes > size+64<<10) {
				t.Errorf("%+v: want every byte of the %d-byte object up to its index (at %d) once, but for the head's 64 KiB", f, size, indexAt)
			}
			if !tc.all && f.Bytes > tc.bytes {
				t.Errorf("%+v: want at most %d bytes", f, tc.bytes)
			}
		})
	}
	// The cut of the object is the cut of the file.
	if code, _, errs := replay(t, "cut", local, "--from", "#3000", "--until", "#3010", "-o", filepath.Join(dir, "local.aaep")); code != 0 {
		t.Fatal(errs)
	}
	fileopsSame(t, fileopsRecords(t, filepath.Join(dir, "n.aaep")), fileopsRecords(t, filepath.Join(dir, "local.aaep")))
}

// view of an object opens it many times (the replay's cursor, the
// background check, a reader per request): the header and the index are
// fetched once in the run all the same.
func TestS3ViewIndexOnce(t *testing.T) {
	srv := s3test.Start(t, "caps")
	srv.SetEnv(t)
	_, _, indexAt := bigObject(t, srv)
	from := len(srv.Settled())
	s := startServe(t, "view", "s3://caps/big.aaep", "--listen", "127.0.0.1:0")
	get := func(path string, into any) {
		t.Helper()
		resp, err := http.Get("http://" + s.addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %s: %s", path, resp.Status, body)
		}
		if err := json.Unmarshal(body, into); err != nil {
			t.Fatalf("%s: %v: %s", path, err, body)
		}
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var page struct {
			Done bool `json:"check_done"`
		}
		get("/api/sessions", &page)
		if page.Done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the viewer's check did not finish")
		}
	}
	// Requests that read records at the middle and near the end.
	for _, i := range []int{3000, 5990} {
		var ev struct {
			Index int64 `json:"index"`
		}
		get(fmt.Sprintf("/api/event/%d", i), &ev)
		if ev.Index != int64(i) {
			t.Errorf("/api/event/%d answered record %d", i, ev.Index)
		}
	}
	if code := s.stop(t); code != 0 {
		t.Errorf("view: exit %d: %s", code, s.errb.String())
	}
	f := objectFetches(t, srv.Settled()[from:], "caps/big.aaep", indexAt)
	t.Logf("view: %+v", f)
	if f.Head != 1 || f.Index != 1 {
		t.Errorf("view: %+v: want the head and the index fetched once each", f)
		for _, r := range srv.Settled()[from:] {
			t.Logf("%s %s %d", r.Path, r.Range, r.Bytes)
		}
	}
}
