package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/outfile"
)

// startProfile starts a CPU profile into the file named by the
// AAEP_CPUPROFILE environment variable, for whoever measures where a
// verb's time goes (`go tool pprof aaep-replay cpu.out`). A profile is
// written only to a path that does not exist or that holds a profile
// already (gzip-compressed pprof, checked by parsing it): anything else,
// a capture however the command names it (a glob, a directory, standard
// input), a directory, a device, a link to nothing, is refused before the
// command runs, and so is a path that any argument names (an output that
// does not exist yet, "-o T" or "--output=T"). The file is written under
// the project's output policy (internal/outfile), through a temporary file
// that takes the name when the profile is complete; should the file change
// meanwhile, the profile does not replace it. It returns the function that
// stops the profile; with the variable unset both do nothing.
func startProfile(args []string) (stop func() error, err error) {
	path := os.Getenv("AAEP_CPUPROFILE")
	if path == "" {
		return func() error { return nil }, nil
	}
	if err := replaceableByProfile(path); err != nil {
		return nil, cli.Output(fmt.Errorf("AAEP_CPUPROFILE: %w", err))
	}
	if arg, ok := namedInArgs(path, args); ok {
		return nil, cli.Output(fmt.Errorf("AAEP_CPUPROFILE: %s is named on the command line (%s): a profile never replaces a command's own file", path, arg))
	}
	f, err := outfile.Open(path, outfile.Options{Inputs: args, NoStdout: "a profile is binary"})
	if err != nil {
		return nil, fmt.Errorf("AAEP_CPUPROFILE: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Abort()
		return nil, fmt.Errorf("AAEP_CPUPROFILE: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Commit(); err != nil {
			return fmt.Errorf("AAEP_CPUPROFILE: %w", err)
		}
		return nil
	}, nil
}

// replaceableByProfile refuses a path a profile may not be written to: one
// that exists and is not a regular file holding a profile.
func replaceableByProfile(path string) error {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s is a symbolic link to a missing file: a profile is written only to a new file or over a profile", path)
	case err != nil:
		return err
	case !st.Mode().IsRegular():
		return fmt.Errorf("%s is a %s, not a file: a profile is written only to a new file or over a profile", path, fileKind(st.Mode()))
	}
	if !isProfile(path) {
		return fmt.Errorf("%s exists and is not a CPU profile (gzip-compressed pprof): a profile never replaces anything else; name a new file", path)
	}
	return nil
}

// isProfile reports whether the file at path is a gzip-compressed pprof
// profile, as runtime/pprof writes.
func isProfile(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var magic [2]byte
	if _, err := io.ReadFull(f, magic[:]); err != nil || magic != [2]byte{0x1f, 0x8b} {
		return false
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return false
	}
	_, err = profile.Parse(f)
	return err == nil
}

// fileKind names what a non-regular file is.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

// namedInArgs reports the argument (or the value of a --flag=value
// argument) that names path, existing or not, spelled any way.
func namedInArgs(path string, args []string) (string, bool) {
	want, err := filepath.Abs(path)
	if err != nil {
		return "", false
	}
	for _, arg := range args {
		names := []string{arg}
		if _, v, ok := strings.Cut(arg, "="); ok && strings.HasPrefix(arg, "-") {
			names = append(names, v)
		}
		for _, n := range names {
			if n == "" || n == "-" {
				continue
			}
			if abs, err := filepath.Abs(n); err == nil && abs == want {
				return arg, true
			}
		}
	}
	return "", false
}
