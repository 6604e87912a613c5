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
	"github.com/aaep-tools/aaepkit/protocol/report"
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
	// A capture whose first byte is damaged ('{' where 0x5a was) is a damaged
	// capture, never JSON Lines (item 5 of issue 23).
	demo, err := os.ReadFile(demoCapture)
	if err != nil {
		t.Fatal(err)
	}
	brace := filepath.Join(dir, "brace.aaep")
	demo[0] = '{'
	if err := os.WriteFile(brace, demo, 0o644); err != nil {
		t.Fatal(err)
	}
	const demoLine = ": 108 messages (aaep 108), 8 sessions; 6 MUST, 0 SHOULD, 0 INFO\n"
	for _, tc := range []struct {
		name   string
		opts   CheckOptions
		code   int
		stdout []string // what stdout holds
		stderr string   // exact
		err    string   // the error's text, exact, when set
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
		{name: "a capture with a damaged first byte", opts: CheckOptions{Inputs: []string{brace}, Threshold: protocol.Must},
			code: cli.ExitUsage, err: brace + ": capfile: corrupt capture at byte 0: damaged capture header: it starts 7b 2a 4d 18 41 41 45 50 43 41 50 46, a capture starts 5a 2a 4d 18 41 41 45 50 43 41 50 46"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			opts := tc.opts
			opts.app = &app{Streams: cli.Streams{In: strings.NewReader(""), Out: &stdout, Err: &stderr}, ctx: context.Background()}
			opts.MaxFindings = report.DefaultMaxFindings
			err := checkRun(&opts)
			if code := cli.Code(err); code != tc.code {
				t.Errorf("exit code %d (%v), want %d", code, err, tc.code)
			}
			if tc.err != "" && (err == nil || err.Error() != tc.err) {
				t.Errorf("error %v, want %q", err, tc.err)
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
