package capfile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FuzzReader reads arbitrary bytes as a capture: it must never panic, every
// error must be a *CorruptionError (or ErrNotCapture/ErrUnsupportedVersion
// from the header), and whatever was read must write back and read back to
// the same records (a round trip).
func FuzzReader(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.aaep")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	var small bytes.Buffer
	w, _ := NewWriter(&small, testHeader(), &WriterOptions{FrameSize: 512, FlushInterval: -1})
	for i, rec := range genRecords(11, 20, 3, time.Millisecond) {
		w.Append(&rec)
		if i%3 == 0 {
			w.Flush()
		}
	}
	w.Close()
	f.Add(small.Bytes())
	var empty bytes.Buffer
	w, _ = NewWriter(&empty, Header{Tool: "t"}, nil)
	w.Close()
	f.Add(empty.Bytes())

	f.Fuzz(fuzzReader)
}

func fuzzReader(t *testing.T, data []byte) {
	{
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			var ce *CorruptionError
			if !errors.Is(err, ErrNotCapture) && !errors.Is(err, ErrUnsupportedVersion) && !errors.As(err, &ce) {
				t.Fatalf("NewReader: unexpected error type %T: %v", err, err)
			}
			return
		}
		var recs []Record
		var total int
		var rerr error
		for len(recs) < 5000 && total < 4<<20 {
			rec, err := r.Next()
			if err != nil {
				rerr = err
				break
			}
			total += len(rec.Payload)
			recs = append(recs, cloneRecord(rec))
		}
		if rerr != nil && rerr != io.EOF {
			var ce *CorruptionError
			if !errors.As(rerr, &ce) {
				t.Fatalf("Next: unexpected error type %T: %v", rerr, rerr)
			}
		}
		h := r.Header()

		// Round trip: write what was read, read it back.
		var out bytes.Buffer
		w, err := NewWriter(&out, h, &WriterOptions{FrameSize: 4096, FlushInterval: -1})
		if err != nil {
			if strings.Contains(err.Error(), "exceeds MaxHeaderSize") {
				return // re-encoding escaped the header's JSON beyond the limit
			}
			t.Fatalf("NewWriter with the header read: %v", err)
		}
		for i := range recs {
			if err := w.Append(&recs[i]); err != nil {
				t.Fatalf("Append(record %d read from the input): %v", i, err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		r2, err := NewReader(bytes.NewReader(out.Bytes()))
		if err != nil {
			t.Fatalf("reading the rewritten capture: %v", err)
		}
		got, err := readAll(r2)
		if err != nil {
			t.Fatalf("reading the rewritten capture: %v", err)
		}
		equalRecords(t, got, recs)
		h2 := r2.Header()
		if !h2.Start.Equal(h.Start) || h2.Tool != h.Tool || len(h2.Origins) != len(h.Origins) {
			t.Fatalf("header changed in the round trip: %+v -> %+v", h, h2)
		}

		// The file reader: index, seeks.
		ra, err := NewReaderAt(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatalf("NewReaderAt failed where NewReader succeeded: %v", err)
		}
		x, err := ra.FileIndex()
		if err != nil {
			t.Fatalf("FileIndex: %v", err)
		}
		if x.Records > 0 {
			if err := ra.SeekRecord(x.Records / 2); err != nil {
				t.Fatalf("SeekRecord: %v", err)
			}
			ra.Next()
			ra.SeekTime(x.LastTime())
			ra.Next()
		}
		for _, s := range x.Sessions {
			ra.SeekSession(s.ID)
			ra.Next()
			break
		}
	}
}
