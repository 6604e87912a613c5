//go:build unix

package aaep

import (
	"syscall"
	"time"
)

// ProcessCPU returns the CPU time the test process has used (user plus
// system), so that benchmarks can report CPU per event, which a loaded
// machine distorts far less than wall-clock time.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
