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
	"github.com/aaep-tools/aaepkit/timing"
)

// closedNotice is the part of serve's "closed" notice (--json) that the
// measurements read, and all that SpinServe writes in its place.
type closedNotice struct {
	Kind  string       `json:"kind"`
	Stats *closedStats `json:"stats"`
}

type closedStats struct {
	Sent          int64          `json:"sent"`
	Lateness      timing.Summary `json:"lateness"`
	Write         timing.Summary `json:"write"`
	ScheduleStart *time.Time     `json:"schedule_start"`
	Close         *struct {
		Cause string `json:"cause"`
	} `json:"close,omitempty"`
}

func isClosedNotice(line []byte) bool {
	return bytes.Contains(line, []byte(`"kind":"closed"`))
}

// Pacing replays a capture of span (bursty gaps around 5 ms, realistic
// payloads) with `aaep-replay serve` at 1x and 10x, with and without
// --precise, to one WebSocket subscriber at a time (and, by default
// pacing, to one gRPC subscriber of serve --grpc), and reports the
// lateness at the subscriber: each event's arrival (its read returned)
// against its deadline, which is the schedule start the server reports
// plus the event's offset scaled by the speed. Both processes read the same
// system clock, so nothing is estimated. Beside it, the server's own
// figures: lateness at the return of the write, and how long the writes
// took. Results: Pacing/<speed>/<clock>; the clock "spin" is the floor, a
// writer that spins until each deadline (SpinServe) in aaep-replay's place;
// Pacing/<speed>/grpc is the default clock's over gRPC.
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
		spin  bool // the floor: SpinServe in aaep-replay's place
		grpc  bool // the subscriber attaches over gRPC (serve --grpc)
	}{
		{"1x/default", 1, nil, false, false},
		{"1x/precise", 1, []string{"--precise"}, false, false},
		{"1x/spin", 1, nil, true, false},
		{"1x/grpc", 1, []string{"--grpc", "127.0.0.1:0"}, false, true},
		{"10x/default", 10, []string{"--speed", "10"}, false, false},
		{"10x/precise", 10, []string{"--speed", "10", "--precise"}, false, false},
		{"10x/grpc", 10, []string{"--speed", "10", "--grpc", "127.0.0.1:0"}, false, true},
	} {
		bin, verb := e.ReplayBin, "serve"
		if cfg.spin {
			bin, verb = e.Self, "spin-serve"
		}
		srv, err := startServer(ctx, bin, verb, path, cfg.args...)
		if err != nil {
			return err
		}
		err = func() error {
			defer srv.Stop()
			for run := 0; run < e.Runs; run++ {
				r, worst, err := paceOnce(ctx, srv, cfg.grpc, offs, cfg.speed, span)
				if err != nil {
					return fmt.Errorf("pacing %s run %d: %w", cfg.name, run+1, err)
				}
				r.Name = "Pacing/" + cfg.name
				e.Emit(r)
				m := r.metric
				e.logf("pacing %s run %d: at the subscriber p50 %.0fµs p99 %.0fµs p99.9 %.0fµs max %.0fµs drift %.0fµs; server p99 %.0fµs, writes p99 %.0fµs; latest: %s",
					cfg.name, run+1, m("sub-p50-µs"), m("sub-p99-µs"), m("sub-p999-µs"), m("sub-max-µs"), m("sub-drift-µs"), m("p99-µs"), m("write-p99-µs"), worst)
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
func paceOnce(ctx context.Context, srv *ReplayServer, overGRPC bool, offs []time.Duration, speed float64, span time.Duration) (r Result, worst string, err error) {
	var sub interface {
		Read(ReadOptions) (ReadStats, error)
		Close() error
	}
	if overGRPC {
		if srv.GRPCAddr == "" {
			return Result{}, "", fmt.Errorf("the replay server names no gRPC address")
		}
		sub, err = SubscribeGRPC(ctx, srv.GRPCAddr)
	} else {
		sub, err = Subscribe(ctx, srv.Addr)
	}
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
	if n.Stats.ScheduleStart == nil {
		return Result{}, "", fmt.Errorf("the server's closed notice has no schedule_start: %s", line)
	}
	// Each event's deadline comes from the server's schedule start by the
	// server's own arithmetic (timing.Schedule); its arrival is read on the
	// same system clock (wall time: a process's monotonic readings do not
	// compare with another's).
	sched := timing.NewSchedule(*n.Stats.ScheduleStart, timing.Config{Speed: speed})
	late := make([]time.Duration, len(times))
	for i, at := range times {
		late[i] = at.Round(0).Sub(sched.Deadline(offs[i]))
	}
	drift := late[len(late)-1] - late[0]
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
		{us(q(0.5)), "sub-p50-µs"},
		{us(q(0.99)), "sub-p99-µs"},
		{us(q(0.999)), "sub-p999-µs"},
		{us(late[len(late)-1]), "sub-max-µs"},
		{us(drift), "sub-drift-µs"},
		{us(lat.P50), "p50-µs"},
		{us(lat.P99), "p99-µs"},
		{us(lat.P999), "p999-µs"},
		{us(lat.Max), "max-µs"},
		{us(lat.Drift), "drift-µs"},
		{us(n.Stats.Write.P50), "write-p50-µs"},
		{us(n.Stats.Write.P99), "write-p99-µs"},
		{float64(len(offs)), "events"},
	}}, worst, nil
}
