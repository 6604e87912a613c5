package timing

import (
	"runtime"
	"syscall"
	"testing"
)

// A fine sleep leaves its thread with a timer slack of 1ns (read back with
// PR_GET_TIMERSLACK), so that the kernel does not add its default 50µs to
// the sleep.
func TestFineSleepTightensSlack(t *testing.T) {
	const prGetTimerSlack = 30
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	fineSleep(1000)
	slack, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prGetTimerSlack, 0, 0)
	if errno != 0 {
		t.Fatalf("PR_GET_TIMERSLACK: %v", errno)
	}
	if slack != 1 {
		t.Errorf("timer slack after a fine sleep: %d ns, want 1", slack)
	}
}
