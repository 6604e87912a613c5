package bench

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Check runs `aaep-replay check FILE --json` (report discarded) on a
// capture of n messages of realistic interleaved sessions, some with
// protocol violations, and reports messages per second of wall time and
// of CPU time, and the process's peak resident memory. Exit status 1
// (findings) is expected. Results: Check.
//
// With capture set, the capture is kept there for later runs (of other
// builds, alternated with these) and read from there when it already
// exists; it must then hold n messages written by WriteBulkCapture.
func Check(ctx context.Context, e *Env, n int, capture string) error {
	path := capture
	if path == "" {
		path = filepath.Join(e.Dir, "check.aaep")
	}
	start := time.Now()
	made := "written"
	if _, err := os.Stat(path); capture == "" || errors.Is(err, fs.ErrNotExist) {
		if err := WriteBulkCapture(path, n, 1); err != nil {
			return err
		}
	} else if err != nil {
		return err
	} else {
		made = "reused from " + path
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer devnull.Close()
	e.logf("check: %d messages %s in %v, %d runs", n, made, time.Since(start).Round(time.Millisecond), e.Runs)
	for run := 0; run < e.Runs; run++ {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		res, err := RunProc(cctx, devnull, e.ReplayBin, "check", path, "--json")
		cancel()
		if err != nil {
			return err
		}
		if res.ExitCode != 0 && res.ExitCode != 1 {
			return fmt.Errorf("aaep-replay check: exit %d: %s", res.ExitCode, tail(res.Stderr))
		}
		e.Emit(Result{Name: "Check", Metrics: []Metric{
			{perSecond(int64(n), res.Wall), "events/s"},
			{perSecond(int64(n), res.CPU()), "events/cpu-s"},
			{float64(res.MaxRSS) / (1 << 20), "peak-MiB"},
			{res.Wall.Seconds(), "s"},
		}})
		e.logf("check run %d: %v wall, %v CPU, %.0f MiB peak", run+1, res.Wall.Round(time.Millisecond), res.CPU().Round(time.Millisecond), float64(res.MaxRSS)/(1<<20))
	}
	return nil
}
