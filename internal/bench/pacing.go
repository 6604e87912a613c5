package bench

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/aaep-tools/aaepkit/internal/sample"
)

// closedNotice is the part of serve's "closed" notice (--json) we read.
type closedNotice struct {
	Kind  string `json:"kind"`
	Stats *struct {
		Sent     int64 `json:"sent"`
		Lateness struct {
			Count int64 `json:"count"`
			P50   int64 `json:"p50_ns"`
			P99   int64 `json:"p99_ns"`
			P999  int64 `json:"p999_ns"`
			Max   int64 `json:"max_ns"`
			Drift int64 `json:"drift_ns"`
		} `json:"lateness"`
		Close *struct {
			Cause string `json:"cause"`
		} `json:"close"`
	} `json:"stats"`
}

func isClosedNotice(line []byte) bool {
	return bytes.Contains(line, []byte(`"kind":"closed"`))
}

// Pacing replays a capture of span (bursty gaps around 5 ms, realistic
// payloads) with `aaep-replay serve` at 1x and 10x, with and without
// --precise, to one WebSocket subscriber at a time, and reports the
// lateness the server measured (flush time against deadline) and its
// drift, plus the lateness seen by the subscriber relative to its first
// event. Results: Pacing/<speed>/<clock>.
func Pacing(ctx context.Context, e *Env, span time.Duration) error {
	offs := Offsets(span, 5*time.Millisecond, 3)
	path := filepath.Join(e.Dir, "pacing.aaep")
	if err := WriteTimedCapture(path, offs, sample.Events(4096, 5)); err != nil {
		return err
	}
	e.logf("pacing: %d events over %v, %d runs per setting", len(offs), span, e.Runs)
	for _, cfg := range []struct {
		name  string
		speed float64
		args  []string
	}{
		{"1x/default", 1, nil},
		{"1x/precise", 1, []string{"--precise"}},
		{"10x/default", 10, []string{"--speed", "10"}},
		{"10x/precise", 10, []string{"--speed", "10", "--precise"}},
	} {
		srv, err := StartReplayServer(ctx, e.ReplayBin, path, cfg.args...)
		if err != nil {
			return err
		}
		err = func() error {
			defer srv.Stop()
			for run := 0; run < e.Runs; run++ {
				r, worst, err := paceOnce(ctx, srv, offs, cfg.speed, span)
				if err != nil {
					return fmt.Errorf("pacing %s run %d: %w", cfg.name, run+1, err)
				}
				r.Name = "Pacing/" + cfg.name
				e.Emit(r)
				e.logf("pacing %s run %d: server p50 %.0fµs p99 %.0fµs p99.9 %.0fµs max %.0fµs drift %.0fµs; latest at the subscriber: %s",
					cfg.name, run+1, r.Metrics[0].Value, r.Metrics[1].Value, r.Metrics[9].Value, r.Metrics[2].Value, r.Metrics[3].Value, worst)
			}
			return nil
		}()
		if err != nil {
			return err
		}
	}
	return nil
}

// paceOnce replays the capture to one subscriber; worst describes the
// latest events as the subscriber saw them (for the progress log).
func paceOnce(ctx context.Context, srv *ReplayServer, offs []time.Duration, speed float64, span time.Duration) (r Result, worst string, err error) {
	sub, err := Subscribe(ctx, srv.Addr)
	if err != nil {
		return Result{}, "", err
	}
	defer sub.Close()
	times := make([]time.Time, 0, len(offs))
	wall := time.Duration(float64(span)/speed) + 30*time.Second
	st, err := sub.Read(ReadOptions{Deadline: time.Now().Add(wall), OnEvent: func(_ int, at time.Time) { times = append(times, at) }})
	if err != nil {
		return Result{}, "", err
	}
	if st.Events != len(offs) {
		return Result{}, "", fmt.Errorf("received %d events, the capture has %d (close %d %q)", st.Events, len(offs), st.CloseCode, st.CloseText)
	}
	line, err := srv.WaitLine(15*time.Second, isClosedNotice)
	if err != nil {
		return Result{}, "", err
	}
	var n closedNotice
	if err := json.Unmarshal(line, &n); err != nil || n.Stats == nil {
		return Result{}, "", fmt.Errorf("reading the server's closed notice %q: %v", line, err)
	}
	lat := n.Stats.Lateness
	if lat.Count != int64(len(offs)) {
		return Result{}, "", fmt.Errorf("server measured %d events, want %d", lat.Count, len(offs))
	}
	// The subscriber's view: each event's arrival against the first one's,
	// scaled by the speed.
	late := make([]time.Duration, len(times))
	for i, at := range times {
		want := time.Duration(float64(offs[i]-offs[0]) / speed)
		late[i] = at.Sub(times[0]) - want
	}
	drift := late[len(late)-1]
	order := make([]int, len(late))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(late[b], late[a]) })
	var w []string
	for _, i := range order[:min(3, len(order))] {
		w = append(w, fmt.Sprintf("%v late at %v", late[i].Round(time.Microsecond), times[i].Sub(times[0]).Round(time.Millisecond)))
	}
	worst = strings.Join(w, ", ")
	slices.Sort(late)
	q := func(p float64) time.Duration { return late[int(p*float64(len(late)-1))] }
	return Result{Metrics: []Metric{
		{float64(lat.P50) / 1e3, "p50-µs"},
		{float64(lat.P99) / 1e3, "p99-µs"},
		{float64(lat.Max) / 1e3, "max-µs"},
		{float64(lat.Drift) / 1e3, "drift-µs"},
		{us(q(0.5)), "client-p50-µs"},
		{us(q(0.99)), "client-p99-µs"},
		{us(late[len(late)-1]), "client-max-µs"},
		{us(drift), "client-drift-µs"},
		{float64(len(offs)), "events"},
		{float64(lat.P999) / 1e3, "p999-µs"},
		{us(q(0.999)), "client-p999-µs"},
	}}, worst, nil
}
