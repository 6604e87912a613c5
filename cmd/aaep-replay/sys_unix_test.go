//go:build unix

package main

import (
	"fmt"
	"os"
	"syscall"
)

// ownerOf is a file's owner and group, as fileState shows them.
func ownerOf(st os.FileInfo) string {
	sys := st.Sys().(*syscall.Stat_t)
	return fmt.Sprintf(" uid %d gid %d", sys.Uid, sys.Gid)
}

// setRcvBuf sets a socket's receive buffer before it connects.
func setRcvBuf(c syscall.RawConn, n int) error {
	var err error
	if cerr := c.Control(func(fd uintptr) {
		err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, n)
	}); cerr != nil {
		return cerr
	}
	return err
}
