package capfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

func flipBit(data []byte, off int64) []byte {
	b := bytes.Clone(data)
	b[off] ^= 0x10
	return b
}

// readFileBytes reads data with the file reader (through a temporary file)
// and returns the records, the reader (nil if Open failed) and the final
// error.
func readFileBytes(t *testing.T, data []byte) ([]Record, *Reader, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.aaep")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path)
	if err != nil {
		return nil, nil, err
	}
	t.Cleanup(func() { r.Close() })
	got, err := readAll(r)
	return got, r, err
}

func TestCorruptGolden(t *testing.T) {
	data, recs, x, dataStart := goldenLayout(t)
	size := int64(len(data))
	last := x.Frames[len(x.Frames)-1]
	indexOff := last.Offset + last.Size
	f2 := x.Frames[2]
	all := int64(len(recs))

	tests := []struct {
		name       string
		data       []byte
		openErr    string // error from Open, if any
		min, max   int64  // records read before the error
		err        string // final error ("" for a clean end)
		errOffset  int64
		clean      bool  // Clean() after Open
		repairKept int64 // -1: repair fails
		repairLost int64
	}{
		{name: "payload bit in frame 2", data: flipBit(data, f2.Offset+f2.Size/2),
			min: f2.FirstRecord, max: f2.FirstRecord + f2.Records - 1, err: "", errOffset: f2.Offset, clean: true,
			repairKept: -2, repairLost: -2},
		{name: "header JSON bit", data: flipBit(data, dataStart-20), openErr: "header checksum mismatch", repairKept: -1},
		{name: "header size", data: func() []byte {
			b := bytes.Clone(data)
			binary.LittleEndian.PutUint32(b[4:], 0xfffffff0)
			return b
		}(), openErr: "header frame size 4294967280 out of range", repairKept: -1},
		// A damaged first byte, magic or signature, is damage at byte 0 (never
		// another kind of file), and repair rebuilds the header when its
		// checksum holds.
		{name: "header signature", data: flipBit(data, 9), openErr: "corrupt capture at byte 0: damaged capture header", repairKept: all},
		{name: "header first byte", data: flipBit(data, 0), openErr: "corrupt capture at byte 0: damaged capture header", repairKept: all},
		{name: "header first byte a brace", data: func() []byte { b := bytes.Clone(data); b[0] = '{'; return b }(),
			openErr: "corrupt capture at byte 0: damaged capture header", repairKept: all},
		{name: "index bit", data: flipBit(data, indexOff+30), min: all, max: all, err: "index checksum mismatch", errOffset: indexOff,
			clean: false, repairKept: all},
		{name: "index magic", data: flipBit(data, indexOff), min: all, max: all, err: "expected a zstd frame", errOffset: indexOff,
			clean: false, repairKept: all},
		{name: "trailer bit", data: flipBit(data, size-6), min: all, max: all, err: "trailer checksum mismatch", errOffset: size - trailerLen,
			clean: false, repairKept: all},
		{name: "frame 1 magic", data: flipBit(data, x.Frames[1].Offset+1), min: x.Frames[1].FirstRecord, max: x.Frames[1].FirstRecord,
			err: "expected a zstd frame, found bytes 28 a5 2f fd", errOffset: x.Frames[1].Offset, clean: true,
			repairKept: all - x.Frames[1].Records, repairLost: x.Frames[1].Records},
		{name: "frame 2 block type reserved", data: func() []byte {
			b := bytes.Clone(data)
			b[f2.Offset+6] |= 0x06 // first block header: type 3 (the 6-byte frame header: magic, descriptor, window)
			return b
		}(), min: f2.FirstRecord, max: f2.FirstRecord, err: "reserved type 3", errOffset: f2.Offset, clean: true,
			repairKept: all - f2.Records, repairLost: f2.Records},
		{name: "garbage after trailer", data: append(bytes.Clone(data), "junk"...), min: all, max: all, err: "data after the trailer",
			errOffset: size, clean: false, repairKept: all},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, r, err := readFileBytes(t, tt.data)
			if tt.openErr != "" {
				if r != nil || err == nil || !strings.Contains(err.Error(), tt.openErr) {
					t.Fatalf("Open error = %v, want one containing %q", err, tt.openErr)
				}
			} else {
				if r == nil {
					t.Fatalf("Open: %v", err)
				}
				checkPrefix(t, got, recs)
				if n := int64(len(got)); n < tt.min || n > tt.max {
					t.Errorf("read %d records, want %d..%d", n, tt.min, tt.max)
				}
				ce := asCorruption(t, err)
				if IsTorn(err) || ce.Offset != tt.errOffset || (tt.err != "" && !strings.Contains(err.Error(), tt.err)) {
					t.Errorf("error %v at offset %d, want damage %q at offset %d", err, ce.Offset, tt.err, tt.errOffset)
				}
				if ce.Index != int64(len(got)) {
					t.Errorf("error Index = %d, want %d", ce.Index, len(got))
				}
				if r.Clean() != tt.clean {
					t.Errorf("Clean() = %v, want %v", r.Clean(), tt.clean)
				}
				// The streaming reader sees the same damage.
				sr, serr := NewReader(bytes.NewReader(tt.data))
				if serr != nil {
					t.Fatal(serr)
				}
				sgot, serr := readAll(sr)
				if len(sgot) != len(got) || serr == nil || serr.Error() != err.Error() {
					t.Errorf("stream reader: %d records, %v; file reader: %d, %v", len(sgot), serr, len(got), err)
				}
			}

			dir := t.TempDir()
			src, dst := filepath.Join(dir, "src.aaep"), filepath.Join(dir, "dst.aaep")
			os.WriteFile(src, tt.data, 0o644)
			rep, err := Repair(src, dst)
			if tt.repairKept == -1 {
				if err == nil {
					t.Fatalf("Repair succeeded on an unreadable header: %v", rep)
				}
				if _, serr := os.Stat(dst); !errors.Is(serr, os.ErrNotExist) {
					t.Errorf("failed Repair left %s behind", dst)
				}
				if ents, _ := os.ReadDir(dir); len(ents) != 1 {
					t.Errorf("failed Repair left files: %v", ents)
				}
				return
			}
			if err != nil {
				t.Fatalf("Repair: %v", err)
			}
			if b, _ := os.ReadFile(src); !bytes.Equal(b, tt.data) {
				t.Fatal("Repair modified the source")
			}
			rr := openers["file"](t, dst)
			fixed, err := readAll(rr)
			if err != nil || !rr.Clean() {
				t.Fatalf("repaired file: %v, clean %v", err, rr.Clean())
			}
			if rep.Kept != int64(len(fixed)) || len(rep.Dropped) == 0 {
				t.Errorf("report %v, repaired file holds %d records", rep, len(fixed))
			}
			if tt.repairKept >= 0 && (rep.Kept != tt.repairKept || rep.LostRecords != tt.repairLost) {
				t.Errorf("report kept %d lost %d, want %d and %d\n%v", rep.Kept, rep.LostRecords, tt.repairKept, tt.repairLost, rep)
			}
			if tt.repairKept == -2 { // damage inside frame 2: kept + lost = all
				if rep.Kept+rep.LostRecords != all || rep.Kept < all-f2.Records {
					t.Errorf("report %v", rep)
				}
			}
			// Kept records are the source's records minus the lost ones, in order.
			k := 0
			for _, rec := range recs {
				if k < len(fixed) && bytes.Equal(rec.Payload, fixed[k].Payload) && rec.Time == fixed[k].Time {
					k++
				}
			}
			if k != len(fixed) {
				t.Errorf("repaired records are not a subsequence of the originals")
			}
		})
	}
}

// rawCapture returns a capture made of the header and one zstd frame holding
// stream, followed by extra bytes.
func rawCapture(t testing.TB, stream []byte, extra ...[]byte) []byte {
	h, err := encodeHeader(testHeader())
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	out := enc.EncodeAll(stream, h)
	for _, e := range extra {
		out = append(out, e...)
	}
	return out
}

func zstdFrame(stream []byte) []byte {
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	return enc.EncodeAll(stream, nil)
}

// rawRecord encodes a record header with the given length and the CRC of body.
func rawRecord(body []byte, length uint64) []byte {
	b := binary.AppendUvarint(nil, length)
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(body, castagnoli))
	return append(b, body...)
}

// body returns a record body with time delta dt, kind, zero flags and source,
// followed by rest.
func body(kind Kind, dt uint64, rest ...byte) []byte {
	b := binary.AppendUvarint(nil, dt)
	b = append(b, byte(kind), 0, 0, 0)
	return append(b, rest...)
}

func TestCorruptRecords(t *testing.T) {
	// good encodes a record as the first of its frame (time delta = time).
	good := func(tm int64) []byte { r := Record{Time: tm, Payload: []byte("ok")}; return appendRecord(nil, &r, 0) }
	// next encodes a record following one at time prev.
	next := func(tm, prev int64) []byte {
		r := Record{Time: tm, Payload: []byte("ok")}
		return appendRecord(nil, &r, prev)
	}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	badCRC := good(2)
	badCRC[len(badCRC)-1] ^= 1
	tests := []struct {
		name string
		file []byte
		n    int // records read before the error
		err  string
		torn bool
	}{
		{"length too large", rawCapture(t, cat(good(1), rawRecord(body(1, 2, 0, 0), 0xfffffff0))), 1, "bad record length varint", false},
		{"length above maximum", rawCapture(t, cat(good(1), rawRecord(body(1, 2, 0, 0), maxRecordBody+1))), 1, "out of range", false},
		{"length below minimum", rawCapture(t, cat(good(1), rawRecord(body(1, 2), 3))), 1, "record length 3 out of range", false},
		{"length past frame end", rawCapture(t, cat(good(1), rawRecord(body(1, 2, 0, 0), 100))), 1, "zstd frame ends inside a record body", false},
		{"checksum mismatch", rawCapture(t, cat(good(1), badCRC, good(3))), 1, "record checksum mismatch", false},
		{"time backwards across frames", rawCapture(t, good(5), zstdFrame(good(4))), 1, "record time 4 is before the previous record's 5", false},
		{"time overflow", rawCapture(t, cat(good(1), rawRecord(body(1, 1<<63, 0, 0), 16))), 1, "overflows", false},
		{"time deltas add up", rawCapture(t, cat(good(5), next(9, 5), next(9, 9))), 3, "without an index", true},
		{"session overruns body", rawCapture(t, cat(rawRecord(body(1, 1, 50, 0), 7))), 0, "session length 50 overruns", false},
		{"session too long", rawCapture(t, cat(rawRecord(body(1, 1, 0x81, 0x10, 0), 8))), 0, "session length 2049 exceeds maximum 1024", false},
		{"attr count too large", rawCapture(t, cat(rawRecord(body(1, 1, 0, 0x7f), 7))), 0, "attribute count 127 exceeds maximum 64", false},
		{"bad varint", rawCapture(t, cat(rawRecord(body(1, 1, 0x80, 0x80), 7))), 0, "bad session length varint", false},
		{"header cut in a record", rawCapture(t, cat(good(1), []byte{20, 2, 3})), 1, "zstd frame ends inside a record header", false},
		{"second header", rawCapture(t, good(1), appendSkippable(nil, headerMagic, []byte("x"))), 1, "a second capture header", false},
		{"unknown skippable frame is skipped", rawCapture(t, good(1), appendSkippable(nil, 0x184D2A57, []byte("future")), zstdFrame(good(2))), 2, "without an index", true},
		{"skippable frame cut", rawCapture(t, good(1), appendSkippable(nil, 0x184D2A57, []byte("future"))[:10]), 1, "inside a skippable frame", true},
		{"trailer without index", rawCapture(t, good(1), encodeTrailer(10, 20)), 1, "trailer points to an index", false},
		{"not a frame", rawCapture(t, good(1), []byte("GARBAGE!")), 1, "expected a zstd frame, found bytes 47 41 52 42", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for kind := range openers {
				var r *Reader
				var err error
				if kind == "stream" {
					r, err = NewReader(bytes.NewReader(tt.file))
				} else {
					r, err = NewReaderAt(bytes.NewReader(tt.file), int64(len(tt.file)))
				}
				if err != nil {
					t.Fatal(err)
				}
				got, err := readAll(r)
				if len(got) != tt.n || err == nil || !strings.Contains(err.Error(), tt.err) || IsTorn(err) != tt.torn {
					t.Errorf("%s: read %d records, error %v; want %d, %q (torn %v)", kind, len(got), err, tt.n, tt.err, tt.torn)
				}
				ce := asCorruption(t, err)
				if ce.Index != int64(tt.n) {
					t.Errorf("%s: error Index = %d, want %d", kind, ce.Index, tt.n)
				}
				if _, err2 := r.Next(); err2 != err {
					t.Errorf("%s: error not sticky: %v then %v", kind, err, err2)
				}
			}
		})
	}
}

// A corrupt length must not make the reader allocate it.
func TestCorruptLengthDoesNotAllocate(t *testing.T) {
	file := rawCapture(t, rawRecord(body(1, 2, 0, 0), maxRecordBody))
	if len(file) > 4096 {
		t.Fatalf("test capture is %d bytes", len(file))
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r, err := NewReader(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Next()
	runtime.ReadMemStats(&after)
	if err == nil || err == io.EOF {
		t.Fatalf("Next = %v, want an error", err)
	}
	// maxRecordBody itself is allowed (73 MiB) but the reader must not
	// allocate it for a frame holding 22 bytes: it allocates as it reads.
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 32<<20 {
		t.Errorf("reading a record claiming %d bytes allocated %d bytes", maxRecordBody, grew)
	}
}

// Many empty zstd frames in a row must neither recurse nor take long.
func TestManyEmptyFrames(t *testing.T) {
	empty := zstdFrame(nil)
	parts := [][]byte{zstdFrame(rawRecordOK(1))}
	for i := 0; i < 200000; i++ {
		parts = append(parts, empty)
	}
	parts = append(parts, zstdFrame(rawRecordOK(2)))
	file := rawCapture(t, nil, parts...)
	r, err := NewReader(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	got, err := readAll(r)
	if len(got) != 2 || !IsTorn(err) {
		t.Fatalf("read %d records, %v; want 2 and a torn tail", len(got), err)
	}
}

func rawRecordOK(tm int64) []byte {
	r := Record{Time: tm, Payload: []byte("ok")}
	return appendRecord(nil, &r, 0)
}
