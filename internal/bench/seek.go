package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/sample"
)

// Seek builds a capture of at least size bytes of realistic events (one
// every millisecond), then measures, per run: opening it and reading the
// first record at the middle of its time span through the capfile API
// (Seek/open+middle), the mean of 100 seeks to random times on an open
// reader (Seek/random), and the time from connecting to `aaep-replay serve
// FILE --from <middle> --no-delay` to the first event received
// (Seek/serve-from-middle). The page cache is warm: the file was just
// written. The file is removed at the end.
func Seek(ctx context.Context, e *Env, size int64) error {
	path := filepath.Join(e.Dir, "seek.aaep")
	defer os.Remove(path)
	start := time.Now()
	sc, err := WriteSizedCapture(path, size, time.Millisecond, sample.Events(4096, 13))
	if err != nil {
		return err
	}
	e.logf("seek: %d records, %.0f MiB, spanning %v, written in %v; %d runs", sc.Records, float64(sc.Bytes)/(1<<20), sc.LastTime, time.Since(start).Round(time.Second), e.Runs)
	mid := sc.LastTime / 2
	// Named by the size asked for; the file is a little larger.
	name := fmt.Sprintf("Seek/%dKiB", size>>10)
	if size%(1<<20) == 0 {
		name = fmt.Sprintf("Seek/%dMiB", size>>20)
	}
	if err := RemoteSeek(ctx, e, name, path, mid); err != nil {
		return fmt.Errorf("remote seek: %w", err)
	}
	srv, err := StartReplayServer(ctx, e.ReplayBin, path, "--no-delay", "--from", mid.String())
	if err != nil {
		return err
	}
	defer srv.Stop()
	rng := rand.New(rand.NewPCG(5, 6))
	if _, err := openSeek(path, mid); err != nil { // warm-up
		return err
	}
	for run := 0; run < e.Runs; run++ {
		open, err := openSeek(path, mid)
		if err != nil {
			return err
		}
		random, err := randomSeeks(path, sc.LastTime, rng)
		if err != nil {
			return err
		}
		t0 := time.Now()
		sub, err := Subscribe(ctx, srv.Addr)
		if err != nil {
			return err
		}
		st, err := sub.Read(ReadOptions{Deadline: time.Now().Add(time.Minute), Max: 1})
		sub.Close()
		if err != nil {
			return err
		}
		if st.Events != 1 {
			return fmt.Errorf("serve --from %v: no event (close %d %q)", mid, st.CloseCode, st.CloseText)
		}
		first := st.First.Sub(t0)
		e.Emit(Result{Name: name, Metrics: []Metric{
			{ms(open), "open+middle-ms"},
			{ms(random), "seek-ms"},
			{ms(first), "serve-first-event-ms"},
			{float64(sc.Bytes) / (1 << 20), "file-MiB"},
			{float64(sc.Records), "records"},
		}})
		e.logf("seek run %d: open+middle %v, random seek %v, serve first event %v", run+1, open, random, first)
	}
	// The same file in aaep-replay view: the first page comes from the
	// index, not from a read of the whole capture.
	srv.Stop()
	return View(ctx, e, path, "View/"+strings.TrimPrefix(name, "Seek/"), mid, 10*time.Second)
}

// openSeek opens the capture, seeks to time t and reads one record.
func openSeek(path string, t time.Duration) (time.Duration, error) {
	start := time.Now()
	r, err := capfile.Open(path)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	if err := r.SeekTime(int64(t)); err != nil {
		return 0, fmt.Errorf("seek to %v: %w", t, err)
	}
	rec, err := r.Next()
	if err != nil {
		return 0, fmt.Errorf("record after %v: %w", t, err)
	}
	d := time.Since(start)
	if rec.Time < int64(t) {
		return 0, fmt.Errorf("seek to %v returned a record at %v", t, time.Duration(rec.Time))
	}
	return d, nil
}

// randomSeeks returns the mean time of 100 seeks (plus one Next each) to
// random times on one open reader.
func randomSeeks(path string, last time.Duration, rng *rand.Rand) (time.Duration, error) {
	r, err := capfile.Open(path)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	if _, err := r.FileIndex(); err != nil {
		return 0, err
	}
	const k = 100
	start := time.Now()
	for i := 0; i < k; i++ {
		t := rng.Int64N(int64(last) + 1)
		if err := r.SeekTime(t); err != nil {
			return 0, err
		}
		if rec, err := r.Next(); err != nil || rec.Time < t {
			return 0, fmt.Errorf("seek to %v: %v", time.Duration(t), err)
		}
	}
	return time.Since(start) / k, nil
}
