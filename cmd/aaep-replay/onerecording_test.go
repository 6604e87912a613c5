package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/sample"
	"github.com/aaep-tools/aaepkit/internal/viewer"
	"github.com/aaep-tools/aaepkit/objstore/s3test"
	"github.com/aaep-tools/aaepkit/recording"
	"github.com/aaep-tools/aaepkit/recording/recordingtest"
)

// producerCapture writes the producer's side of sample sessions as a
// capture of one SSE source (a connection record first and, with closed, a
// close last), as aaep-capture records a producer nobody answers.
func producerCapture(t *testing.T, path string, opts sample.Options, closed bool) []capfile.Record {
	t.Helper()
	recs := []capfile.Record{{Kind: capfile.KindConn, Payload: []byte(`{"event":"connected"}`)}}
	var last int64
	for _, m := range sample.Stream(opts) {
		if m.FromSubscriber {
			continue
		}
		last = int64(m.Offset)
		recs = append(recs, capfile.Record{Kind: capfile.KindReceived, Time: last, Session: m.Session, Payload: m.JSON})
	}
	if closed {
		recs = append(recs, capfile.Record{Kind: capfile.KindConn, Time: last + int64(time.Millisecond), Payload: []byte(`{"event":"closed"}`)})
	}
	writeSSECapture(t, path, opts.Start0(), recs)
	return recs
}

// writeSSECapture writes recs as a capture of one SSE source starting at
// start, as aaep-capture records a producer.
func writeSSECapture(t *testing.T, path string, start time.Time, recs []capfile.Record) {
	t.Helper()
	w, err := capfile.Create(path, capfile.Header{Start: start, Tool: "aaep-capture/test",
		Origins: []capfile.Origin{{ID: 0, Transport: "sse", Endpoint: "http://agent.test/events"}}}, nil)
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
}

// upload puts files under prefix in bucket, by their base names.
func upload(t *testing.T, srv *s3test.Server, bucket, prefix string, files ...string) {
	t.Helper()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Put(bucket, prefix+filepath.Base(f), b); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFleet7: five hosts recorded into one s3 prefix with rotation, seven
// parts each, the last one empty but for the connection's close (the stop
// fell on a rotation boundary). Sessions run across parts. check of the
// prefix judges each host's recording as one: 5 recordings, all PASS,
// exit 0 (before, each part was judged alone: false MUST findings for every
// part after the first, the empty part INCOMPLETE).
func TestFleet7(t *testing.T) {
	srv := s3test.Start(t, "caps")
	srv.SetEnv(t)
	dir := t.TempDir()
	for h := 1; h <= 5; h++ {
		opts := sample.Options{Sessions: 6, Seed: uint64(70 + h), Start: time.Date(2026, 11, 23, 20, 15, 0, 0, time.UTC)}
		recs := producerCapture(t, filepath.Join(dir, fmt.Sprintf("whole-%d.aaep", h)), opts, true)
		n := len(recs) - 1 // the close is the seventh part
		var cuts []int
		for k := 1; k < 6; k++ {
			cuts = append(cuts, k*n/6)
		}
		cuts = append(cuts, n)
		hostDir := filepath.Join(dir, strconv.Itoa(h))
		if err := os.Mkdir(hostDir, 0o755); err != nil {
			t.Fatal(err)
		}
		parts := recordingtest.WriteRotated(t, hostDir, fmt.Sprintf("agent-%d-20261123T201500.000Z", h), opts.Start0(), recs, cuts)
		if len(parts) != 7 {
			t.Fatalf("%d parts", len(parts))
		}
		upload(t, srv, "caps", "fleet7/", parts...)
	}
	code, out, stderr := replay(t, "check", "s3://caps/fleet7/")
	if code != cli.ExitOK {
		t.Fatalf("check of the prefix: exit %d, want 0\n%s%s", code, out, stderr)
	}
	summary := out[strings.Index(out, "5 recordings checked:"):]
	if strings.Count(summary, "  PASS ") != 5 || strings.Count(summary, "(7 parts, to ") != 5 || !strings.Contains(summary, "total: 5 recordings") || !strings.Contains(summary, ": PASS\n") {
		t.Errorf("want 5 recordings of 7 parts, each PASS:\n%s", summary)
	}
	for _, rule := range []string{"SEQ-START-FIRST", "SEQ-STATE-FIRST-IDLE", "SEQ-TOOL-PAIR-PRECEDED", "INCOMPLETE"} {
		if strings.Contains(out, rule) {
			t.Errorf("report holds %s:\n%s", rule, out)
		}
	}
	// show of the prefix prints each host's recording in turn, under a line
	// naming it, and marks what check finds in that recording, no more.
	byRec := checkRecordings(t, "s3://caps/fleet7/")
	if len(byRec) != 5 {
		t.Fatalf("check --json: %d recordings, want 5", len(byRec))
	}
	showAgrees(t, "s3://caps/fleet7/", byRec)
	viewAgrees(t, "s3://caps/fleet7/", byRec)
}

// recRules are one recording's findings by rule, as show marks them (a
// message's line names each rule once).
type recRules struct {
	name  string
	rules map[string]int
	// counts are check's findings by level ("MUST"), sessions its sess_
	// sessions, sorted.
	counts   map[string]int
	sessions []string
	// messages is check's count of the recording's messages.
	messages int64
}

// checkRecordings runs check --json on names and returns each recording's
// findings by rule, in the report's order.
func checkRecordings(t *testing.T, names ...string) []recRules {
	t.Helper()
	_, out, stderr := replay(t, append([]string{"check", "--json", "--fail-on", "never"}, names...)...)
	var doc struct {
		Recordings []struct {
			Recording string
			Counts    map[string]int
			Messages  int64
			Sessions  []struct {
				Session  string
				Findings []struct {
					Rule  string
					Index int64
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("check %v: %v\n%s%s", names, err, out, stderr)
	}
	var res []recRules
	for _, r := range doc.Recordings {
		rules := map[string]int{}
		marked := map[string]bool{}
		var sessions []string
		for _, s := range r.Sessions {
			if strings.HasPrefix(s.Session, "sess_") {
				sessions = append(sessions, s.Session)
			}
			for _, f := range s.Findings {
				if k := fmt.Sprint(f.Index, " ", f.Rule); f.Index < 0 || !marked[k] {
					marked[k] = true
					rules[f.Rule]++
				}
			}
		}
		sort.Strings(sessions)
		res = append(res, recRules{r.Recording, rules, r.Counts, sessions, r.Messages})
	}
	return res
}

// showAgrees runs show on name and checks that it prints each recording of
// want in turn, under a line "=== NAME", marking check's findings of that
// recording (with one recording, no such line).
func showAgrees(t *testing.T, name string, want []recRules) {
	t.Helper()
	code, out, stderr := replay(t, "show", name)
	if code != 0 {
		t.Fatalf("show: exit %d: %s", code, stderr)
	}
	var got []recRules
	cur := &recRules{rules: map[string]int{}}
	if len(want) > 1 {
		cur = nil
	}
	for _, line := range strings.SplitAfter(out, "\n") {
		if n, ok := strings.CutPrefix(line, "=== "); ok {
			if cur != nil {
				got = append(got, *cur)
			}
			cur = &recRules{name: strings.TrimSuffix(n, "\n"), rules: map[string]int{}}
			continue
		}
		if cur == nil {
			t.Fatalf("show prints %q before the first recording's line", line)
		}
		for _, m := range showMark.FindAllStringSubmatch(line, -1) {
			cur.rules[m[2]]++
		}
	}
	if cur != nil {
		got = append(got, *cur)
	}
	if len(got) != len(want) {
		t.Fatalf("show prints %d recordings, check reports %d:\n%s", len(got), len(want), out)
	}
	for i := range want {
		if len(want) > 1 && got[i].name != want[i].name {
			t.Errorf("show's recording %d is %q, check's %q", i+1, got[i].name, want[i].name)
		}
		if fmt.Sprint(got[i].rules) != fmt.Sprint(want[i].rules) {
			t.Errorf("%s: show marks %v, check finds %v", want[i].name, got[i].rules, want[i].rules)
		}
	}
}

// TestMissingAndForeignPartsNamed: check names a part whose previous part
// was not given and a part of another recording, and says INCOMPLETE.
func TestMissingAndForeignPartsNamed(t *testing.T) {
	dir := t.TempDir()
	opts := sample.Options{Sessions: 4, Seed: 3}
	recs := producerCapture(t, filepath.Join(dir, "whole.aaep"), opts, false)
	parts := recordingtest.WriteRotated(t, dir, "run", opts.Start0(), recs, []int{len(recs) / 3, 2 * len(recs) / 3})
	code, _, stderr := replay(t, "check", parts[0], parts[2])
	if code != cli.ExitUsage || !strings.Contains(stderr, "INCOMPLETE") || !strings.Contains(stderr, parts[2]+" is part 3") || !strings.Contains(stderr, "part 2 (run-000002.aaep) was not given") {
		t.Errorf("part 2 missing: exit %d, stderr %s", code, stderr)
	}
	other := t.TempDir()
	stray := recordingtest.WriteRotated(t, other, "run", opts.Start0(), producerCapture(t, filepath.Join(other, "w.aaep"), sample.Options{Sessions: 2, Seed: 9}, false), []int{5})[1]
	// Same stem, another host's endpoint: a foreign part claiming run-000001.aaep.
	b, err := os.ReadFile(stray)
	if err != nil {
		t.Fatal(err)
	}
	hdrOther := filepath.Join(dir, "stray-000002.aaep")
	if err := os.WriteFile(hdrOther, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, out, _ := replay(t, "check", "--json", "--allow-incomplete", parts[0], parts[1], parts[2], hdrOther)
	var doc struct {
		Recordings []struct {
			Recording  string
			Incomplete []string
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Recordings) != 2 || len(doc.Recordings[1].Incomplete) == 0 || !strings.Contains(doc.Recordings[1].Incomplete[0], hdrOther+" is part 2 and names") ||
		!strings.Contains(doc.Recordings[1].Incomplete[0], "foreign part") || len(doc.Recordings[0].Incomplete) != 0 {
		t.Errorf("foreign part: %+v", doc.Recordings)
	}
}

// recordReplay serves in (a capture) with --record to out and attaches n
// WebSocket subscribers at once, each reading its whole replay; it waits
// for the recording to be written.
func recordReplay(t *testing.T, in, out string, n int) {
	t.Helper()
	recordReplayWith(t, in, out, n, []string{"--no-delay"}, nil)
}

// findingSet is a multiset of "SESSION RULE" of a stream's findings.
type findingSet map[string]int

func (f findingSet) String() string {
	var keys []string
	for k, n := range f {
		keys = append(keys, fmt.Sprintf("%s×%d", k, n))
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}

// checkedRecording is what check --json says of one recording: its
// sessions and streams with their findings, and the counts per level.
type checkedRecording struct {
	Sessions []struct {
		Stream, Session string
		Messages        int
		Findings        []checkedFinding
	}
	Streams []struct {
		Stream   string
		Findings []checkedFinding
	}
	Counts map[string]int
}

// checkedFinding is a finding of check --json.
type checkedFinding struct {
	Rule, Level, Session string
	Index                int64
}

// checkOneRecording runs check --json on names, which must make one
// recording, and returns what it says of it.
func checkOneRecording(t *testing.T, names ...string) checkedRecording {
	t.Helper()
	_, out, stderr := replay(t, append([]string{"check", "--json", "--fail-on", "never"}, names...)...)
	var doc struct {
		Recordings []checkedRecording
		Total      struct{ Counts map[string]int }
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Recordings) != 1 {
		t.Fatalf("check %v: %v, %d recordings\n%s%s", names, err, len(doc.Recordings), out, stderr)
	}
	r := doc.Recordings[0]
	r.Counts = doc.Total.Counts
	return r
}

// checkByStream runs check --json on names and returns each stream's
// findings about sessions (the sess_ ones: the handshake pseudo-sessions
// depend on how each copy was subscribed), the counts of every finding per
// level, and per rule the findings as show marks them (a message's line
// names each rule once).
func checkByStream(t *testing.T, names ...string) (map[string]findingSet, map[string]int, map[string]int) {
	t.Helper()
	doc := checkOneRecording(t, names...)
	streams := map[string]findingSet{}
	rules := map[string]int{}
	marked := map[string]bool{}
	// Findings about a stream are no session's, but show marks them too.
	for _, st := range doc.Streams {
		for _, f := range st.Findings {
			if k := fmt.Sprint(f.Index, " ", f.Rule); f.Index < 0 || !marked[k] {
				marked[k] = true
				rules[f.Rule]++
			}
		}
	}
	for _, s := range doc.Sessions {
		for _, f := range s.Findings {
			if k := fmt.Sprint(f.Index, " ", f.Rule); f.Index < 0 || !marked[k] {
				marked[k] = true
				rules[f.Rule]++
			}
			if !strings.HasPrefix(s.Session, "sess_") {
				continue
			}
			if streams[s.Stream] == nil {
				streams[s.Stream] = findingSet{}
			}
			streams[s.Stream][s.Session+" "+f.Rule]++
		}
	}
	return streams, doc.Counts, rules
}

var showMark = regexp.MustCompile(`!! (MUST|SHOULD|INFO) (\S+)`)

// TestOneRecordingOneVerdict: the same traffic in every shape a recording
// takes gives every stream the same findings, and show, view's API and
// visualize agree with check on each shape.
func TestOneRecordingOneVerdict(t *testing.T) {
	srv := s3test.Start(t, "caps")
	srv.SetEnv(t)
	dir := t.TempDir()
	opts := sample.Options{Sessions: 6, Seed: 11, Violations: true}
	whole := filepath.Join(dir, "whole.aaep")
	recs := producerCapture(t, whole, opts, false)
	partsDir := filepath.Join(dir, "parts")
	if err := os.Mkdir(partsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	parts := recordingtest.WriteRotated(t, partsDir, "run", opts.Start0(), recs, []int{len(recs) / 4, len(recs) / 2, 3 * len(recs) / 4})
	upload(t, srv, "caps", "shape/", parts...)
	three := filepath.Join(dir, "three.aaep")
	recordReplay(t, whole, three, 3)
	once := filepath.Join(dir, "once.aaep")
	recordReplay(t, whole, once, 1)
	twice := filepath.Join(dir, "twice.aaep")
	recordReplay(t, once, twice, 1)

	want, _, _ := checkByStream(t, whole)
	if len(want) != 1 || len(want[""]) == 0 {
		t.Fatalf("the whole capture: findings %v, want one stream with some", want)
	}
	for _, shape := range []struct {
		name    string
		names   []string
		streams int
	}{
		{"one file", []string{whole}, 1},
		{"rotated parts, glob", []string{filepath.Join(partsDir, "run-*.aaep")}, 1},
		{"rotated parts, s3 prefix", []string{"s3://caps/shape/"}, 1},
		{"serve --record, three subscribers", []string{three}, 3},
		{"record of a replay of a replay", []string{twice}, 1},
	} {
		t.Run(shape.name, func(t *testing.T) {
			streams, counts, rules := checkByStream(t, shape.names...)
			if len(streams) != shape.streams {
				t.Errorf("check: %d streams, want %d", len(streams), shape.streams)
			}
			for name, got := range streams {
				if got.String() != want[""].String() {
					t.Errorf("check, stream %q:\n got %s\nwant %s", name, got, want[""])
				}
			}
			agreeWithCheck(t, shape.names, counts, rules)
		})
	}
}

// agreeWithCheck runs show, view's API and visualize on names and compares
// what they find with check's counts per level and per rule.
func agreeWithCheck(t *testing.T, names []string, counts, rules map[string]int) {
	t.Helper()
	// show marks exactly check's findings.
	if len(names) == 1 {
		code, out, stderr := replay(t, "show", names[0])
		if code != 0 {
			t.Fatalf("show: exit %d: %s", code, stderr)
		}
		shown := map[string]int{}
		for _, m := range showMark.FindAllStringSubmatch(out, -1) {
			shown[m[2]]++
		}
		if fmt.Sprint(shown) != fmt.Sprint(rules) {
			t.Errorf("show marks %v, check finds %v", shown, rules)
		}
	}
	// view's API counts what check counts.
	recs, err := recording.Open(context.Background(), names, recording.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := viewer.New(viewer.Options{Recording: recording.Join(recs)})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	for deadline := time.Now().Add(30 * time.Second); !v.CheckDone(); {
		if time.Now().After(deadline) {
			t.Fatal("the viewer's check did not finish")
		}
		time.Sleep(10 * time.Millisecond)
	}
	ts := httptest.NewServer(v)
	defer ts.Close()
	resp, err := http.Get(ts.URL + "/api/capture")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var capInfo struct{ Findings map[string]int }
	if err := json.Unmarshal(body, &capInfo); err != nil {
		t.Fatal(err)
	}
	if capInfo.Findings["must"] != counts["MUST"] || capInfo.Findings["should"] != counts["SHOULD"] || capInfo.Findings["info"] != counts["INFO"] {
		t.Errorf("view counts %v, check %v", capInfo.Findings, counts)
	}
	// visualize draws every finding check reports.
	dot := filepath.Join(t.TempDir(), "trace.dot")
	code, _, stderr := replay(t, append([]string{"visualize", "--format", "dot", "--max-sessions", "0", "-o", dot}, names...)...)
	total := counts["MUST"] + counts["SHOULD"] + counts["INFO"]
	want := fmt.Sprintf(", %d findings) to ", total)
	if total == 1 {
		want = ", 1 finding) to " // visualize says it in the singular
	}
	if code != 0 || !strings.Contains(stderr, want) {
		t.Errorf("visualize: exit %d, %s; want %d findings", code, stderr, total)
	}
}

// TestShowViewAndCheckAgreeOnTestdata: every capture in the repository's
// testdata gets from show (its marks), view's API (its counts) and
// visualize the findings check reports.
func TestShowViewAndCheckAgreeOnTestdata(t *testing.T) {
	t.Parallel() // reads the testdata, writes nothing
	var files []string
	err := filepath.WalkDir("../..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && p != "../..") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".aaep") && strings.Contains(filepath.ToSlash(p), "/testdata/") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 2 {
		t.Fatalf("found %d captures in the testdata directories: %v", len(files), files)
	}
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			_, counts, rules := checkByStream(t, f)
			if counts["MUST"]+counts["SHOULD"]+counts["INFO"] == 0 {
				t.Logf("%s: no findings", f)
			}
			agreeWithCheck(t, []string{f}, counts, rules)
		})
	}
}

// TestDamagedRecordingAmongOthers: a capture whose header is damaged does
// not stop check of the others: it is its own recording, INCOMPLETE, named,
// and the others are judged.
func TestDamagedRecordingAmongOthers(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "a-good.aaep")
	producerCapture(t, good, sample.Options{Sessions: 2, Seed: 4}, true)
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "b-bad.aaep")
	b[0] = '{' // the header's magic damaged
	if err := os.WriteFile(bad, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := replay(t, "check", dir)
	if code != cli.ExitUsage || !strings.Contains(out, "2 recordings checked:") || !strings.Contains(out, "INCOMPLETE "+bad) ||
		!strings.Contains(stderr, bad+": INCOMPLETE") || !strings.Contains(out, "=== "+good) {
		t.Errorf("check of a directory with a damaged capture: exit %d\n%s%s", code, out, stderr)
	}
	if code, out, _ := replay(t, "info", dir); code != cli.ExitUsage || !strings.Contains(out, "file:") {
		t.Errorf("info of the directory: exit %d\n%s", code, out)
	}
}

// viewAgrees opens names as view does and checks that view's API judges
// each recording of want as check does: /api/capture's findings and
// messages of each recording, and /api/sessions?recording=NAME its sessions
// (as many as /api/capture counts). Of one recording (no recordings
// listed), the capture's counts and all its sessions.
func viewAgrees(t *testing.T, name string, want []recRules) {
	t.Helper()
	get := checkedView(t, name)
	type recInfo struct {
		Name     string
		Findings map[string]int
		Sessions int
		Messages int64
	}
	var capInfo struct {
		Findings   map[string]int
		Recordings []recInfo
		Check      struct {
			Sessions int
			Messages int64
		}
	}
	get("/api/capture", &capInfo)
	one := len(want) == 1 && len(capInfo.Recordings) == 0
	if one {
		capInfo.Recordings = []recInfo{{Name: want[0].name, Findings: capInfo.Findings, Sessions: capInfo.Check.Sessions, Messages: capInfo.Check.Messages}}
	}
	if len(capInfo.Recordings) != len(want) {
		t.Fatalf("view: %d recordings, check %d", len(capInfo.Recordings), len(want))
	}
	total := map[string]int{}
	for i, w := range want {
		got := capInfo.Recordings[i]
		if got.Name != w.name {
			t.Errorf("view's recording %d is %q, check's %q", i+1, got.Name, w.name)
		}
		for _, l := range []string{"MUST", "SHOULD", "INFO"} {
			total[l] += w.counts[l]
			if got.Findings[strings.ToLower(l)] != w.counts[l] {
				t.Errorf("%s: view counts %v, check %v", w.name, got.Findings, w.counts)
			}
		}
		if got.Messages != w.messages || w.messages == 0 {
			t.Errorf("%s: view counts %d messages, check %d", w.name, got.Messages, w.messages)
		}
		var page struct {
			Sessions []struct{ ID string }
			Total    int
		}
		q := "/api/sessions?limit=500&recording=" + url.QueryEscape(w.name)
		if one {
			q = "/api/sessions?limit=500"
		}
		get(q, &page)
		if page.Total != got.Sessions || len(page.Sessions) != got.Sessions {
			t.Errorf("%s: /api/capture counts %d sessions, /api/sessions?recording lists %d of %d", w.name, got.Sessions, len(page.Sessions), page.Total)
		}
		var ids []string
		for _, s := range page.Sessions {
			if strings.HasPrefix(s.ID, "sess_") {
				ids = append(ids, s.ID)
			}
		}
		sort.Strings(ids)
		if len(ids) == 0 || fmt.Sprint(ids) != fmt.Sprint(w.sessions) {
			t.Errorf("%s: view's sessions %v, check's %v", w.name, ids, w.sessions)
		}
	}
	if capInfo.Findings["must"] != total["MUST"] || capInfo.Findings["should"] != total["SHOULD"] || capInfo.Findings["info"] != total["INFO"] {
		t.Errorf("view counts %v in all, check %v", capInfo.Findings, total)
	}
}

// TestOneRecordingSameIDsViewAgrees: a capture and the recording of its
// replay hold the same session ids. show, view and check judge each on its
// own: view lists each one's sessions (none merged with, none lost to, the
// other's), counts each one's findings and messages as check does, and
// agrees with check on each recording of a replay's three subscribers, each
// subscription's sessions its own.
func TestOneRecordingSameIDsViewAgrees(t *testing.T) {
	t.Parallel() // its recordings in a directory of its own, served on loopback
	dir := t.TempDir()
	pair := filepath.Join(dir, "pair")
	if err := os.Mkdir(pair, 0o755); err != nil {
		t.Fatal(err)
	}
	whole := filepath.Join(pair, "a-capture.aaep")
	producerCapture(t, whole, sample.Options{Sessions: 4, Seed: 17, Violations: true}, false)
	recordReplay(t, whole, filepath.Join(pair, "b-replay.aaep"), 1)
	glob := filepath.Join(pair, "*.aaep")
	byRec := checkRecordings(t, glob)
	if len(byRec) != 2 || fmt.Sprint(byRec[0].sessions) != fmt.Sprint(byRec[1].sessions) || len(byRec[0].sessions) != 4 {
		t.Fatalf("check --json: want 2 recordings of the same 4 sessions, got %+v", byRec)
	}
	showAgrees(t, glob, byRec)
	viewAgrees(t, glob, byRec)

	three := filepath.Join(dir, "three.aaep")
	recordReplay(t, whole, three, 3)
	byStream := checkRecordings(t, three)
	if len(byStream) != 1 || len(byStream[0].sessions) != 3*4 {
		t.Fatalf("check --json of three subscribers: want one recording of 3×4 sessions, got %+v", byStream)
	}
	viewAgrees(t, three, byStream)
}

// checkedView serves the viewer of the recording name (its parts or glob)
// on loopback once its check is done, until the test ends, and returns a
// function that GETs a path of its API and decodes the JSON answer.
func checkedView(t *testing.T, name string) func(path string, into any) {
	t.Helper()
	recs, err := recording.Open(context.Background(), []string{name}, recording.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := viewer.New(viewer.Options{Recording: recording.Join(recs)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	for deadline := time.Now().Add(30 * time.Second); !v.CheckDone(); {
		if time.Now().After(deadline) {
			t.Fatal("the viewer's check did not finish")
		}
		time.Sleep(10 * time.Millisecond)
	}
	ts := httptest.NewServer(v)
	t.Cleanup(ts.Close)
	return func(path string, into any) {
		t.Helper()
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %s: %.300s", path, resp.Status, body)
		}
		if err := json.Unmarshal(body, into); err != nil {
			t.Fatalf("%s: %v: %.300s", path, err, body)
		}
	}
}
