package bench

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/sample"
	"github.com/aaep-tools/aaepkit/payload"
)

func isEOF(err error) bool { return errors.Is(err, io.EOF) }

// CapSize writes the same realistic events (sample.Events, about 430 bytes
// each, 5 ms apart) as a capture file on disk, as JSONL, as JSONL with gzip
// (default level) and as JSONL with zstd level 3, and reads the capture
// back. Results: CapSize/bytes (bytes per event of each form and the
// ratios) and CapSize/speed (capture write and read, events/s, through
// the public capfile API on one goroutine, file on disk).
func CapSize(ctx context.Context, e *Env, n int) error {
	events := sample.Events(n, 11)
	sessions := make([]string, n)
	var jsonl bytes.Buffer
	for i, p := range events {
		sessions[i] = payload.Decode(p).Routing.SessionID
		jsonl.Write(p)
		jsonl.WriteByte('\n')
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.DefaultCompression)
	zw.Write(jsonl.Bytes())
	if err := zw.Close(); err != nil {
		return err
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(3)), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return err
	}
	zst := len(enc.EncodeAll(jsonl.Bytes(), nil))
	e.logf("capsize: %d events, %d runs", n, e.Runs)
	path := filepath.Join(e.Dir, "capsize.aaep")
	defer os.Remove(path)
	for run := -1; run < e.Runs; run++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		start := time.Now()
		w, err := capfile.Create(path, benchHeader(), nil)
		if err != nil {
			return err
		}
		for i, p := range events {
			rec := capfile.Record{Kind: capfile.KindReceived, Time: int64(i) * int64(5*time.Millisecond), Session: sessions[i], Payload: p}
			if err := w.Append(&rec); err != nil {
				w.Close()
				return err
			}
		}
		if err := w.Close(); err != nil {
			return err
		}
		wrote := time.Since(start)
		fi, err := os.Stat(path)
		if err != nil {
			return err
		}
		start = time.Now()
		got, err := countRecords(path)
		if err != nil {
			return err
		}
		read := time.Since(start)
		if got != int64(n) {
			return fmt.Errorf("capsize: read %d records back, wrote %d", got, n)
		}
		if run < 0 {
			continue // warm-up
		}
		size := float64(fi.Size())
		per := func(b float64) float64 { return b / float64(n) }
		e.Emit(Result{Name: "CapSize/bytes", Metrics: []Metric{
			{per(size), "capfile-B/event"},
			{per(float64(jsonl.Len())), "jsonl-B/event"},
			{per(float64(gz.Len())), "jsonl.gz-B/event"},
			{per(float64(zst)), "jsonl.zst-B/event"},
			{float64(jsonl.Len()) / size, "jsonl/capfile"},
			{size / float64(zst), "capfile/jsonl.zst"},
			{size / float64(gz.Len()), "capfile/jsonl.gz"},
		}})
		e.Emit(Result{Name: "CapSize/speed", Metrics: []Metric{
			{perSecond(int64(n), wrote), "write-events/s"},
			{perSecond(int64(n), read), "read-events/s"},
		}})
		e.logf("capsize run %d: write %v, read %v, %.1f B/event", run+1, wrote.Round(time.Millisecond), read.Round(time.Millisecond), per(size))
	}
	return nil
}

func countRecords(path string) (int64, error) {
	r, err := capfile.Open(path)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	var n int64
	for {
		if _, err := r.Next(); err != nil {
			if isEOF(err) {
				return n, nil
			}
			return n, err
		}
		n++
	}
}
