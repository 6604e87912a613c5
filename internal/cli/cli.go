// Package cli holds what both command-line tools share: exit codes mapped
// from typed errors, and the streams a command writes to.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// Exit codes shared by aaep-capture and aaep-replay.
const (
	// ExitOK: the command did what was asked (for check: no finding at or above the threshold).
	ExitOK = 0
	// ExitFailure: an endpoint or network failure (capture), or findings at or
	// above the threshold (check).
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

// Code maps an error returned by a command to its exit code. Errors without a
// code are file or usage errors (2).
func Code(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return ExitUsage
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
	return Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, ErrIsTTY: isTerminal(os.Stderr)}
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	return fi.Mode()&os.ModeCharDevice != 0
}

// Report prints err (unless silent) as "prog: message" and returns its exit code.
func Report(w io.Writer, prog string, err error) int {
	if err == nil {
		return ExitOK
	}
	if !errors.Is(err, ErrSilent) {
		fmt.Fprintf(w, "%s: %v\n", prog, err)
	}
	return Code(err)
}
