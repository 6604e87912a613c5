package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/progress"
)

// onTerminal runs aaep-replay with stderr on a pseudo-terminal and returns
// its exit code, stdout and what the terminal received.
func onTerminal(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	master, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("open pty: %v", err)
	}
	defer master.Close()
	var term bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		io.Copy(&term, master)
	}()
	var out bytes.Buffer
	code := run(context.Background(), cli.Streams{In: strings.NewReader(""), Out: &out, Err: tty}, args)
	tty.Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		master.Close()
		<-done
	}
	return code, out.String(), term.String()
}

func TestProgressOnlyOnTerminal(t *testing.T) {
	oldDelay, oldInterval := progress.Delay, progress.Interval
	progress.Delay, progress.Interval = 0, time.Millisecond
	t.Cleanup(func() { progress.Delay, progress.Interval = oldDelay, oldInterval })

	in := brokenCapture(t)
	dir := t.TempDir()
	jsonl := filepath.Join(t.TempDir(), "in.jsonl")
	if code, _, stderr := replay(t, "export", in, "-o", jsonl); code != 0 {
		t.Fatal(stderr)
	}
	cases := []struct {
		verb string
		args []string
	}{
		{"check", []string{"check", in}},
		{"export", []string{"export", in, "-o", filepath.Join(dir, "x.jsonl")}},
		{"filter", []string{"filter", in, "--messages-only", "-o", filepath.Join(dir, "f.aaep")}},
		{"cut", []string{"cut", in, "--from", "#5", "-o", filepath.Join(dir, "c.aaep")}},
		{"merge", []string{"merge", in, "-o", filepath.Join(dir, "m.aaep")}},
		{"repair", []string{"repair", in, "-o", filepath.Join(dir, "r.aaep")}},
		{"import", []string{"import", jsonl, "-o", filepath.Join(dir, "i.aaep")}},
		{"info", []string{"info", in, in}},
		{"visualize", []string{"visualize", in, "--format", "dot", "-o", filepath.Join(dir, "v.dot")}},
	}
	for _, c := range cases {
		t.Run(c.verb, func(t *testing.T) {
			code, _, term := onTerminal(t, c.args...)
			if code > 1 {
				t.Fatalf("exit %d: %s", code, term)
			}
			if !strings.Contains(term, c.verb+": ") || !strings.Contains(term, " records") {
				t.Errorf("no progress line on the terminal: %q", term)
			}
			if !strings.HasSuffix(term, "\r\x1b[K") && !strings.Contains(term, "\r\x1b[K") {
				t.Errorf("progress line not erased: %q", term)
			}
			clean(dir)
			code, _, term = onTerminal(t, append([]string{"-q"}, c.args...)...)
			if code > 1 || strings.Contains(term, " records") {
				t.Errorf("-q: exit %d, terminal got %q", code, term)
			}
			clean(dir)
		})
	}
	// Not a terminal: nothing but the report.
	code, _, stderr := replay(t, "check", in)
	if code != cli.ExitFailure || stderr != "" {
		t.Errorf("stderr not a terminal: exit %d, stderr %q", code, stderr)
	}
}

// clean removes every file of dir.
func clean(dir string) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		os.Remove(filepath.Join(dir, e.Name()))
	}
}
