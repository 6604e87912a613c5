package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/internal/cli"
)

// shortWriter takes room bytes, then fails as a full disk does.
type shortWriter struct {
	room int
	got  bytes.Buffer
}

func (w *shortWriter) Write(p []byte) (int, error) {
	if len(p) > w.room {
		n := w.room
		w.got.Write(p[:n])
		w.room = 0
		return n, errors.New("no space left on device")
	}
	w.room -= len(p)
	return w.got.Write(p)
}

// TestCheckReportWriteFails: a report that cannot be written whole (the
// JSON one is written in pieces, the text one as it goes) exits 2 and
// says so, whether the output fails at once or part-way through.
func TestCheckReportWriteFails(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		room int
	}{
		{"json, nothing fits", []string{"check", "--json", demoCapture}, 0},
		{"json, part fits", []string{"check", "--json", demoCapture}, 5000},
		{"text, part fits", []string{"check", "--all", demoCapture}, 500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &shortWriter{room: tc.room}
			var errb bytes.Buffer
			code := run(context.Background(), cli.Streams{In: strings.NewReader(""), Out: w, Err: &errb}, tc.args)
			if code != cli.ExitUsage || !strings.Contains(errb.String(), "writing report: no space left on device") {
				t.Fatalf("exit %d, stderr %q; want %d and the write error", code, errb.String(), cli.ExitUsage)
			}
			if w.got.Len() != tc.room {
				t.Fatalf("%d bytes written, want the %d that fit", w.got.Len(), tc.room)
			}
		})
	}
}
