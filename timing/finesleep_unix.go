//go:build linux || freebsd || netbsd || openbsd || dragonfly

package timing

import (
	"syscall"
	"time"
)

const haveFineSleep = true

// fineSleep parks the thread for d with a system sleep, which wakes within
// the kernel's wake-up latency rather than on the runtime's
// millisecond-grained timer. Where the thread's timer slack can be set
// (Linux), it is set to 1ns first: the default lets a sleep end 50µs late.
func fineSleep(d time.Duration) {
	tightenSlack()
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil)
}
