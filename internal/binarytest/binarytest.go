// Package binarytest builds a command of this module once per test binary,
// for tests that run the real program as a separate process.
package binarytest

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// GoTool returns the go command that runs the tests: `go test` puts its
// own GOROOT/bin first in a test binary's PATH. Where none is found it
// returns "go", and running it fails with a clear error.
func GoTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return "go"
}

// Binary is a command built on first use.
type Binary struct {
	pkg, name string
	with      [][2]string // commands built beside it: package, name
	once      sync.Once
	dir, path string
	err       error
}

// New returns the command of package pkg (as `go build` names it, "." for
// the package under test), to be built as name.
func New(pkg, name string) *Binary { return &Binary{pkg: pkg, name: name} }

// With builds the command of package pkg as name into the same directory
// too, for a command that runs a sibling found beside its executable
// (aaep-capture hands gRPC to aaep-capture-grpc). It returns b.
func (b *Binary) With(pkg, name string) *Binary {
	b.with = append(b.with, [2]string{pkg, name})
	return b
}

// Path builds the command the first time and returns the path of the
// executable; a failed build fails t.
func (b *Binary) Path(t testing.TB) string {
	t.Helper()
	b.once.Do(func() {
		b.dir, b.err = os.MkdirTemp("", b.name+"-bin")
		if b.err != nil {
			return
		}
		// Other users may run it too (RunAs).
		if b.err = os.Chmod(b.dir, 0o755); b.err != nil {
			return
		}
		b.path = filepath.Join(b.dir, b.name)
		for _, c := range append([][2]string{{b.pkg, b.name}}, b.with...) {
			if out, err := exec.Command(GoTool(), "build", "-o", filepath.Join(b.dir, c[1]), c[0]).CombinedOutput(); err != nil {
				b.err = errors.New("go build " + c[0] + ": " + err.Error() + "\n" + string(out))
				return
			}
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

// Run runs the command with args in dir to completion and returns its exit
// status, standard output and standard error.
func (b *Binary) Run(t testing.TB, dir string, args ...string) (int, []byte, string) {
	t.Helper()
	return b.run(t, dir, nil, args)
}

func (b *Binary) run(t testing.TB, dir string, attr *syscall.SysProcAttr, args []string) (int, []byte, string) {
	t.Helper()
	cmd := exec.Command(b.Path(t), args...)
	cmd.Dir = dir
	cmd.SysProcAttr = attr
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.Bytes(), errb.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), out.Bytes(), errb.String()
	}
	t.Fatal(err)
	return 0, nil, ""
}

// NoLeftovers fails t if dir holds a temporary output file (".NAME.tmp-...")
// or a file named "-".
func NoLeftovers(t testing.TB, dir string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") || e.Name() == "-" {
			t.Errorf("left behind in %s: %s", dir, e.Name())
		}
	}
}
