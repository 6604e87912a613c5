package capfile

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/internal/cputime"
	"github.com/klauspost/compress/zstd"
)

// benchPool is a pool of realistic AAEP records (about 430 bytes each) that
// the benchmarks cycle through.
var benchPool = sync.OnceValue(func() []Record {
	return genRecords(99, 20000, 8, time.Millisecond)
})

// poolRecord returns record i of an endless stream built from the pool, with
// times that keep increasing.
func poolRecord(pool []Record, i int, gap time.Duration) Record {
	rec := pool[i%len(pool)]
	rec.Time = int64(i) * int64(gap)
	return rec
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

func meanPayload(pool []Record) float64 {
	var n int
	for _, r := range pool {
		n += len(r.Payload)
	}
	return float64(n) / float64(len(pool))
}

// BenchmarkWrite measures Append throughput on one goroutine, per level.
func BenchmarkWrite(b *testing.B) {
	pool := benchPool()
	levels := []struct {
		name  string
		level zstd.EncoderLevel
	}{{"fastest", zstd.SpeedFastest}, {"default", zstd.SpeedDefault}, {"better", zstd.SpeedBetterCompression}}
	for _, lv := range levels {
		b.Run(lv.name, func(b *testing.B) {
			var cw countWriter
			w, err := NewWriter(&cw, testHeader(), &WriterOptions{Level: lv.level, FlushInterval: -1})
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(meanPayload(pool)))
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cputime.Used()
			for i := 0; i < b.N; i++ {
				rec := poolRecord(pool, i, time.Millisecond)
				if err := w.Append(&rec); err != nil {
					b.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(b.N)/(cputime.Used()-cpu0).Seconds(), "events/cpu-s")
			b.ReportMetric(float64(cw.n)/float64(b.N), "file-B/event")
		})
	}
}

// benchFile returns an in-memory capture of n pool records.
func benchFile(b *testing.B, n int, opts *WriterOptions) []byte {
	b.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testHeader(), opts)
	if err != nil {
		b.Fatal(err)
	}
	pool := benchPool()
	for i := 0; i < n; i++ {
		rec := poolRecord(pool, i, time.Millisecond)
		if err := w.Append(&rec); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkRead measures Next throughput over a capture of 50,000 records.
func BenchmarkRead(b *testing.B) {
	const n = 50000
	data := benchFile(b, n, &WriterOptions{FlushInterval: -1})
	b.SetBytes(int64(meanPayload(benchPool())))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cputime.Used()
	var r *Reader
	for i := 0; i < b.N; i++ {
		if i%n == 0 {
			var err error
			if r, err = NewReader(bytes.NewReader(data)); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := r.Next(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(b.N)/(cputime.Used()-cpu0).Seconds(), "events/cpu-s")
}

// BenchmarkSize writes the same 20,000 events at different event rates (a
// timed flush every 100 ms of capture time, as a live recorder does) and
// reports the size against the events as JSONL and as JSONL compressed with
// zstd level 3. jsonl/capfile is how many times smaller than JSONL the
// capture is (the target is at least 7).
func BenchmarkSize(b *testing.B) {
	pool := benchPool()
	var jsonl []byte
	for _, r := range pool {
		jsonl = append(append(jsonl, r.Payload...), '\n')
	}
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
	jsonlZstd := len(enc.EncodeAll(jsonl, nil))
	rates := []struct {
		name      string
		perSecond int // 0: bulk, no timed flushes
	}{{"bulk", 0}, {"10ev_s", 10}, {"1000ev_s", 1000}, {"100000ev_s", 100000}}
	for _, rt := range rates {
		b.Run(rt.name, func(b *testing.B) {
			var size int64
			for i := 0; i < b.N; i++ {
				size = sizeAtRate(b, pool, rt.perSecond)
			}
			b.ReportMetric(float64(len(jsonl))/float64(size), "jsonl/capfile")
			b.ReportMetric(float64(size)/float64(jsonlZstd), "capfile/jsonl.zst")
			b.ReportMetric(float64(size)/float64(len(pool)), "B/event")
		})
	}
}

// sizeAtRate returns the size of a capture of pool written as a live
// recorder would at perSecond records per second (0: bulk, no timed
// flushes): a timed flush every 100 ms of capture time.
func sizeAtRate(b *testing.B, pool []Record, perSecond int) int64 {
	var cw countWriter
	w, err := NewWriter(&cw, testHeader(), &WriterOptions{FlushInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	perTick := float64(perSecond) / 10
	due := perTick
	for k := range pool {
		if err := w.Append(&pool[k]); err != nil {
			b.Fatal(err)
		}
		if perSecond > 0 && float64(k+1) >= due {
			now = now.Add(100 * time.Millisecond)
			w.flushTick(now)
			due += perTick
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return cw.n
}

// BenchmarkSeek measures SeekTime plus the first Next on a capture of 200,000
// events (about 8 MiB) held in memory.
func BenchmarkSeek(b *testing.B) {
	const n = 200000
	data := benchFile(b, n, &WriterOptions{FlushInterval: -1})
	r, err := NewReaderAt(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		b.Fatal(err)
	}
	benchSeek(b, r, n)
}

func benchSeek(b *testing.B, r *Reader, n int64) {
	x, err := r.FileIndex()
	if err != nil || x.Rebuilt {
		b.Fatalf("index: %v (rebuilt %v)", err, x != nil && x.Rebuilt)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t := rng.Int64N(x.LastTime() + 1)
		if err := r.SeekTime(t); err != nil {
			b.Fatal(err)
		}
		rec, err := r.Next()
		if err != nil || rec.Time < t {
			b.Fatalf("SeekTime(%d): %v", t, err)
		}
	}
	b.StopTimer()
	b.ReportMetric(b.Elapsed().Seconds()*1000/float64(b.N), "ms/seek")
}

// bigCapture is the 1 GiB capture of BenchmarkSeek1GiB, built once per test
// process in a temporary directory that TestMain removes.
var (
	bigOnce sync.Once
	bigDir  string
	bigPath string
	bigN    int64
	bigErr  error
)

func buildBigCapture() {
	bigDir, bigErr = os.MkdirTemp("", "capfile-bench-")
	if bigErr != nil {
		return
	}
	bigPath = filepath.Join(bigDir, "1gib.aaep")
	w, err := Create(bigPath, testHeader(), &WriterOptions{FlushInterval: -1})
	if err != nil {
		bigErr = err
		return
	}
	pool := benchPool()
	for i := 0; ; i++ {
		rec := poolRecord(pool, i, time.Millisecond)
		if err := w.Append(&rec); err != nil {
			bigErr = err
			return
		}
		if i%100000 == 0 && w.Stats().FileBytes >= 1<<30 {
			bigN = int64(i + 1)
			break
		}
	}
	bigErr = w.Close()
}

func removeBigCapture() {
	if bigDir != "" {
		os.RemoveAll(bigDir)
	}
}

// BenchmarkSeek1GiB measures seeking in a 1 GiB capture file: "seek" is
// SeekTime plus the first Next on an open Reader; "open+seek" includes
// opening the file and loading its index. Building the file takes a minute
// or two, once per test process.
func BenchmarkSeek1GiB(b *testing.B) {
	bigOnce.Do(buildBigCapture)
	if bigErr != nil {
		b.Fatal(bigErr)
	}
	if fi, err := os.Stat(bigPath); err == nil {
		b.Logf("capture: %.2f GiB, %d records", float64(fi.Size())/(1<<30), bigN)
	}
	b.Run("seek", func(b *testing.B) {
		r, err := Open(bigPath)
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		benchSeek(b, r, bigN)
	})
	b.Run("open+seek", func(b *testing.B) {
		rng := rand.New(rand.NewPCG(3, 4))
		for i := 0; i < b.N; i++ {
			r, err := Open(bigPath)
			if err != nil {
				b.Fatal(err)
			}
			x, err := r.FileIndex()
			if err != nil {
				b.Fatal(err)
			}
			if err := r.SeekTime(rng.Int64N(x.LastTime() + 1)); err != nil {
				b.Fatal(err)
			}
			if _, err := r.Next(); err != nil {
				b.Fatal(err)
			}
			r.Close()
		}
		b.ReportMetric(b.Elapsed().Seconds()*1000/float64(b.N), "ms/open+seek")
	})
}
