package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/aaep-tools/aaepkit/internal/sample"
)

// Fanout replays a capture of n events with `aaep-replay serve --no-delay`
// to each count of WebSocket subscribers in subs at once (each gets its own
// full replay), and to the largest count with one more subscriber that
// never reads. The aggregate rate
// is every healthy subscriber's events over the time from the first
// connection to the last event. Results: Fanout/subs=<n>[+stalled].
func Fanout(ctx context.Context, e *Env, n int, subs []int) error {
	type variant struct {
		subs    int
		stalled bool
	}
	var variants []variant
	for _, k := range subs {
		variants = append(variants, variant{k, false})
	}
	variants = append(variants, variant{slices.Max(subs), true})
	path := filepath.Join(e.Dir, "fanout.aaep")
	offs := make([]time.Duration, n)
	for i := range offs {
		offs[i] = time.Duration(i) * time.Millisecond
	}
	if err := WriteTimedCapture(path, offs, sample.Events(n, 9)); err != nil {
		return err
	}
	srv, err := StartReplayServer(ctx, e.ReplayBin, path, "--no-delay")
	if err != nil {
		return err
	}
	defer srv.Stop()
	e.logf("fanout: %d events per subscriber, %d runs", n, e.Runs)
	if _, err := fanOnce(ctx, srv.Addr, min(10, slices.Max(subs)), false, n); err != nil {
		return fmt.Errorf("fan-out warm-up: %w", err)
	}
	for run := 0; run < e.Runs; run++ {
		for _, v := range variants {
			rate, err := fanOnce(ctx, srv.Addr, v.subs, v.stalled, n)
			name := fmt.Sprintf("Fanout/subs=%d", v.subs)
			if v.stalled {
				name += "+stalled"
			}
			if err != nil {
				return fmt.Errorf("%s run %d: %w", name, run+1, err)
			}
			e.Emit(Result{Name: name, Metrics: []Metric{{rate, "msgs/s"}}})
			e.logf("%s run %d: %.0f messages/s", name, run+1, rate)
		}
	}
	return nil
}

func fanOnce(ctx context.Context, addr string, subs int, stalled bool, n int) (float64, error) {
	deadline := time.Now().Add(2 * time.Minute)
	var stall *Subscriber
	if stalled {
		// It subscribes first, so its replay runs (and blocks) throughout.
		var err error
		if stall, err = Subscribe(ctx, addr); err != nil {
			return 0, err
		}
		defer stall.Close()
	}
	type result struct {
		st  ReadStats
		err error
	}
	results := make([]result, subs)
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < subs; i++ {
		sub, err := Subscribe(ctx, addr)
		if err != nil {
			wg.Wait()
			return 0, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer sub.Close()
			st, err := sub.Read(ReadOptions{Deadline: deadline})
			results[i] = result{st, err}
		}()
	}
	wg.Wait()
	var last time.Time
	for i, r := range results {
		if r.err != nil {
			return 0, fmt.Errorf("subscriber %d: %w", i, r.err)
		}
		if r.st.Events != n {
			return 0, fmt.Errorf("subscriber %d received %d events, want %d (close %d %q)", i, r.st.Events, n, r.st.CloseCode, r.st.CloseText)
		}
		if r.st.Last.After(last) {
			last = r.st.Last
		}
	}
	return perSecond(int64(subs*n), last.Sub(start)), nil
}
