package timing

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ErrSeek is returned by Controller.Wait when a seek was asked for while it
// waited: the caller repositions its stream at Controller.TakeSeek's target
// and calls Wait again for the event found there.
var ErrSeek = errors.New("timing: seek requested")

// Controller paces a replay that a person steers: play, pause, step one
// event, seek and change speed while it runs. Deadlines are absolute, as
// with Schedule: each one is an anchor time plus the capture time since the
// anchor's event divided by the speed, so no error accumulates between
// changes. Each change re-anchors at the position the replay had reached.
//
// The idle cap (Config.MaxIdle) applies as in Schedule. NoDelay releases
// events at once while playing; pause and step still hold.
//
// A Controller is safe for concurrent use: one goroutine calls Wait for each
// event in order, any other may steer it.
type Controller struct {
	clock Clock

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every change
	speed   float64
	maxIdle time.Duration // wall time; 0 means no cap
	noDelay bool
	paused  bool
	steps   int // events a paused replay may still release
	seek    *seekReq

	// Virtual capture time: capture offsets with the idle cap applied.
	started  bool
	prevOff  time.Duration // capture offset of the last event given to Wait
	prevV    time.Duration // its virtual time
	anchorV  time.Duration // virtual time due at anchorAt
	anchorAt time.Time
	pausedV  time.Duration // virtual position while paused
	relV     time.Duration // virtual time of the last event released
	released int64         // events released so far
}

type seekReq struct{ target int64 }

// ControlState is a snapshot of a Controller.
type ControlState struct {
	Paused  bool    `json:"paused"`
	Speed   float64 `json:"speed"`
	NoDelay bool    `json:"no_delay"`
	// StepsPending counts steps asked for and not yet taken.
	StepsPending int `json:"steps_pending"`
	// Released counts events released by Wait.
	Released int64 `json:"released"`
}

// NewController returns a controller for cfg (which must be valid), paused
// when paused is set. A nil clock means System().
func NewController(clock Clock, cfg Config, paused bool) *Controller {
	if clock == nil {
		clock = System()
	}
	return &Controller{
		clock:   clock,
		changed: make(chan struct{}),
		speed:   cfg.speed(),
		maxIdle: cfg.MaxIdle,
		noDelay: cfg.NoDelay,
		paused:  paused,
	}
}

// Clock returns the controller's clock.
func (c *Controller) Clock() Clock { return c.clock }

// notify wakes a waiting Wait; c.mu must be held.
func (c *Controller) notify() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// position returns the virtual time the replay has reached at now, given
// that nothing later than the next event's virtual time next can be reached;
// c.mu must be held.
func (c *Controller) position(now time.Time) time.Duration {
	if c.paused || !c.started {
		return c.pausedV
	}
	v := c.anchorV + time.Duration(float64(now.Sub(c.anchorAt))*c.speed)
	if v < c.relV {
		v = c.relV
	}
	return v
}

// Pause holds every event until Play or Step.
func (c *Controller) Pause() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.paused {
		return
	}
	c.pausedV = c.position(c.clock.Now())
	c.paused = true
	c.notify()
}

// Play resumes from where the replay was paused, keeping the remaining
// spacing of the events.
func (c *Controller) Play() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.paused {
		return
	}
	c.paused, c.steps = false, 0
	c.anchorV, c.anchorAt = c.pausedV, c.clock.Now()
	c.notify()
}

// Step lets n more events through while paused (it pauses a playing replay
// first). Each step releases the next event at once. It returns the count
// of released events (ControlState.Released) once every step asked for so
// far is taken.
func (c *Controller) Step(n int) (released int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n <= 0 {
		return c.released + int64(c.steps)
	}
	if !c.paused {
		c.pausedV = c.position(c.clock.Now())
		c.paused = true
	}
	c.steps += n
	c.notify()
	return c.released + int64(c.steps)
}

// SetSpeed changes the speed factor (see Config.Validate for the range),
// keeping the position reached.
func (c *Controller) SetSpeed(speed float64) error {
	if err := (Config{Speed: speed}).Validate(); err != nil {
		return err
	}
	if speed == 0 {
		speed = 1
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	if !c.paused {
		c.anchorV, c.anchorAt = c.position(now), now
	}
	c.speed = speed
	c.notify()
	return nil
}

// SeekTo asks the replay to continue at target (a record index, or whatever
// the caller's stream understands). A Wait in progress returns ErrSeek; the
// event after the seek is due at once, and the spacing counts from it.
func (c *Controller) SeekTo(target int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seek = &seekReq{target: target}
	c.notify()
}

// TakeSeek returns the pending seek target, if any, and clears it. The
// replay restarts its spacing at the next event it waits for.
func (c *Controller) TakeSeek() (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seek == nil {
		return 0, false
	}
	t := c.seek.target
	c.seek = nil
	c.started = false
	return t, true
}

// SeekPending reports whether a seek waits to be taken.
func (c *Controller) SeekPending() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seek != nil
}

// Restart begins a new pass (a loop): the next event is due at once.
func (c *Controller) Restart() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.started = false
}

// State returns a snapshot of the controller.
func (c *Controller) State() ControlState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return ControlState{Paused: c.paused, Speed: c.speed, NoDelay: c.noDelay, StepsPending: c.steps, Released: c.released}
}

// Changed returns a channel closed at the next change (pause, play, step,
// seek, speed); callers that watch the controller wait on it.
func (c *Controller) Changed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}

// virtual advances the virtual clock to the event at capture offset off;
// c.mu must be held. The first event after a start, seek or loop is due at
// the current position.
func (c *Controller) virtual(off time.Duration, now time.Time) time.Duration {
	if !c.started {
		c.started = true
		v := c.pausedV
		if !c.paused {
			// Due now: anchor the schedule here.
			c.anchorV, c.anchorAt = v, now
		}
		c.prevOff, c.prevV, c.relV = off, v, v
		return v
	}
	gap := off - c.prevOff
	if gap < 0 {
		gap = 0
	}
	if c.maxIdle > 0 {
		if limit := time.Duration(float64(c.maxIdle) * c.speed); gap > limit {
			gap = max(limit, 1)
		}
	}
	c.prevOff = off
	c.prevV += gap
	return c.prevV
}

// Wait blocks until the event at capture offset off may be sent: the
// replay is playing and the event's deadline has come, or it is paused and a
// step was asked for. It returns the deadline (the release time for a
// step). Offsets are given in capture order, once per event. It returns
// ErrSeek when a seek is pending, and context.Cause(ctx) when ctx ends.
func (c *Controller) Wait(ctx context.Context, off time.Duration) (time.Time, error) {
	c.mu.Lock()
	if c.seek != nil {
		c.mu.Unlock()
		return time.Time{}, ErrSeek
	}
	v := c.virtual(off, c.clock.Now())
	c.mu.Unlock()
	for {
		if err := ctx.Err(); err != nil {
			return time.Time{}, context.Cause(ctx)
		}
		c.mu.Lock()
		if c.seek != nil {
			c.mu.Unlock()
			return time.Time{}, ErrSeek
		}
		now := c.clock.Now()
		changed := c.changed
		if c.paused {
			if c.steps > 0 {
				c.steps--
				c.pausedV, c.relV = v, v
				c.released++
				c.mu.Unlock()
				return now, nil
			}
			c.mu.Unlock()
			select {
			case <-changed:
				continue
			case <-ctx.Done():
				return time.Time{}, context.Cause(ctx)
			}
		}
		deadline := c.anchorAt.Add(time.Duration(float64(v-c.anchorV) / c.speed))
		if c.noDelay || !deadline.After(now) {
			c.pausedV, c.relV = v, v
			c.released++
			c.mu.Unlock()
			return deadline, nil
		}
		c.mu.Unlock()
		wctx, cancel := context.WithCancel(ctx)
		go func() {
			select {
			case <-changed:
				cancel()
			case <-wctx.Done():
			}
		}()
		err := c.clock.WaitUntil(wctx, deadline)
		cancel()
		if err != nil && ctx.Err() != nil {
			return time.Time{}, context.Cause(ctx)
		}
		// Reached the deadline or woken by a change: look again.
	}
}
