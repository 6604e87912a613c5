//go:build linux

package capfile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestFullDisk(t *testing.T) {
	f, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Fatalf("open /dev/full: %v", err)
	}
	defer f.Close()
	// A header write to a full disk fails at once.
	if _, err := NewWriter(f, testHeader(), nil); !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "capfile: write header: ") {
		t.Fatalf("NewWriter(/dev/full) = %v, want a no-space error", err)
	}

	// A disk that fills after some records: the error is sticky, and what
	// was flushed before stays readable. The disk is a real 256 KiB tmpfs
	// when this process may mount one, else a real file whose writes past
	// 200 KiB go to /dev/full (the kernel's ENOSPC either way).
	dir := t.TempDir()
	path := filepath.Join(dir, "c.aaep")
	var w *Writer
	if mountTmpfs(t, dir, 256<<10) {
		t.Log("disk: tmpfs of 256 KiB")
		w, err = Create(path, testHeader(), &WriterOptions{FlushInterval: -1, FrameSize: 16 << 10})
	} else {
		t.Log("disk: file, then /dev/full after 200 KiB (mounting a tmpfs is not permitted)")
		file, ferr := os.Create(path)
		if ferr != nil {
			t.Fatal(ferr)
		}
		defer file.Close()
		w, err = NewWriter(&fullAfter{f: file, full: f, limit: 200 << 10}, testHeader(), &WriterOptions{FlushInterval: -1, FrameSize: 16 << 10})
	}
	if err != nil {
		t.Fatal(err)
	}
	g := newRecGen(10, 2, time.Millisecond)
	var recs []Record
	var werr error
	flushed := 0
	for i := 0; i < 1_000_000 && werr == nil; i++ {
		rec := g.next()
		rec.Payload = append(rec.Payload, g.next().Payload...) // less compressible: fill faster
		recs = append(recs, rec)
		if werr = w.Append(&rec); werr == nil && i%10 == 9 {
			if werr = w.Flush(); werr == nil {
				flushed = i + 1
			}
		}
	}
	if !errors.Is(werr, syscall.ENOSPC) || !strings.Contains(werr.Error(), "no space left on device") {
		t.Fatalf("write error = %v, want ENOSPC", werr)
	}
	if err := w.Append(&Record{Time: recs[len(recs)-1].Time}); err != werr {
		t.Errorf("Append after the error = %v, want the same sticky error", err)
	}
	if err := w.Flush(); err != werr {
		t.Errorf("Flush after the error = %v, want the same sticky error", err)
	}
	if err := w.Close(); err != werr {
		t.Errorf("Close after the error = %v, want the sticky error", err)
	}
	if flushed < 100 {
		t.Fatalf("only %d records flushed before the disk filled", flushed)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	got, err := readAll(r)
	if len(got) < flushed {
		t.Fatalf("read %d records, %d were flushed before the disk filled (%v)", len(got), flushed, err)
	}
	equalRecords(t, got, recs[:len(got)])
	if !IsTorn(err) {
		t.Errorf("end of a file cut by a full disk = %v, want torn", err)
	}
}

// mountTmpfs mounts a tmpfs of size bytes on dir, unmounted at cleanup. It
// reports false when mounting is not permitted.
func mountTmpfs(t *testing.T, dir string, size int) bool {
	if os.Geteuid() != 0 {
		return false
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		return false
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return true
}

// fullAfter writes to f until limit bytes, then to /dev/full.
type fullAfter struct {
	f, full *os.File
	n       int
	limit   int
}

func (d *fullAfter) Write(p []byte) (int, error) {
	room := max(d.limit-d.n, 0)
	if len(p) <= room {
		n, err := d.f.Write(p)
		d.n += n
		return n, err
	}
	n, err := d.f.Write(p[:room])
	d.n += n
	if err != nil {
		return n, err
	}
	_, err = d.full.Write(p[room:])
	return n, err
}
