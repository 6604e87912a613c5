//go:build !linux

package timing

// tightenSlack does nothing where the thread's timer slack cannot be set.
func tightenSlack() {}
