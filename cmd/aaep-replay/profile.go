package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// startProfile starts a CPU profile into the file named by the
// AAEP_CPUPROFILE environment variable, for whoever measures where a
// verb's time goes (`go tool pprof aaep-replay cpu.out`). It returns the
// function that stops the profile; with the variable unset both do nothing.
func startProfile() (stop func(), err error) {
	path := os.Getenv("AAEP_CPUPROFILE")
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("AAEP_CPUPROFILE: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("AAEP_CPUPROFILE: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
