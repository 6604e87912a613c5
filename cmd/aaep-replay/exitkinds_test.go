package main

import (
	"context"
	"errors"
	"net"
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

// TestReplayExitKinds pins the exit codes of errors no other test
// reaches: a report or listing that cannot be written and a --state that
// cannot be read are 2; a gRPC address already taken is 1.
func TestReplayExitKinds(t *testing.T) {
	dir := t.TempDir()
	demo := filepath.Join(dir, "demo.aaep")
	data, err := os.ReadFile(demoCapture)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(demo, data, 0o644); err != nil {
		t.Fatal(err)
	}
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	cases := []struct {
		name   string
		broken bool // standard output refuses writes
		args   []string
		want   int
		says   string
	}{
		{"info to a broken standard output", true, []string{"info", demo}, cli.ExitUsage, "stdout closed"},
		{"info --json to a broken standard output", true, []string{"info", "--json", demo}, cli.ExitUsage, "stdout closed"},
		{"diff to a broken standard output", true, []string{"diff", demo, demo}, cli.ExitUsage, "writing the comparison"},
		{"--state that is a directory", false, []string{"check", "--state", dir, demo}, cli.ExitUsage, "--state"},
		{"--state that is the input", false, []string{"check", "--state", demo, demo}, cli.ExitUsage, "--state"},
		{"--grpc on an address in use", false, []string{"serve", "--listen", "127.0.0.1:0", "--grpc", taken.Addr().String(), demo}, cli.ExitFailure, "--grpc"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var out, errb strings.Builder
			s := cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb}
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
	if got, err := os.ReadFile(demo); err != nil || string(got) != string(data) {
		t.Errorf("the input was changed (%v)", err)
	}
}
