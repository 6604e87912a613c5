package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStdinEverywhere: "-" is standard input wherever a capture or JSON
// Lines is read (issue 34): import - and repair - read it (they exited 2,
// "open -: no such file or directory"), naming it "standard input" in what
// they say, never the file it was kept in; cut - says it needs a seekable
// capture and names the alternative.
func TestStdinEverywhere(t *testing.T) {
	demo, err := os.ReadFile(demoCapture)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	code, jsonl, stderr := replay(t, "export", demoCapture)
	if code != 0 {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}

	imported := filepath.Join(dir, "imported.aaep")
	code, out, stderr := replayIn(t, []byte(jsonl), "import", "-", "-o", imported)
	if code != 0 || !strings.Contains(out, "imported 102 records") {
		t.Errorf("import -: exit %d, %q %q", code, out, stderr)
	}
	_, fromFile, _ := replay(t, "export", imported)
	if fromFile != jsonl {
		t.Errorf("import - then export differs from the export it read")
	}

	repaired := filepath.Join(dir, "repaired.aaep")
	code, out, stderr = replayIn(t, demo, "repair", "-", "-o", repaired)
	if code != 0 || !strings.Contains(out, "kept 108 records") {
		t.Errorf("repair -: exit %d, %q %q", code, out, stderr)
	}
	if got, err := os.ReadFile(repaired); err != nil || len(got) == 0 {
		t.Errorf("repair - wrote %d bytes: %v", len(got), err)
	}

	// What they say names standard input, not the file it was kept in.
	code, _, stderr = replayIn(t, demo, "import", "-", "-o", filepath.Join(dir, "x.aaep"))
	if code != 2 || !strings.Contains(stderr, "standard input: already a capture") || strings.Contains(stderr, "stdin-") {
		t.Errorf("import - of a capture: exit %d, %q; want 2 naming standard input", code, stderr)
	}
	code, _, stderr = replayIn(t, []byte(jsonl), "repair", "-", "-o", filepath.Join(dir, "y.aaep"))
	if code != 2 || !strings.Contains(stderr, "standard input") || strings.Contains(stderr, "stdin-") {
		t.Errorf("repair - of JSON Lines: exit %d, %q; want 2 naming standard input", code, stderr)
	}

	// show - and info - read the capture's header as they read its
	// records (show printed times of year 1, info a version 0 capture).
	_, want, _ := replay(t, "show", demoCapture)
	if code, got, stderr := replayIn(t, demo, "show", "-"); code != 0 || got != want {
		t.Errorf("show -: exit %d, differs from show of the file\n%s", code, stderr)
	}
	if code, got, _ := replayIn(t, demo, "info", "-"); code != 0 || !strings.Contains(got, "start:       2026-11-02T09:00:00Z") || !strings.Contains(got, "written by aaep-capture/demo") {
		t.Errorf("info -: exit %d, the header not read:\n%s", code, got)
	}

	code, _, stderr = replayIn(t, demo, "cut", "-", "-o", filepath.Join(dir, "c.aaep"))
	if code != 2 || !strings.Contains(stderr, "seekable") || !strings.Contains(stderr, "filter") {
		t.Errorf("cut -: exit %d, %q; want 2 saying it needs a seekable capture, naming filter", code, stderr)
	}
}
