// Package golden compares test output with golden files under testdata/ and
// rewrites them when the tests run with -update.
//
//	go test ./visualize -update   # rewrite, then review the diff
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/ instead of comparing with them")

// Updating reports whether the tests run with -update.
func Updating() bool { return *update }

// Check compares got with the file at path. With -update it writes got to
// path (creating its directory) instead.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (go test -update rewrites it; review the diff)\n%s", path, diff(string(want), string(got)))
	}
}

// diff shows the first differing line with a little context.
func diff(want, got string) string {
	wl, gl := bytes.Split([]byte(want), []byte("\n")), bytes.Split([]byte(got), []byte("\n"))
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g []byte
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if !bytes.Equal(w, g) || (i >= len(wl)) != (i >= len(gl)) {
			return "first difference at line " + strconv.Itoa(i+1) + ":\n--- want: " + string(w) + "\n+++ got:  " + string(g)
		}
	}
	return "(files differ only in length)"
}
