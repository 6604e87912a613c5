package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Check runs `aaep-replay check FILE --json` (report discarded) on a
// capture of n messages of realistic interleaved sessions, some with
// protocol violations, and reports messages per second of wall time and
// of CPU time, and the process's peak resident memory. Exit status 1
// (findings) is expected. Results: Check. Each run is followed by the
// OpenTelemetry exports of the capture (exportRun; results: ExportOTLP,
// ExportOTLPJSON) and a diff of it with itself (diffRun; results: Diff),
// so that each is measured under the load the check was.
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
		// The exports first: right after the check they are compared
		// with, not after the diff's minute, so that the load of a shared
		// machine has less time to change between the two.
		if err := exportRun(ctx, e, devnull, path, n, res); err != nil {
			return err
		}
		if err := diffRun(ctx, e, devnull, path, n, res.Wall); err != nil {
			return err
		}
	}
	return nil
}

// copyFile copies src to a new file dst.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// diffRun runs `aaep-replay check FILE COPY --json` (both sides' input
// checked, as check does several recordings: at once) and then `aaep-replay
// diff FILE COPY --json` (COPY a copy of FILE), each side n messages, and reports
// events per second of one side, diff's time as a multiple of check's on
// the same input (both sides) and on one side (checkWall, the check run
// just before), and diff's peak resident memory. Results: Diff.
func diffRun(ctx context.Context, e *Env, devnull *os.File, path string, n int, checkWall time.Duration) error {
	// B is a copy: a file named twice is one recording to check.
	other := strings.TrimSuffix(path, ".aaep") + "-b.aaep"
	if _, err := os.Stat(other); err != nil {
		if err := copyFile(path, other); err != nil {
			return err
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	both, err := RunProc(cctx, devnull, e.ReplayBin, "check", path, other, "--json")
	cancel()
	if err != nil {
		return err
	}
	if both.ExitCode != 0 && both.ExitCode != 1 {
		return fmt.Errorf("aaep-replay check of both sides: exit %d: %s", both.ExitCode, tail(both.Stderr))
	}
	cctx, cancel = context.WithTimeout(ctx, 10*time.Minute)
	res, err := RunProc(cctx, devnull, e.ReplayBin, "diff", path, other, "--json")
	cancel()
	if err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("aaep-replay diff of a capture with its copy: exit %d (want 0, the same): %s", res.ExitCode, tail(res.Stderr))
	}
	e.Emit(Result{Name: "Diff", Metrics: []Metric{
		{perSecond(int64(n), res.Wall), "events/s"},
		{res.Wall.Seconds() / both.Wall.Seconds(), "x-check"},
		{res.Wall.Seconds() / checkWall.Seconds(), "x-check-one"},
		{res.CPU().Seconds() / both.CPU().Seconds(), "x-check-cpu"},
		{float64(res.MaxRSS) / (1 << 20), "peak-MiB"},
		{res.Wall.Seconds(), "s"},
	}})
	e.logf("diff: %v wall, %v CPU, %.0f MiB peak; check of both sides %v wall, %v CPU (diff %.2f× its wall, %.2f× one side's)",
		res.Wall.Round(time.Millisecond), res.CPU().Round(time.Millisecond), float64(res.MaxRSS)/(1<<20),
		both.Wall.Round(time.Millisecond), both.CPU().Round(time.Millisecond), res.Wall.Seconds()/both.Wall.Seconds(), res.Wall.Seconds()/checkWall.Seconds())
	return nil
}
