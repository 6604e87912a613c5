package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/cli"
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
			Origins: []capfile.Origin{{ID: 0, Transport: "websocket", Endpoint: "ws://127.0.0.1:8765/aaep/v1/ws"}},
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
	// Without -o, the drawing of an object goes to the current directory.
	t.Chdir(dir)
	if c, _, e := replay(t, "visualize", "--format", "dot", obj); c != 0 {
		t.Errorf("visualize of the object: exit %d: %s", c, e)
	} else if _, err := os.Stat(filepath.Join(dir, "whole.aaep.dot")); err != nil {
		t.Errorf("visualize of the object: %v", err)
	}

	// info and check: the same report as for the file, but for its name.
	for _, verb := range [][]string{{"info"}, {"check", "--all"}, {"export"}, {"show"}, {"visualize", "--format", "dot", "-o", "-"}} {
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
	// Errors name the object and say what is wrong.
	if c, _, e := replay(t, "info", "s3://caps/one/missing.aaep"); c == 0 || !strings.Contains(e, "s3://caps/one/missing.aaep") || !strings.Contains(e, "no such object") {
		t.Errorf("missing object: exit %d: %s", c, e)
	}
	if c, _, e := replay(t, "check", "s3://caps/none/"); c != 2 || !strings.Contains(e, "s3://caps/none/") {
		t.Errorf("empty prefix: exit %d: %s", c, e)
	}
}

// check over a prefix checks each capture on its own: one report, the
// sessions of each capture under its name, and a summary line per capture.
func TestS3CheckPrefixPerCapture(t *testing.T) {
	srv := s3test.Start(t, "caps")
	srv.SetEnv(t)
	dir := t.TempDir()
	var names []string
	for i := 0; i < 6; i++ {
		name := "agent-" + string(rune('a'+i)) + ".aaep"
		path, _ := fileopsCapture(t, dir, name)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Put("caps", "fleet/"+name, data); err != nil {
			t.Fatal(err)
		}
		names = append(names, "s3://caps/fleet/"+name)
	}
	lc, lout, _ := replay(t, "check", "--all", filepath.Join(dir, "agent-a.aaep"))
	code, out, errs := replay(t, "check", "--all", "s3://caps/fleet/")
	if code != lc {
		t.Errorf("exit %d, want %d (that of each capture): %s", code, lc, errs)
	}
	// Each capture's report appears whole, under its name, in key order.
	last := -1
	for _, n := range names {
		at := strings.Index(out, "=== "+n+"\n")
		if at <= last {
			t.Fatalf("report of %s missing or out of order:\n%s", n, out)
		}
		last = at
		want := strings.ReplaceAll(lout, filepath.Join(dir, "agent-a.aaep"), n)
		if !strings.Contains(out[at:], want) {
			t.Errorf("report of %s differs from the file's", n)
		}
	}
	at := strings.Index(out, "6 recordings checked:")
	if at < 0 {
		t.Fatalf("no summary of the 6 recordings:\n%s", out)
	}
	summary := out[at:]
	for _, n := range names {
		if !strings.Contains(summary, " "+n+": 54 messages") {
			t.Errorf("no summary line for %s:\n%s", n, summary)
		}
	}
	if strings.Count(summary, "\n") != 9 || !strings.Contains(summary, "total: 6 recordings, 324 messages") || !strings.Contains(summary, "\nby party: producer ") {
		t.Errorf("summary has %d lines, want a title, 6, the total and its count per party:\n%s", strings.Count(summary, "\n"), summary)
	}
	// JSON: every recording's report and the total, in one schema.
	_, jout, _ := replay(t, "check", "--json", "s3://caps/fleet/")
	var doc struct {
		SchemaVersion int `json:"schema_version"`
		Recordings    []struct {
			Recording string
			Verdict   string
			Messages  int64
		}
		Total struct {
			Recordings int
			Messages   int64
		}
	}
	if err := json.Unmarshal([]byte(jout), &doc); err != nil {
		t.Fatalf("%v: %s", err, jout)
	}
	if doc.SchemaVersion != 3 || len(doc.Recordings) != 6 || doc.Recordings[2].Recording != names[2] || doc.Recordings[2].Messages == 0 || doc.Total.Recordings != 6 || doc.Total.Messages != 324 {
		t.Errorf("JSON: %+v", doc)
	}
}

// serve --record s3://... uploads the recording when the replay ends, and
// refuses an existing object without --force.
func TestS3ServeRecord(t *testing.T) {
	srv := s3test.Start(t, "caps")
	srv.SetEnv(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the default spool
	dir := t.TempDir()
	whole, recs := fileopsCapture(t, dir, "whole.aaep")
	data0, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Put("caps", "in/whole.aaep", data0); err != nil {
		t.Fatal(err)
	}
	// The replayed capture is an object too.
	s := startServe(t, "serve", "s3://caps/in/whole.aaep", "--listen", "127.0.0.1:0", "--no-delay", "--close-at-end", "--record", "s3://caps/rec/replay.aaep")
	d := websocket.Dialer{Subprotocols: []string{"aaep.v1"}, HandshakeTimeout: 10 * time.Second}
	c, _, err := d.Dial("ws://"+s.addr+"/aaep/v1/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	n := 0
	for {
		if _, _, err := c.ReadMessage(); err != nil {
			break
		}
		n++
	}
	c.Close()
	if code := s.stop(t); code != 0 || n != len(kindsOf(recs, capfile.KindReceived)) {
		t.Fatalf("serve exit %d after %d messages, want %d: %s", code, n, len(kindsOf(recs, capfile.KindReceived)), s.errb.String())
	}
	data, err := srv.Get("caps", "rec/replay.aaep")
	if err != nil {
		t.Fatalf("recording not uploaded: %v", err)
	}
	r, err := capfile.NewReaderAt(strings.NewReader(string(data)), int64(len(data)))
	if err != nil || !r.Clean() || r.Header().Meta["replay_of"] != "whole.aaep" {
		t.Fatalf("uploaded recording: %v (clean %v)", err, r != nil && r.Clean())
	}
	code, _, e := replay(t, "serve", whole, "--record", "s3://caps/rec/replay.aaep")
	if code != 2 || !strings.Contains(e, "already exists") {
		t.Errorf("second --record to the same object: exit %d: %s", code, e)
	}
}

func kindsOf(recs []capfile.Record, k capfile.Kind) []capfile.Record {
	var out []capfile.Record
	for _, r := range recs {
		if r.Kind == k {
			out = append(out, r)
		}
	}
	return out
}

// A reader of an object on a server that is not S3 says so; --s3-no-sign
// sends requests unsigned and says so (the test server refuses them).
func TestS3NotS3AndUnsigned(t *testing.T) {
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, "<html><head><title>Page not found</title></head></html>")
	}))
	defer web.Close()
	srv := s3test.Start(t, "caps")
	srv.SetEnv(t)
	c, _, e := replay(t, "info", "--s3-endpoint", web.URL, "s3://caps/one/run.aaep")
	if c != 2 || !strings.Contains(e, "s3://caps/one/run.aaep") || !strings.Contains(e, "not an S3 server: it answered 404 Not Found with an HTML page") {
		t.Errorf("info against a web server: exit %d: %s", c, e)
	}
	c, _, e = replay(t, "info", "--s3-no-sign", "s3://caps/one/run.aaep")
	if c != 2 || !strings.Contains(e, "aaep-replay: warning: requests to s3://caps go unsigned (anonymous), as asked") || !strings.Contains(e, "AccessDenied") {
		t.Errorf("info --s3-no-sign: exit %d: %s", c, e)
	}
}

// view reads an object, and a prefix of parts, from the S3 server: the
// page's capture answer counts every record, as for the file.
func TestS3View(t *testing.T) {
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
	for i, p := range splitCapture(t, dir, recs, len(recs)/2) {
		if err := srv.Put("caps", "run/agent-"+string(rune('1'+i))+".aaep", p); err != nil {
			t.Fatal(err)
		}
	}
	at := regexp.MustCompile(`(?m)^aaep-replay: viewing .* at (http://127\.0\.0\.1:\d+/)$`)
	for _, name := range []string{"s3://caps/one/whole.aaep", "s3://caps/run/"} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		var errb syncBuffer
		done := make(chan int, 1)
		go func() {
			done <- run(ctx, cli.Streams{In: strings.NewReader(""), Out: io.Discard, Err: &errb}, []string{"view", name, "--listen", "127.0.0.1:0"})
		}()
		var page string
		for deadline := time.Now().Add(20 * time.Second); page == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if m := at.FindStringSubmatch(errb.String()); m != nil {
				page = m[1]
			}
		}
		if page == "" {
			cancel()
			t.Fatalf("view %s did not start: exit %v; %s", name, <-done, errb.String())
		}
		resp, err := http.Get(page + "api/capture")
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		var info struct {
			File    string `json:"file"`
			Records int64  `json:"records"`
		}
		err = json.NewDecoder(resp.Body).Decode(&info)
		resp.Body.Close()
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("view %s: exit %d after Ctrl-C; %s", name, code, errb.String())
		}
		if err != nil || resp.StatusCode != http.StatusOK || info.Records != int64(len(recs)) || info.File == "" {
			t.Errorf("view %s: /api/capture %d %+v, %v; want %d records", name, resp.StatusCode, info, err, len(recs))
		}
	}
}
