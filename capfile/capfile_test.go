package capfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aaep-tools/aaepkit/internal/testdeps"
)

func TestRoundTrip(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 3<<20)
	tests := []struct {
		name string
		recs []Record
		opts *WriterOptions
	}{
		{"empty", nil, nil},
		{"one", []Record{{Kind: KindReceived, Time: 5, Session: "s1", Payload: []byte(`{"a":1}`)}}, nil},
		{"empty payload and zero time", []Record{{Kind: KindMarker}, {Kind: KindConn, Flags: FlagInvalidJSON | FlagNoRecvTime}}, nil},
		{"attrs", []Record{{Kind: KindReceived, Time: 1, Attrs: []Attr{{"id", "7"}, {"event", "x"}, {"", ""}}, Payload: []byte("p")}}, nil},
		{"equal times", []Record{{Time: 3, Payload: []byte("a")}, {Time: 3, Payload: []byte("b")}}, nil},
		{"realistic one frame", genRecords(1, 500, 4, time.Millisecond), nil},
		{"realistic many frames", genRecords(2, 3000, 7, time.Millisecond), &WriterOptions{FrameSize: 64 << 10}},
		{"tiny frames", genRecords(3, 200, 3, time.Millisecond), &WriterOptions{FrameSize: 1}},
		{"large payload", []Record{{Time: 1, Payload: big}, {Time: 2, Payload: []byte("after")}}, nil},
		{"fastest level", genRecords(4, 300, 2, time.Millisecond), &WriterOptions{Level: 1}},
	}
	for _, tt := range tests {
		for name, open := range openers {
			t.Run(tt.name+"/"+name, func(t *testing.T) {
				path := writeFile(t, t.TempDir(), tt.recs, tt.opts)
				r := open(t, path)
				got, err := readAll(r)
				if err != nil {
					t.Fatalf("read: %v", err)
				}
				equalRecords(t, got, tt.recs)
				if !r.Clean() {
					t.Errorf("Clean() = false after a clean end")
				}
				if _, err := r.Next(); err != io.EOF {
					t.Errorf("Next after the end = %v, want io.EOF", err)
				}
				h := r.Header()
				if h.Version != Version || !h.Start.Equal(testStart) || h.Tool != "capfile-test/1" || len(h.Origins) != 2 || h.Origins[1].Subprotocol != "aaep.v1" {
					t.Errorf("Header() = %+v", h)
				}
			})
		}
	}
}

func TestIndexMatchesRebuilt(t *testing.T) {
	recs := genRecords(5, 4000, 9, time.Millisecond)
	path := writeFile(t, t.TempDir(), recs, &WriterOptions{FrameSize: 32 << 10})
	r := openers["file"](t, path)
	if !r.Clean() {
		t.Fatal("Clean() = false")
	}
	stored, err := r.FileIndex()
	if err != nil {
		t.Fatal(err)
	}
	if stored.Rebuilt || stored.Records != int64(len(recs)) || len(stored.Frames) < 10 {
		t.Fatalf("stored index: rebuilt=%v records=%d frames=%d", stored.Rebuilt, stored.Records, len(stored.Frames))
	}
	// Rebuild by scanning a copy without index and trailer.
	data, _ := os.ReadFile(path)
	cut := filepath.Join(t.TempDir(), "cut.aaep")
	last := stored.Frames[len(stored.Frames)-1]
	os.WriteFile(cut, data[:last.Offset+last.Size], 0o644)
	r2 := openers["file"](t, cut)
	if r2.Clean() {
		t.Fatal("Clean() = true without index")
	}
	rebuilt, err := r2.FileIndex()
	if err != nil {
		t.Fatal(err)
	}
	if !rebuilt.Rebuilt {
		t.Error("Rebuilt = false")
	}
	rebuilt.Rebuilt = false
	if fmt.Sprintf("%+v", *rebuilt) != fmt.Sprintf("%+v", *stored) {
		t.Errorf("rebuilt index differs:\n got %+v\nwant %+v", *rebuilt, *stored)
	}
	// Session summaries agree with the records.
	for _, s := range stored.Sessions {
		var n int64
		first := int64(-1)
		for i, rec := range recs {
			if rec.Session == s.ID {
				if first < 0 {
					first = int64(i)
				}
				n++
			}
		}
		if n != s.Records || first != s.FirstRecord || recs[first].Time != s.FirstTime {
			t.Errorf("session %s: index says first %d count %d, records say %d %d", s.ID, s.FirstRecord, s.Records, first, n)
		}
	}
}

func TestSeek(t *testing.T) {
	recs := genRecords(6, 5000, 12, time.Millisecond)
	dir := t.TempDir()
	path := writeFile(t, dir, recs, &WriterOptions{FrameSize: 16 << 10})
	data, _ := os.ReadFile(path)
	// The same file without its index: seeks use a rebuilt index.
	r0 := openers["file"](t, path)
	x, _ := r0.FileIndex()
	last := x.Frames[len(x.Frames)-1]
	crashed := filepath.Join(dir, "crashed.aaep")
	os.WriteFile(crashed, data[:last.Offset+last.Size], 0o644)

	for _, p := range []string{path, crashed} {
		r := openers["file"](t, p)
		t.Run(filepath.Base(p), func(t *testing.T) {
			for _, i := range []int64{0, 1, 17, 999, 2500, 4998, 4999} {
				if err := r.SeekRecord(i); err != nil {
					t.Fatalf("SeekRecord(%d): %v", i, err)
				}
				rec, err := r.Next()
				if err != nil {
					t.Fatalf("SeekRecord(%d) then Next: %v", i, err)
				}
				if r.Index() != i || !bytes.Equal(rec.Payload, recs[i].Payload) {
					t.Errorf("SeekRecord(%d): got record %d", i, r.Index())
				}
			}
			for _, tm := range []int64{0, recs[0].Time, recs[1234].Time, recs[1234].Time + 1, recs[4999].Time} {
				if err := r.SeekTime(tm); err != nil {
					t.Fatal(err)
				}
				rec, err := r.Next()
				if err != nil {
					t.Fatalf("SeekTime(%d) then Next: %v", tm, err)
				}
				want := 0
				for want < len(recs) && recs[want].Time < tm {
					want++
				}
				if r.Index() != int64(want) || rec.Time < tm {
					t.Errorf("SeekTime(%d): got record %d (time %d), want %d", tm, r.Index(), rec.Time, want)
				}
			}
			for _, s := range x.Sessions {
				if err := r.SeekSession(s.ID); err != nil {
					t.Fatal(err)
				}
				rec, err := r.Next()
				if err != nil || rec.Session != s.ID || r.Index() != s.FirstRecord {
					t.Errorf("SeekSession(%s): record %d session %q err %v", s.ID, r.Index(), rec.Session, err)
				}
			}
			if err := r.SeekSession("nope"); !errors.Is(err, ErrSessionNotFound) {
				t.Errorf("SeekSession(unknown) = %v", err)
			}
			if err := r.SeekRecord(5001); err == nil {
				t.Error("SeekRecord past the end succeeded")
			}
			// Past the last time: the end.
			if err := r.SeekTime(recs[4999].Time + 1); err != nil {
				t.Fatal(err)
			}
			_, err := r.Next()
			if p == path && err != io.EOF {
				t.Errorf("Next after SeekTime past the end = %v, want io.EOF", err)
			}
			if p == crashed && !IsTorn(err) {
				t.Errorf("Next after SeekTime past the end of a crashed file = %v, want torn", err)
			}
		})
	}
	// Streaming readers cannot seek.
	rs := openers["stream"](t, path)
	if err := rs.SeekTime(0); !errors.Is(err, ErrNoIndex) {
		t.Errorf("stream SeekTime = %v, want ErrNoIndex", err)
	}
}

// crashCopy appends recs with flushes but never closes the writer, and
// returns the bytes as they were on disk (a crash after the last flush).
func crashCopy(t *testing.T, recs []Record, opts *WriterOptions) []byte {
	t.Helper()
	var buf bytes.Buffer
	o := WriterOptions{FlushInterval: -1}
	if opts != nil {
		o = *opts
		o.FlushInterval = -1
	}
	w, err := NewWriter(&buf, testHeader(), &o)
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		if err := w.Append(&recs[i]); err != nil {
			t.Fatal(err)
		}
		if i%10 == 9 {
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return bytes.Clone(buf.Bytes())
}

func TestCrashedFile(t *testing.T) {
	recs := genRecords(7, 1000, 3, time.Millisecond)
	for _, fs := range []int{DefaultFrameSize, 20 << 10} {
		data := crashCopy(t, recs, &WriterOptions{FrameSize: fs})
		path := filepath.Join(t.TempDir(), "crash.aaep")
		os.WriteFile(path, data, 0o644)
		for name, open := range openers {
			t.Run(fmt.Sprintf("%s/frame%d", name, fs), func(t *testing.T) {
				r := open(t, path)
				got, err := readAll(r)
				equalRecords(t, got, recs)
				if !IsTorn(err) {
					t.Fatalf("error at the end = %v, want a torn tail", err)
				}
				ce := asCorruption(t, err)
				if ce.Index != int64(len(recs)) {
					t.Errorf("torn error Index = %d, want %d", ce.Index, len(recs))
				}
				if r.Clean() {
					t.Error("Clean() = true for a crashed file")
				}
			})
		}
	}
}

func TestZstdCLI(t *testing.T) {
	zstdBin := testdeps.Command(t, "zstd", "zstd")
	recs := genRecords(8, 2000, 4, time.Millisecond)
	path := writeFile(t, t.TempDir(), recs, &WriterOptions{FrameSize: 64 << 10})
	if out, err := exec.Command(zstdBin, "-t", path).CombinedOutput(); err != nil {
		t.Fatalf("zstd -t: %v\n%s", err, out)
	}
	out, err := exec.Command(zstdBin, "-dc", path).Output()
	if err != nil {
		t.Fatalf("zstd -dc: %v", err)
	}
	// The record stream, with time deltas restarting at every frame.
	r := openers["file"](t, path)
	x, err := r.FileIndex()
	if err != nil {
		t.Fatal(err)
	}
	var want []byte
	for _, f := range x.Frames {
		prev := int64(0)
		for i := f.FirstRecord; i < f.FirstRecord+f.Records; i++ {
			want = appendRecord(want, &recs[i], prev)
			prev = recs[i].Time
		}
	}
	if !bytes.Equal(out, want) {
		t.Fatalf("zstd -dc output (%d bytes) is not the record stream (%d bytes)", len(out), len(want))
	}
}

func TestNotCapture(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "empty file"},
		{"json", []byte(`{"type":"aaep:agent.session.started"}` + "\n"), "JSON text"},
		{"zstd", []byte{0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0, 0, 0}, "plain zstd frame"},
		{"gzip", []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0}, "gzip"},
		{"short", []byte{0x5a, 0x2a}, "bytes 5a 2a"},
		{"other skippable", []byte{0x50, 0x2a, 0x4d, 0x18, 0, 0, 0, 0}, "skippable frame with magic 0x184d2a50"},
		{"wrong signature", appendSkippable(nil, headerMagic, []byte("NOTAAEP!\x01\x00\x00\x00\x00\x00\x00\x00{}")), "AAEPCAPF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x")
			os.WriteFile(path, tt.data, 0o644)
			_, err := Open(path)
			if !errors.Is(err, ErrNotCapture) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Open = %v, want ErrNotCapture naming %q", err, tt.want)
			}
			_, err = NewReader(bytes.NewReader(tt.data))
			if !errors.Is(err, ErrNotCapture) {
				t.Errorf("NewReader = %v, want ErrNotCapture", err)
			}
		})
	}
	t.Run("newer version", func(t *testing.T) {
		var buf bytes.Buffer
		w, _ := NewWriter(&buf, testHeader(), nil)
		w.Close()
		b := buf.Bytes()
		b[16] = 9 // version field of the header content
		_, err := NewReader(bytes.NewReader(b))
		if !errors.Is(err, ErrUnsupportedVersion) || !strings.Contains(err.Error(), "version 9") {
			t.Errorf("NewReader = %v, want ErrUnsupportedVersion naming version 9", err)
		}
	})
}

func TestAppendRejects(t *testing.T) {
	w, err := NewWriter(io.Discard, testHeader(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Append(&Record{Time: 100}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		rec  Record
		is   error
		want string
	}{
		{"time backwards", Record{Time: 99}, ErrTimeOrder, "time 99 after 100"},
		{"negative time", Record{Time: -1}, nil, "negative"},
		{"payload too large", Record{Time: 200, Payload: make([]byte, MaxPayload+1)}, nil, "exceeds MaxPayload"},
		{"session too long", Record{Time: 200, Session: strings.Repeat("s", MaxSession+1)}, nil, "MaxSession"},
		{"too many attrs", Record{Time: 200, Attrs: make([]Attr, MaxAttrs+1)}, nil, "MaxAttrs"},
		{"attr too long", Record{Time: 200, Attrs: []Attr{{Key: "k", Value: strings.Repeat("v", MaxAttrLen+1)}}}, nil, "MaxAttrLen"},
	}
	for _, tt := range tests {
		err := w.Append(&tt.rec)
		if err == nil || !strings.Contains(err.Error(), tt.want) || (tt.is != nil && !errors.Is(err, tt.is)) || !strings.HasPrefix(err.Error(), "capfile: ") {
			t.Errorf("%s: Append = %v, want error containing %q", tt.name, err, tt.want)
		}
	}
	// A rejected record does not poison the writer.
	if err := w.Append(&Record{Time: 100, Payload: []byte("ok")}); err != nil {
		t.Errorf("Append after rejected records = %v", err)
	}
}

func TestWriterClosed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.aaep")
	w, err := Create(path, testHeader(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(&Record{Time: 1}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
	for name, f := range map[string]func() error{
		"Append": func() error { return w.Append(&Record{Time: 2}) },
		"Flush":  w.Flush,
		"Sync":   w.Sync,
	} {
		if err := f(); !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close = %v, want ErrClosed", name, err)
		}
	}
	st := w.Stats()
	fi, _ := os.Stat(path)
	if st.Records != 1 || st.Frames != 1 || st.FileBytes != fi.Size() {
		t.Errorf("Stats() = %+v, file size %d", st, fi.Size())
	}
}

func TestCredentialsStripped(t *testing.T) {
	h := testHeader()
	h.Origins = []Origin{
		{Transport: "sse", Endpoint: "https://alice:s3cret@agent.example/events?token=abc&topic=x&API_KEY=k"},
		{Transport: "websocket", Endpoint: "wss://bob@agent.example/ws"},
		{Transport: "unix", Endpoint: "/run/agent.sock"},
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	for _, secret := range []string{"alice", "s3cret", "abc", "bob", "API_KEY", "token"} {
		if bytes.Contains(buf.Bytes(), []byte(secret)) {
			t.Errorf("file contains %q", secret)
		}
	}
	r, err := NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	got := r.Header().Origins
	want := []string{"https://agent.example/events?topic=x", "wss://agent.example/ws", "/run/agent.sock"}
	for i := range want {
		if got[i].Endpoint != want[i] {
			t.Errorf("source %d endpoint = %q, want %q", i, got[i].Endpoint, want[i])
		}
	}
}

// syncBuffer is a bytes.Buffer safe for the writer's timer goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.b.Bytes())
}

// readable returns how many records a copy of data yields before its end.
func readable(t *testing.T, data []byte) int {
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := readAll(r)
	return len(got)
}

func TestTimedFlush(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf syncBuffer
		w, err := NewWriter(&buf, testHeader(), &WriterOptions{FlushInterval: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		recs := genRecords(9, 3, 1, time.Millisecond)
		w.Append(&recs[0])
		w.Append(&recs[1])
		if n := readable(t, buf.bytes()); n != 0 {
			t.Fatalf("%d records readable before the flush interval", n)
		}
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		if n := readable(t, buf.bytes()); n != 2 {
			t.Fatalf("%d records readable after the flush interval, want 2", n)
		}
		w.Append(&recs[2])
		time.Sleep(99 * time.Millisecond)
		synctest.Wait()
		if n := readable(t, buf.bytes()); n != 2 {
			t.Fatalf("%d records readable 99ms after the third append, want 2", n)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if n := readable(t, buf.bytes()); n != 3 {
			t.Fatalf("%d records readable 100ms after the third append, want 3", n)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

// Timed flushes make records decodable without closing the zstd frame. A
// writer starts in low-rate mode; the first timed flush at a high rate
// switches to the fast level and a later drop in the rate back to low-rate
// mode, each switch closing the frame once.
func TestTimedFlushKeepsFrame(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf syncBuffer
		w, err := NewWriter(&buf, testHeader(), nil)
		if err != nil {
			t.Fatal(err)
		}
		g := newRecGen(12, 3, time.Millisecond)
		n := 0
		for tick := 0; tick < 5; tick++ { // 1,000 records/s
			for k := 0; k < 100; k++ {
				rec := g.next()
				w.Append(&rec)
				n++
			}
			time.Sleep(100 * time.Millisecond)
			synctest.Wait()
			if got := readable(t, buf.bytes()); got != n {
				t.Fatalf("tick %d: %d records readable, want %d", tick, got, n)
			}
		}
		if st := w.Stats(); st.Frames != 1 {
			t.Errorf("timed flushes at 1,000 records/s closed %d frames, want 1 (the switch to the fast level)", st.Frames)
		}
		for tick := 0; tick < 5; tick++ { // 10 records/s
			rec := g.next()
			w.Append(&rec)
			n++
			time.Sleep(100 * time.Millisecond)
			synctest.Wait()
			if got := readable(t, buf.bytes()); got != n {
				t.Fatalf("slow tick %d: %d records readable, want %d", tick, got, n)
			}
		}
		if st := w.Stats(); st.Frames != 2 {
			t.Errorf("after the rate dropped: %d frames closed, want 2 (the switch back to low-rate mode)", st.Frames)
		}
		w.mu.Lock()
		if w.fast != nil || w.slow == nil {
			t.Errorf("in low-rate mode the writer holds fast encoder %v, slow encoder %v; want only the slow one", w.fast != nil, w.slow != nil)
		}
		w.mu.Unlock()
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		r, err := NewReader(bytes.NewReader(buf.bytes()))
		if err != nil {
			t.Fatal(err)
		}
		got, err := readAll(r)
		if err != nil || len(got) != n {
			t.Fatalf("read %d records, %v; want %d", len(got), err, n)
		}
	})
}

func TestConcurrentAppend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.aaep")
	w, err := Create(path, testHeader(), &WriterOptions{FrameSize: 8 << 10, FlushInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// Times come from a shared counter taken under the same lock order as
	// Append, so they never decrease.
	var mu sync.Mutex
	var clock int64
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				mu.Lock()
				clock++
				err := w.Append(&Record{Time: clock, Session: fmt.Sprint("g", g), Payload: []byte(fmt.Sprintf(`{"g":%d,"i":%d}`, g, i))})
				mu.Unlock()
				if err != nil {
					t.Error(err)
					return
				}
				if i%100 == 0 {
					w.Flush()
				}
			}
		}()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r := openers["file"](t, path)
	got, err := readAll(r)
	if err != nil || len(got) != 2000 {
		t.Fatalf("read %d records, err %v", len(got), err)
	}
}
