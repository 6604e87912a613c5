package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/capedit"
	"github.com/aaep-tools/aaepkit/objstore/s3test"
)

// objectReads counts the requests for each object of bucket the server
// answered from request number from on (listings are not counted).
func objectReads(srv *s3test.Server, bucket string, from int) map[string]int {
	n := map[string]int{}
	for _, r := range srv.Requests()[from:] {
		p, _, _ := strings.Cut(r.Path, "?")
		if key, ok := strings.CutPrefix(p, "/"+bucket+"/"); ok && key != "" {
			n[key]++
		}
	}
	return n
}

// rotatedPart writes recs as a capture whose header says it is part n of a
// rotated recording after the part named previous, and returns its bytes.
func rotatedPart(t *testing.T, dir, name string, n int, previous string, recs []capfile.Record) []byte {
	t.Helper()
	meta := map[string]string{"part": string(rune('0' + n))}
	if previous != "" {
		meta["previous"] = previous
	}
	path := filepath.Join(dir, name)
	w, err := capfile.Create(path, capfile.Header{
		Start:   time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC),
		Tool:    "checkstate-test/1",
		Meta:    meta,
		Origins: []capfile.Origin{{ID: 0, Transport: "websocket", Endpoint: "ws://127.0.0.1:8765/aaep/v1/ws"}},
	}, &capfile.WriterOptions{FlushInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Append(&r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// check --state over a prefix: the second run reads no object the first
// one checked, checks the new ones (and the earlier parts of a new part's
// recording), and a changed object is checked again.
func TestCheckStateS3(t *testing.T) {
	srv := s3test.Start(t, "caps")
	srv.SetEnv(t)
	dir := t.TempDir()
	capPath, recs := fileopsCapture(t, dir, "src.aaep")
	data, err := os.ReadFile(capPath)
	if err != nil {
		t.Fatal(err)
	}
	put := func(key string, b []byte) {
		t.Helper()
		if err := srv.Put("caps", key, b); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"a", "b", "c"} {
		put("fleet/agent-"+k+".aaep", data)
	}
	put("fleet/rot-1.aaep", rotatedPart(t, dir, "rot-1.aaep", 1, "", recs[:20]))
	state := filepath.Join(dir, "state.json")
	const prefix = "s3://caps/fleet/"

	// First run: everything is new and read.
	from := len(srv.Requests())
	code, out, errs := replay(t, "check", "--summary", "--state", state, prefix)
	if code != 1 { // the sample has MUST violations
		t.Fatalf("first run: exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "4 of 4 parts new or changed") || !strings.Contains(out, "4 recordings checked") {
		t.Errorf("first run:\n%s%s", out, errs)
	}
	reads := objectReads(srv, "caps", from)
	for _, k := range []string{"agent-a", "agent-b", "agent-c", "rot-1"} {
		if reads["fleet/"+k+".aaep"] == 0 {
			t.Errorf("first run did not read %s: %v", k, reads)
		}
	}
	var st checkState
	if b, err := os.ReadFile(state); err != nil {
		t.Fatal(err)
	} else if err := decodeState(b, &st); err != nil {
		t.Fatal(err)
	}
	if e := st.Parts[prefix+"agent-b.aaep"]; len(st.Parts) != 4 || e.Size != int64(len(data)) || e.ETag == "" {
		t.Errorf("state after the first run: %+v", st)
	}

	// New objects: a capture, and part 2 of the rotated recording; one
	// old object is replaced by other content.
	put("fleet/agent-d.aaep", data)
	put("fleet/rot-2.aaep", rotatedPart(t, dir, "rot-2.aaep", 2, "rot-1.aaep", recs[20:]))
	put("fleet/agent-c.aaep", rotatedPart(t, dir, "other.aaep", 1, "", recs[:30]))
	from = len(srv.Requests())
	code, out, errs = replay(t, "check", "--summary", "--state", state, prefix)
	if code != 1 {
		t.Fatalf("second run: exit %d: %s", code, errs)
	}
	reads = objectReads(srv, "caps", from)
	for _, k := range []string{"agent-a", "agent-b"} {
		if n := reads["fleet/"+k+".aaep"]; n != 0 {
			t.Errorf("second run read old object %s %d times", k, n)
		}
	}
	// rot-1 is old and its recording has a new part: the check goes on
	// where the last one ended, reading rot-2 only.
	for _, k := range []string{"agent-c", "agent-d", "rot-2"} {
		if reads["fleet/"+k+".aaep"] == 0 {
			t.Errorf("second run did not read %s: %v", k, reads)
		}
	}
	if n := reads["fleet/rot-1.aaep"]; n != 0 {
		t.Errorf("second run read rot-1, checked before, %d times", n)
	}
	if !strings.Contains(errs, "3 of 6 parts new or changed") || !strings.Contains(errs, "1 of 3 recordings go on where the last check ended") || !strings.Contains(out, "3 recordings checked") || !strings.Contains(out, "rot-1.aaep (2 parts, to rot-2.aaep)") || strings.Contains(out, "agent-a") {
		t.Errorf("second run:\n%s%s", out, errs)
	}

	// Third run: nothing new, no object read, exit 0, an empty report.
	from = len(srv.Requests())
	code, out, errs = replay(t, "check", "--json", "--state", state, prefix)
	if code != 0 || !strings.Contains(errs, "0 of 6 parts new or changed") {
		t.Errorf("third run: exit %d: %s", code, errs)
	}
	var doc struct {
		Recordings []any
		Verdict    string
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Recordings) != 0 || doc.Verdict != "PASS" {
		t.Errorf("third run's JSON (%v): %s", err, out)
	}
	if reads := objectReads(srv, "caps", from); len(reads) != 0 {
		t.Errorf("third run read %v", reads)
	}
}

// check --since: only recordings with a part modified at or after the time
// (objects by their listing, files by their modification time); a time that
// is neither RFC 3339 nor a duration is a usage error.
func TestCheckSince(t *testing.T) {
	srv := s3test.Start(t, "caps")
	srv.SetEnv(t)
	dir := t.TempDir()
	capPath, _ := fileopsCapture(t, dir, "src.aaep")
	data, err := os.ReadFile(capPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Put("caps", "fleet/old.aaep", data); err != nil {
		t.Fatal(err)
	}
	// A time in the future selects nothing; the past, everything.
	from := len(srv.Requests())
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	if code, _, errs := replay(t, "check", "--since", future, "s3://caps/fleet/"); code != 0 || !strings.Contains(errs, "0 of 1 parts") {
		t.Errorf("--since the future: exit %d: %s", code, errs)
	}
	if reads := objectReads(srv, "caps", from); len(reads) != 0 {
		t.Errorf("--since the future read %v", reads)
	}
	if code, out, errs := replay(t, "check", "--summary", "--since", "24h", "s3://caps/fleet/"); code != 1 || !strings.Contains(errs, "1 of 1 parts") || !strings.Contains(out, "s3://caps/fleet/old.aaep") {
		t.Errorf("--since 24h: exit %d:\n%s%s", code, out, errs)
	}

	// Local files: by modification time.
	local := t.TempDir()
	for _, n := range []string{"x.aaep", "y.aaep"} {
		if err := os.WriteFile(filepath.Join(local, n), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(filepath.Join(local, "x.aaep"), old, old); err != nil {
		t.Fatal(err)
	}
	code, out, errs := replay(t, "check", "--summary", "--since", "24h", local)
	if code != 1 || !strings.Contains(errs, "1 of 2 parts") || !strings.Contains(out, "y.aaep") || strings.Contains(out, "x.aaep") {
		t.Errorf("--since over a directory: exit %d:\n%s%s", code, out, errs)
	}

	for _, bad := range []string{"yesterday", "-5h", "2026-13-01T00:00:00Z"} {
		if code, _, errs := replay(t, "check", "--since", bad, local); code != 2 || !strings.Contains(errs, "--since") {
			t.Errorf("--since %s: exit %d: %s", bad, code, errs)
		}
	}
}

// info --index-only of an object of a few MB reads its header and index:
// a few KiB of it, the records and sessions as the full summary counts
// them; without the flag, info reads it whole as before.
func TestInfoIndexOnlyS3(t *testing.T) {
	srv := s3test.Start(t, "caps")
	srv.SetEnv(t)
	data := incompressibleCapture(t, filepath.Join(t.TempDir(), "big.aaep"))
	if err := srv.Put("caps", "big.aaep", data); err != nil {
		t.Fatal(err)
	}
	served := func(from int) (n int, bytes int64) {
		for _, r := range srv.Settled()[from:] {
			if p, _, _ := strings.Cut(r.Path, "?"); p == "/caps/big.aaep" {
				n++
				bytes += r.Bytes
			}
		}
		return n, bytes
	}
	from := len(srv.Settled())
	code, out, errs := replay(t, "info", "--index-only", "--json", "s3://caps/big.aaep")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var in indexInfo
	if err := json.Unmarshal([]byte(out), &in); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	n, bytes := served(from)
	// The head (64 KiB) and the tail with the index (at least 512 KiB),
	// as objstore.Remote reads them: a fifth of this object, not all.
	if bytes == 0 || bytes > int64(len(data))/5 || n != 2 {
		t.Errorf("--index-only: the server sent %d bytes of the %d-byte object in %d requests", bytes, len(data), n)
	}
	if in.Records != 6000 || in.Sessions != 7 || in.Read != "header and index" || in.Bytes != int64(len(data)) || in.Duration != 5999*time.Millisecond || in.Fetched == 0 || in.Fetched > bytes {
		t.Errorf("--index-only summary (%d bytes served): %+v", bytes, in)
	}
	// The same fields as the full summary, which reads every record.
	from = len(srv.Settled())
	code, out, errs = replay(t, "info", "--json", "s3://caps/big.aaep")
	if code != 0 {
		t.Fatalf("full info: exit %d: %s", code, errs)
	}
	if _, fb := served(from); fb < int64(len(data))*9/10 {
		t.Errorf("full info read %d bytes of %d", fb, len(data))
	}
	var full capedit.Summary
	if err := json.Unmarshal([]byte(out), &full); err != nil {
		t.Fatal(err)
	}
	f := indexInfoFull(&full)
	if f.Records != in.Records || f.Sessions != in.Sessions || f.Duration != in.Duration || !f.End.Equal(in.End) || f.RawBytes != in.RawBytes || f.Frames != in.Frames {
		t.Errorf("index summary %+v differs from the full one %+v", in, f)
	}
	// Text: says what was not read.
	if _, txt, _ := replay(t, "info", "--index-only", "s3://caps/big.aaep"); !strings.Contains(txt, "read:      header and index") || !strings.Contains(txt, "not read:  records by kind") {
		t.Errorf("text:\n%s", txt)
	}
}

// info --index-only of a capture without an intact index (torn) reads it
// whole and says so; of a clean file, the index's counts.
func TestInfoIndexOnlyTorn(t *testing.T) {
	dir := t.TempDir()
	path, recs := fileopsCapture(t, dir, "c.aaep")
	code, out, errs := replay(t, "info", "--index-only", "--json", path)
	var in indexInfo
	if err := json.Unmarshal([]byte(out), &in); code != 0 || err != nil || in.Read != "header and index" || in.Records != int64(len(recs)) {
		t.Errorf("clean: exit %d (%v): %s%s", code, err, out, errs)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	torn := filepath.Join(dir, "torn.aaep")
	if err := os.WriteFile(torn, data[:len(data)-40], 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = replay(t, "info", "--index-only", "--json", torn)
	in = indexInfo{}
	if err := json.Unmarshal([]byte(out), &in); code != 0 || err != nil || in.Read != "every record" || in.Status != "torn" || in.Records == 0 {
		t.Errorf("torn: exit %d (%v): %s%s", code, err, out, errs)
	}
}

// --state s3://bucket/key keeps the state in the bucket (any machine can
// run the next round): the second run reads no object the first checked
// and finds the state there; a prefix, a recording's name or an input as
// the state is a usage error, and nothing is written.
func TestCheckStateInBucket(t *testing.T) {
	srv, _, data, _, put := fleetBucket(t)
	put("fleet/a.aaep", data)
	put("fleet/b.aaep", data)
	const prefix, state = "s3://caps/fleet/", "s3://caps/state/shard-0.state"
	code, _, errs := replay(t, "check", "--summary", "--state", state, prefix)
	if code != 1 || !strings.Contains(errs, "2 of 2 parts new or changed") {
		t.Fatalf("first run: exit %d: %s", code, errs)
	}
	b, err := srv.Get("caps", "state/shard-0.state")
	if err != nil {
		t.Fatal(err)
	}
	var st checkState
	if err := decodeState(b, &st); err != nil || len(st.Parts) != 2 || st.Parts[prefix+"a.aaep"].ETag == "" {
		t.Fatalf("the state in the bucket (%v): %s", err, b)
	}
	put("fleet/c.aaep", data)
	from := len(srv.Settled())
	code, out, errs := replay(t, "check", "--summary", "--state", state, prefix)
	if code != 1 || !strings.Contains(errs, "1 of 3 parts new or changed") || !strings.Contains(out, "c.aaep") || strings.Contains(out, "a.aaep") {
		t.Errorf("second run: exit %d:\n%s%s", code, out, errs)
	}
	if reads := objectReads(srv, "caps", from); reads["fleet/a.aaep"] != 0 || reads["fleet/b.aaep"] != 0 || reads["fleet/c.aaep"] == 0 {
		t.Errorf("second run read %v", reads)
	}
	for _, bad := range []string{"s3://caps/state/", "s3://caps/fleet/x.aaep", "s3://caps/x.jsonl"} {
		if code, _, errs := replay(t, "check", "--state", bad, prefix); code != 2 || !strings.Contains(errs, "--state") {
			t.Errorf("--state %s: exit %d: %s", bad, code, errs)
		}
	}
	if _, err := srv.Get("caps", "fleet/x.aaep"); err == nil {
		t.Errorf("a refused --state was written")
	}
}
