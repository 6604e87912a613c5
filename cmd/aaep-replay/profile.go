package main

import (
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/aaep-tools/aaepkit/internal/outfile"
)

// startProfile starts a CPU profile into the file named by the
// AAEP_CPUPROFILE environment variable, for whoever measures where a
// verb's time goes (`go tool pprof aaep-replay cpu.out`). The file is
// written under the project's output policy (internal/outfile): never over
// a file named on the command line (args), through a temporary file that
// takes the name when the profile is complete. It returns the function
// that stops the profile; with the variable unset both do nothing.
func startProfile(args []string) (stop func() error, err error) {
	path := os.Getenv("AAEP_CPUPROFILE")
	if path == "" {
		return func() error { return nil }, nil
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
