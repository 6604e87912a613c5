package visualize

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHelperTempDir: the helper's TMPDIR is made private (0700) under the
// user's cache directory, and used again; one others may use is refused,
// never repaired.
func TestHelperTempDir(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "cache")
	t.Setenv("XDG_CACHE_HOME", cache)
	dir, err := HelperTempDir()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(cache, "aaep-render"); dir != want {
		t.Errorf("dir = %s, want %s", dir, want)
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("made %v, %v; want mode 0700", st.Mode(), err)
	}
	if again, err := HelperTempDir(); err != nil || again != dir {
		t.Fatalf("again: %s, %v", again, err)
	}
	os.Chmod(dir, 0o770)
	if _, err := HelperTempDir(); !errors.Is(err, ErrHelperDir) || !strings.Contains(err.Error(), "has mode 0770") {
		t.Errorf("group-writable: %v", err)
	}
	if st, _ := os.Stat(dir); st.Mode().Perm() != 0o770 {
		t.Errorf("the mode was changed to %v", st.Mode())
	}
}

// TestHelperError: a helper that crashed is reported by its panic's line,
// without the goroutine trace.
func TestHelperError(t *testing.T) {
	stderr := "panic: open /tmp/go-graphviz/wazero-x: permission denied\n\ngoroutine 1 [running]:\ngithub.com/goccy/go-graphviz/internal/wasm.init.0()\n"
	if got, want := helperError(stderr, errors.New("exit status 2")), "the helper crashed: panic: open /tmp/go-graphviz/wazero-x: permission denied"; got != want {
		t.Errorf("helperError = %q, want %q", got, want)
	}
	if got := helperError("aaep-render: parse dot: syntax error\n", errors.New("exit status 1")); got != "aaep-render: parse dot: syntax error" {
		t.Errorf("helperError = %q", got)
	}
	if got := helperError("", errors.New("exit status 1")); got != "exit status 1" {
		t.Errorf("helperError = %q", got)
	}
}
