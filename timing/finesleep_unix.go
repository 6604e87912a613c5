//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package timing

import (
	"syscall"
	"time"
)

const haveFineSleep = true

// fineSleep parks the thread for d with a system sleep, which wakes within
// the kernel's timer slack (tens of microseconds) rather than on the
// runtime's millisecond-grained timer.
func fineSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil)
}
