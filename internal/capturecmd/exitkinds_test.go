package capturecmd

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/internal/cli"
)

// brokenStdout refuses every write, as a closed pipe or a full disk does.
type brokenStdout struct{}

func (brokenStdout) Write([]byte) (int, error) { return 0, errors.New("stdout closed") }

// TestCaptureExitKinds pins the exit codes of errors no other test
// reaches: an input that cannot be read and an output that cannot be
// written are 2.
func TestCaptureExitKinds(t *testing.T) {
	dir := jsonlDir(t)
	events := filepath.Join(dir, "events.jsonl")
	cases := []struct {
		name   string
		broken bool
		args   []string
		want   int
		says   string
	}{
		{name: "--subscribe-file that does not exist", args: []string{events, "-o", filepath.Join(dir, "a.aaep"), "--subscribe-file", filepath.Join(dir, "missing.json")}, want: cli.ExitUsage, says: "--subscribe-file"},
		{name: "--json to a standard output that cannot be written", broken: true, args: []string{events, "-o", filepath.Join(dir, "b.aaep"), "--json"}, want: cli.ExitUsage, says: "stdout closed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var errb syncBuffer
			s := cli.Streams{In: strings.NewReader(""), Out: &syncBuffer{}, Err: &errb}
			if c.broken {
				s.Out = brokenStdout{}
			}
			code := run(ctx, s, c.args)
			if ctx.Err() != nil {
				t.Fatalf("did not stop by itself: %s", errb.String())
			}
			if code != c.want || !strings.Contains(errb.String(), c.says) {
				t.Errorf("exit %d, want %d, saying %q; stderr: %s", code, c.want, c.says, errb.String())
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "a.aaep")); err == nil {
		t.Errorf("a capture was written although its --subscribe-file could not be read")
	}
}
