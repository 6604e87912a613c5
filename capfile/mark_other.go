//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package capfile

import "syscall"

// Without flock(2) no capture carries the mark of being written: a file
// that stops early reads as torn.

func markWriting(syscall.Conn) func() { return nil }

func markedWriting(syscall.Conn) bool { return false }
