package testdeps_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/internal/testdeps"
)

// TestMissingSkipsOrFails runs a test that needs a program that does not
// exist, in a child go test process: without the variable it is skipped,
// naming the program and its package; with AAEP_REQUIRE_TESTDEPS=1 it fails
// with the same words.
func TestMissingSkipsOrFails(t *testing.T) {
	if os.Getenv("TESTDEPS_CHILD") == "1" {
		testdeps.Command(t, "aaep-no-such-program", "aaep-no-such-package")
		t.Fatal("Command returned for a program that is not on PATH")
		return
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		require string
		want    string
		fails   bool
	}{
		{"", "--- SKIP: TestMissingSkipsOrFails", false},
		{"0", "--- SKIP: TestMissingSkipsOrFails", false},
		{"1", "--- FAIL: TestMissingSkipsOrFails", true},
	} {
		cmd := exec.Command(self, "-test.run", "^TestMissingSkipsOrFails$", "-test.v")
		cmd.Env = append(os.Environ(), "TESTDEPS_CHILD=1", testdeps.RequireEnv+"="+tt.require)
		out, err := cmd.CombinedOutput()
		if (err != nil) != tt.fails {
			t.Errorf("%s=%q: exit error %v, want failure %v\n%s", testdeps.RequireEnv, tt.require, err, tt.fails, out)
		}
		for _, w := range []string{tt.want, "aaep-no-such-program (Debian package aaep-no-such-package)", "scripts/testdeps.sh"} {
			if !strings.Contains(string(out), w) {
				t.Errorf("%s=%q: output lacks %q:\n%s", testdeps.RequireEnv, tt.require, w, out)
			}
		}
	}
}

// TestFound: what exists is returned and the test goes on.
func TestFound(t *testing.T) {
	if got := testdeps.File(t, "testdeps.go", "this package's source"); got != "testdeps.go" {
		t.Errorf("File = %q", got)
	}
	sh := testdeps.Command(t, "sh", "dash")
	if !filepath.IsAbs(sh) {
		t.Errorf("Command(sh) = %q, want an absolute path", sh)
	}
}
