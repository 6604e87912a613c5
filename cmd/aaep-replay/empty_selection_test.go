package main

import (
	"strings"
	"testing"
)

// TestSelectionOfNothingIsUsage: a --session, --type or --urgency that
// selects no message is a usage error (exit 2) saying what the capture
// holds, in show (which printed nothing and exited 0) and in serve (which
// served nothing), as a range past the end already was.
func TestSelectionOfNothingIsUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"show", demoCapture, "--session", "sess_typo"}, []string{"--session sess_typo", "selects nothing", "sess_d0fd4a2cb8d12071"}},
		{[]string{"show", demoCapture, "--type", "nope"}, []string{"--type nope", "selects nothing", "aaep:agent.state.changed (38)"}},
		{[]string{"show", demoCapture, "--session", "sess_64578a1f29640f65", "--type", "awaiting.confirmation"}, []string{"--session sess_64578a1f29640f65 --type awaiting.confirmation", "selects nothing"}},
		{[]string{"serve", demoCapture, "--type", "nope", "--listen", "127.0.0.1:0"}, []string{"--type nope", "selects nothing", "aaep:agent.tool.invoked (10)"}},
	} {
		code, out, stderr := replay(t, tc.args...)
		if code != 2 || out != "" {
			t.Errorf("%v: exit %d, %d bytes out; want 2 and nothing printed\n%s", tc.args, code, len(out), stderr)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: stderr %q lacks %q", tc.args, stderr, w)
			}
		}
	}
	// A selection that selects something still works.
	if code, out, stderr := replay(t, "show", demoCapture, "--type", "tool.invoked"); code != 0 || strings.Count(out, "\n") != 10 {
		t.Errorf("show --type tool.invoked: exit %d, %d lines; want 0 and 10\n%s", code, strings.Count(out, "\n"), stderr)
	}
}

// TestListenAddressUsage: a --listen no listener could take is a usage
// error (exit 2) naming the flag, in serve, view and test (serve exited 1,
// as if the address were taken).
func TestListenAddressUsage(t *testing.T) {
	for _, args := range [][]string{
		{"serve", demoCapture, "--listen", "127.0.0.1:99999"},
		{"view", demoCapture, "--listen", "127.0.0.1:99999"},
		{"serve", demoCapture, "--listen", "127.0.0.1"},
		{"test", "--level", "1", "--listen", "127.0.0.1:99999"},
	} {
		code, _, stderr := replay(t, args...)
		if code != 2 || !strings.Contains(stderr, "--listen") {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming --listen", args, code, stderr)
		}
	}
}

// TestSmallUsageErrors: an empty -o or --record names no file (export wrote
// to standard output, serve recorded nowhere), and `completion tcsh` names
// a shell no script is written for (it printed help and exited 0): usage
// errors, exit 2, nothing written.
func TestSmallUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"export", demoCapture, "-o", ""}, "--output '': an empty name names no file"},
		{[]string{"cut", demoCapture, "--output="}, "--output ''"},
		{[]string{"serve", demoCapture, "--record", "", "--listen", "127.0.0.1:0"}, "--record ''"},
		{[]string{"check", demoCapture, "--state", ""}, "--state ''"},
		{[]string{"cut", demoCapture, "--time-shift", "0001-01-01T00:00:00Z", "-o", "-"}, "time shift 0001-01-01T00:00:00Z: timestamp out of range: outside the times a capture can hold"},
		{[]string{"repair", "s3://bucket/x.aaep", "-o", "r.aaep"}, "repair reads a local capture file or - (standard input)"},
		{[]string{"import", "s3://bucket/x.jsonl", "-o", "i.aaep"}, "import reads a local JSON Lines file or - (standard input)"},
		{[]string{"completion", "tcsh"}, `completion "tcsh": not a shell completion is written for (want bash, fish, powershell, zsh)`},
	} {
		code, out, stderr := replay(t, tc.args...)
		if code != 2 || out != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, %d bytes out, stderr %q; want 2, nothing out, %q", tc.args, code, len(out), stderr, tc.want)
		}
	}
	if code, out, _ := replay(t, "completion", "bash"); code != 0 || !strings.Contains(out, "aaep-replay") {
		t.Errorf("completion bash: exit %d, %d bytes", code, len(out))
	}
}
