//go:build !(linux || freebsd || netbsd || openbsd || dragonfly)

package timing

import "time"

// Without a system sleep finer than the runtime's timers, the precise clock
// spins for the whole spin window. (On macOS the runtime's own timers wait
// in kevent, whose timeout counts nanoseconds, so they need no help there.)
const haveFineSleep = false

func fineSleep(time.Duration) {}
