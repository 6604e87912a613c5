//go:build !linux

package serve

import "net"

// limitUnsent does nothing where the unsent bytes cannot be limited.
func limitUnsent(net.Conn) {}
