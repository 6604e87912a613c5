package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/objstore/s3test"
)

// --shard takes I/N with 0 <= I < N; any other form is a usage error
// naming the flag, before anything is read.
func TestCheckShardForms(t *testing.T) {
	for _, bad := range []string{"", "1", "a/2", "2/2", "3/2", "0/0", "-1/2", "1/-2", "1/2/3", " 1/2", "1/ 2", "0x1/2", "1.0/2", "/2", "1/"} {
		code, _, errs := replay(t, "check", "--shard="+bad, demoCapture)
		if code != 2 || !strings.Contains(errs, "--shard") {
			t.Errorf("--shard %q: exit %d: %s", bad, code, errs)
		}
	}
	// --merge-reports takes reports only.
	for _, args := range [][]string{
		{"check", "--merge-reports"},
		{"check", "--merge-reports", "--shard", "0/2", "r.json"},
		{"check", "--merge-reports", "--state", "s.json", "r.json"},
		{"check", "--merge-reports", "-"},
		{"check", "--merge-reports", demoCapture},
		{"check", "--merge-reports", filepath.Join(t.TempDir(), "missing.json")},
	} {
		if code, _, errs := replay(t, args...); code != 2 || errs == "" {
			t.Errorf("%q: exit %d: %s", args, code, errs)
		}
	}
	// The demo capture is in exactly one of 3 shards: judged there, an
	// empty (passing) report in the others.
	judged := 0
	for i := 0; i < 3; i++ {
		code, out, errs := replay(t, "check", "--json", "--shard", fmt.Sprintf("%d/3", i), demoCapture)
		var doc struct{ Recordings []any }
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("shard %d/3: %v: %s", i, err, out)
		}
		want := shardOf(demoCapture, 3) == uint64(i)
		switch {
		case want && (code != 1 || len(doc.Recordings) != 1):
			t.Errorf("shard %d/3 (the demo's): exit %d, %d recordings: %s", i, code, len(doc.Recordings), errs)
		case !want && (code != 0 || len(doc.Recordings) != 0):
			t.Errorf("shard %d/3: exit %d, %d recordings: %s", i, code, len(doc.Recordings), errs)
		}
		if len(doc.Recordings) == 1 {
			judged++
		}
	}
	if judged != 1 {
		t.Errorf("the demo capture was judged in %d shards", judged)
	}
}

// The key of a recording is documented as FNV-1a 64 of its first part's
// name: fixed values (a change would move every recording between shards
// and invalidate each shard's state).
func TestShardOfStable(t *testing.T) {
	for _, tc := range []struct {
		key  string
		n    uint64
		want uint64
	}{
		{"", 1 << 63, 0xcbf29ce484222325 % (1 << 63)}, // FNV-1a 64's offset basis
		{"a", 1 << 63, 0xaf63dc4c8601ec8c % (1 << 63)},
		{"s3://fleet/host-1.aaep", 1, 0},
	} {
		if got := shardOf(tc.key, tc.n); got != tc.want {
			t.Errorf("shardOf(%q, %d) = %d, want %d", tc.key, tc.n, got, tc.want)
		}
	}
}

// N shards of a prefix, each a real aaep-replay process with its own
// --state, merged by check --merge-reports: the merged JSON is byte for
// byte a single check's, and its exit status is the single check's. A
// second round with a new recording: only its shard judges it, and the
// merge of the round is a single --since-like check of what is new.
func TestCheckShardMergeS3(t *testing.T) {
	srv, dir, data, recs, put := fleetBucket(t)
	for i := 0; i < 9; i++ {
		// Recordings that differ: the whole sample, or a slice of it.
		if i%3 == 0 {
			put(fmt.Sprintf("fleet/host-%d.aaep", i), data)
			continue
		}
		put(fmt.Sprintf("fleet/host-%d.aaep", i), rotatedPart(t, dir, fmt.Sprintf("h%d.aaep", i), 1, "", recs[:10+5*i]))
	}
	put("fleet/rot-1.aaep", rotatedPart(t, dir, "rot-1.aaep", 1, "", recs[:20]))
	put("fleet/rot-2.aaep", rotatedPart(t, dir, "rot-2.aaep", 2, "rot-1.aaep", recs[20:]))
	const prefix = "s3://caps/fleet/"
	const n = 3

	round := func(name string) (single []byte, singleCode int, merged []byte, mergedCode int, perShard []int) {
		t.Helper()
		code, out, errs := runBinary(t, dir, "check", "--json", prefix)
		if code == 2 {
			t.Fatalf("%s: single check: exit 2: %s", name, errs)
		}
		single, singleCode = out, code
		var reports []string
		for i := 0; i < n; i++ {
			state := filepath.Join(dir, fmt.Sprintf("state-%d.json", i))
			from := len(srv.Settled())
			code, out, errs := runBinary(t, dir, "check", "--json", "--shard", fmt.Sprintf("%d/%d", i, n), "--state", state, prefix)
			if code == 2 {
				t.Fatalf("%s: shard %d/%d: exit 2: %s", name, i, n, errs)
			}
			// Another shard's part: its header only, in one request.
			fetched := map[string]int64{}
			gets := map[string]int{}
			for _, r := range srv.Settled()[from:] {
				p, _, _ := strings.Cut(r.Path, "?")
				if key, ok := strings.CutPrefix(p, "/caps/"); ok && r.Method == "GET" && strings.HasSuffix(key, ".aaep") {
					fetched[key] += r.Bytes
					gets[key]++
				}
			}
			for key := range fetched {
				first := key
				if strings.HasPrefix(key, "fleet/rot-") {
					first = "fleet/rot-1.aaep"
				}
				if shardOf("s3://caps/"+first, n) != uint64(i) && (gets[key] != 1 || fetched[key] > 4<<10) {
					t.Errorf("%s: shard %d fetched %s, another shard's, %d times, %d bytes: want its header only", name, i, key, gets[key], fetched[key])
				}
			}
			var doc struct{ Recordings []struct{ Parts []string } }
			if err := json.Unmarshal(out, &doc); err != nil {
				t.Fatalf("%s: shard %d: %v", name, i, err)
			}
			for _, r := range doc.Recordings {
				if got := shardOf(r.Parts[0], n); got != uint64(i) {
					t.Errorf("%s: shard %d judged %s, of shard %d", name, i, r.Parts[0], got)
				}
			}
			perShard = append(perShard, len(doc.Recordings))
			report := filepath.Join(dir, fmt.Sprintf("%s-r%d.json", name, i))
			if err := os.WriteFile(report, out, 0o644); err != nil {
				t.Fatal(err)
			}
			reports = append(reports, report)
		}
		code, out, errs = runBinary(t, dir, append([]string{"check", "--merge-reports"}, reports...)...)
		if code == 2 {
			t.Fatalf("%s: merge: exit 2: %s", name, errs)
		}
		return single, singleCode, out, code, perShard
	}

	single, singleCode, merged, mergedCode, perShard := round("first")
	if !bytes.Equal(merged, single) || mergedCode != singleCode || singleCode != 1 {
		t.Errorf("merged report (exit %d) differs from the single check's (exit %d):\n%s\n----\n%s", mergedCode, singleCode, merged, single)
	}
	perFirst := perShard
	total := 0
	for _, k := range perShard {
		total += k
	}
	if total != 10 {
		t.Errorf("shards judged %v recordings, want 10 in all", perShard)
	}
	spread := 0
	for _, k := range perShard {
		if k > 0 {
			spread++
		}
	}
	if spread < 2 {
		t.Errorf("recordings per shard %v: the hash puts them all in one", perShard)
	}

	// A new recording and a new part: each shard's state leaves it only
	// what is new of its own recordings.
	put("fleet/host-9.aaep", data)
	put("fleet/rot-3.aaep", rotatedPart(t, dir, "rot-3.aaep", 3, "rot-2.aaep", recs[:5]))
	_, _, merged, _, perShard = round("second")
	var doc struct {
		Recordings []struct {
			Recording string
			Parts     []string
		}
	}
	if err := json.Unmarshal(merged, &doc); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range doc.Recordings {
		names = append(names, r.Recording)
	}
	if got := strings.Join(names, "|"); got != prefix+"host-9.aaep|"+prefix+"rot-1.aaep (3 parts, to rot-3.aaep)" {
		t.Errorf("second round: merged recordings %q (per shard %v)", got, perShard)
	}

	// Reports that overlap, or of different --fail-on, are refused.
	var r0 string
	for i, k := range perFirst {
		if k > 0 {
			r0 = filepath.Join(dir, fmt.Sprintf("first-r%d.json", i))
			break
		}
	}
	if code, _, errs := runBinary(t, dir, "check", "--merge-reports", r0, r0); code != 2 || !strings.Contains(errs, "not of disjoint shards") {
		t.Errorf("merging a report with itself: exit %d: %s", code, errs)
	}
	code, out, _ := runBinary(t, dir, "check", "--json", "--fail-on", "never", "--shard", "1/3", prefix)
	if code != 0 {
		t.Fatalf("--fail-on never: exit %d", code)
	}
	never := filepath.Join(dir, "never.json")
	if err := os.WriteFile(never, out, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runBinary(t, dir, "check", "--merge-reports", r0, never); code != 2 || !strings.Contains(errs, "--fail-on") {
		t.Errorf("merging reports of different --fail-on: exit %d: %s", code, errs)
	}
}

// fleetBucket starts a loopback S3 server with bucket "caps" and returns
// it, a scratch directory, a sample capture's bytes and records, and a
// function storing an object in the bucket.
func fleetBucket(t *testing.T) (*s3test.Server, string, []byte, []capfile.Record, func(key string, b []byte)) {
	t.Helper()
	srv := s3test.Start(t, "caps")
	srv.SetEnv(t)
	dir := t.TempDir()
	capPath, recs := fileopsCapture(t, dir, "src.aaep")
	data, err := os.ReadFile(capPath)
	if err != nil {
		t.Fatal(err)
	}
	return srv, dir, data, recs, func(key string, b []byte) {
		t.Helper()
		if err := srv.Put("caps", key, b); err != nil {
			t.Fatal(err)
		}
	}
}
