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
	"github.com/aaep-tools/aaepkit/internal/outfile"
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

// Kind is what an error is. Code maps kinds to exit codes, in one place:
// a command says what went wrong (cli.Output(err), cli.Input(err), ...),
// never which number that is.
type Kind string

// The kinds of error, with their exit codes.
const (
	// KindUsage: a bad flag value, argument or combination, an empty
	// selection (2).
	KindUsage Kind = "usage"
	// KindInput: an input that cannot be read, or is not what the command
	// reads (2).
	KindInput Kind = "input"
	// KindDamaged: a damaged capture, read up to the damage (2).
	KindDamaged Kind = "damaged"
	// KindIncomplete: no verdict, for part of what was asked could not be
	// read or run (check's and diff's INCOMPLETE, a test scenario that could
	// not run) (2).
	KindIncomplete Kind = "incomplete"
	// KindOutput: an output refused (it is an input, an original recording,
	// it exists) or that cannot be written (2).
	KindOutput Kind = "output"
	// KindUnavailable: an endpoint, the network or object storage failed (1).
	KindUnavailable Kind = "unavailable"
	// KindFindings: the command did its work and what it examined fell
	// short: a finding at or above the threshold, a failed expectation,
	// recordings that differ (1).
	KindFindings Kind = "findings"
	// KindFailure: a failure of no other kind (1).
	KindFailure Kind = "failure"
)

// Code is the exit code of an error of kind k: 2 for a usage error and for
// what cannot be read or written, 1 for every other failure.
func (k Kind) Code() int {
	switch k {
	case KindUsage, KindInput, KindDamaged, KindIncomplete, KindOutput:
		return ExitUsage
	}
	return ExitFailure
}

// Error is an error of a known kind.
type Error struct {
	Kind Kind
	Err  error
}

func (e *Error) Error() string {
	if e.Err == nil {
		return string(e.Kind) + " error"
	}
	return e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

func (e *Error) exitCode() int { return e.Kind.Code() }

// Of returns err as an error of kind k. A nil err stays nil.
func Of(k Kind, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Kind: k, Err: err}
}

// Usage marks err as a usage error. A nil err stays nil.
func Usage(err error) error { return Of(KindUsage, err) }

// Input marks err as an input that cannot be read. A nil err stays nil.
func Input(err error) error { return Of(KindInput, err) }

// Damaged marks err as a damaged capture. A nil err stays nil.
func Damaged(err error) error { return Of(KindDamaged, err) }

// Incomplete marks err as a result without a verdict. A nil err stays nil.
func Incomplete(err error) error { return Of(KindIncomplete, err) }

// Output marks err as an output refused or not written. A nil err stays nil.
func Output(err error) error { return Of(KindOutput, err) }

// Unavailable marks err as a failure of an endpoint, the network or object
// storage. A nil err stays nil.
func Unavailable(err error) error { return Of(KindUnavailable, err) }

// Usagef returns a usage error.
func Usagef(format string, args ...any) error {
	return &Error{Kind: KindUsage, Err: fmt.Errorf(format, args...)}
}

// ErrSilent means the command already told the user what went wrong; only the
// exit code remains to be set.
var ErrSilent = errors.New("silent error")

// Silent returns an error of kind k that prints nothing more: the command
// has already said what went wrong.
func Silent(k Kind) error { return &Error{Kind: k, Err: ErrSilent} }

// KindOf says what err is, by type, the first match along its chain winning:
//
//   - an *Error: its Kind;
//   - an *outfile.Error: KindOutput;
//   - a network error (*net.OpError, *net.DNSError): KindUnavailable;
//   - a cancelled or expired context: KindFailure;
//   - a damaged capture (*capfile.CorruptionError, capfile.ErrNotCapture,
//     capfile.ErrUnsupportedVersion): KindDamaged;
//   - a file error (*fs.PathError, *os.LinkError, *os.SyscallError): KindInput;
//   - anything else: KindFailure (a failure of no known kind is not a usage error).
//
// A nil err has no kind ("").
func KindOf(err error) Kind {
	if err == nil {
		return ""
	}
	var ke *Error
	if errors.As(err, &ke) {
		return ke.Kind
	}
	var oe *outfile.Error
	if errors.As(err, &oe) {
		return KindOutput
	}
	var ne *net.OpError
	var de *net.DNSError
	if errors.As(err, &ne) || errors.As(err, &de) {
		return KindUnavailable // before file errors: a network error wraps a syscall error too
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return KindFailure
	}
	var ce *capfile.CorruptionError
	if errors.As(err, &ce) || errors.Is(err, capfile.ErrNotCapture) || errors.Is(err, capfile.ErrUnsupportedVersion) {
		return KindDamaged
	}
	var pe *fs.PathError
	var le *os.LinkError
	var se *os.SyscallError
	if errors.As(err, &pe) || errors.As(err, &le) || errors.As(err, &se) {
		return KindInput
	}
	return KindFailure
}

// Code maps an error returned by a command to its exit code: 0 for nil,
// else the code of its kind (KindOf, Kind.Code); the first *Error along
// its chain decides.
func Code(err error) int {
	if err == nil {
		return ExitOK
	}
	var c interface{ exitCode() int }
	if errors.As(err, &c) {
		return c.exitCode()
	}
	return KindOf(err).Code()
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
		return Usage(err)
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
