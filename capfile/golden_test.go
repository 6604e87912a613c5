package capfile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"

	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

const (
	goldenFile    = "testdata/golden-v1.aaep"
	goldenRecords = "testdata/golden-v1.jsonl"
)

// goldenRecord is the JSON form of a record in golden-v1.jsonl.
type goldenRecord struct {
	Kind    Kind        `json:"kind"`
	Flags   Flags       `json:"flags,omitempty"`
	Source  uint16      `json:"source"`
	Time    int64       `json:"time"`
	Session string      `json:"session,omitempty"`
	Attrs   [][2]string `json:"attrs,omitempty"`
	Payload []byte      `json:"payload"`
}

func goldenHeader() Header {
	h := testHeader()
	h.Tool = "aaep-capture/0.1.0"
	h.Redacted = []string{"args_summary"}
	h.Meta = map[string]string{"host": "build-01", "note": "golden capture, format version 1"}
	return h
}

// goldenInput is the record mix of the golden capture: a realistic
// multi-session AAEP stream plus edge cases (every kind and flag, empty
// session, empty and large payloads, invalid UTF-8).
func goldenInput() []Record {
	recs := genRecords(42, 300, 4, 40*time.Millisecond)
	t := recs[len(recs)-1].Time
	extra := []Record{
		{Kind: KindReceived, Flags: FlagInvalidJSON, Origin: 0, Time: t + 1, Session: "", Payload: []byte("data: not json\n")},
		{Kind: KindReceived, Flags: FlagInvalidJSON | FlagInvalidUTF8, Origin: 1, Time: t + 2, Payload: []byte{0xff, 0xfe, '{'}},
		{Kind: KindReceived, Flags: FlagRedacted, Origin: 0, Time: t + 3, Session: "sess_redacted", Payload: []byte(`{"args_summary":"[redacted]"}`)},
		{Kind: KindReceived, Flags: FlagNoRecvTime, Origin: 0, Time: t + 3, Session: "sess_import", Payload: []byte(`{"type":"aaep:agent.session.completed"}`)},
		{Kind: KindMarker, Time: t + 4, Attrs: []Attr{{Key: "by", Value: "tester"}}, Payload: nil},
		{Kind: KindReceived, Origin: 1, Time: t + 5, Session: "sess_big", Payload: bytes.Repeat([]byte(`{"delta":"long streamed output chunk"},`), 600)},
		{Kind: KindConn, Origin: 1, Time: t + 6, Payload: []byte(`{"event":"closed","code":1000}`)},
	}
	return append(recs, extra...)
}

// writeGolden writes the golden capture the way a live recorder does: small
// frames, and a flush every 25 records (blocks flushed inside frames).
func writeGolden(t *testing.T) {
	f, err := os.Create(goldenFile)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWriter(f, goldenHeader(), &WriterOptions{FrameSize: 16 << 10, FlushInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	var lines bytes.Buffer
	h, _ := json.Marshal(goldenHeader())
	lines.Write(h)
	lines.WriteByte('\n')
	for i, rec := range goldenInput() {
		if err := w.Append(&rec); err != nil {
			t.Fatal(err)
		}
		if i%25 == 24 {
			w.Flush()
		}
		g := goldenRecord{Kind: rec.Kind, Flags: rec.Flags, Source: rec.Origin, Time: rec.Time, Session: rec.Session, Payload: rec.Payload}
		for _, a := range rec.Attrs {
			g.Attrs = append(g.Attrs, [2]string{a.Key, a.Value})
		}
		b, _ := json.Marshal(g)
		lines.Write(b)
		lines.WriteByte('\n')
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.WriteFile(goldenRecords, lines.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// loadGolden returns the expected header and records of the golden capture.
func loadGolden(t testing.TB) (Header, []Record) {
	t.Helper()
	f, err := os.Open(goldenRecords)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	var h Header
	var recs []Record
	for sc.Scan() {
		if h.Tool == "" {
			if err := json.Unmarshal(sc.Bytes(), &h); err != nil {
				t.Fatal(err)
			}
			continue
		}
		var g goldenRecord
		if err := json.Unmarshal(sc.Bytes(), &g); err != nil {
			t.Fatal(err)
		}
		rec := Record{Kind: g.Kind, Flags: g.Flags, Origin: g.Source, Time: g.Time, Session: g.Session, Payload: g.Payload}
		for _, a := range g.Attrs {
			rec.Attrs = append(rec.Attrs, Attr{Key: a[0], Value: a[1]})
		}
		recs = append(recs, rec)
	}
	return h, recs
}

func TestGoldenV1(t *testing.T) {
	if *update {
		writeGolden(t)
	}
	wantH, want := loadGolden(t)
	for name, open := range openers {
		t.Run(name, func(t *testing.T) {
			r := open(t, goldenFile)
			got, err := readAll(r)
			if err != nil {
				t.Fatal(err)
			}
			equalRecords(t, got, want)
			h := r.Header()
			if h.Version != 1 || !h.Start.Equal(wantH.Start) || h.Tool != wantH.Tool ||
				fmt.Sprint(h.Origins, h.Redacted, h.Meta) != fmt.Sprint(wantH.Origins, wantH.Redacted, wantH.Meta) {
				t.Errorf("Header() = %+v\nwant %+v", h, wantH)
			}
			if !r.Clean() {
				t.Error("Clean() = false")
			}
		})
	}
	r := openers["file"](t, goldenFile)
	x, err := r.FileIndex()
	if err != nil {
		t.Fatal(err)
	}
	if x.Rebuilt || x.Records != int64(len(want)) || len(x.Frames) < 5 || len(x.Sessions) != 7 {
		t.Errorf("golden index: rebuilt=%v records=%d frames=%d sessions=%d", x.Rebuilt, x.Records, len(x.Frames), len(x.Sessions))
	}
}

// goldenLayout returns the golden bytes, its records and its index.
func goldenLayout(t testing.TB) ([]byte, []Record, *Index, int64) {
	data, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatal(err)
	}
	_, recs := loadGolden(t)
	r, err := NewReaderAt(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	x, _ := r.FileIndex()
	return data, recs, x, r.dataStart
}

// checkPrefix asserts that got is a prefix of want.
func checkPrefix(t *testing.T, got, want []Record) {
	t.Helper()
	if len(got) > len(want) {
		t.Fatalf("read %d records, more than the %d written", len(got), len(want))
	}
	equalRecords(t, got, want[:len(got)])
}

func TestReadTruncation(t *testing.T) {
	data, recs, x, dataStart := goldenLayout(t)
	size := int64(len(data))
	last := x.Frames[len(x.Frames)-1]
	indexOff := last.Offset + last.Size
	trailerOff := size - trailerLen
	all := int64(len(recs))

	type row struct {
		name     string
		cut      int64
		min, max int64 // records readable before the error
		err      string
	}
	rows := []row{
		{"empty", 0, 0, 0, "not a capture"},
		{"inside magic", 3, 0, 0, "not a capture"},
		{"after magic", 4, 0, 0, "ends inside the header"},
		{"inside header size", 6, 0, 0, "ends inside the header"},
		{"after skippable header", 8, 0, 0, "ends inside the header"},
		{"inside header JSON", dataStart - 10, 0, 0, "ends inside the header"},
		{"header only", dataStart, 0, 0, "without an index"},
		{"inside first frame magic", dataStart + 2, 0, 0, "without an index"},
		{"inside first frame header", dataStart + 5, 0, 0, "inside a zstd frame header"},
		{"after first frame header", dataStart + 6, 0, 0, "inside a zstd frame"},
		{"after index", trailerOff, all, all, "without a trailer"},
		{"inside trailer header", trailerOff + 5, all, all, "inside a skippable frame header"},
		{"inside trailer", size - 1, all, all, "inside the trailer"},
		{"inside index header", indexOff + 6, all, all, "inside a skippable frame header"},
		{"inside index", indexOff + 20, all, all, "inside the index"},
		{"complete", size, all, all, ""},
	}
	for k, f := range x.Frames {
		end := f.FirstRecord + f.Records
		rows = append(rows,
			row{fmt.Sprintf("frame %d middle", k), f.Offset + f.Size/2, f.FirstRecord, end, "inside a zstd frame"},
			row{fmt.Sprintf("frame %d checksum", k), f.Offset + f.Size - 2, f.FirstRecord, end, "inside a zstd frame"},
			row{fmt.Sprintf("frame %d end", k), f.Offset + f.Size, end, end, "without an index"},
		)
		if k > 0 {
			rows = append(rows, row{fmt.Sprintf("frame %d first block header", k), f.Offset + 8, f.FirstRecord, f.FirstRecord, "inside a zstd frame"})
		}
	}
	for _, tt := range rows {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cut.aaep")
			os.WriteFile(path, data[:tt.cut], 0o644)
			for _, kind := range []string{"file", "stream"} {
				var r *Reader
				var err error
				if kind == "file" {
					r, err = Open(path)
				} else {
					r, err = NewReader(bytes.NewReader(data[:tt.cut]))
				}
				var got []Record
				if err == nil {
					got, err = readAll(r)
					r.Close()
				}
				checkPrefix(t, got, recs)
				n := int64(len(got))
				if n < tt.min || n > tt.max {
					t.Errorf("%s: read %d records, want %d..%d", kind, n, tt.min, tt.max)
				}
				if tt.err == "" {
					if err != nil {
						t.Errorf("%s: error %v, want a clean end", kind, err)
					}
					continue
				}
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("%s: error %v, want one containing %q", kind, err, tt.err)
				}
				if tt.cut >= 4 && !IsTorn(err) {
					t.Errorf("%s: error %v is not a torn tail", kind, err)
				}
			}
		})
	}

	// Every cut, on the streaming reader: never a panic, always a prefix, a
	// torn tail (never other damage), and never fewer records for a longer file.
	// Every byte of the header, the start and end of each frame, the index's
	// frame header and the trailer is tried; elsewhere every 31st.
	prev := 0
	near := func(cut int64) bool {
		if cut < dataStart+64 || (cut >= indexOff-8 && cut < indexOff+24) || cut >= size-trailerLen-8 {
			return true
		}
		for _, f := range x.Frames {
			if cut >= f.Offset-4 && cut < f.Offset+32 {
				return true
			}
		}
		return cut%31 == 0
	}
	for cut := 8; cut < len(data); cut++ {
		if !near(int64(cut)) {
			continue
		}
		r, err := NewReader(bytes.NewReader(data[:cut]))
		var got []Record
		if err == nil {
			got, err = readAll(r)
			r.Close()
		}
		if !IsTorn(err) {
			t.Fatalf("cut at %d: error %v, want a torn tail", cut, err)
		}
		checkPrefix(t, got, recs)
		if len(got) < prev {
			t.Fatalf("cut at %d: %d records, fewer than the %d of a shorter cut", cut, len(got), prev)
		}
		prev = len(got)
	}
	if prev != len(recs) {
		t.Errorf("longest cut read %d records, want %d", prev, len(recs))
	}
}

func TestTruncatedRepair(t *testing.T) {
	data, recs, x, _ := goldenLayout(t)
	f := x.Frames[3]
	for _, cut := range []int64{f.Offset + f.Size/2, f.Offset + f.Size, int64(len(data)) - 1} {
		dir := t.TempDir()
		src, dst := filepath.Join(dir, "src.aaep"), filepath.Join(dir, "dst.aaep")
		os.WriteFile(src, data[:cut], 0o644)
		rep, err := Repair(src, dst)
		if err != nil {
			t.Fatalf("cut %d: Repair: %v", cut, err)
		}
		if b, _ := os.ReadFile(src); !bytes.Equal(b, data[:cut]) {
			t.Fatalf("cut %d: Repair modified the source", cut)
		}
		r := openers["file"](t, dst)
		got, err := readAll(r)
		if err != nil || !r.Clean() {
			t.Fatalf("cut %d: repaired file: err %v clean %v", cut, err, r.Clean())
		}
		checkPrefix(t, got, recs)
		if rep.Kept != int64(len(got)) || len(rep.Dropped) != 1 || rep.Dropped[0].Offset+rep.Dropped[0].Length != cut {
			t.Errorf("cut %d: report %v, read %d", cut, rep, len(got))
		}
		if cut == int64(len(data))-1 && (rep.Kept != int64(len(recs)) || rep.Dropped[0].Records != 0) {
			t.Errorf("cut in the trailer: report %v", rep)
		}
		if cut == f.Offset+f.Size && rep.Kept != f.FirstRecord+f.Records {
			t.Errorf("cut at a frame end: kept %d, want %d", rep.Kept, f.FirstRecord+f.Records)
		}
	}
}
