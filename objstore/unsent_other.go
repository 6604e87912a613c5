//go:build !linux

package objstore

import "syscall"

// limitUnsent does nothing where the unsent bytes cannot be limited: there
// the stall timer's allowance after the last request byte (2×d) must cover
// what the socket's send buffer holds.
func limitUnsent(_, _ string, _ syscall.RawConn) error { return nil }
