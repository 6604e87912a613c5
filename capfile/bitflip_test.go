package capfile

import (
	"encoding/binary"
	"errors"
	"os"
	"testing"
	"time"
)

// TestBitFlipInClosedTailIsDamage: a capture that ends with its trailer was
// closed; a bit flipped in the frame header of its index or of its trailer
// makes the reader meet an early end, which is damage, not a torn tail (a
// writer that stopped early never wrote the trailer). Before, both read as
// "torn" and every reader exited 0 (issue 34). A file cut off inside its
// index (no trailer) is still torn.
func TestBitFlipInClosedTailIsDamage(t *testing.T) {
	recs := genRecords(3, 200, 3, time.Millisecond)
	path := writeFile(t, t.TempDir(), recs, &WriterOptions{FrameSize: 16 << 10})
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	trailerAt := len(whole) - trailerLen
	indexAt := int(binary.LittleEndian.Uint64(whole[trailerAt+skippableHeaderLen:]))
	for _, tc := range []struct {
		name string
		at   int
		bit  byte
	}{
		{"the index frame's magic", indexAt, 0x01},
		{"the index frame's size", indexAt + 6, 0x40},
		{"the trailer frame's magic", trailerAt, 0x01},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := append([]byte(nil), whole...)
			b[tc.at] ^= tc.bit
			p := path + ".flip"
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			got, err := readAll(r)
			var ce *CorruptionError
			if err == nil || IsTorn(err) || !errors.As(err, &ce) {
				t.Fatalf("after %d records: %v; want damage, not a torn tail", len(got), err)
			}
			if len(got) != len(recs) {
				t.Errorf("%d records read before the damage, want all %d", len(got), len(recs))
			}
		})
	}
	t.Run("cut off inside the index", func(t *testing.T) {
		p := path + ".cut"
		if err := os.WriteFile(p, whole[:indexAt+20], 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if _, err := readAll(r); !IsTorn(err) {
			t.Errorf("a file cut off inside its index: %v, want a torn tail", err)
		}
	})
}
