//go:build windows

package main

import (
	"os"
	"syscall"
)

// ownerOf is empty: a Windows file has no owner in its mode.
func ownerOf(os.FileInfo) string { return "" }

// setRcvBuf sets a socket's receive buffer before it connects.
func setRcvBuf(c syscall.RawConn, n int) error {
	var err error
	if cerr := c.Control(func(fd uintptr) {
		err = syscall.SetsockoptInt(syscall.Handle(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, n)
	}); cerr != nil {
		return cerr
	}
	return err
}
