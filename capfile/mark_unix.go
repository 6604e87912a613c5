//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package capfile

import (
	"errors"
	"syscall"
	"time"
)

// The mark of a capture being written is an advisory lock (flock(2)) that
// the writer holds on the file from its header to its trailer. The kernel
// drops it when the writer's process ends however it ends (kill -9
// included), so a file whose writer is gone is never taken for one being
// written: it is torn. Readers test the lock without waiting and hold it
// only for that instant.

// markWriting takes the mark on the regular file behind sc and returns
// what lets it go (nil when there is no mark: not a regular file, or a
// file system without flock). A reader testing the mark holds it only for
// an instant, so the writer waits for it a little.
func markWriting(sc syscall.Conn) func() {
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	locked := false
	_ = rc.Control(func(fd uintptr) {
		var st syscall.Stat_t
		if syscall.Fstat(int(fd), &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
			return
		}
		for try := 0; try < 100; try++ {
			err := syscall.Flock(int(fd), syscall.LOCK_EX|syscall.LOCK_NB)
			if err == nil {
				locked = true
				return
			}
			if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
				return
			}
			time.Sleep(time.Millisecond)
		}
	})
	if !locked {
		return nil
	}
	return func() {
		_ = rc.Control(func(fd uintptr) { _ = syscall.Flock(int(fd), syscall.LOCK_UN) })
	}
}

// markedWriting reports whether a writer holds the mark on the file behind
// sc (opened by the reader on its own).
func markedWriting(sc syscall.Conn) bool {
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	held := false
	_ = rc.Control(func(fd uintptr) {
		for {
			err := syscall.Flock(int(fd), syscall.LOCK_SH|syscall.LOCK_NB)
			switch {
			case err == nil:
				_ = syscall.Flock(int(fd), syscall.LOCK_UN)
			case errors.Is(err, syscall.EINTR):
				continue
			case errors.Is(err, syscall.EWOULDBLOCK):
				held = true
			}
			return
		}
	})
	return held
}
