package serve

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// limitUnsent sets c's TCP_NOTSENT_LOWAT to unsentLimit (best effort: a
// connection that is not TCP, or a kernel without the option, is left as
// it is).
func limitUnsent(c net.Conn) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		_ = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_NOTSENT_LOWAT, unsentLimit)
	})
}
