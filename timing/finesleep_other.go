//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package timing

import "time"

// Without a system sleep finer than the runtime's timers, the precise clock
// spins for the whole spin window.
const haveFineSleep = false

func fineSleep(time.Duration) {}
