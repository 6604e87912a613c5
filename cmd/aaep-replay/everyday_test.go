package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/sample"
)

// replayIn runs aaep-replay with stdin as its standard input.
func replayIn(t *testing.T, stdin []byte, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), cli.Streams{In: bytes.NewReader(stdin), Out: &out, Err: &errb}, args)
	return code, out.String(), errb.String()
}

// brokenCapture writes a capture of 40 sessions, every fourth breaking the
// protocol: a report far longer than a screen.
func brokenCapture(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "broken.aaep")
	opts := sample.Options{Sessions: 40, Seed: 17, Violations: true}
	if err := sample.WriteCapture(path, sample.Stream(opts), opts.Start0(), "aaep-capture/test"); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCheckSummaryViews(t *testing.T) {
	path := brokenCapture(t)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Standard input, so that the report's input name is stable: "-".
	code, summary, stderr := replayIn(t, data, "check", "--summary", "-")
	if code != cli.ExitFailure {
		t.Fatalf("exit %d, want 1; stderr %s", code, stderr)
	}
	golden(t, "check/summary.txt", summary)
	for _, want := range []string{"findings by rule:", "worst sessions:", "first occurrence of each rule:", "MUST  SEQ-STATE-CHAIN", "FAIL: "} {
		if !strings.Contains(summary, want) {
			t.Errorf("summary lacks %q", want)
		}
	}

	_, auto, _ := replayIn(t, data, "check", "-")
	if auto != summary {
		t.Errorf("a report longer than a screen should default to the summary; got:\n%s", auto)
	}
	_, all, _ := replayIn(t, data, "check", "--all", "-")
	if n := strings.Count(all, "\n"); n <= 50 || strings.Contains(all, "worst sessions:") {
		t.Errorf("--all: %d lines (want the whole listing, over 50 lines, no summary)", n)
	}
	// Every finding of the listing is counted in the summary's table.
	if got, want := strings.Count(all, "  MUST  SEQ-STATE-CHAIN"), ruleCount(t, summary, "SEQ-STATE-CHAIN"); got != want {
		t.Errorf("listing has %d SEQ-STATE-CHAIN findings, summary counts %d", got, want)
	}
	// The tail (totals and verdict) is the same in every view.
	if tail(all, 2) != tail(summary, 2) {
		t.Errorf("verdicts differ:\n%s\n%s", tail(all, 2), tail(summary, 2))
	}
	// JSON is unchanged by the views.
	_, j1, _ := replayIn(t, data, "check", "--json", "-")
	_, j2, _ := replayIn(t, data, "check", "--json", "--summary", "-")
	if j1 != j2 || !strings.HasPrefix(j1, "{") {
		t.Error("--summary changed the JSON report")
	}

	// A short report stays a listing.
	_, short, _ := replay(t, "check", demoCapture)
	_, shortAll, _ := replay(t, "check", "--all", demoCapture)
	if short != shortAll || strings.Contains(short, "worst sessions") {
		t.Errorf("a report that fits a screen should be listed in full:\n%s", short)
	}
	code, demoSummary, _ := replay(t, "check", "--summary", demoCapture)
	if code != cli.ExitFailure {
		t.Errorf("--summary exit %d, want 1", code)
	}
	golden(t, "check/demo-summary.txt", demoSummary)

	if code, _, stderr := replay(t, "check", "--summary", "--all", demoCapture); code != cli.ExitUsage || !strings.Contains(stderr, "exclude") {
		t.Errorf("--summary --all: exit %d, %q; want a usage error", code, stderr)
	}
}

func ruleCount(t *testing.T, summary, rule string) int {
	t.Helper()
	for _, line := range strings.Split(summary, "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[1] == rule {
			var n int
			for _, c := range f[2] {
				n = n*10 + int(c-'0')
			}
			return n
		}
	}
	t.Fatalf("summary has no count for %s", rule)
	return 0
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func TestCheckRotatedSetAsOneStream(t *testing.T) {
	whole := brokenCapture(t)
	dir := t.TempDir()
	// Split the capture in three as rotation would (each part's header
	// names its number and the part before it), then check the parts.
	if code, _, stderr := replay(t, "split", whole, "--records", "200", "-o", filepath.Join(dir, "run.aaep")); code != 0 {
		t.Fatalf("split: %s", stderr)
	}
	// export and info read the set as one capture and per file.
	_, wantJSONL, _ := replay(t, "export", whole)
	if code, gotJSONL, stderr := replay(t, "export", filepath.Join(dir, "run-*.aaep")); code != 0 || gotJSONL != wantJSONL {
		t.Errorf("export of the parts differs from the whole's (exit %d, %s)", code, stderr)
	}
	code, infoOut, stderr := replay(t, "info", dir)
	if code != 0 || strings.Count(infoOut, "file:") != 3 || !strings.Contains(infoOut, "total:       3 files (3 clean)") {
		t.Errorf("info of the directory: exit %d, %s\n%s", code, stderr, infoOut)
	}
	_, wholeInfo, _ := replay(t, "info", "--json", whole)
	_, setInfo, _ := replay(t, "info", "--json", dir)
	var one struct{ Records int64 }
	var set struct {
		Files []struct{ File string }
		Total struct {
			Files, Sessions int
			Records         int64
		}
	}
	if err := json.Unmarshal([]byte(wholeInfo), &one); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(setInfo), &set); err != nil {
		t.Fatal(err)
	}
	if len(set.Files) != 3 || set.Total.Files != 3 || set.Total.Records != one.Records || set.Total.Sessions != 40 {
		t.Errorf("info --json of the set: %+v; want 3 files, %d records, 40 sessions", set, one.Records)
	}

	_, want, _ := replay(t, "check", "--json", whole)
	for name, args := range map[string][]string{
		"glob":      {filepath.Join(dir, "run-*.aaep")},
		"directory": {dir},
		"reversed":  {filepath.Join(dir, "run-000003.aaep"), filepath.Join(dir, "run-000002.aaep"), filepath.Join(dir, "run-000001.aaep")},
	} {
		t.Run(name, func(t *testing.T) {
			code, got, stderr := replay(t, append([]string{"check", "--json"}, args...)...)
			if code != cli.ExitFailure {
				t.Fatalf("exit %d, stderr %s", code, stderr)
			}
			// The same report, but for the input's name.
			if dropInput(t, got) != dropInput(t, want) {
				t.Errorf("report of the parts differs from the whole's")
			}
		})
	}
	if code, _, stderr := replay(t, "check", filepath.Join(dir, "nothing-*.aaep")); code != cli.ExitUsage || !strings.Contains(stderr, "check: no input matches") {
		t.Errorf("glob without match: exit %d, %q", code, stderr)
	}
	// A directory gives info (which reads captures only) its captures.
	if code, _, _ := replay(t, "export", whole, "-o", filepath.Join(dir, "whole.jsonl")); code != 0 {
		t.Fatal("export")
	}
	if code, out, stderr := replay(t, "info", dir); code != 0 || strings.Count(out, "file:") != 3 {
		t.Errorf("info of a directory with a JSON Lines file: exit %d, %d blocks, %s", code, strings.Count(out, "file:"), stderr)
	}
}

// dropInput is a check --json report from its first recording's sessions
// on (what names the recording and its parts left out); it fails the test
// when the report holds no sessions, so that equal results compare
// reports and not two empty strings.
func dropInput(t *testing.T, report string) string {
	t.Helper()
	_, rest, ok := strings.Cut(report, "\"sessions\": [")
	if !ok {
		t.Fatalf("report holds no sessions:\n%s", report)
	}
	return rest
}

var _ = time.Second
