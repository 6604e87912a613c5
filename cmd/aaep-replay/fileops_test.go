package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/capfile/capfiletest"
	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/sample"
)

// fileopsCapture writes a capture of a sample stream with connection
// events, in small frames, and returns its path and records.
func fileopsCapture(t *testing.T, dir, name string) (string, []capfile.Record) {
	t.Helper()
	var recs []capfile.Record
	recs = append(recs, capfile.Record{Kind: capfile.KindConn, Payload: []byte(`{"event":"connected"}`)})
	for _, m := range sample.Stream(sample.Options{Sessions: 4, Seed: 1, Violations: true}) {
		kind := capfile.KindReceived
		if m.FromSubscriber {
			kind = capfile.KindSent
		}
		recs = append(recs, capfile.Record{Kind: kind, Time: int64(m.Offset), Session: m.Session, Payload: m.JSON})
	}
	path := filepath.Join(dir, name)
	w, err := capfile.Create(path, capfile.Header{
		Start:   time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC),
		Tool:    "fileops-test/1",
		Origins: []capfile.Origin{{ID: 0, Transport: "websocket", Endpoint: "ws://127.0.0.1:8765/aaep/v1/ws"}},
	}, &capfile.WriterOptions{FlushInterval: -1, FrameSize: 4 << 10})
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		if err := w.Append(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path, recs
}

// fileopsRecords reads every record of a clean capture.
func fileopsRecords(t *testing.T, path string) []capfile.Record {
	t.Helper()
	_, recs := capfiletest.ReadAll(t, path)
	return recs
}

func fileopsSame(t *testing.T, got, want []capfile.Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Kind != w.Kind || g.Flags != w.Flags || g.Origin != w.Origin || g.Time != w.Time || g.Session != w.Session ||
			!bytes.Equal(g.Payload, w.Payload) || fmt.Sprint(g.Attrs) != fmt.Sprint(w.Attrs) {
			t.Fatalf("record %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
}

// fileopsDamaged writes a torn and a corrupt copy of src; it returns their
// paths and the offset of the corrupt frame.
func fileopsDamaged(t *testing.T, src string) (torn, bad string, badAt int64) {
	t.Helper()
	r, err := capfile.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	x, err := r.FileIndex()
	r.Close()
	if err != nil || len(x.Frames) < 3 {
		t.Fatalf("index %v, %v: want 3 frames or more", x, err)
	}
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(src)
	last := x.Frames[len(x.Frames)-1]
	torn = filepath.Join(dir, "torn.aaep")
	if err := os.WriteFile(torn, data[:last.Offset+last.Size/2], 0o644); err != nil {
		t.Fatal(err)
	}
	f := x.Frames[1]
	data[f.Offset+f.Size/2] ^= 0x5a
	bad = filepath.Join(dir, "bad.aaep")
	if err := os.WriteFile(bad, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return torn, bad, f.Offset
}

func TestFileopsRoundTrips(t *testing.T) {
	dir := t.TempDir()
	src, recs := fileopsCapture(t, dir, "src.aaep")
	p := func(name string) string { return filepath.Join(dir, name) }

	// export --with-meta, then import: identical records.
	if code, _, stderr := replay(t, "export", "--with-meta", "-o", p("meta.jsonl"), src); code != 0 {
		t.Fatalf("export --with-meta: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := replay(t, "import", p("meta.jsonl"), "-o", p("back.aaep"))
	if code != 0 || !strings.Contains(stdout, "a --with-meta export") {
		t.Fatalf("import: exit %d, %q, %q", code, stdout, stderr)
	}
	fileopsSame(t, fileopsRecords(t, p("back.aaep")), recs)

	// Plain export to stdout, import, export again: the same lines.
	code, plain, stderr := replay(t, "export", src)
	if code != 0 || stderr != "" {
		t.Fatalf("export: exit %d, stderr %q", code, stderr)
	}
	var received int
	for _, r := range recs {
		if r.Kind == capfile.KindReceived {
			received++
		}
	}
	if n := strings.Count(plain, "\n"); n != received {
		t.Errorf("plain export has %d lines, want %d received messages", n, received)
	}
	if err := os.WriteFile(p("plain.jsonl"), []byte(plain), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := replay(t, "import", p("plain.jsonl"), "-o", p("plain.aaep")); code != 0 || stderr != "" {
		t.Fatalf("import plain: exit %d, %q", code, stderr)
	}
	if code, again, _ := replay(t, "export", p("plain.aaep")); code != 0 || again != plain {
		t.Errorf("import then export changed the lines (exit %d)", code)
	}

	// cut in two and merge back.
	if code, _, stderr := replay(t, "cut", src, "--to", "#24", "-o", p("head.aaep")); code != 0 {
		t.Fatalf("cut head: %d %s", code, stderr)
	}
	if code, stdout, stderr := replay(t, "cut", src, "--from", "#25", "-o", p("tail.aaep")); code != 0 || !strings.Contains(stdout, fmt.Sprintf("wrote %d records", len(recs)-25)) {
		t.Fatalf("cut tail: %d %q %s", code, stdout, stderr)
	}
	if code, _, stderr := replay(t, "merge", "--join-sources", p("head.aaep"), p("tail.aaep"), "-o", p("whole.aaep")); code != 0 {
		t.Fatalf("merge: %d %s", code, stderr)
	}
	fileopsSame(t, fileopsRecords(t, p("whole.aaep")), recs)

	// filter one session.
	session := recs[1].Session
	code, stdout, _ = replay(t, "filter", src, "--session", session, "--messages-only", "-o", p("one.aaep"))
	if code != 0 || !strings.Contains(stdout, "kept ") {
		t.Fatalf("filter: %d %q", code, stdout)
	}
	for i, r := range fileopsRecords(t, p("one.aaep")) {
		if r.Session != session {
			t.Fatalf("filtered record %d has session %q", i, r.Session)
		}
	}

	// info, text and JSON.
	code, stdout, _ = replay(t, "info", "--speed", "4", src)
	if code != 0 || !strings.Contains(stdout, "closed cleanly") || !strings.Contains(stdout, "at speed 4") {
		t.Errorf("info: exit %d:\n%s", code, stdout)
	}
	code, stdout, _ = replay(t, "info", "--json", src)
	var s struct {
		Records int64  `json:"records"`
		Status  string `json:"status"`
	}
	if err := json.Unmarshal([]byte(stdout), &s); code != 0 || err != nil || s.Records != int64(len(recs)) || s.Status != "clean" {
		t.Errorf("info --json: exit %d, %v, %+v", code, err, s)
	}
}

func TestFileopsDamagedInputs(t *testing.T) {
	dir := t.TempDir()
	src, _ := fileopsCapture(t, dir, "src.aaep")
	torn, bad, badAt := fileopsDamaged(t, src)
	verbs := []struct {
		name string
		args func(in, out string) []string
	}{
		{"info", func(in, out string) []string { return []string{"info", in} }},
		{"export", func(in, out string) []string { return []string{"export", "-o", out, in} }},
		{"cut", func(in, out string) []string { return []string{"cut", in, "--from", "1s", "-o", out} }},
		{"filter", func(in, out string) []string {
			return []string{"filter", in, "--filter-type", "state.changed", "-o", out}
		}},
		{"merge", func(in, out string) []string { return []string{"merge", in, "-o", out} }},
	}
	for _, v := range verbs {
		t.Run(v.name+"/torn", func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			code, _, stderr := replay(t, v.args(torn, out)...)
			if code != 0 || !strings.Contains(stderr, "warning") || !strings.Contains(stderr, torn) {
				t.Errorf("exit %d, stderr %q: want 0 and a warning naming %s", code, stderr, torn)
			}
			if v.name != "info" {
				if _, err := os.Stat(out); err != nil {
					t.Errorf("no output: %v", err)
				}
			}
		})
		t.Run(v.name+"/corrupt", func(t *testing.T) {
			outDir := t.TempDir()
			out := filepath.Join(outDir, "out")
			code, _, stderr := replay(t, v.args(bad, out)...)
			if code != cli.ExitUsage || !strings.Contains(stderr, bad) || !strings.Contains(stderr, fmt.Sprintf("at byte %d", badAt)) {
				t.Errorf("exit %d, stderr %q: want 2 naming %s and byte %d", code, stderr, bad, badAt)
			}
			if v.name == "info" {
				return
			}
			// Every record before the damage is written, on a record or
			// line boundary, and the damage is reported after it.
			if !strings.Contains(stderr, "record ") {
				t.Errorf("stderr %q does not name the damaged record", stderr)
			}
			if v.name == "export" {
				data, err := os.ReadFile(out)
				if err != nil || len(data) == 0 || data[len(data)-1] != '\n' {
					t.Fatalf("export output %d bytes, %v: want whole lines", len(data), err)
				}
				for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
					if !json.Valid([]byte(line)) {
						t.Fatalf("export line %d is not JSON: %q", i+1, line)
					}
				}
			} else if recs := fileopsRecords(t, out); len(recs) == 0 {
				t.Errorf("%s kept no record of those before the damage", v.name)
			}
			ents, _ := os.ReadDir(outDir)
			if len(ents) != 1 {
				t.Errorf("files left after the error: %v, want only the output", ents)
			}
		})
	}
	t.Run("repair", func(t *testing.T) {
		before, _ := os.ReadFile(bad)
		out := filepath.Join(dir, "fixed.aaep")
		code, stdout, stderr := replay(t, "repair", bad, "-o", out)
		if code != 0 || !strings.Contains(stdout, "kept ") || !strings.Contains(stdout, "dropped bytes") {
			t.Fatalf("repair: exit %d, %q, %q", code, stdout, stderr)
		}
		after, _ := os.ReadFile(bad)
		if !bytes.Equal(before, after) {
			t.Error("repair modified its input")
		}
		if code, stdout, _ := replay(t, "info", out); code != 0 || !strings.Contains(stdout, "closed cleanly") {
			t.Errorf("info of the repaired file: exit %d\n%s", code, stdout)
		}
	})
}

func TestFileopsUsageErrors(t *testing.T) {
	dir := t.TempDir()
	src, _ := fileopsCapture(t, dir, "src.aaep")
	link := filepath.Join(dir, "link.aaep")
	if err := os.Link(src, link); err != nil {
		t.Fatal(err)
	}
	jsonl := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(jsonl, []byte(`{"type": "x"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"info without file", []string{"info"}, "info needs a capture FILE"},
		{"info bad speed", []string{"info", "--speed", "0", src}, "--speed"},
		{"info missing file", []string{"info", filepath.Join(dir, "nope.aaep")}, "no such file"},
		{"info on jsonl", []string{"info", jsonl}, "not a capture file"},
		{"import without -o", []string{"import", jsonl}, "-o FILE.aaep"},
		{"import onto input", []string{"import", jsonl, "-o", jsonl}, "same file"},
		{"cut without -o", []string{"cut", src}, "-o OUT"},
		{"cut bad from", []string{"cut", src, "--from", "yesterday", "-o", filepath.Join(dir, "x")}, "--from: bad position"},
		{"cut onto input", []string{"cut", src, "-o", src}, "same file"},
		{"cut onto hard link", []string{"cut", src, "-o", link}, "same file"},
		{"filter nothing", []string{"filter", src, "-o", filepath.Join(dir, "x")}, "at least one of"},
		{"filter onto input", []string{"filter", src, "--session", "s", "-o", src}, "same file"},
		{"merge without -o", []string{"merge", src}, "-o OUT"},
		{"merge onto input", []string{"merge", src, link, "-o", link}, "same file"},
		{"export onto input", []string{"export", src, "-o", src}, "same file"},
		{"repair onto input", []string{"repair", src, "-o", link}, "same file"},
		{"unknown flag", []string{"cut", src, "--frm", "1s"}, "unknown flag"},
	}
	before, _ := os.ReadFile(src)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := replay(t, tc.args...)
			if code != cli.ExitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tc.want)
			}
		})
	}
	after, _ := os.ReadFile(src)
	if !bytes.Equal(before, after) {
		t.Error("a refused command modified its input")
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp") || e.Name() == "x" {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}
