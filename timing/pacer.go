package timing

import (
	"context"
	"time"
)

// Pacer waits for each event's deadline on a Clock. It is the loop body of a
// replay: for each event, Wait(ctx, offset), send, then Observe the lateness
// with Late.
//
// A Pacer is not safe for concurrent use.
type Pacer struct {
	clock   Clock
	sched   *Schedule
	noDelay bool
}

// NewPacer returns a pacer whose schedule starts at clock.Now(). cfg must be
// valid (see Config.Validate). A nil clock means System().
func NewPacer(clock Clock, cfg Config) *Pacer {
	if clock == nil {
		clock = System()
	}
	return &Pacer{clock: clock, sched: NewSchedule(clock.Now(), cfg), noDelay: cfg.NoDelay}
}

// Clock returns the pacer's clock.
func (p *Pacer) Clock() Clock { return p.clock }

// Schedule returns the pacer's schedule.
func (p *Pacer) Schedule() *Schedule { return p.sched }

// NoDelay reports whether the pacer skips waiting.
func (p *Pacer) NoDelay() bool { return p.noDelay }

// Wait blocks until the deadline of the event at capture offset off and
// returns that deadline. With NoDelay it returns at once. It returns
// context.Cause(ctx) if ctx ends first.
func (p *Pacer) Wait(ctx context.Context, off time.Duration) (time.Time, error) {
	deadline := p.sched.Deadline(off)
	if p.noDelay {
		if ctx.Err() != nil {
			return deadline, context.Cause(ctx)
		}
		return deadline, nil
	}
	return deadline, p.clock.WaitUntil(ctx, deadline)
}

// Late returns how late now is relative to deadline (negative when early).
func (p *Pacer) Late(deadline time.Time) time.Duration {
	return p.clock.Now().Sub(deadline)
}

// Restart begins a new loop of the replay (see Schedule.Restart).
func (p *Pacer) Restart() { p.sched.Restart() }
