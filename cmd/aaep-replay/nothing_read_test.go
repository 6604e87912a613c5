package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEditsOfNothingReadable: a capture of which no record can be read (cut
// off inside its header) makes cut, filter, dedupe, merge and split exit 2
// with no output (cut, dedupe and split exited 0 with a warning that named
// --allow-incomplete, which was not given); --allow-incomplete lets them
// go on, saying so. A capture torn after some records still only warns.
func TestEditsOfNothingReadable(t *testing.T) {
	demo, err := os.ReadFile(demoCapture)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cutoff := filepath.Join(dir, "cutoff.aaep")
	if err := os.WriteFile(cutoff, demo[:200], 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.aaep")
	for _, args := range [][]string{
		{"cut", cutoff, "-o", out},
		{"filter", cutoff, "--messages-only", "-o", out},
		{"dedupe", cutoff, "-o", out},
		{"merge", cutoff, "-o", out},
		{"split", cutoff, "--records", "5", "-o", out},
	} {
		code, _, stderr := replay(t, args...)
		if code != 2 || !strings.Contains(stderr, "cutoff.aaep") || strings.Contains(stderr, "--allow-incomplete") {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming the file, not --allow-incomplete", args[0], code, stderr)
		}
		if parts, _ := filepath.Glob(filepath.Join(dir, "out*")); len(parts) != 0 {
			t.Errorf("%v wrote %v", args[0], parts)
		}
	}
	code, _, stderr := replay(t, "cut", cutoff, "-o", out, "--allow-incomplete")
	if code != 0 || !strings.Contains(stderr, "warning") || !strings.Contains(stderr, "--allow-incomplete") {
		t.Errorf("cut --allow-incomplete: exit %d, stderr %q; want 0 and a warning", code, stderr)
	}
	torn := filepath.Join(dir, "torn.aaep")
	if err := os.WriteFile(torn, demo[:len(demo)-100], 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = replay(t, "cut", torn, "-o", filepath.Join(dir, "fromtorn.aaep"))
	if code != 0 || !strings.Contains(stderr, "warning") || strings.Contains(stderr, "--allow-incomplete") {
		t.Errorf("cut of a torn capture: exit %d, stderr %q; want 0 and a warning that does not name --allow-incomplete", code, stderr)
	}
}
