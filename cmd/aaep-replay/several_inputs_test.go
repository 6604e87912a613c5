package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// twoCaptures writes two copies of the demo capture, two recordings, into
// a directory of their own and returns their paths.
func twoCaptures(t *testing.T) []string {
	t.Helper()
	demo, err := os.ReadFile(demoCapture)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var paths []string
	for _, name := range []string{"a.aaep", "b.aaep"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, demo, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// TestShowSeveralFiles: show takes FILE repeated (an unquoted glob, as the
// shell expands it) as it takes the quoted glob: the same output, each
// recording under its own heading (it exited 2, "show takes the capture
// FILE to show, got 2 arguments").
func TestShowSeveralFiles(t *testing.T) {
	paths := twoCaptures(t)
	code, out, stderr := replay(t, append([]string{"show"}, paths...)...)
	if code != 0 {
		t.Fatalf("show a.aaep b.aaep: exit %d\n%s", code, stderr)
	}
	if n := strings.Count(out, "=== "); n != 2 {
		t.Errorf("show a.aaep b.aaep: %d recording headings, want 2\n%.500s", n, out)
	}
	code, glob, stderr := replay(t, "show", filepath.Join(filepath.Dir(paths[0]), "*.aaep"))
	if code != 0 {
		t.Fatalf("show '*.aaep': exit %d\n%s", code, stderr)
	}
	if out != glob {
		t.Errorf("show a.aaep b.aaep and show '*.aaep' differ")
	}
}

// TestViewSeveralFiles: view takes FILE repeated as one view of both
// recordings (it exited 2).
func TestViewSeveralFiles(t *testing.T) {
	paths := twoCaptures(t)
	one, err := os.ReadFile(paths[0])
	if err != nil || len(one) == 0 {
		t.Fatal(err)
	}
	_, info, _ := replay(t, "info", "--json", paths[0])
	var in struct{ Records int64 }
	if err := json.Unmarshal([]byte(info), &in); err != nil || in.Records == 0 {
		t.Fatalf("info --json: %v %.200s", err, info)
	}
	s := startServe(t, append(append([]string{"view"}, paths...), "--listen", "127.0.0.1:0")...)
	resp, err := http.Get("http://" + s.addr + "/api/capture")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var c struct{ Records int64 }
	if resp.StatusCode != 200 || json.Unmarshal(body, &c) != nil || c.Records != 2*in.Records {
		t.Errorf("GET /api/capture: %d %.300s; want %d records (both recordings)", resp.StatusCode, body, 2*in.Records)
	}
	if code := s.stop(t); code != 0 {
		t.Errorf("view exited %d after Ctrl-C", code)
	}
}

// TestEditSeveralFiles: cut, filter, dedupe and split take FILE repeated
// (an unquoted glob) as one capture, as they take the quoted glob: the
// same records out (they exited 2, "cut takes the capture FILE to cut, got
// 2 arguments"). split of several inputs names its parts with -o.
func TestEditSeveralFiles(t *testing.T) {
	paths := twoCaptures(t)
	dir := filepath.Dir(paths[0])
	glob := filepath.Join(dir, "*.aaep")
	out := t.TempDir()
	for _, tc := range []struct {
		verb string
		args []string
	}{
		{"cut", []string{"--from", "#3"}},
		{"filter", []string{"--type", "state.changed"}},
		{"dedupe", nil},
	} {
		repeated, quoted := filepath.Join(out, tc.verb+"-repeated.aaep"), filepath.Join(out, tc.verb+"-glob.aaep")
		code, _, stderr := replay(t, append(append(append([]string{tc.verb}, paths...), tc.args...), "-o", repeated)...)
		if code != 0 {
			t.Errorf("%s a.aaep b.aaep: exit %d\n%s", tc.verb, code, stderr)
			continue
		}
		if code, _, stderr := replay(t, append(append([]string{tc.verb, glob}, tc.args...), "-o", quoted)...); code != 0 {
			t.Fatalf("%s '*.aaep': exit %d\n%s", tc.verb, code, stderr)
		}
		_, a, _ := replay(t, "export", repeated)
		_, b, _ := replay(t, "export", quoted)
		if a == "" || a != b {
			t.Errorf("%s: the repeated FILEs gave %d bytes of messages, the quoted glob %d; want the same", tc.verb, len(a), len(b))
		}
	}
	code, _, stderr := replay(t, append(append([]string{"split"}, paths...), "--records", "50", "-o", filepath.Join(out, "part.aaep"))...)
	if code != 0 {
		t.Errorf("split a.aaep b.aaep -o part.aaep: exit %d\n%s", code, stderr)
	}
	if parts, _ := filepath.Glob(filepath.Join(out, "part-*.aaep")); len(parts) < 2 {
		t.Errorf("split wrote %d parts", len(parts))
	}
	code, _, stderr = replay(t, append(append([]string{"split"}, paths...), "--records", "50")...)
	if code != 2 || !strings.Contains(stderr, "needs -o") {
		t.Errorf("split a.aaep b.aaep without -o: exit %d, %q; want 2 saying it needs -o", code, stderr)
	}
}
