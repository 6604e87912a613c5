package timing

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

var t0 = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"zero", Config{}, true},
		{"min", Config{Speed: 0.01}, true},
		{"max", Config{Speed: 1000}, true},
		{"too slow", Config{Speed: 0.009}, false},
		{"too fast", Config{Speed: 1000.5}, false},
		{"negative speed", Config{Speed: -1}, false},
		{"negative idle", Config{MaxIdle: -time.Second}, false},
		{"idle", Config{MaxIdle: time.Second, Speed: 2}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if (err == nil) != tt.ok {
				t.Fatalf("Validate()=%v, want ok=%v", err, tt.ok)
			}
		})
	}
}

func ms(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

func TestScheduleDeadlines(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		offsets []time.Duration // capture offsets; -1 marks a Restart
		want    []time.Duration // wall time from start, one per offset
	}{
		{
			name:    "real time starts at first offset",
			offsets: []time.Duration{ms(500), ms(500), ms(700), ms(1500)},
			want:    []time.Duration{0, 0, ms(200), ms(1000)},
		},
		{
			name:    "double speed",
			cfg:     Config{Speed: 2},
			offsets: []time.Duration{0, ms(100), ms(1000)},
			want:    []time.Duration{0, ms(50), ms(500)},
		},
		{
			name:    "slow motion",
			cfg:     Config{Speed: 0.01},
			offsets: []time.Duration{ms(10), ms(11)},
			want:    []time.Duration{0, ms(100)},
		},
		{
			name:    "idle cap shifts later events",
			cfg:     Config{MaxIdle: time.Second},
			offsets: []time.Duration{0, ms(100), ms(10100), ms(10200), ms(20200)},
			want:    []time.Duration{0, ms(100), ms(1100), ms(1200), ms(2200)},
		},
		{
			name:    "idle cap is wall time after speed",
			cfg:     Config{Speed: 10, MaxIdle: time.Second},
			offsets: []time.Duration{0, ms(5000), ms(105000)},
			want:    []time.Duration{0, ms(500), ms(1500)},
		},
		{
			name:    "gap equal to cap untouched",
			cfg:     Config{MaxIdle: time.Second},
			offsets: []time.Duration{0, ms(1000), ms(2000)},
			want:    []time.Duration{0, ms(1000), ms(2000)},
		},
		{
			name:    "decreasing offset clamps",
			offsets: []time.Duration{ms(100), ms(300), ms(200), ms(400)},
			want:    []time.Duration{0, ms(200), ms(200), ms(300)},
		},
		{
			name:    "loop continues from last deadline",
			cfg:     Config{Speed: 2},
			offsets: []time.Duration{ms(100), ms(300), -1, ms(100), ms(300)},
			want:    []time.Duration{0, ms(100), ms(100), ms(200)},
		},
		{
			name:    "no delay still computes deadlines",
			cfg:     Config{NoDelay: true},
			offsets: []time.Duration{0, ms(5)},
			want:    []time.Duration{0, ms(5)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewSchedule(t0, tt.cfg)
			var got []time.Duration
			for _, off := range tt.offsets {
				if off == -1 {
					s.Restart()
					continue
				}
				d := s.Deadline(off)
				got = append(got, d.Sub(t0))
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d deadlines, want %d", len(got), len(tt.want))
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("deadline %d = %v, want %v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

// TestScheduleNoAccumulation checks that a long run of tiny gaps at an
// awkward speed lands exactly where the total offset says, the property a
// chain of rounded relative sleeps lacks.
func TestScheduleNoAccumulation(t *testing.T) {
	s := NewSchedule(t0, Config{Speed: 3})
	const n = 1_000_000
	var d time.Time
	for i := 0; i <= n; i++ {
		d = s.Deadline(time.Duration(i) * 7) // 7 ns per step: 7/3 is never exact
	}
	total := float64(7 * n)
	want := time.Duration(total / 3)
	if got := d.Sub(t0); got != want {
		t.Fatalf("last deadline %v after start, want %v", got, want)
	}
}

// events paces offsets with p inside a synctest bubble and returns the fake
// time at which each one was released, relative to the first.
func pace(t *testing.T, clock Clock, cfg Config, offsets []time.Duration) []time.Duration {
	t.Helper()
	var got []time.Duration
	synctest.Test(t, func(t *testing.T) {
		p := NewPacer(clock, cfg)
		start := time.Now()
		var lat Lateness
		for _, off := range offsets {
			deadline, err := p.Wait(context.Background(), off)
			if err != nil {
				t.Fatalf("Wait(%v): %v", off, err)
			}
			lat.Observe(p.Late(deadline))
			got = append(got, time.Since(start))
		}
		if s := lat.Summary(); s.Max != 0 || s.Drift != 0 || s.Count != int64(len(offsets)) {
			t.Errorf("lateness under the fake clock = %+v, want zero", s)
		}
	})
	return got
}

func TestPacerFakeClock(t *testing.T) {
	offsets := []time.Duration{ms(1000), ms(1000), ms(1250), ms(4000), ms(64000), ms(64001)}
	tests := []struct {
		name  string
		clock Clock
		cfg   Config
		want  []time.Duration
	}{
		{"system 1x", System(), Config{}, []time.Duration{0, 0, ms(250), ms(3000), ms(63000), ms(63001)}},
		{"precise 1x", Precise(0), Config{}, []time.Duration{0, 0, ms(250), ms(3000), ms(63000), ms(63001)}},
		{"system 4x idle 2s", System(), Config{Speed: 4, MaxIdle: 2 * time.Second},
			[]time.Duration{0, 0, ms(62.5), ms(750), ms(2750), ms(2750.25)}},
		{"precise 0.5x", Precise(5 * time.Millisecond), Config{Speed: 0.5},
			[]time.Duration{0, 0, ms(500), ms(6000), ms(126000), ms(126002)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := pace(t, tt.clock, tt.cfg, offsets)
			for i := range tt.want {
				if got[i] != tt.want[i] {
					t.Errorf("event %d released at %v, want %v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestPacerNoDelayNeverWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := NewPacer(System(), Config{NoDelay: true})
		start := time.Now()
		for _, off := range []time.Duration{0, time.Hour, 48 * time.Hour} {
			if _, err := p.Wait(context.Background(), off); err != nil {
				t.Fatal(err)
			}
		}
		if el := time.Since(start); el != 0 {
			t.Fatalf("no-delay pacing took %v of fake time, want 0", el)
		}
	})
}

func TestPacerCancel(t *testing.T) {
	for _, clock := range []Clock{System(), Precise(0)} {
		synctest.Test(t, func(t *testing.T) {
			cause := errors.New("stop now")
			ctx, cancel := context.WithCancelCause(context.Background())
			p := NewPacer(clock, Config{})
			if _, err := p.Wait(ctx, 0); err != nil {
				t.Fatal(err)
			}
			go func() {
				time.Sleep(time.Second)
				cancel(cause)
			}()
			start := time.Now()
			_, err := p.Wait(ctx, time.Hour)
			if !errors.Is(err, cause) {
				t.Fatalf("Wait after cancel = %v, want %v", err, cause)
			}
			if el := time.Since(start); el != time.Second {
				t.Fatalf("Wait returned after %v, want 1s (the cancel)", el)
			}
			// A cancelled context also stops a wait whose deadline has passed
			// only in the no-delay case; a plain wait returns its cause.
			if _, err := p.Wait(ctx, time.Hour+time.Minute); !errors.Is(err, cause) {
				t.Fatalf("Wait on a done context = %v, want %v", err, cause)
			}
		})
	}
}

func TestLatenessQuantiles(t *testing.T) {
	tests := []struct {
		name          string
		values        []time.Duration
		p50, p99, max time.Duration
		drift         time.Duration
		tolerance     float64 // relative
	}{
		{"empty", nil, 0, 0, 0, 0, 0},
		{"exact small", []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 5, 10, 10, 9, 0},
		{"early clamps to zero", []time.Duration{-5, -3, 0, 2}, 0, 2, 2, 7, 0},
		{"spread", spread(1000, time.Microsecond), 500 * time.Microsecond, 990 * time.Microsecond, 1000 * time.Microsecond, 999 * time.Microsecond, 1.0 / 64},
		{"outlier", append(repeat(999, 100*time.Microsecond), 50*time.Millisecond), 100 * time.Microsecond, 100 * time.Microsecond, 50 * time.Millisecond, 50*time.Millisecond - 100*time.Microsecond, 1.0 / 64},
		{"huge clamps to last bucket", []time.Duration{time.Hour}, 0, 0, time.Hour, 0, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l Lateness
			for _, v := range tt.values {
				l.Observe(v)
			}
			s := l.Summary()
			if s.Count != int64(len(tt.values)) {
				t.Fatalf("Count=%d, want %d", s.Count, len(tt.values))
			}
			if s.Max != tt.max {
				t.Errorf("Max=%v, want %v", s.Max, tt.max)
			}
			if s.Drift != tt.drift {
				t.Errorf("Drift=%v, want %v", s.Drift, tt.drift)
			}
			if tt.tolerance < 0 {
				if s.P99 > s.Max || s.P99 < 17*time.Minute {
					t.Errorf("P99=%v, want within the last bucket and at most Max", s.P99)
				}
				return
			}
			near(t, "P50", s.P50, tt.p50, tt.tolerance)
			near(t, "P99", s.P99, tt.p99, tt.tolerance)
		})
	}
}

func near(t *testing.T, name string, got, want time.Duration, tol float64) {
	t.Helper()
	diff := float64(got - want)
	if diff < 0 {
		diff = -diff
	}
	if diff > tol*float64(want) {
		t.Errorf("%s=%v, want %v (±%.1f%%)", name, got, want, tol*100)
	}
}

func spread(n int, step time.Duration) []time.Duration {
	v := make([]time.Duration, n)
	for i := range v {
		v[i] = time.Duration(i+1) * step
	}
	return v
}

func repeat(n int, d time.Duration) []time.Duration {
	v := make([]time.Duration, n)
	for i := range v {
		v[i] = d
	}
	return v
}

func TestBuckets(t *testing.T) {
	// Every value falls in a bucket whose range contains it, and the buckets
	// are ordered.
	prevHi := uint64(0)
	for i := 0; i < numBuckets; i++ {
		lo, hi := bucketRange(i)
		if i > 0 && lo != prevHi+1 {
			t.Fatalf("bucket %d starts at %d, previous ended at %d", i, lo, prevHi)
		}
		if bucketOf(lo) != i || bucketOf(hi) != i {
			t.Fatalf("bucket %d: range [%d,%d] maps to %d and %d", i, lo, hi, bucketOf(lo), bucketOf(hi))
		}
		if lo >= subCount && float64(hi-lo+1)/float64(lo) > 1.0/64+1e-12 {
			t.Fatalf("bucket %d [%d,%d] wider than 1/64 of its value", i, lo, hi)
		}
		prevHi = hi
	}
}
