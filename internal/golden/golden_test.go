package golden

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	failed bool
	msg    string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.failed = true
	r.msg = format
}
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...) }

func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.golden")
	if err := os.WriteFile(path, []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	same := &recorder{TB: t}
	Check(same, path, []byte("a\nb\n"))
	if same.failed {
		t.Error("equal output reported as different")
	}
	other := &recorder{TB: t}
	Check(other, path, []byte("a\nc\n"))
	if !other.failed {
		t.Error("different output not reported")
	}
	missing := &recorder{TB: t}
	Check(missing, filepath.Join(t.TempDir(), "none"), []byte("x"))
	if !missing.failed || !strings.Contains(missing.msg, "-update") {
		t.Error("a missing golden file must fail and say how to create it")
	}
}

func TestDiff(t *testing.T) {
	if d := diff("a\nb\nc", "a\nx\nc"); !strings.Contains(d, "line 2") || !strings.Contains(d, "x") {
		t.Errorf("diff = %q", d)
	}
	if d := diff("a\n", "a\nb"); !strings.Contains(d, "line 2") {
		t.Errorf("diff = %q", d)
	}
}
