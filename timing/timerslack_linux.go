package timing

import "syscall"

// prSetTimerSlack is prctl's PR_SET_TIMERSLACK.
const prSetTimerSlack = 29

// tightenSlack sets the calling thread's timer slack to 1ns. Linux lets a
// sleep of a thread with the default slack (50µs) end that much late, so
// that wake-ups can be grouped; a fine sleep wants its own time. The
// setting is per thread and stays with it: a thread that made one fine
// sleep keeps waking its timers (the runtime's included) on time.
func tightenSlack() {
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, 1, 0)
}
