package rendertmp

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDir: the helper's TMPDIR is made private (0700) under the
// user's cache directory, and used again; one others may use is refused,
// never repaired.
func TestDir(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "cache")
	t.Setenv("XDG_CACHE_HOME", cache)
	dir, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(cache, "aaep-render"); dir != want {
		t.Errorf("dir = %s, want %s", dir, want)
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("made %v, %v; want mode 0700", st.Mode(), err)
	}
	if again, err := Dir(); err != nil || again != dir {
		t.Fatalf("again: %s, %v", again, err)
	}
	os.Chmod(dir, 0o770)
	if _, err := Dir(); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "has mode 0770") {
		t.Errorf("group-writable: %v", err)
	}
	if st, _ := os.Stat(dir); st.Mode().Perm() != 0o770 {
		t.Errorf("the mode was changed to %v", st.Mode())
	}
}
