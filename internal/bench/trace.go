package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/aaep-tools/aaepkit/internal/sample"
)

// Trace times `aaep-replay visualize FILE -o FILE.svg` end to end (reading,
// checking, drawing and the Graphviz layout in the aaep-render helper) on
// captures holding one session of each size (LongSession). Results:
// Trace/events=<n>.
func Trace(ctx context.Context, e *Env, sizes []int) error {
	paths := make([]string, len(sizes))
	for i, n := range sizes {
		msgs, err := LongSession(n, uint64(n))
		if err != nil {
			return err
		}
		paths[i] = filepath.Join(e.Dir, fmt.Sprintf("trace-%d.aaep", n))
		if err := sample.WriteCapture(paths[i], msgs, captureStart, "benche2e"); err != nil {
			return err
		}
	}
	e.logf("trace: sessions of %v events, %d runs", sizes, e.Runs)
	for run := -1; run < e.Runs; run++ {
		for i, n := range sizes {
			svg := paths[i] + ".svg"
			cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			res, err := RunProc(cctx, nil, e.ReplayBin, "visualize", paths[i], "-o", svg)
			cancel()
			if err != nil {
				return err
			}
			fi, serr := os.Stat(svg)
			if res.ExitCode != 0 || serr != nil || fi.Size() == 0 {
				return fmt.Errorf("aaep-replay visualize (%d events): exit %d, output %v: %s", n, res.ExitCode, serr, tail(res.Stderr))
			}
			os.Remove(svg)
			if run < 0 {
				continue // warm-up
			}
			e.Emit(Result{Name: fmt.Sprintf("Trace/events=%d", n), Metrics: []Metric{{ms(res.Wall), "ms"}, {float64(fi.Size()) / 1024, "svg-KiB"}}})
			e.logf("trace %d events run %d: %v", n, run+1, res.Wall.Round(time.Millisecond))
		}
	}
	return nil
}
