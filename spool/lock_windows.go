//go:build windows

package spool

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// lockOffset is the byte of a lock file that LockFileEx locks. Windows
// locks are mandatory: a locked byte cannot be read by another process, so
// the lock is taken far beyond the holder's description at the start of
// the file, which everyone can still read (to say who holds the lock).
const lockOffset = 1 << 40

// tryLock takes the exclusive lock of an open lock file without waiting
// (LockFileEx: held by the open handle, released when the process ends,
// however it ends, as flock(2) is on Unix). busy reports that another
// process holds it.
func tryLock(f *os.File) (busy bool, err error) {
	ol := windows.Overlapped{Offset: lockOffset & 0xffffffff, OffsetHigh: lockOffset >> 32}
	err = windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return true, err
	}
	return false, err
}

// unlock releases a lock that tryLock took.
func unlock(f *os.File) {
	ol := windows.Overlapped{Offset: lockOffset & 0xffffffff, OffsetHigh: lockOffset >> 32}
	_ = windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &ol)
}

// freeBytes is the space the calling user may still use on the volume
// holding dir (quotas included).
func freeBytes(dir string) (int64, error) {
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return 0, err
	}
	var avail, total, free uint64
	if err := windows.GetDiskFreeSpaceEx(p, &avail, &total, &free); err != nil {
		return 0, err
	}
	return int64(avail), nil
}
