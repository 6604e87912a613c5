package capfile

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// readLog is an io.ReaderAt that remembers the byte ranges read.
type readLog struct {
	ra    io.ReaderAt
	reads [][2]int64 // [off, end)
}

func (l *readLog) ReadAt(p []byte, off int64) (int, error) {
	n, err := l.ra.ReadAt(p, off)
	l.reads = append(l.reads, [2]int64{off, off + int64(n)})
	return n, err
}

// touched reports whether a read covered any byte of [from, to).
func (l *readLog) touched(from, to int64) bool {
	for _, r := range l.reads {
		if r[0] < to && r[1] > from {
			return true
		}
	}
	return false
}

// A reader opened with a layout reads neither the header nor the index
// again: only the frames of the records it returns. It reads what a reader
// opened afresh reads, and seeks the same.
func TestLayout(t *testing.T) {
	recs := genRecords(11, 3000, 4, 3*time.Millisecond)
	path := writeFile(t, t.TempDir(), recs, &WriterOptions{FlushInterval: -1, FrameSize: 16 << 10})
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	size := int64(len(data))
	first, err := NewReaderAt(bytes.NewReader(data), size)
	if err != nil {
		t.Fatal(err)
	}
	l, ok := first.Layout()
	first.Close()
	if !ok || l.Index() == nil || l.DataEnd() <= l.dataStart || l.DataEnd() >= size || l.Header().Tool != testHeader().Tool {
		t.Fatalf("layout of a clean capture: %+v, indexed %v", l, ok)
	}

	log := &readLog{ra: bytes.NewReader(data)}
	r, err := NewReaderAtLayout(log, size, l)
	if err != nil {
		t.Fatal(err)
	}
	got, err := readAll(r)
	if err != nil {
		t.Fatal(err)
	}
	equalRecords(t, got, recs)
	if !r.Clean() || r.Header().Tool != testHeader().Tool {
		t.Errorf("clean %v, header %+v", r.Clean(), r.Header())
	}
	if log.touched(0, l.dataStart) || log.touched(l.DataEnd(), size) {
		t.Errorf("a read with the layout read the header or the index: %v (records in [%d, %d) of %d)", log.reads, l.dataStart, l.DataEnd(), size)
	}
	// A seek reads the frame holding the record only.
	log.reads = nil
	if err := r.SeekRecord(2000); err != nil {
		t.Fatal(err)
	}
	if rec, err := r.Next(); err != nil || rec.Time != recs[2000].Time {
		t.Fatalf("after SeekRecord(2000): %v, %v", rec, err)
	}
	if log.touched(0, l.dataStart) || log.touched(l.DataEnd(), size) {
		t.Errorf("a seek with the layout read the header or the index: %v", log.reads)
	}
	r.Close()

	// A stream's reader knows the header only: the index is read from
	// the end, the header not again.
	sr, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	hl, ok := sr.Layout()
	sr.Close()
	if ok || hl.Index() != nil || hl.DataEnd() != -1 {
		t.Fatalf("a stream's layout holds an index: %+v", hl)
	}
	log.reads = nil
	r, err = NewReaderAtLayout(log, size, hl)
	if err != nil {
		t.Fatal(err)
	}
	if x, err := r.FileIndex(); err != nil || x.Records != int64(len(recs)) || x.Rebuilt {
		t.Fatalf("index with a stream's layout: %+v, %v", x, err)
	}
	if log.touched(0, l.dataStart) || !log.touched(l.DataEnd(), size) {
		t.Errorf("with a header's layout: reads %v, want the index's and not the header's", log.reads)
	}
	if _, ok := r.Layout(); !ok {
		t.Error("a reader that loaded the index has no indexed layout")
	}
	r.Close()

	// Without its index, a layout is a header's: the index is read again.
	if w := l.WithoutIndex(); w.Index() != nil || w.DataEnd() != -1 || w.Header().Tool != l.Header().Tool {
		t.Errorf("WithoutIndex: %+v", w)
	} else if r, err := NewReaderAtLayout(bytes.NewReader(data), size, w); err != nil || !r.Clean() {
		t.Errorf("with a layout without its index: %v", err)
	} else if x, err := r.FileIndex(); err != nil || x.Records != int64(len(recs)) || x == l.Index() {
		t.Errorf("index read again: %+v, %v", x, err)
	}

	// A layout is for its capture's size.
	if _, err := NewReaderAtLayout(bytes.NewReader(data[:size-1]), size-1, l); err == nil || !strings.Contains(err.Error(), "layout") {
		t.Errorf("a layout for another size: %v", err)
	}
	if _, err := NewReaderAtLayout(bytes.NewReader(data), size, Layout{}); err == nil {
		t.Error("a zero layout was accepted")
	}
}
