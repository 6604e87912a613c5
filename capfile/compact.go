package capfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// A capture written live ends a zstd block at every timed flush: at a few
// events per second each block holds one or two records and pays its own
// headers, Huffman tree and sequence tables (BenchmarkLiveLayout: 68.5
// bytes per event against 44.6 for the same events in one block). Once
// such a capture is closed, Compact writes it again in large blocks.

// Compaction settings: the low-rate encoder's level and window, so that the
// encoder the closed Writer left as a spare is taken again (no new memory),
// and frames of a megabyte of records, as a live writer's, whose history
// runs on across the window (each new frame starts without any: frames of
// 256 KiB made the recorder's 120 s capture 5% larger, 62.9 B/event
// against 59.5).
const (
	compactLevel     = lowRateLevel
	compactFrameSize = DefaultFrameSize
	compactWindow    = lowRateWindow
	// compactWorth: a capture is written again only when that saves at
	// least 1/compactWorth of its size.
	compactWorth = 20
)

// ErrNotWorth is Compact's error when the capture would not get smaller by
// at least 5%: the file is left as it was.
var ErrNotWorth = errors.New("capfile: compacting would not save enough")

// Compact writes the complete capture at path again, record for record
// (header, records and their times unchanged; frames of 1 MiB of records
// in a 256 KiB window, the index rebuilt), to a temporary file beside it (".NAME.compact.tmp"),
// fsyncs it and renames it over path, when that saves at least 5% of its
// size; otherwise it returns ErrNotWorth. It returns the sizes before and
// after. A symbolic link is followed (its target is replaced). A capture
// that is not complete (torn, damaged, still being written), or a file
// that changed at path meanwhile, is left as it was, with an error; a crash
// during Compact leaves the capture as it was and, at worst, the temporary
// file. The file keeps its mode; a reader that opened it before keeps
// reading the old file, which stays complete.
func Compact(path string) (before, after int64, err error) {
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return 0, 0, fmt.Errorf("capfile: compact: %w", err)
	}
	src, err := os.Open(target)
	if err != nil {
		return 0, 0, fmt.Errorf("capfile: compact: %w", err)
	}
	defer src.Close()
	st, err := src.Stat()
	if err != nil {
		return 0, 0, fmt.Errorf("capfile: compact: %w", err)
	}
	before = st.Size()
	if BeingWritten(target) {
		return before, 0, fmt.Errorf("capfile: compact %s: being written", path)
	}
	r, err := NewReaderAt(src, before)
	if err != nil {
		return before, 0, fmt.Errorf("capfile: compact %s: %w", path, err)
	}
	// Its decoder goes back to the pool for the next part's compaction;
	// dropped, a recorder rotating every few seconds makes a new one (about
	// 1 MiB) for each part, garbage the heap grows to hold.
	defer r.Close()
	tmp := filepath.Join(filepath.Dir(target), "."+filepath.Base(target)+".compact.tmp")
	dst, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, st.Mode().Perm())
	if err != nil {
		return before, 0, fmt.Errorf("capfile: compact: %w", err)
	}
	done := false
	defer func() {
		if !done {
			dst.Close()
			os.Remove(tmp)
		}
	}()
	after, err = compactTo(r, dst)
	if err != nil {
		return before, 0, fmt.Errorf("capfile: compact %s: %w", path, err)
	}
	if after > before-before/compactWorth {
		return before, after, ErrNotWorth
	}
	if err := dst.Chmod(st.Mode().Perm()); err != nil {
		return before, 0, fmt.Errorf("capfile: compact: %w", err)
	}
	if err := dst.Sync(); err != nil {
		return before, 0, fmt.Errorf("capfile: compact: %w", err)
	}
	if err := dst.Close(); err != nil {
		return before, 0, fmt.Errorf("capfile: compact: %w", err)
	}
	now, err := os.Stat(target)
	if err != nil || !os.SameFile(now, st) || now.Size() != before {
		return before, 0, fmt.Errorf("capfile: compact %s: the file changed meanwhile", path)
	}
	if err := os.Rename(tmp, target); err != nil {
		return before, 0, fmt.Errorf("capfile: compact: %w", err)
	}
	done = true
	if d, err := os.Open(filepath.Dir(target)); err == nil {
		d.Sync() // where directories cannot be synced, the rename stands
		d.Close()
	}
	return before, after, nil
}

// compactTo copies every record r reads to a new capture written to dst,
// and returns its size; r must end cleanly.
func compactTo(r *Reader, dst io.Writer) (int64, error) {
	w, err := NewWriter(dst, r.Header(), &WriterOptions{FlushInterval: -1, FrameSize: compactFrameSize, Level: compactLevel, window: compactWindow})
	if err != nil {
		return 0, err
	}
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			w.Close()
			return 0, err
		}
		if err := w.Append(rec); err != nil {
			w.Close()
			return 0, err
		}
	}
	if err := w.Close(); err != nil {
		return 0, err
	}
	return w.Stats().FileBytes, nil
}
