package timing

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// release runs Wait for each offset in a goroutine and reports each
// release as the fake time elapsed since start.
func release(ctx context.Context, c *Controller, offs []time.Duration, out chan<- time.Duration, start time.Time) {
	for _, off := range offs {
		if _, err := c.Wait(ctx, off); err != nil {
			close(out)
			return
		}
		out <- time.Since(start)
	}
	close(out)
}

func TestControllerPlaysAtSpeed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := NewController(System(), Config{Speed: 2}, false)
		start := time.Now()
		out := make(chan time.Duration, 10)
		go release(t.Context(), c, []time.Duration{5 * time.Second, 6 * time.Second, 8 * time.Second}, out, start)
		var got []time.Duration
		for d := range out {
			got = append(got, d)
		}
		want := []time.Duration{0, 500 * time.Millisecond, 1500 * time.Millisecond}
		if len(got) != len(want) {
			t.Fatalf("released %v, want %v", got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("event %d released at %v, want %v", i, got[i], want[i])
			}
		}
	})
}

func TestControllerPauseStepPlay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := NewController(System(), Config{}, true)
		start := time.Now()
		out := make(chan time.Duration, 10)
		offs := []time.Duration{0, time.Second, 2 * time.Second, 3 * time.Second}
		go release(t.Context(), c, offs, out, start)
		synctest.Wait()
		if len(out) != 0 {
			t.Fatalf("a paused controller released %d events", len(out))
		}
		time.Sleep(10 * time.Second)
		c.Step(1)
		if d := <-out; d != 10*time.Second {
			t.Fatalf("step released at %v, want at once (10s)", d)
		}
		synctest.Wait()
		if len(out) != 0 {
			t.Fatalf("one step released %d more events", len(out))
		}
		time.Sleep(5 * time.Second)
		c.Play() // resumes at 15s; the next event is 1s of capture time later
		if d := <-out; d != 16*time.Second {
			t.Fatalf("after play: released at %v, want 16s", d)
		}
		c.SetSpeed(4)
		if d := <-out; d != 16*time.Second+250*time.Millisecond {
			t.Fatalf("after speed 4: released at %v, want 16.25s", d)
		}
		c.Pause()
		synctest.Wait()
		if len(out) != 0 {
			t.Fatal("released while paused")
		}
		if st := c.State(); !st.Paused || st.Released != 3 || st.Speed != 4 {
			t.Fatalf("State() = %+v, want paused, 3 released, speed 4", st)
		}
		c.Play()
		if d := <-out; d != 16*time.Second+500*time.Millisecond {
			t.Fatalf("last event at %v, want 16.5s", d)
		}
	})
}

func TestControllerSeek(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := NewController(System(), Config{}, false)
		ctx := t.Context()
		if _, err := c.Wait(ctx, 0); err != nil {
			t.Fatal(err)
		}
		errc := make(chan error, 1)
		go func() { _, err := c.Wait(ctx, time.Hour); errc <- err }()
		synctest.Wait()
		c.SeekTo(42)
		if err := <-errc; !errors.Is(err, ErrSeek) {
			t.Fatalf("Wait during a seek = %v, want ErrSeek", err)
		}
		target, ok := c.TakeSeek()
		if !ok || target != 42 {
			t.Fatalf("TakeSeek() = %d, %v; want 42, true", target, ok)
		}
		before := time.Now()
		if _, err := c.Wait(ctx, 30*time.Minute); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(before); d != 0 {
			t.Errorf("the first event after a seek waited %v, want 0", d)
		}
		if _, ok := c.TakeSeek(); ok {
			t.Error("TakeSeek reported a second seek")
		}
	})
}

func TestControllerIdleCapAndCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := NewController(System(), Config{MaxIdle: time.Second}, false)
		start := time.Now()
		ctx, cancel := context.WithCancel(t.Context())
		out := make(chan time.Duration, 10)
		go release(ctx, c, []time.Duration{0, time.Hour, time.Hour + 500*time.Millisecond, 3 * time.Hour}, out, start)
		for _, want := range []time.Duration{0, time.Second, 1500 * time.Millisecond, 2500 * time.Millisecond} {
			if d := <-out; d != want {
				t.Fatalf("released at %v, want %v", d, want)
			}
		}
		cancel()
		if err := c.SetSpeed(5000); err == nil {
			t.Error("SetSpeed(5000) accepted a speed out of range")
		}
	})
}
