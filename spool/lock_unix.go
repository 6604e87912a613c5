//go:build unix

package spool

import (
	"errors"
	"os"
	"syscall"
)

// tryLock takes the exclusive lock of an open lock file without waiting
// (flock(2): held by the open file, released when the process ends, however
// it ends). busy reports that another process holds it.
func tryLock(f *os.File) (busy bool, err error) {
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return true, err
	}
	return false, err
}

// unlock releases a lock that tryLock took.
func unlock(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

// freeBytes is the space an unprivileged process may still use on the
// file system holding dir.
func freeBytes(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}
