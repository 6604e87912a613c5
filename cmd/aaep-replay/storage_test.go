package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/objstore/s3test"
)

// splitCapture writes recs as two captures, the second starting where its
// first record was received, as rotation would, and returns their bytes.
func splitCapture(t *testing.T, dir string, recs []capfile.Record, k int) [2][]byte {
	t.Helper()
	start := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	var out [2][]byte
	for part, rs := range [][]capfile.Record{recs[:k], recs[k:]} {
		base := rs[0].Time
		path := filepath.Join(dir, "part"+string(rune('1'+part))+".aaep")
		w, err := capfile.Create(path, capfile.Header{
			Start:   start.Add(time.Duration(base)),
			Tool:    "fileops-test/1",
			Sources: []capfile.Source{{ID: 0, Transport: "websocket", Endpoint: "ws://127.0.0.1:8765/aaep/v1/ws"}},
		}, &capfile.WriterOptions{FlushInterval: -1, FrameSize: 4 << 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			r.Time -= base
			if err := w.Append(&r); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if out[part], err = os.ReadFile(path); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// Every verb that reads a capture reads s3://BUCKET/KEY as it reads the
// file, and s3://BUCKET/PREFIX/ as the captures under it merged.
func TestS3Inputs(t *testing.T) {
	srv := s3test.Start(t, "caps")
	srv.SetEnv(t)
	dir := t.TempDir()
	whole, recs := fileopsCapture(t, dir, "whole.aaep")
	data, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Put("caps", "one/whole.aaep", data); err != nil {
		t.Fatal(err)
	}
	parts := splitCapture(t, dir, recs, len(recs)/2)
	for i, p := range parts {
		if err := srv.Put("caps", "run/agent-"+string(rune('1'+i))+".aaep", p); err != nil {
			t.Fatal(err)
		}
	}
	const obj = "s3://caps/one/whole.aaep"

	// info and check: the same report as for the file, but for its name.
	for _, verb := range [][]string{{"info"}, {"check", "--all"}, {"export"}} {
		lc, lout, lerr := replay(t, append(verb, whole)...)
		rc, rout, rerr := replay(t, append(verb, obj)...)
		if rc != lc || strings.ReplaceAll(rout, obj, whole) != lout {
			t.Errorf("%s of the object: exit %d (file: %d)\n%s%s\nfile:\n%s%s", verb[0], rc, lc, rout, rerr, lout, lerr)
		}
	}

	// cut seeks through the object's index.
	localCut, remoteCut := filepath.Join(dir, "lc.aaep"), filepath.Join(dir, "rc.aaep")
	if c, _, e := replay(t, "cut", whole, "--from", "#40", "--to", "#90", "-o", localCut); c != 0 {
		t.Fatal(e)
	}
	if c, _, e := replay(t, "cut", obj, "--from", "#40", "--to", "#90", "-o", remoteCut); c != 0 {
		t.Fatalf("cut of the object: exit %d: %s", c, e)
	}
	fileopsSame(t, fileopsRecords(t, remoteCut), fileopsRecords(t, localCut))

	// A prefix of parts reads as one capture: merge gives back the whole.
	merged := filepath.Join(dir, "merged.aaep")
	if c, _, e := replay(t, "merge", "--join-sources", "s3://caps/run/", "-o", merged); c != 0 {
		t.Fatalf("merge of the prefix: exit %d: %s", c, e)
	}
	fileopsSame(t, fileopsRecords(t, merged), recs)
	// filter over the prefix reads the parts as if merged.
	filtered := filepath.Join(dir, "filtered.aaep")
	if c, _, e := replay(t, "filter", "s3://caps/run/", "--messages-only", "-o", filtered); c != 0 {
		t.Fatalf("filter of the prefix: exit %d: %s", c, e)
	}
	if got := fileopsRecords(t, filtered); len(got) != len(recs)-1 { // all but the connection event
		t.Errorf("filter of the prefix kept %d records, want %d", len(got), len(recs)-1)
	}
	// check over the prefix finds what it finds in the whole.
	lc, lout, _ := replay(t, "check", "--json", whole)
	rc, rout, rerr := replay(t, "check", "--json", "s3://caps/run/")
	ld, rd := parseCheckJSON(t, lout), parseCheckJSON(t, rout)
	if rc != lc || rd.Messages != ld.Messages || rd.Verdict != ld.Verdict || !rd.Complete {
		t.Errorf("check of the prefix: exit %d (file %d): %s", rc, lc, rerr)
	}

	// Errors name the object and say what is wrong.
	if c, _, e := replay(t, "info", "s3://caps/one/missing.aaep"); c == 0 || !strings.Contains(e, "s3://caps/one/missing.aaep") || !strings.Contains(e, "no such object") {
		t.Errorf("missing object: exit %d: %s", c, e)
	}
	if c, _, e := replay(t, "check", "s3://caps/none/"); c != 2 || !strings.Contains(e, "s3://caps/none/") {
		t.Errorf("empty prefix: exit %d: %s", c, e)
	}
}
