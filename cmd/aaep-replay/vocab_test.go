package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/capfile/capfiletest"
	"github.com/aaep-tools/aaepkit/internal/cli"
)

func TestOneVocabulary(t *testing.T) {
	in := brokenCapture(t)
	dir := t.TempDir()
	// Old and new spellings give the same output.
	for _, pair := range [][2][]string{
		{{"filter", in, "--type", "tool.invoked"}, {"filter", in, "--filter-type", "tool.invoked"}},
		{{"filter", in, "--session", "sess_b43bc8a9b00b5ca5"}, {"filter", in, "--filter-session", "sess_b43bc8a9b00b5ca5"}},
		{{"filter", in, "--urgency", "critical"}, {"filter", in, "--filter-urgency", "critical"}},
		{{"cut", in, "--until", "#40"}, {"cut", in, "--to", "#40"}},
	} {
		var got [2]int
		for i, args := range pair {
			out := filepath.Join(dir, "out.aaep")
			code, _, stderr := replay(t, append(args, "-o", out)...)
			if code != 0 {
				t.Fatalf("%q: exit %d, %s", args, code, stderr)
			}
			_, recs := capfiletest.ReadAll(t, out)
			got[i] = len(recs)
			os.Remove(out)
		}
		if got[0] != got[1] || got[0] == 0 {
			t.Errorf("%q and %q kept %d and %d records", pair[0], pair[1], got[0], got[1])
		}
	}
	// Help shows one spelling; the old ones are hidden.
	for verb, want := range map[string][]string{"filter": {"--type", "--session", "--urgency"}, "serve": {"--until", "--type", "--session"}, "cut": {"--until"}} {
		_, help, _ := replay(t, verb, "--help")
		for _, w := range want {
			if !strings.Contains(help, w+" ") {
				t.Errorf("%s --help lacks %s", verb, w)
			}
		}
		for _, old := range []string{"--filter-type", "--filter-session", "--filter-urgency", "--to "} {
			if strings.Contains(help, "      "+old) {
				t.Errorf("%s --help lists the old spelling %s", verb, old)
			}
		}
	}
	// push keeps --to for its target and --until for the range.
	_, help, _ := replay(t, "push", "--help")
	if !strings.Contains(help, "--to string") || !strings.Contains(help, "--until string") {
		t.Errorf("push --help:\n%s", help)
	}
	if code, _, stderr := replay(t, "push", in, "--to", "ws://127.0.0.1:1/", "--until", "x"); code != cli.ExitUsage || !strings.Contains(stderr, "--until") {
		t.Errorf("push --until x: exit %d, %q", code, stderr)
	}
}

func TestUsageMessages(t *testing.T) {
	code, _, stderr := replay(t, "chek", "x.aaep")
	if code != cli.ExitUsage || !strings.Contains(stderr, "Did you mean this?\n\tcheck") {
		t.Errorf("unknown verb: exit %d, %q", code, stderr)
	}
	code, _, stderr = replay(t, "--visualize")
	if code != cli.ExitUsage || !strings.Contains(stderr, "--visualize needs --input") {
		t.Errorf("--visualize alone: exit %d, %q", code, stderr)
	}
	for _, verb := range []string{"check", "visualize", "info", "export", "import", "cut", "filter", "merge", "repair", "split", "dedupe", "serve", "push", "show"} {
		code, _, stderr := replay(t, verb)
		if code != cli.ExitUsage || !strings.HasPrefix(stderr, "aaep-replay: "+verb+" needs ") {
			t.Errorf("%s without a file: exit %d, %q; want 2 and what %s needs", verb, code, stderr, verb)
		}
	}
}

func TestShellCompletion(t *testing.T) {
	code, out, _ := replay(t, "__complete", "check", "")
	if code != 0 || !strings.Contains(out, "aaep\njsonl\nndjson\n") || !strings.Contains(out, ":8") {
		t.Errorf("FILE completion: exit %d, %q; want capture extensions and FilterFileExt (8)", code, out)
	}
	code, out, _ = replay(t, "__complete", "serve", demoCapture, "--session", "sess_eb")
	if code != 0 || !strings.Contains(out, "sess_eb1273ca151c1c3d\n") || strings.Contains(out, "sess_2803") || !strings.Contains(out, ":4") {
		t.Errorf("--session completion: exit %d, %q", code, out)
	}
	_, out, _ = replay(t, "__complete", "filter", demoCapture, "--session", "")
	if strings.Count(out, "sess_") != 8 {
		t.Errorf("--session completion of the demo capture lists %d sessions, want 8:\n%s", strings.Count(out, "sess_"), out)
	}
	code, out, _ = replay(t, "completion", "bash")
	if code != 0 || !strings.Contains(out, "__aaep-replay_") {
		t.Errorf("completion bash: exit %d", code)
	}
}
