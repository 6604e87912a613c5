package capfile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDetect: a file that starts like a capture is a capture, damaged or
// not, whatever its first byte reads.
func TestDetect(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testHeader(), &WriterOptions{FlushInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	good := buf.Bytes()[:SniffLen]
	with := func(at int, b byte) []byte { c := bytes.Clone(good); c[at] = b; return c }
	for _, tc := range []struct {
		name string
		head []byte
		want Detection
	}{
		{"capture", good, Capture},
		{"first byte a brace", with(0, '{'), DamagedCapture},
		{"first byte a bracket", with(0, '['), DamagedCapture},
		{"first byte zero", with(0, 0), DamagedCapture},
		{"signature byte", with(9, 'Q'), DamagedCapture},
		{"frame size damaged only", with(5, 0xff), Capture},
		{"three bytes damaged", func() []byte { c := with(0, 1); c[1], c[10] = 2, 3; return c }(), DamagedCapture},
		{"four bytes damaged", func() []byte { c := with(0, 1); c[1], c[10], c[11] = 2, 3, 4; return c }(), NotCapture},
		{"header cut short", good[:6], Capture},
		{"JSON", []byte(`{"type":"aaep:agent.session.started"}`), NotCapture},
		{"JSON array", []byte(`[{"a":1},{"a":2}]`), NotCapture},
		{"plain zstd", []byte{0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, OtherZstd},
		{"other skippable frame", []byte{0x50, 0x2a, 0x4d, 0x18, 4, 0, 0, 0, 'a', 'b', 'c', 'd', 0, 0, 0, 0}, OtherZstd},
		{"empty", nil, NotCapture},
	} {
		if got := Detect(tc.head); got != tc.want {
			t.Errorf("%s: Detect = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestDamagedFirstByteIsDamage: every way of reading a capture reports a
// damaged first byte as damage at byte 0, never as another kind of file.
func TestDamagedFirstByteIsDamage(t *testing.T) {
	path := writeFile(t, t.TempDir(), genRecords(1, 50, 2, 0), nil)
	data, _ := os.ReadFile(path)
	data[0] = '{'
	os.WriteFile(path, data, 0o644)
	_, ferr := Open(path)
	_, serr := NewReader(bytes.NewReader(data))
	for _, err := range []error{ferr, serr} {
		var ce *CorruptionError
		if !errors.As(err, &ce) || ce.Offset != 0 || errors.Is(err, ErrNotCapture) || !strings.Contains(err.Error(), "damaged capture header") {
			t.Errorf("error %v, want damage at byte 0", err)
		}
	}
}

// TestOriginal: which headers are original recordings.
func TestOriginal(t *testing.T) {
	for _, tc := range []struct {
		h    Header
		want bool
	}{
		{Header{Tool: "aaep-capture/0.1.0"}, true},
		{Header{Tool: "aaep-capture/demo", Meta: map[string]string{"part": "3"}}, true},
		{Header{Tool: "aaep-replay/0.1.0", Meta: map[string]string{"replay_of": "in.aaep"}}, true},
		{Header{Tool: "aaep-replay/0.1.0"}, false},
		{Header{Tool: "aaep-capture/0.1.0", Meta: map[string]string{"derived_from": "in.aaep"}}, false},
		{Header{Tool: "aaep-capture/0.1.0, aaep-capture/0.2.0", Meta: map[string]string{"merged_from": "a, b"}}, false},
		{Header{Tool: "capfile-test/1"}, false},
	} {
		if got := tc.h.Original(); got != tc.want {
			t.Errorf("%+v: Original = %v, want %v", tc.h, got, tc.want)
		}
	}
}

// TestReadPolicyJudge: a torn tail warns (with its unreadable bytes) unless
// nothing was read or --strict; damage fails unless --allow-incomplete.
func TestReadPolicyJudge(t *testing.T) {
	torn := &CorruptionError{Offset: 208, Index: 0, Size: 1000, Err: tornError{"file ends inside a zstd frame"}}
	tornAtEnd := &CorruptionError{Offset: 7888, Index: 48, Size: 7988, Err: tornError{"file ends inside a zstd frame"}}
	damage := &CorruptionError{Offset: 2802, Index: 16, Err: errors.New("record checksum mismatch")}
	other := errors.New("read: input/output error")
	for _, tc := range []struct {
		name       string
		p          ReadPolicy
		err        error
		records    int64
		fail, warn bool
		nothing    bool
	}{
		{"clean end", ReadPolicy{}, io.EOF, 10, false, false, false},
		{"torn tail", ReadPolicy{}, tornAtEnd, 48, false, true, false},
		{"torn tail, strict", ReadPolicy{Strict: true}, tornAtEnd, 48, true, false, false},
		{"torn tail, strict, allowed", ReadPolicy{Strict: true, AllowIncomplete: true}, tornAtEnd, 48, false, true, false},
		{"nothing read", ReadPolicy{}, torn, 0, true, false, true},
		{"nothing read, allowed", ReadPolicy{AllowIncomplete: true}, torn, 0, false, true, true},
		{"damage", ReadPolicy{}, damage, 16, true, false, false},
		{"damage, allowed", ReadPolicy{AllowIncomplete: true}, damage, 16, false, true, false},
		{"not damage", ReadPolicy{AllowIncomplete: true}, other, 3, true, false, false},
	} {
		fail, warn := tc.p.Judge(tc.err, tc.records)
		if (fail != nil) != tc.fail || (warn != nil) != tc.warn {
			t.Errorf("%s: fail %v, warn %v", tc.name, fail, warn)
		}
		if got := errors.Is(fail, ErrNothingRead) || errors.Is(warn, ErrNothingRead); got != tc.nothing {
			t.Errorf("%s: ErrNothingRead %v, want %v", tc.name, got, tc.nothing)
		}
	}
	if got := torn.Error(); !strings.Contains(got, "(792 bytes unreadable, to the end at byte 1000)") {
		t.Errorf("torn error %q does not count the unreadable bytes", got)
	}
}

// TestTornTailCountsUnreadableBytes: a file cut inside its first frame
// reports the bytes from that frame's start to the end as unreadable.
func TestTornTailCountsUnreadableBytes(t *testing.T) {
	path := writeFile(t, t.TempDir(), genRecords(2, 200, 2, 0), nil)
	data, _ := os.ReadFile(path)
	cut := filepath.Join(t.TempDir(), "cut.aaep")
	os.WriteFile(cut, data[:1000], 0o644)
	r, err := Open(cut)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, err = r.Next()
	var ce *CorruptionError
	if !errors.As(err, &ce) || !IsTorn(err) || ce.Size != 1000 || ce.Unreadable() != 1000-ce.Offset {
		t.Fatalf("error %v (%+v), want a torn tail ending at 1000", err, ce)
	}
	if fail, _ := (ReadPolicy{}).Judge(err, 0); !errors.Is(fail, ErrNothingRead) {
		t.Errorf("Judge: %v, want ErrNothingRead", fail)
	}
}

// TestSeekRangeMessage: a record number past the end names the last
// record there is, and the missing file error is the file system's own,
// without a prefix of this package's.
func TestSeekRangeMessage(t *testing.T) {
	path := writeFile(t, t.TempDir(), genRecords(3, 104, 2, 0), nil)
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	err = r.SeekRecord(200)
	if want := "capfile: seek to record 200: the capture holds records 0 to 103 (104, the end, may be sought too)"; err == nil || err.Error() != want {
		t.Errorf("SeekRecord(200) = %v, want %q", err, want)
	}
	missing := filepath.Join(t.TempDir(), "none.aaep")
	if _, err := Open(missing); err == nil || err.Error() != "open "+missing+": no such file or directory" {
		t.Errorf("Open of a missing file = %v", err)
	}
}
