// Package binarytest builds a command of this module once per test binary,
// for tests that run the real program as a separate process.
package binarytest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// Binary is a command built on first use.
type Binary struct {
	pkg, name string
	once      sync.Once
	dir, path string
	err       error
}

// New returns the command of package pkg (as `go build` names it, "." for
// the package under test), to be built as name.
func New(pkg, name string) *Binary { return &Binary{pkg: pkg, name: name} }

// Path builds the command the first time and returns the path of the
// executable; a failed build fails t.
func (b *Binary) Path(t testing.TB) string {
	t.Helper()
	b.once.Do(func() {
		b.dir, b.err = os.MkdirTemp("", b.name+"-bin")
		if b.err != nil {
			return
		}
		b.path = filepath.Join(b.dir, b.name)
		gotool := filepath.Join(runtime.GOROOT(), "bin", "go")
		if out, err := exec.Command(gotool, "build", "-o", b.path, b.pkg).CombinedOutput(); err != nil {
			b.err = errors.New("go build " + b.pkg + ": " + err.Error() + "\n" + string(out))
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// Remove deletes the built executable (call it from TestMain after m.Run).
func (b *Binary) Remove() {
	if b.dir != "" {
		os.RemoveAll(b.dir)
	}
}
