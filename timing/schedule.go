package timing

import (
	"fmt"
	"time"
)

// Speed limits accepted by Config.Validate.
const (
	MinSpeed = 0.01
	MaxSpeed = 1000
)

// Config holds the pacing options of a replay.
type Config struct {
	// Speed scales the capture's time: 2 plays twice as fast, 0.5 half as
	// fast. Zero means 1.
	Speed float64
	// NoDelay sends every event as soon as possible; deadlines are still
	// computed but never waited for.
	NoDelay bool
	// MaxIdle caps every wait between two consecutive events at this much
	// wall-clock time (after Speed is applied). Later events move earlier by
	// the time removed. Zero means no cap.
	MaxIdle time.Duration
}

// Validate reports a Config outside the accepted ranges.
func (c Config) Validate() error {
	if c.Speed != 0 && (c.Speed < MinSpeed || c.Speed > MaxSpeed) {
		return fmt.Errorf("speed %g out of range [%g, %g]", c.Speed, float64(MinSpeed), float64(MaxSpeed))
	}
	if c.MaxIdle < 0 {
		return fmt.Errorf("max idle %v is negative", c.MaxIdle)
	}
	return nil
}

func (c Config) speed() float64 {
	if c.Speed == 0 {
		return 1
	}
	return c.Speed
}

// Schedule maps capture offsets (time since the capture's start) to absolute
// deadlines. The first offset given maps to the schedule's start; every later
// offset maps to start + (offset - first - idle removed so far) / speed.
// Offsets must be given in capture order; an offset earlier than the previous
// one is treated as equal to it.
//
// A Schedule is not safe for concurrent use.
type Schedule struct {
	start   time.Time
	speed   float64
	maxIdle time.Duration // in capture time: Config.MaxIdle * speed

	origin  time.Duration // capture offset of the segment's first event
	base    time.Duration // wall time from start at which the segment begins
	shift   time.Duration // capture time removed by the idle cap in this segment
	prev    time.Duration // previous capture offset (after clamping)
	last    time.Duration // wall time from start of the previous deadline
	started bool
}

// NewSchedule returns a schedule whose first event is due at start. cfg must
// be valid (see Config.Validate).
func NewSchedule(start time.Time, cfg Config) *Schedule {
	s := &Schedule{start: start, speed: cfg.speed()}
	if cfg.MaxIdle > 0 {
		s.maxIdle = time.Duration(float64(cfg.MaxIdle) * s.speed)
		if s.maxIdle <= 0 {
			s.maxIdle = 1
		}
	}
	return s
}

// Start returns the time the schedule's first event is due.
func (s *Schedule) Start() time.Time { return s.start }

// Deadline returns the absolute deadline of the event at capture offset off.
func (s *Schedule) Deadline(off time.Duration) time.Time {
	return s.start.Add(s.Elapsed(off))
}

// Elapsed returns the deadline of the event at capture offset off as wall
// time since the schedule's start.
func (s *Schedule) Elapsed(off time.Duration) time.Duration {
	if !s.started {
		s.started = true
		s.origin, s.prev, s.shift = off, off, 0
	}
	if off < s.prev {
		off = s.prev
	}
	if gap := off - s.prev; s.maxIdle > 0 && gap > s.maxIdle {
		s.shift += gap - s.maxIdle
	}
	s.prev = off
	capture := off - s.origin - s.shift
	wall := capture
	if s.speed != 1 {
		wall = time.Duration(float64(capture) / s.speed)
	}
	s.last = s.base + wall
	return s.last
}

// Restart begins a new segment, as when a replay loops: the next offset given
// to Deadline is due at the same time as the previous deadline, and the
// offsets after it keep their spacing relative to it.
func (s *Schedule) Restart() {
	s.base = s.last
	s.started = false
}
