// Package testdeps is how a test asks for what it needs from outside Go: a
// program on PATH (zstd, rsvg-convert, chromium, python3, curl, bash) or a
// file that scripts/testdeps.sh installs (an npm package). What is missing
// skips the test, naming it and where it comes from, so that `go test ./...`
// runs on a machine without it; with AAEP_REQUIRE_TESTDEPS=1 (make test sets
// it, after scripts/testdeps.sh has installed everything) it fails the test
// instead, so that nothing is skipped where it should have run.
package testdeps

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// RequireEnv is the environment variable that turns a missing dependency
// from a skip into a failure.
const RequireEnv = "AAEP_REQUIRE_TESTDEPS"

// Required reports whether missing dependencies fail tests (RequireEnv is
// set to anything but "" or "0").
func Required() bool {
	v := os.Getenv(RequireEnv)
	return v != "" && v != "0"
}

// Missing skips t (or, when Required, fails it) because what is missing:
// what names the dependency and where it comes from ("zstd (Debian package
// zstd)"), err says why it was not found.
func Missing(t testing.TB, what string, err error) {
	t.Helper()
	msg := fmt.Sprintf("missing test dependency: %s: %v (scripts/testdeps.sh installs it)", what, err)
	if Required() {
		t.Fatalf("%s; %s=1 requires it", msg, RequireEnv)
	}
	t.Skip(msg)
}

// Command returns the path of the program name on PATH, or skips t (fails
// it when Required) naming the program and the Debian package that has it.
func Command(t testing.TB, name, debianPackage string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(t, fmt.Sprintf("%s (Debian package %s)", name, debianPackage), err)
	}
	return p
}

// File returns path when it exists, or skips t (fails it when Required)
// naming what the file is.
func File(t testing.TB, path, what string) string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		Missing(t, what, err)
	}
	return path
}
