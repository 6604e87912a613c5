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
)

type coded struct{}

func (coded) Error() string { return "coded" }
func (coded) ExitCode() int { return 2 }

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
		{"explicit code", WithCode(ExitFailure, &fs.PathError{Op: "open", Err: fs.ErrNotExist}), ExitFailure},
		{"silent", Silent(1), ExitFailure},
		{"file error", fmt.Errorf("read: %w", statErr), ExitUsage},
		{"damaged capture", fmt.Errorf("x: %w", &capfile.CorruptionError{Offset: 10, Index: 2, Err: errors.New("bad crc")}), ExitUsage},
		{"not a capture", fmt.Errorf("x: %w", capfile.ErrNotCapture), ExitUsage},
		{"network error", fmt.Errorf("connect: %w", dialErr), ExitFailure},
		{"coder", fmt.Errorf("x: %w", coded{}), ExitUsage},
		{"cancelled", context.Canceled, ExitFailure},
	}
	for _, c := range cases {
		if got := Code(c.err); got != c.want {
			t.Errorf("%s: Code(%v) = %d, want %d", c.name, c.err, got, c.want)
		}
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
