// Package capfiletest helps tests that check what a program wrote into a
// capture file.
package capfiletest

import (
	"errors"
	"io"
	"testing"

	"github.com/aaep-tools/aaepkit/capfile"
)

// ReadAll returns the header and a deep copy of every record of the capture
// at path. It fails the test unless the capture reads to a clean end (every
// CRC right, index and trailer present).
func ReadAll(t testing.TB, path string) (capfile.Header, []capfile.Record) {
	t.Helper()
	r, err := capfile.Open(path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer r.Close()
	var recs []capfile.Record
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("read %s, record %d: %v", path, len(recs), err)
		}
		recs = append(recs, rec.Clone())
	}
	if !r.Clean() {
		t.Fatalf("%s was not closed cleanly", path)
	}
	return r.Header(), recs
}
