// Package cli holds what both command-line tools share: exit codes mapped
// from typed errors, and the streams a command writes to.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/aaep-tools/aaepkit/capfile"
)

// Exit codes shared by aaep-capture and aaep-replay.
const (
	// ExitOK: the command did what was asked (for check: no finding at or above the threshold).
	ExitOK = 0
	// ExitFailure: an endpoint or network failure (capture), findings at or
	// above the threshold (check), or an error of no known kind.
	ExitFailure = 1
	// ExitUsage: a usage error, or a file that cannot be read or written.
	ExitUsage = 2
)

// ExitError carries an exit code with the error that caused it.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// WithCode wraps err so that the command exits with code. A nil err stays nil.
func WithCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &ExitError{Code: code, Err: err}
}

// Usagef returns a usage error (exit code 2).
func Usagef(format string, args ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
}

// ErrSilent means the command already told the user what went wrong; only the
// exit code remains to be set.
var ErrSilent = errors.New("silent error")

// Silent returns an error that exits with code without printing anything more.
func Silent(code int) error { return &ExitError{Code: code, Err: ErrSilent} }

// Coder is implemented by errors that know their exit code (outfile's
// errors, for instance).
type Coder interface{ ExitCode() int }

// Code maps an error returned by a command to its exit code, by type, the
// first match along the error's chain winning:
//
//   - an *ExitError or a Coder: its own code;
//   - a network error (*net.OpError, *net.DNSError), a cancelled or expired context: 1;
//   - a file error (*fs.PathError, *os.LinkError, *os.SyscallError) or a
//     damaged capture (*capfile.CorruptionError, capfile.ErrNotCapture,
//     capfile.ErrUnsupportedVersion): 2;
//   - anything else: 1 (a failure of no known kind is not a usage error).
func Code(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	var c Coder
	if errors.As(err, &c) {
		return c.ExitCode()
	}
	var oe *net.OpError
	var de *net.DNSError
	if errors.As(err, &oe) || errors.As(err, &de) {
		return ExitFailure // before file errors: a network error wraps a syscall error too
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return ExitFailure
	}
	var pe *fs.PathError
	var le *os.LinkError
	var se *os.SyscallError
	var ce *capfile.CorruptionError
	switch {
	case errors.As(err, &pe), errors.As(err, &le), errors.As(err, &se), errors.As(err, &ce),
		errors.Is(err, capfile.ErrNotCapture), errors.Is(err, capfile.ErrUnsupportedVersion):
		return ExitUsage
	}
	return ExitFailure
}

// Streams are the standard streams of a command, injected so that tests can use buffers.
type Streams struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
	// ErrIsTTY reports whether Err is a terminal (progress displays only then).
	ErrIsTTY bool
}

// System returns the process's own streams.
func System() Streams {
	return Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, ErrIsTTY: IsTerminal(os.Stderr)}
}

// IsTerminal reports whether f is a terminal (a character device such as
// /dev/null is not).
func IsTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// Report prints err (unless silent) as "prog: message" and returns its exit code.
func Report(w io.Writer, prog string, err error) int {
	if err == nil {
		return ExitOK
	}
	if !errors.Is(err, ErrSilent) {
		fmt.Fprintf(w, "%s: %v%s\n", prog, err, repairHint(err))
	}
	return Code(err)
}

// repairHint is what a damaged capture's report adds: where the intact
// records can be saved (unless the message says so already).
func repairHint(err error) string {
	var ce *capfile.CorruptionError
	if !errors.As(err, &ce) || capfile.IsTorn(err) || strings.Contains(err.Error(), "aaep-replay repair") {
		return ""
	}
	return " (aaep-replay repair FILE -o NEW.aaep saves its intact records)"
}

// ranError marks an error returned by a command's own RunE.
type ranError struct{ err error }

func (e ranError) Error() string { return e.err.Error() }
func (e ranError) Unwrap() error { return e.err }

// Execute runs root with ctx. An error of a command's RunE keeps its own
// exit code (Code); every other error comes from cobra itself (an unknown
// command, a wrong number of arguments, a bad flag) and is a usage error.
func Execute(ctx context.Context, root *cobra.Command) error {
	markRun(root)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return nil
	}
	var r ranError
	if errors.As(err, &r) {
		return r.err
	}
	if Code(err) != ExitUsage {
		return &ExitError{Code: ExitUsage, Err: err}
	}
	return err
}

func markRun(c *cobra.Command) {
	if run := c.RunE; run != nil {
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if err := run(cmd, args); err != nil {
				return ranError{err}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		markRun(sub)
	}
}

// Version is the version a command reports: stamped, the value make build
// sets with -ldflags "-X main.version=$(git describe --tags --always
// --dirty)", or else what the Go toolchain recorded when it built the
// binary (go install, go build), in the same form: the commit's first 7
// hex digits, "-dirty" when the work tree had changes; a module version
// when built from a module download; "dev" when nothing is known.
func Version(stamped string) string {
	if stamped != "" {
		return stamped
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	switch {
	case len(rev) >= 7:
		return rev[:7] + dirty
	case bi.Main.Version != "" && bi.Main.Version != "(devel)":
		return bi.Main.Version
	}
	return "dev"
}
