package capedit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/capfile/capfiletest"
	"github.com/aaep-tools/aaepkit/internal/sample"
)

var (
	ctx       = context.Background()
	testStart = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
)

// testHeader is the header of generated captures.
func testHeader() capfile.Header {
	return capfile.Header{
		Start: testStart,
		Tool:  "capedit-test/1",
		Origins: []capfile.Origin{
			{ID: 0, Transport: "websocket", Endpoint: "ws://127.0.0.1:8765/aaep/v1/ws", Subprotocol: "aaep.v1"},
			{ID: 1, Transport: "sse", Endpoint: "http://127.0.0.1:8766/aaep/v1/events"},
		},
		Meta: map[string]string{"note": "generated"},
	}
}

// sampleRecords returns a realistic mix: sample sessions (events received,
// replies sent), connection events with a reconnect, a 15 s silence, a
// marker, SSE attributes, an invalid JSON and an invalid UTF-8 message, a
// pretty-printed message, and records from a second source.
func sampleRecords() []capfile.Record {
	msgs := sample.Stream(sample.Options{Sessions: 4, Seed: 1, Violations: true})
	var recs []capfile.Record
	add := func(r capfile.Record) { recs = append(recs, r) }
	conn := func(t int64, ev string) capfile.Record {
		return capfile.Record{Kind: capfile.KindConn, Time: t, Payload: []byte(`{"event":"` + ev + `","url":"ws://127.0.0.1:8765/aaep/v1/ws"}`)}
	}
	add(conn(0, "connected"))
	var shift int64
	for i, m := range msgs {
		t := int64(m.Offset) + shift
		if i == len(msgs)/2 {
			add(conn(t, "disconnected"))
			add(conn(t+int64(time.Second), "connected"))
			add(capfile.Record{Kind: capfile.KindMarker, Time: t + int64(time.Second), Payload: []byte(`{"note":"reconnected"}`)})
			shift += 15 * int64(time.Second)
			t += shift
		}
		kind := capfile.KindReceived
		if m.FromSubscriber {
			kind = capfile.KindSent
		}
		r := capfile.Record{Kind: kind, Time: t, Session: m.Session, Payload: m.JSON}
		if i%7 == 3 {
			r.Origin = 1
			r.Attrs = []capfile.Attr{{Key: "event", Value: "aaep"}, {Key: "id", Value: fmt.Sprint(i)}}
		}
		add(r)
		if i == 10 {
			add(capfile.Record{Kind: capfile.KindReceived, Flags: capfile.FlagInvalidJSON, Time: t, Payload: []byte(`{"type":"aaep:agent.progress.updated", "progress": 0.5`)})
			add(capfile.Record{Kind: capfile.KindReceived, Flags: capfile.FlagInvalidUTF8, Time: t, Payload: []byte("{\"type\":\"aaep:agent.output.streaming\",\"delta\":\"caf\xe9\"}")})
			add(capfile.Record{Kind: capfile.KindReceived, Time: t, Session: m.Session, Payload: []byte("{\n  \"type\": \"aaep:agent.state.changed\",\n  \"session_id\": \"" + m.Session + "\"\n}")})
		}
	}
	last := recs[len(recs)-1].Time
	add(conn(last+1, "closed"))
	return recs
}

// writeCapture writes recs to a new capture with small frames (so that seeks
// and damage have several frames to work with) and returns its path.
func writeCapture(t testing.TB, dir, name string, h capfile.Header, recs []capfile.Record) string {
	t.Helper()
	path := filepath.Join(dir, name)
	w, err := capfile.Create(path, h, &capfile.WriterOptions{FlushInterval: -1, FrameSize: 4 << 10})
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		if err := w.Append(&recs[i]); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// readCapture returns the header and a deep copy of every record of path.
// It fails the test unless the capture is clean.
func readCapture(t testing.TB, path string) (capfile.Header, []capfile.Record) {
	t.Helper()
	return capfiletest.ReadAll(t, path)
}

// sameRecords fails the test when got and want differ, naming the first difference.
func sameRecords(t testing.TB, got, want []capfile.Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("got %d records, want %d", len(got), len(want))
	}
	for i := 0; i < len(got) && i < len(want); i++ {
		g, w := got[i], want[i]
		if len(g.Attrs) == 0 && len(w.Attrs) == 0 {
			g.Attrs, w.Attrs = nil, nil
		}
		if len(g.Payload) == 0 && len(w.Payload) == 0 {
			g.Payload, w.Payload = nil, nil
		}
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("record %d:\n got %+v\nwant %+v\n(payloads %q and %q)", i, g, w, g.Payload, w.Payload)
		}
	}
}

// frames returns the data frames of a clean capture.
func frames(t testing.TB, path string) []capfile.FrameInfo {
	t.Helper()
	r, err := capfile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	x, err := r.FileIndex()
	if err != nil {
		t.Fatal(err)
	}
	return x.Frames
}

// tornCopy writes a copy of src cut in the middle of its last data frame,
// as a recorder killed while writing leaves it. It returns the path and the
// number of records that stay intact (those of the earlier frames at least).
func tornCopy(t testing.TB, src, name string) (string, int64) {
	t.Helper()
	fr := frames(t, src)
	if len(fr) < 3 {
		t.Fatalf("%s has %d frames, want at least 3", src, len(fr))
	}
	last := fr[len(fr)-1]
	data := readFile(t, src)
	path := filepath.Join(filepath.Dir(src), name)
	writeFileBytes(t, path, data[:last.Offset+last.Size/2])
	return path, last.FirstRecord
}

// corruptCopy writes a copy of src with a byte flipped inside its second
// data frame, and returns the path and the frame's offset.
func corruptCopy(t testing.TB, src, name string) (string, int64) {
	t.Helper()
	fr := frames(t, src)
	f := fr[1]
	data := readFile(t, src)
	data[f.Offset+f.Size/2] ^= 0x5a
	path := filepath.Join(filepath.Dir(src), name)
	writeFileBytes(t, path, data)
	return path, f.Offset
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFileBytes(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func fileHash(t testing.TB, path string) [32]byte {
	t.Helper()
	return sha256.Sum256(readFile(t, path))
}

// dirNames lists the names in dir.
func dirNames(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// noTemp fails the test when dir holds a temporary output file.
func noTemp(t testing.TB, dir string) {
	t.Helper()
	for _, n := range dirNames(t, dir) {
		if bytes.Contains([]byte(n), []byte(".tmp")) {
			t.Errorf("temporary file %s left in %s", n, dir)
		}
	}
}

var errCanceled = context.Canceled

func contextWithCancel() (context.Context, context.CancelFunc) { return context.WithCancel(ctx) }

// firstSession returns the first session key of recs.
func firstSession(recs []capfile.Record) string {
	for _, r := range recs {
		if r.Session != "" {
			return r.Session
		}
	}
	panic("no session in the sample")
}
