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

// System returns the clock that waits with runtime timers, and in one
// system sleep for the last stretch before a deadline. It is cheap on CPU;
// a wake-up is typically tens of microseconds late (up to a millisecond
// where the system has no fine-grained sleep).
func System() Clock { return systemClock{} }

// systemFine is how long before a deadline the system clock stops waiting
// on a runtime timer. The runtime wakes its timers through epoll_wait,
// whose timeout counts whole milliseconds: a wait whose remainder is under
// a millisecond sleeps a full one, so a timer alone is up to a millisecond
// late, about half a millisecond on average. One system sleep for the last
// stretch, with the thread's timer slack set to 1ns (see fineSleep), wakes
// within the kernel's wake-up latency (about 20µs on an idle machine).
const systemFine = 1500 * time.Microsecond

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

// Coarse returns a clock that waits on runtime timers only: the cheapest,
// and up to about a millisecond late (see systemFine). It is for waits
// whose precision does not matter, such as queueing ahead of a deadline.
func Coarse() Clock { return coarseClock{} }

type coarseClock struct{}

func (coarseClock) Now() time.Time { return time.Now() }

func (coarseClock) WaitUntil(ctx context.Context, t time.Time) error { return sleepUntil(ctx, t) }

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) WaitUntil(ctx context.Context, t time.Time) error {
	if !haveFineSleep {
		return sleepUntil(ctx, t)
	}
	if time.Until(t) > systemFine {
		if err := sleepUntil(ctx, t.Add(-systemFine)); err != nil {
			return err
		}
	}
	return sleepFine(ctx, t, 0)
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

// sleepFine waits in system sleeps (fineSleep) until stop, aiming each
// sleep past later than stop (a sleep wakes a little late anyway, and
// waking early costs another). Where the clock does not move while the
// thread sleeps (the fake clock of a testing/synctest bubble), it waits on
// that clock instead.
func sleepFine(ctx context.Context, stop time.Time, past time.Duration) error {
	for {
		before := time.Now()
		rem := stop.Sub(before)
		if rem <= 0 {
			return nil
		}
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		fineSleep(rem + past)
		if time.Now().Equal(before) {
			return sleepUntil(ctx, stop)
		}
	}
}

func (c preciseClock) WaitUntil(ctx context.Context, t time.Time) error {
	if time.Until(t) > c.spin {
		if err := sleepUntil(ctx, t.Add(-c.spin)); err != nil {
			return err
		}
	}
	if haveFineSleep {
		if err := sleepFine(ctx, t.Add(-fineSleepMargin), 30*time.Microsecond); err != nil {
			return err
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
