package sample

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
)

var update = flag.Bool("update", false, "rewrite testdata/demo.aaep")

// DemoOptions is the stream bundled as testdata/demo.aaep: the capture that
// `make demo` serves. It holds a session that breaks the protocol on purpose.
var DemoOptions = Options{Sessions: 8, Seed: 2026, Violations: true}

// TestDemoCapture keeps the bundled demo capture in step with the generator:
// run `go test ./internal/sample -run TestDemoCapture -update` after changing it.
func TestDemoCapture(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "demo.aaep")
	msgs := Stream(DemoOptions)
	if *update {
		if err := WriteCapture(path, msgs, DemoOptions.Start0(), "aaep-capture/demo"); err != nil {
			t.Fatal(err)
		}
	}
	r, err := capfile.Open(path)
	if err != nil {
		t.Fatalf("open bundled demo capture: %v (regenerate with -update)", err)
	}
	defer r.Close()
	if !r.Clean() {
		t.Error("bundled demo capture was not closed cleanly")
	}
	for i := 0; ; i++ {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			if i != len(msgs) {
				t.Fatalf("demo capture has %d records, generator %d (regenerate with -update)", i, len(msgs))
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if i >= len(msgs) || !bytes.Equal(rec.Payload, msgs[i].JSON) || rec.Time != int64(msgs[i].Offset) {
			t.Fatalf("record %d differs from the generator (regenerate with -update)", i)
		}
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}

func TestWriteCaptureKinds(t *testing.T) {
	msgs := Stream(Options{Sessions: 2, Seed: 1})
	path := filepath.Join(t.TempDir(), "s.aaep")
	if err := WriteCapture(path, msgs, time.Unix(0, 0), "test"); err != nil {
		t.Fatal(err)
	}
	r, err := capfile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sent := 0
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.Kind == capfile.KindSent {
			sent++
		}
		if rec.Session == "" {
			t.Errorf("record %d has no session key", r.Index())
		}
	}
	want := 0
	for _, m := range msgs {
		if m.FromSubscriber {
			want++
		}
	}
	if sent != want || want == 0 {
		t.Errorf("%d sent records, want %d (> 0)", sent, want)
	}
}
