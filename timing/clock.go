// Package timing paces replayed events: it maps capture offsets to absolute
// wall-clock deadlines (scaled by a speed factor, with long idle gaps capped),
// waits for those deadlines on a Clock, and keeps lateness statistics in
// constant memory.
//
// Every deadline is computed from the replay's start and the event's offset,
// never as a sum of relative sleeps, so timing error cannot accumulate over a
// long replay.
//
// Position names a point in a capture (a time offset or a record index) in
// the syntax of aaep-replay's --from and --to flags; serve and cut share it.
//
// The clocks here use the time package only, so inside a testing/synctest
// bubble they run on the bubble's fake clock: tests of pacing need no
// special fake and make no wall-clock assertions.
package timing

import (
	"context"
	"runtime"
	"time"
)

// Clock tells the time and waits for deadlines.
type Clock interface {
	// Now returns the current time (with a monotonic reading).
	Now() time.Time
	// WaitUntil blocks until the clock reads t or later, or until ctx is
	// done, in which case it returns context.Cause(ctx).
	WaitUntil(ctx context.Context, t time.Time) error
}

// System returns the clock that waits with runtime timers. It is cheap on CPU;
// a wake-up is typically tens of microseconds to about a millisecond late.
func System() Clock { return systemClock{} }

// DefaultSpin is how long before a deadline the precise clock stops waiting
// on a runtime timer (whose wake-ups can be a millisecond late).
const DefaultSpin = 2 * time.Millisecond

// fineSleepMargin is where the precise clock stops short, fine-grained
// sleeps (nanosleep, where the system has it) and spins instead.
const fineSleepMargin = 150 * time.Microsecond

// Precise returns a clock for sub-100µs wake-ups. It waits on a runtime
// timer until spin before a deadline, then in short system sleeps (which
// wake within tens of microseconds) until just before it, then spins,
// yielding the processor between readings. It costs a core for the last
// ~150µs before each deadline, and a thread parked in the system for the
// millisecond or two before that. A spin of zero or less means DefaultSpin.
func Precise(spin time.Duration) Clock {
	if spin <= 0 {
		spin = DefaultSpin
	}
	return preciseClock{spin: spin}
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) WaitUntil(ctx context.Context, t time.Time) error {
	return sleepUntil(ctx, t)
}

// sleepUntil waits on a runtime timer until t.
func sleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

type preciseClock struct{ spin time.Duration }

func (preciseClock) Now() time.Time { return time.Now() }

// stuckReadings is how many identical clock readings in a row make the spin
// give up and sleep instead. A real monotonic clock advances between two
// readings; a clock that does not (the fake clock of a testing/synctest
// bubble, which only moves while every goroutine sleeps) would otherwise
// spin forever.
const stuckReadings = 1000

func (c preciseClock) WaitUntil(ctx context.Context, t time.Time) error {
	if time.Until(t) > c.spin {
		if err := sleepUntil(ctx, t.Add(-c.spin)); err != nil {
			return err
		}
	}
	if haveFineSleep {
		for {
			before := time.Now()
			rem := t.Sub(before)
			if rem <= fineSleepMargin {
				break
			}
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			fineSleep(rem - fineSleepMargin + 30*time.Microsecond)
			if time.Now().Equal(before) {
				// The clock did not move while the thread slept: a
				// testing/synctest fake clock. Wait on it instead.
				return sleepUntil(ctx, t)
			}
		}
	}
	last, same := time.Now(), 0
	for i := 0; ; i++ {
		now := time.Now()
		if !now.Before(t) {
			return nil
		}
		if now.Equal(last) {
			same++
			if same >= stuckReadings {
				return sleepUntil(ctx, t)
			}
		} else {
			last, same = now, 0
		}
		if i%64 == 0 && ctx.Err() != nil {
			return context.Cause(ctx)
		}
		runtime.Gosched()
	}
}
