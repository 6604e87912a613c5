package recorder

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/capfile/capfiletest"
	"github.com/aaep-tools/aaepkit/msgfilter"
	"github.com/aaep-tools/aaepkit/transport"
	"github.com/aaep-tools/aaepkit/transport/transporttest"
)

// readAll reads a capture completely; it fails the test unless the file
// ends cleanly.
func readAll(t *testing.T, path string) (capfile.Header, []capfile.Record) {
	t.Helper()
	return capfiletest.ReadAll(t, path)
}

func newTest(t *testing.T, cfg Config) (*Recorder, string) {
	t.Helper()
	if cfg.Path == "" {
		cfg.Path = filepath.Join(t.TempDir(), "out.aaep")
	}
	if cfg.Clock == nil {
		cfg.Clock = transport.NewClock()
	}
	cfg.Header.Tool = "aaep-capture/test"
	cfg.Header.Origins = []capfile.Origin{{ID: 0, Transport: "sse", Endpoint: "http://127.0.0.1/x"}}
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r, cfg.Path
}

func msg(kind capfile.Kind, t int64, payload string, attrs ...capfile.Attr) *transport.Message {
	return &transport.Message{Kind: kind, Time: t, Payload: []byte(payload), Attrs: attrs}
}

func TestRecordsAndFlags(t *testing.T) {
	r, path := newTest(t, Config{})
	emit := r.Emit(0)
	ev := transporttest.Event(1)
	conn := &transport.ConnEvent{Event: capfile.ConnConnected, URL: "http://127.0.0.1/x"}
	in := []*transport.Message{
		{Kind: capfile.KindConn, Time: 5, Payload: []byte(`{"event":"connected","url":"http://127.0.0.1/x"}`), Conn: conn},
		msg(capfile.KindSent, 10, `{"type":"subscription.request"}`),
		msg(capfile.KindReceived, 20, string(ev), capfile.Attr{Key: "id", Value: "evt_0000000000000001"}, capfile.Attr{Key: "event", Value: "aaep.event"}),
		msg(capfile.KindReceived, 15, `{"type":"x","session_id":"s2"`), // earlier time: clamped
		msg(capfile.KindReceived, 30, "{\"session_id\":\"s3\",\"t\":\"\xff\"}"),
		msg(capfile.KindReceived, 40, "\xfe not json"),
	}
	for _, m := range in {
		if err := emit(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	h, recs := readAll(t, path)
	if h.Tool != "aaep-capture/test" || len(h.Redacted) != 0 {
		t.Errorf("header %+v", h)
	}
	want := []struct {
		kind    capfile.Kind
		time    int64
		flags   capfile.Flags
		session string
	}{
		{capfile.KindConn, 5, 0, ""},
		{capfile.KindSent, 10, 0, ""},
		{capfile.KindReceived, 20, 0, "sess_test01"},
		{capfile.KindReceived, 20, capfile.FlagInvalidJSON, "s2"},
		{capfile.KindReceived, 30, capfile.FlagInvalidUTF8, "s3"},
		{capfile.KindReceived, 40, capfile.FlagInvalidJSON | capfile.FlagInvalidUTF8, ""},
	}
	if len(recs) != len(want) {
		t.Fatalf("%d records, want %d", len(recs), len(want))
	}
	for i, w := range want {
		got := recs[i]
		if got.Kind != w.kind || got.Time != w.time || got.Flags != w.flags || got.Session != w.session || !bytes.Equal(got.Payload, in[i].Payload) {
			t.Errorf("record %d: kind %d time %d flags %b session %q payload %q\nwant kind %d time %d flags %b session %q payload %q",
				i, got.Kind, got.Time, got.Flags, got.Session, got.Payload, w.kind, w.time, w.flags, w.session, in[i].Payload)
		}
	}
	if recs[2].Attr("id") != "evt_0000000000000001" || recs[2].Attr("event") != "aaep.event" {
		t.Errorf("attrs %v", recs[2].Attrs)
	}
	st := r.Stats()
	if st.Events != 4 || st.Sent != 1 || st.ConnEvents != 1 || st.InvalidJSON != 2 || st.InvalidUTF8 != 2 || st.Records != 6 {
		t.Errorf("stats %+v", st)
	}
	if fi, _ := os.Stat(path); st.FileBytes != fi.Size() {
		t.Errorf("FileBytes %d, file has %d", st.FileBytes, fi.Size())
	}
}

func TestFilter(t *testing.T) {
	r, path := newTest(t, Config{Filter: msgfilter.Filter{Types: []string{"tool.invoked"}, Sessions: []string{"sess_a"}}})
	emit := r.Emit(0)
	in := []string{
		`{"type":"aaep:agent.tool.invoked","session_id":"sess_a"}`,   // kept
		`{"type":"aaep:agent.tool.invoked","session_id":"sess_b"}`,   // other session
		`{"type":"aaep:agent.tool.completed","session_id":"sess_a"}`, // other type
		`not json`, // not an object: kept, never silently lost
	}
	for i, p := range in {
		if err := emit(msg(capfile.KindReceived, int64(i), p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := emit(msg(capfile.KindSent, 9, `{"type":"subscription.request"}`)); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	_, recs := readAll(t, path)
	var got []string
	for _, rec := range recs {
		got = append(got, string(rec.Payload))
	}
	want := []string{in[0], in[3], `{"type":"subscription.request"}`}
	if !slices.Equal(got, want) {
		t.Fatalf("recorded %q, want %q", got, want)
	}
	if st := r.Stats(); st.Filtered != 2 || st.Events != 2 {
		t.Errorf("stats %+v", st)
	}
}

func TestRedaction(t *testing.T) {
	r, path := newTest(t, Config{Redact: []string{"request_text", "session_id"}})
	emit := r.Emit(0)
	in := `{"type":"aaep:agent.session.started","session_id":"sess_secret","request_text":"transfer $500 to 12345","producer":{"agent_id":"a"}}`
	if err := emit(msg(capfile.KindReceived, 1, in)); err != nil {
		t.Fatal(err)
	}
	if err := emit(msg(capfile.KindReceived, 2, `{"type":"x"}`)); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	h, recs := readAll(t, path)
	if !slices.Equal(h.Redacted, []string{"request_text", "session_id"}) {
		t.Errorf("header Redacted %v", h.Redacted)
	}
	want := `{"type":"aaep:agent.session.started","session_id":"[REDACTED]","request_text":"[REDACTED]","producer":{"agent_id":"a"}}`
	if string(recs[0].Payload) != want || recs[0].Flags != capfile.FlagRedacted {
		t.Errorf("record 0: %s flags %b", recs[0].Payload, recs[0].Flags)
	}
	if recs[0].Session == "sess_secret" {
		t.Error("the index holds a redacted session id")
	}
	if recs[1].Flags != 0 {
		t.Errorf("record 1 flags %b", recs[1].Flags)
	}
	raw, _ := os.ReadFile(path)
	for _, s := range []string{"sess_secret", "12345"} {
		if bytes.Contains(decompress(t, raw), []byte(s)) {
			t.Errorf("%q survives in the capture", s)
		}
	}
}

// decompress returns the raw bytes of a capture followed by its
// decompressed content, for searching both.
func decompress(t *testing.T, raw []byte) []byte {
	t.Helper()
	out, err := zstdDecompress(raw)
	if err != nil {
		t.Fatalf("decompress: %v", err)
	}
	return append(append([]byte(nil), raw...), out...)
}

func TestStopConditions(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cfg      Config
		reason   string
		wantRecv int
	}{
		{"max events", Config{MaxEvents: 3}, StopMaxEvents, 3},
		{"max bytes", Config{MaxBytes: 25}, StopMaxBytes, 3}, // 10 bytes each: the third crosses 25
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stops []string
			var mu sync.Mutex
			tc.cfg.OnStop = func(reason string) {
				mu.Lock()
				stops = append(stops, reason)
				mu.Unlock()
			}
			r, path := newTest(t, tc.cfg)
			emit := r.Emit(0)
			for i := 0; i < 6; i++ {
				if err := emit(msg(capfile.KindReceived, int64(i), fmt.Sprintf(`{"n":%05d}`, i))); err != nil {
					t.Fatal(err)
				}
			}
			// After the stop the sources wind down; what they send and their
			// connection events are still recorded.
			if err := emit(msg(capfile.KindSent, 10, `{"type":"subscription.close"}`)); err != nil {
				t.Fatal(err)
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			_, recs := readAll(t, path)
			recv := 0
			for _, rec := range recs {
				if rec.Kind == capfile.KindReceived {
					recv++
				}
			}
			if recv != tc.wantRecv || recs[len(recs)-1].Kind != capfile.KindSent {
				t.Fatalf("%d received records (want %d), last kind %d", recv, tc.wantRecv, recs[len(recs)-1].Kind)
			}
			if !slices.Equal(stops, []string{tc.reason}) {
				t.Errorf("OnStop calls %v", stops)
			}
			st := r.Stats()
			if st.StopReason != tc.reason || st.Dropped != int64(6-tc.wantRecv) {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

func TestSecretsScrubbedFromConnectionEvents(t *testing.T) {
	r, path := newTest(t, Config{Secrets: []string{"hunter2-token"}})
	emit := r.Emit(0)
	if err := emit(&transport.Message{Kind: capfile.KindConn, Time: 0, Payload: []byte(`{"event":"connected"}`), Conn: &transport.ConnEvent{Event: capfile.ConnConnected}}); err != nil {
		t.Fatal(err)
	}
	ev := &transport.ConnEvent{Event: capfile.ConnFailed, Error: "get http://x: bad header hunter2-token"}
	if err := emit(&transport.Message{Kind: capfile.KindConn, Time: 1, Payload: []byte(`{"event":"failed","error":"get http://x: bad header hunter2-token"}`), Conn: ev}); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	if bytes.Contains(decompress(t, raw), []byte("hunter2")) {
		t.Fatal("secret in the capture")
	}
	_, recs := readAll(t, path)
	if len(recs) != 2 || !strings.Contains(string(recs[1].Payload), transport.Redacted) {
		t.Errorf("records %v", recs)
	}
}

func TestRotation(t *testing.T) {
	for _, tc := range []struct {
		name      string
		cfg       Config
		n         int
		step      time.Duration
		wantFiles int
	}{
		// 10 events per second for 3.5 s: parts at 0, 1, 2, 3 s.
		{"every", Config{RotateEvery: time.Second}, 35, 100 * time.Millisecond, 4},
		{"every with ring", Config{RotateEvery: time.Second, Ring: 2}, 35, 100 * time.Millisecond, 2},
		// Frames of 16 KiB close often, so the size shows on disk.
		{"size", Config{RotateSize: 16 << 10, Writer: capfile.WriterOptions{FrameSize: 16 << 10}}, 2000, time.Millisecond, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Path = filepath.Join(t.TempDir(), "run.aaep")
			r, _ := newTest(t, tc.cfg)
			emit := r.Emit(0)
			for i := 0; i < tc.n; i++ {
				if err := emit(msg(capfile.KindReceived, int64(i)*int64(tc.step), string(transporttest.Event(i)))); err != nil {
					t.Fatal(err)
				}
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			st := r.Stats()
			files, _ := filepath.Glob(filepath.Join(filepath.Dir(tc.cfg.Path), "*"))
			if !slices.Equal(files, st.Files) {
				t.Fatalf("files on disk %v, stats %v", files, st.Files)
			}
			if tc.wantFiles > 0 && len(files) != tc.wantFiles {
				t.Fatalf("%d files, want %d", len(files), tc.wantFiles)
			}
			if tc.wantFiles == 0 && len(files) < 3 {
				t.Fatalf("%d files: size rotation did not happen", len(files))
			}
			total := 0
			var prevEnd time.Time
			for i, f := range files {
				h, recs := readAll(t, f) // every part is a complete capture
				total += len(recs)
				if len(recs) == 0 {
					t.Fatalf("%s is empty", f)
				}
				if !h.Start.After(prevEnd) && i > 0 {
					t.Errorf("%s starts at %v, before the previous part's last record %v", f, h.Start, prevEnd)
				}
				prevEnd = h.Start.Add(recs[len(recs)-1].Offset())
				if tc.cfg.RotateEvery > 0 && recs[len(recs)-1].Offset() >= tc.cfg.RotateEvery {
					t.Errorf("%s spans %v", f, recs[len(recs)-1].Offset())
				}
				if tc.cfg.RotateSize > 0 && i < len(files)-1 {
					fi, _ := os.Stat(f)
					if fi.Size() < tc.cfg.RotateSize {
						t.Errorf("%s rotated at %d bytes, before %d", f, fi.Size(), tc.cfg.RotateSize)
					}
				}
			}
			if tc.cfg.Ring == 0 && total != tc.n {
				t.Errorf("%d records in all parts, want %d", total, tc.n)
			}
		})
	}
}

func TestConcurrentSources(t *testing.T) {
	r, path := newTest(t, Config{})
	clock := transport.NewClock()
	const sources, per = 4, 2000
	var wg sync.WaitGroup
	for s := 0; s < sources; s++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			emit := r.Emit(uint16(s))
			for i := 0; i < per; i++ {
				p := fmt.Sprintf(`{"type":"t","session_id":"src%d","n":%d}`, s, i)
				if err := emit(msg(capfile.KindReceived, clock.Now(), p)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	_, recs := readAll(t, path)
	if len(recs) != sources*per {
		t.Fatalf("%d records, want %d", len(recs), sources*per)
	}
	next := make([]int, sources)
	for i, rec := range recs {
		if i > 0 && rec.Time < recs[i-1].Time {
			t.Fatalf("record %d goes back in time", i)
		}
		want := fmt.Sprintf(`{"type":"t","session_id":"src%d","n":%d}`, rec.Origin, next[rec.Origin])
		if string(rec.Payload) != want {
			t.Fatalf("record %d: %s, want %s", i, rec.Payload, want)
		}
		next[rec.Origin]++
	}
}

func TestCreateFailure(t *testing.T) {
	_, err := New(Config{Path: filepath.Join(t.TempDir(), "no", "such", "dir", "x.aaep"), Clock: transport.NewClock()})
	if !errors.Is(err, ErrWrite) {
		t.Fatalf("New error %v, want ErrWrite", err)
	}
}

func zstdDecompress(raw []byte) ([]byte, error) {
	d, err := zstd.NewReader(nil)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.DecodeAll(raw, nil)
}

// TestHandshakeIsNotAnEvent: a producer's subscription.accepted is recorded
// even when a type filter would drop it, and it does not count towards
// --max-events, which counts events as the reference tool does.
func TestHandshakeIsNotAnEvent(t *testing.T) {
	r, path := newTest(t, Config{MaxEvents: 2, Filter: msgfilter.Filter{Types: []string{"tool.invoked"}}})
	emit := r.Emit(0)
	in := []string{
		`{"type":"subscription.accepted","subscription_id":"sub_1"}`,
		`{"type":"aaep:agent.tool.invoked","session_id":"sess_a"}`,
		`{"type":"aaep:agent.state.changed","session_id":"sess_a"}`, // filtered
		`{"type":"aaep:agent.tool.invoked","session_id":"sess_a"}`,  // the second event: stop
		`{"type":"aaep:agent.tool.invoked","session_id":"sess_a"}`,  // after the stop
	}
	for i, p := range in {
		if err := emit(msg(capfile.KindReceived, int64(i), p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	_, recs := readAll(t, path)
	var got []string
	for _, rec := range recs {
		got = append(got, string(rec.Payload))
	}
	if want := []string{in[0], in[1], in[3]}; !slices.Equal(got, want) {
		t.Fatalf("recorded %q, want %q", got, want)
	}
	if st := r.Stats(); st.Events != 2 || st.StopReason != StopMaxEvents || st.Filtered != 1 {
		t.Errorf("stats %+v, want 2 events, stopped by max-events, 1 filtered", st)
	}
}

// TestHandshakeNotCountedWithoutLimits: with no filter and no limit (the
// type is not otherwise needed) the producer's handshake answers are still
// not events: 3 events and an accepted and a rejected count 3 (the summary
// said 5), with or without redaction.
func TestHandshakeNotCountedWithoutLimits(t *testing.T) {
	for _, cfg := range []Config{{}, {Redact: []string{"request_text"}}} {
		r, _ := newTest(t, cfg)
		emit := r.Emit(0)
		in := []string{
			`{"type":"subscription.accepted","subscription_id":"sub_1"}`,
			`{"type":"aaep:agent.session.started","session_id":"sess_a","note":"\"subscription.x\" in text"}`,
			`{"type":"aaep:agent.state.changed","session_id":"sess_a"}`,
			`{"type": "subscription.rejected","reason_code":"rate_limit"}`,
			`{"type":"aaep:agent.session.completed","session_id":"sess_a"}`,
		}
		for i, p := range in {
			if err := emit(msg(capfile.KindReceived, int64(i), p)); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if st := r.Stats(); st.Events != 3 {
			t.Errorf("redact %v: %d events, want 3 (the handshake answers are not events)", cfg.Redact, st.Events)
		}
	}
}

// Stats.Connected follows each source's connection events: connected,
// then disconnected, closed or given up.
func TestConnectedSources(t *testing.T) {
	r, _ := newTest(t, Config{})
	conn := func(src uint16, at int64, event string) int64 {
		t.Helper()
		if err := r.Emit(src)(&transport.Message{Kind: capfile.KindConn, Time: at, Payload: []byte(`{"event":"` + event + `"}`), Conn: &transport.ConnEvent{Event: event}}); err != nil {
			t.Fatal(err)
		}
		return r.Stats().Connected
	}
	for i, step := range []struct {
		src   uint16
		event string
		want  int64
	}{
		{0, capfile.ConnConnected, 1},
		{1, capfile.ConnFailed, 1},
		{1, capfile.ConnConnected, 2},
		{0, capfile.ConnDisconnected, 1},
		{0, capfile.ConnDisconnected, 1},
		{0, capfile.ConnConnected, 2},
		{1, capfile.ConnClosed, 1},
		{0, capfile.ConnGaveUp, 0},
	} {
		if got := conn(step.src, int64(i), step.event); got != step.want {
			t.Errorf("after source %d %s: %d connected, want %d", step.src, step.event, got, step.want)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}
