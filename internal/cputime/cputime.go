// Package cputime reads the CPU time a process has used, for benchmarks
// that report work per CPU second beside work per wall second (which a
// busy machine, other processes competing for the cores, inflates).
package cputime

import "time"

// Used returns the CPU time (user and system) this process has used so
// far; 0 where the system does not say.
func Used() time.Duration { return used() }
