package capfile

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// failAfter is a destination that takes limit bytes, then fails.
type failAfter struct {
	buf   bytes.Buffer
	limit int
}

var errDest = errors.New("destination failed")

func (f *failAfter) Write(p []byte) (int, error) {
	if f.buf.Len()+len(p) > f.limit {
		return 0, errDest
	}
	return f.buf.Write(p)
}

// TestSpareEncoder: a Writer made after another with the same settings was
// closed takes over its encoder (a rotating recorder makes one encoder, not
// one per part), and what it writes is byte for byte what a Writer with a
// new encoder writes, also after the earlier Writer failed in mid-frame.
func TestSpareEncoder(t *testing.T) {
	recs := genRecords(26, 300, 3, 20*time.Millisecond)
	opts := &WriterOptions{FlushInterval: -1, FrameSize: 16 << 10}
	// write writes recs to dest and returns the Writer's encoder, which
	// the caller holds, so the collector cannot free it once it is spare.
	write := func(dest io.Writer, want *zstd.Encoder) (*zstd.Encoder, error) {
		t.Helper()
		w, err := NewWriter(dest, testHeader(), opts)
		if err != nil {
			return nil, err
		}
		enc := w.fast
		if want != nil && enc != want {
			t.Errorf("a Writer made a new encoder; want the one the last closed Writer had")
		}
		defer func() {
			if w.fast != nil || w.enc != nil {
				t.Errorf("a closed Writer still holds its encoder")
			}
		}()
		for i := range recs {
			if err := w.Append(&recs[i]); err != nil {
				return enc, errors.Join(err, w.Close())
			}
			if i%7 == 0 {
				if err := w.Flush(); err != nil {
					return enc, errors.Join(err, w.Close())
				}
			}
		}
		return enc, w.Close()
	}

	var fresh bytes.Buffer
	enc, err := write(&fresh, nil)
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if _, err := write(&again, enc); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), fresh.Bytes()) {
		t.Fatalf("with the closed Writer's encoder: %d bytes, differing from the %d a new encoder wrote", again.Len(), fresh.Len())
	}

	// A Writer that fails in mid-frame hands on its encoder too, and the
	// next Writer's file is still the same.
	if _, err := write(&failAfter{limit: fresh.Len() / 2}, enc); !errors.Is(err, errDest) {
		t.Fatalf("writing to a failing destination: %v, want its error", err)
	}
	var after bytes.Buffer
	if _, err := write(&after, enc); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(after.Bytes(), fresh.Bytes()) {
		t.Fatalf("after a failed Writer: %d bytes, differing from the %d a new encoder wrote", after.Len(), fresh.Len())
	}
	r, err := NewReader(bytes.NewReader(after.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for ; ; n++ {
		if _, err := r.Next(); err != nil {
			if err != io.EOF {
				t.Fatalf("reading record %d: %v", n, err)
			}
			break
		}
	}
	if n != len(recs) {
		t.Fatalf("read %d records, want %d", n, len(recs))
	}
}
