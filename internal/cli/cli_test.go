package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/spf13/cobra"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/outfile"
)

func TestCodeByType(t *testing.T) {
	_, statErr := os.Stat(filepath.Join(t.TempDir(), "missing"))
	_, dialErr := net.Dial("tcp", "127.0.0.1:1")
	cases := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, ExitOK},
		{"unknown error", errors.New("something broke"), ExitFailure},
		{"wrapped unknown error", fmt.Errorf("context: %w", errors.New("x")), ExitFailure},
		{"usage", Usagef("bad flag"), ExitUsage},
		{"explicit kind", Unavailable(&fs.PathError{Op: "open", Err: fs.ErrNotExist}), ExitFailure},
		{"silent", Silent(KindFindings), ExitFailure},
		{"silent incomplete", Silent(KindIncomplete), ExitUsage},
		{"file error", fmt.Errorf("read: %w", statErr), ExitUsage},
		{"damaged capture", fmt.Errorf("x: %w", &capfile.CorruptionError{Offset: 10, Index: 2, Err: errors.New("bad crc")}), ExitUsage},
		{"not a capture", fmt.Errorf("x: %w", capfile.ErrNotCapture), ExitUsage},
		{"network error", fmt.Errorf("connect: %w", dialErr), ExitFailure},
		{"refused output", fmt.Errorf("x: %w", &outfile.Error{Op: "refuse", Path: "in.aaep", Err: outfile.ErrSameFile}), ExitUsage},
		{"refused output wrapping a network error", &outfile.Error{Op: "write", Path: "o", Err: dialErr}, ExitUsage},
		{"cancelled", context.Canceled, ExitFailure},
		{"usage kind", Usage(errors.New("x")), ExitUsage},
		{"input kind", Input(errors.New("x")), ExitUsage},
		{"damaged kind", Damaged(errors.New("x")), ExitUsage},
		{"incomplete kind", Incomplete(errors.New("x")), ExitUsage},
		{"output kind", Output(errors.New("x")), ExitUsage},
		{"unavailable kind", Unavailable(errors.New("x")), ExitFailure},
		{"findings kind", Of(KindFindings, errors.New("x")), ExitFailure},
		{"failure kind", Of(KindFailure, errors.New("x")), ExitFailure},
		{"a file error said to be unavailable", Unavailable(fmt.Errorf("x: %w", statErr)), ExitFailure},
		{"a network error said to be an output", Output(fmt.Errorf("x: %w", dialErr)), ExitUsage},
		{"outermost kind wins", Output(fmt.Errorf("x: %w", Unavailable(errors.New("y")))), ExitUsage},
		{"outermost kind wins", Unavailable(Usage(errors.New("y"))), ExitFailure},
		{"outermost kind wins, the other way", Usage(Unavailable(errors.New("y"))), ExitUsage},
	}
	for _, c := range cases {
		if got := Code(c.err); got != c.want {
			t.Errorf("%s: Code(%v) = %d, want %d", c.name, c.err, got, c.want)
		}
	}
}

// TestKindOf: what an error is, by type, and that a nil error stays nil
// whatever it is said to be.
func TestKindOf(t *testing.T) {
	_, statErr := os.Stat(filepath.Join(t.TempDir(), "missing"))
	cases := []struct {
		err  error
		want Kind
	}{
		{nil, ""},
		{errors.New("x"), KindFailure},
		{Usagef("bad"), KindUsage},
		{fmt.Errorf("x: %w", statErr), KindInput},
		{fmt.Errorf("x: %w", capfile.ErrNotCapture), KindDamaged},
		{&outfile.Error{Op: "refuse", Path: "x", Err: outfile.ErrExists}, KindOutput},
		{context.DeadlineExceeded, KindFailure},
		{Silent(KindFindings), KindFindings},
	}
	for _, c := range cases {
		if got := KindOf(c.err); got != c.want {
			t.Errorf("KindOf(%v) = %q, want %q", c.err, got, c.want)
		}
	}
	for _, mark := range []func(error) error{Usage, Input, Damaged, Incomplete, Output, Unavailable} {
		if err := mark(nil); err != nil {
			t.Errorf("a nil error marked: %v", err)
		}
	}
	if err := Silent(KindFindings); !errors.Is(err, ErrSilent) || Code(err) != ExitFailure {
		t.Errorf("Silent(KindFindings) = %v, exit %d", err, Code(err))
	}
}

func TestExecuteMarksCobraErrorsAsUsage(t *testing.T) {
	newRoot := func(runErr error) *cobra.Command {
		root := &cobra.Command{Use: "tool", SilenceErrors: true, SilenceUsage: true}
		root.AddCommand(&cobra.Command{Use: "verb", Args: cobra.ExactArgs(1),
			RunE: func(*cobra.Command, []string) error { return runErr }})
		return root
	}
	ctx := context.Background()
	for _, args := range [][]string{{"verb"}, {"verb", "a", "b"}, {"nope"}, {"verb", "--nope", "a"}} {
		root := newRoot(nil)
		root.SetArgs(args)
		root.SetOut(&discard{})
		root.SetErr(&discard{})
		if got := Code(Execute(ctx, root)); got != ExitUsage {
			t.Errorf("%q: exit %d, want %d", args, got, ExitUsage)
		}
	}
	root := newRoot(errors.New("endpoint went away"))
	root.SetArgs([]string{"verb", "a"})
	err := Execute(ctx, root)
	if got := Code(err); got != ExitFailure || err.Error() != "endpoint went away" {
		t.Errorf("a command's own error: %v, exit %d", err, got)
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func TestIsTerminal(t *testing.T) {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) {
		t.Errorf("%s is a character device, not a terminal", os.DevNull)
	}
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("opening a pseudo-terminal (/dev/ptmx): %v", err)
	}
	defer ptmx.Close()
	if !IsTerminal(ptmx) {
		t.Errorf("/dev/ptmx (a pseudo-terminal master) is not seen as a terminal")
	}
}

// TestVersion: a stamped version (make build) is reported as it is; without
// one, the binary's own build record gives the same form (git describe
// --always --dirty's: the commit's first 7 hex digits, -dirty), a module
// version, or "dev".
func TestVersion(t *testing.T) {
	if got := Version("eec8477-dirty"); got != "eec8477-dirty" {
		t.Errorf("Version(stamped) = %q", got)
	}
	if got := Version(""); !regexp.MustCompile(`^([0-9a-f]{7}(-dirty)?|v[0-9].*|dev)$`).MatchString(got) {
		t.Errorf("Version(\"\") = %q, want a short commit, a module version or dev", got)
	}
}
