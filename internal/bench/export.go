package bench

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"
)

// otlpSink is an OTLP/HTTP receiver on 127.0.0.1 that takes every request
// and discards it: what export --format otlp costs, without a collector's.
func otlpSink() (url string, stop func(), err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(l)
	return "http://" + l.Addr().String(), func() { srv.Close() }, nil
}

// exportRun exports the capture at path as OpenTelemetry traces, to a
// receiver on 127.0.0.1 (--format otlp) and as OTLP JSON to /dev/null
// (--format otlp-json), after the check of it that checked measured:
// results ExportOTLP and ExportOTLPJSON, each with its speed as a multiple
// of check's on the same input in the same run (x-check, by wall time;
// x-check-cpu, by CPU time, which a loaded machine disturbs less; 1 is as
// fast).
func exportRun(ctx context.Context, e *Env, devnull *os.File, path string, n int, checked ProcResult) error {
	checkWall := checked.Wall
	url, stop, err := otlpSink()
	if err != nil {
		return err
	}
	defer stop()
	for _, run := range []struct {
		name string
		args []string
	}{
		{"ExportOTLP", []string{"export", "-q", "--format", "otlp", "--otlp-endpoint", url, path}},
		{"ExportOTLPJSON", []string{"export", "-q", "--format", "otlp-json", path}},
	} {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
		res, err := RunProc(cctx, devnull, e.ReplayBin, run.args...)
		cancel()
		if err != nil {
			return err
		}
		if res.ExitCode != 0 {
			return fmt.Errorf("aaep-replay %v: exit %d: %s", run.args[:4], res.ExitCode, tail(res.Stderr))
		}
		e.Emit(Result{Name: run.name, Metrics: []Metric{
			{perSecond(int64(n), res.Wall), "events/s"},
			{checkWall.Seconds() / res.Wall.Seconds(), "x-check"},
			{checked.CPU().Seconds() / res.CPU().Seconds(), "x-check-cpu"},
			{float64(res.MaxRSS) / (1 << 20), "peak-MiB"},
			{res.Wall.Seconds(), "s"},
		}})
		e.logf("%s: %v wall, %v CPU, %.0f MiB peak (%.2f× check's speed)", run.name, res.Wall.Round(time.Millisecond), res.CPU().Round(time.Millisecond),
			float64(res.MaxRSS)/(1<<20), checkWall.Seconds()/res.Wall.Seconds())
	}
	return nil
}
