package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"

	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/outfile"
)

// startProfile starts a CPU profile into the file named by the
// AAEP_CPUPROFILE environment variable, for whoever measures where a
// verb's time goes (`go tool pprof aaep-replay cpu.out`). The file is
// written under the project's output policy (internal/outfile): never over
// a file named on the command line (args), through a temporary file that
// takes the name when the profile is complete. It returns the function
// that stops the profile; with the variable unset both do nothing. A path
// that any argument names (an output that does not exist yet, "-o T" or
// "--output=T") is refused before the command runs; and should the file
// change while the profile is written, the profile does not replace it.
func startProfile(args []string) (stop func() error, err error) {
	path := os.Getenv("AAEP_CPUPROFILE")
	if path == "" {
		return func() error { return nil }, nil
	}
	if arg, ok := namedInArgs(path, args); ok {
		return nil, cli.WithCode(cli.ExitUsage, fmt.Errorf("AAEP_CPUPROFILE: %s is named on the command line (%s): a profile never replaces a command's own file", path, arg))
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
