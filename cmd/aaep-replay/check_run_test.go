package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/protocol"
)

// Test_checkRun feeds check's options straight to checkRun: the exit code
// follows the threshold and the completeness of the input, and the report
// goes to stdout (the demo capture breaks 6 MUST rules).
func Test_checkRun(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.aaep")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	const demoLine = ": 108 messages (aaep 108), 8 sessions; 6 MUST, 0 SHOULD, 0 INFO\n"
	for _, tc := range []struct {
		name   string
		opts   CheckOptions
		code   int
		stdout []string // what stdout holds
		stderr string   // exact
	}{
		{name: "findings at the threshold fail", opts: CheckOptions{Inputs: []string{demoCapture}, Threshold: protocol.Must, All: true},
			code: cli.ExitFailure, stdout: []string{"demo.aaep" + demoLine}},
		{name: "fail-on never", opts: CheckOptions{Inputs: []string{demoCapture}, Threshold: protocol.Never},
			stdout: []string{"demo.aaep" + demoLine, "NOT GATED: 6 findings; --fail-on never fails on none\n"}},
		{name: "json", opts: CheckOptions{Inputs: []string{demoCapture}, Threshold: protocol.Must, JSON: true},
			code: cli.ExitFailure, stdout: []string{`"MUST": 6`, `"complete": true`}},
		{name: "an empty input is incomplete", opts: CheckOptions{Inputs: []string{empty}, Threshold: protocol.Must},
			code: cli.ExitUsage, stdout: []string{"INCOMPLETE: not all of the input was read: empty file: it holds no messages\n"},
			stderr: "aaep-replay: " + empty + ": INCOMPLETE: empty file: it holds no messages (--allow-incomplete judges what was read)\n"},
		{name: "allow-incomplete judges what was read", opts: CheckOptions{Inputs: []string{empty}, Threshold: protocol.Must, AllowIncomplete: true},
			stdout: []string{"INCOMPLETE: 0 findings at or above MUST in the 0 messages read\n"}},
		{name: "rules", opts: CheckOptions{Rules: true}, stdout: []string{"TRN-SSE-ID", " rules: "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			opts := tc.opts
			opts.app = &app{Streams: cli.Streams{In: strings.NewReader(""), Out: &stdout, Err: &stderr}, ctx: context.Background()}
			opts.MaxFindings = protocol.DefaultMaxFindings
			err := checkRun(&opts)
			if code := cli.Code(err); code != tc.code {
				t.Errorf("exit code %d (%v), want %d", code, err, tc.code)
			}
			for _, want := range tc.stdout {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
				}
			}
			if stderr.String() != tc.stderr {
				t.Errorf("stderr %q, want %q", stderr.String(), tc.stderr)
			}
		})
	}
}
