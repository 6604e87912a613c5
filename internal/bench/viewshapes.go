package bench

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/aaep-tools/aaepkit/internal/sample"
)

// viewShape is a capture of n messages in one of the shapes the viewer
// must hold in memory: many sessions of many messages, very many short
// sessions, one long session.
type viewShape struct {
	name  string
	write func(path string) error
}

// viewShapes are the three shapes of n messages: √n sessions of √n
// (1,000 × 1,000 at a million), the check's bulk capture (sample.Stream:
// about n/11.5 sessions of about 11.5, 87,000 at a million), one session.
func viewShapes(n int) []viewShape {
	side := int(math.Sqrt(float64(n)))
	return []viewShape{
		{fmt.Sprintf("%dx%d", side, side), func(path string) error { return WriteManySessions(path, side, side) }},
		{fmt.Sprintf("short-sessions/events=%d", n), func(path string) error { return WriteBulkCapture(path, n, 11) }},
		{fmt.Sprintf("1x%d", n), func(path string) error {
			msgs, err := LongSession(n, 5)
			if err != nil {
				return err
			}
			return sample.WriteCapture(path, msgs, captureStart, "benche2e")
		}},
	}
}

// ViewShapeNames are the shapes ViewShapes can be limited to: "square"
// (√n sessions of √n), "short-sessions", "one-session".
var ViewShapeNames = []string{"square", "short-sessions", "one-session"}

// ViewShapes measures `aaep-replay view` on captures of n messages in the
// three shapes (viewShapes), once its background check is done: the
// check's time, filters the indexes answer (a session: the one with the
// most messages; index > N, N the middle record; a range of 1,000), a text search
// of the whole capture that finds nothing, each asked once (not cached),
// and the view process's peak resident memory. The captures are written in
// keep when it is set (and reused when already there: to measure other
// builds on them alternately), else in e.Dir. only, when not empty, names
// the shapes to measure (ViewShapeNames).
func ViewShapes(ctx context.Context, e *Env, n int, keep string, only ...string) error {
	dir := e.Dir
	if keep != "" {
		if err := os.MkdirAll(keep, 0o755); err != nil {
			return err
		}
		dir = keep
	}
	for i, sh := range viewShapes(n) {
		if len(only) > 0 && !slices.Contains(only, ViewShapeNames[i]) {
			continue
		}
		path := filepath.Join(dir, "view-shape-"+filepath.Base(sh.name)+".aaep")
		if _, err := os.Stat(path); err != nil {
			e.logf("writing %s", sh.name)
			// Written beside and renamed: an interrupted write is not
			// taken for a capture the next time.
			tmp := filepath.Join(dir, ".writing-"+filepath.Base(path))
			if err := sh.write(tmp); err != nil {
				os.Remove(tmp)
				return fmt.Errorf("%s: %w", sh.name, err)
			}
			if err := os.Rename(tmp, path); err != nil {
				return fmt.Errorf("%s: %w", sh.name, err)
			}
		}
		for run := 0; run < e.Runs; run++ {
			m, err := viewShapeRun(ctx, e, path)
			if err != nil {
				return fmt.Errorf("%s: %w", sh.name, err)
			}
			e.Emit(Result{Name: "ViewShape/" + sh.name, Metrics: m})
			e.logf("view %s, run %d: %v", sh.name, run+1, m)
		}
	}
	return nil
}

func viewShapeRun(ctx context.Context, e *Env, path string) ([]Metric, error) {
	t0 := time.Now()
	v, err := startView(ctx, e.ReplayBin, path)
	if err != nil {
		return nil, err
	}
	defer v.stop()
	var n int64
	for {
		var c struct {
			Records int64 `json:"records"`
			Check   struct {
				Done  bool   `json:"done"`
				Error string `json:"error"`
			} `json:"check"`
		}
		if err := v.get("/api/capture", &c); err != nil {
			return nil, err
		}
		if c.Check.Error != "" {
			return nil, fmt.Errorf("check: %s", c.Check.Error)
		}
		n = c.Records
		if c.Check.Done {
			break
		}
		select {
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		case <-time.After(100 * time.Millisecond):
		}
	}
	checked := time.Since(t0)
	var ss struct {
		Sessions []struct {
			ID string `json:"id"`
		} `json:"sessions"`
	}
	if err := v.get("/api/sessions?sort=messages&desc=1&limit=1", &ss); err != nil {
		return nil, err
	}
	if len(ss.Sessions) == 0 {
		return nil, fmt.Errorf("no session")
	}
	rows := func(q url.Values) (time.Duration, int64, error) {
		q.Set("limit", "100")
		var r struct {
			Total int64 `json:"total"`
		}
		t := time.Now()
		err := v.get("/api/rows?"+q.Encode(), &r)
		return time.Since(t), r.Total, err
	}
	m := []Metric{{ms(checked), "checked-ms"}}
	for _, f := range []struct{ unit, filter, q string }{
		{"session-filter-ms", "session == " + ss.Sessions[0].ID, ""},
		{"index-filter-ms", fmt.Sprintf("index > %d", n/2), ""},
		{"range-filter-ms", fmt.Sprintf("index >= %d && index < %d", n/4, n/4+1000), ""},
		{"search-ms", "", "no-such-text-anywhere"},
	} {
		q := url.Values{}
		if f.filter != "" {
			q.Set("filter", f.filter)
		}
		if f.q != "" {
			q.Set("q", f.q)
		}
		d, total, err := rows(q)
		if err != nil {
			return nil, err
		}
		if total == 0 && f.q == "" {
			return nil, fmt.Errorf("%s kept nothing", f.filter)
		}
		m = append(m, Metric{ms(d), f.unit})
	}
	return append(m, Metric{peakRSS(v.cmd.Process.Pid), "view-peak-MiB"}), nil
}
