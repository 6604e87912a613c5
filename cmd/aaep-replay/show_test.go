package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/internal/cli"
)

func TestShowCommand(t *testing.T) {
	dir := t.TempDir()
	src, recs := fileopsCapture(t, dir, "src.aaep")
	code, stdout, stderr := replay(t, "show", src)
	if code != 0 {
		t.Fatalf("show: exit %d, stderr %q", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	shown := 0
	for _, l := range lines {
		if !strings.HasPrefix(l, "  !! ") {
			shown++
		}
	}
	if shown != len(recs) {
		t.Errorf("show printed %d record lines for %d records", shown, len(recs))
	}
	if !strings.HasPrefix(lines[0], "09:00:00.000000 #0 s0 conn - event=connected") {
		t.Errorf("first line %q", lines[0])
	}
	if !strings.Contains(stdout, " !! MUST SEQ-STATE-CHAIN") {
		t.Error("no line marked with the broken state chain")
	}

	// --disable leaves a rule out of the marks, as check's does.
	code, stdout, _ = replay(t, "show", src, "--disable", "SEQ-STATE-CHAIN")
	if code != 0 || strings.Contains(stdout, "SEQ-STATE-CHAIN") || !strings.Contains(stdout, " !! ") {
		t.Errorf("show --disable SEQ-STATE-CHAIN: exit %d, output:\n%s", code, stdout)
	}

	code, stdout, _ = replay(t, "show", src, "--filter-type", "confirmation.reply", "--messages-only")
	if code != 0 || strings.Count(stdout, " sent - confirmation.reply decision=") != 2 || strings.Contains(stdout, " recv ") {
		t.Errorf("filtered show: exit %d, output:\n%s", code, stdout)
	}

	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no file", []string{"show"}, "show needs the capture FILE"},
		{"missing file", []string{"show", filepath.Join(dir, "nope.aaep")}, "no such file"},
		{"speed without pace", []string{"show", src, "--speed", "2"}, "go with --pace"},
		{"bad speed", []string{"show", src, "--pace", "--speed", "0"}, "--speed"},
		{"bad protocol", []string{"show", src, "--protocol", "smtp"}, `--protocol: unknown protocol "smtp"`},
		{"unknown rule disabled", []string{"show", src, "--disable", "NOPE-1"}, `--disable: cannot disable unknown rule "NOPE-1"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := replay(t, tc.args...)
			if code != cli.ExitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tc.want)
			}
		})
	}
}
