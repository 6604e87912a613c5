package objstore

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// limitUnsent sets a connection's TCP_NOTSENT_LOWAT to unsentLimit before it
// connects (best effort: a kernel without the option leaves it as it is).
func limitUnsent(_, _ string, c syscall.RawConn) error {
	_ = c.Control(func(fd uintptr) {
		_ = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_NOTSENT_LOWAT, unsentLimit)
	})
	return nil
}
