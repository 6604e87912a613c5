package show_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/capfile/capfiletest"
	"github.com/aaep-tools/aaepkit/internal/golden"
	"github.com/aaep-tools/aaepkit/internal/show"
	"github.com/aaep-tools/aaepkit/msgfilter"
	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/check"
	"github.com/aaep-tools/aaepkit/protocol/models"
	"github.com/aaep-tools/aaepkit/recording"
	"github.com/aaep-tools/aaepkit/timing"
)

const (
	demo       = "../../testdata/demo.aaep"
	goldenCapV = "../../capfile/testdata/golden-v1.aaep"
)

// TestRunGolden pins the line format. The checker is left out: its
// findings belong to package protocol's goldens (TestRunMarksViolations
// checks the marks).
func TestRunGolden(t *testing.T) {
	cases := []struct {
		name, in string
		opts     show.Options
	}{
		{"demo", demo, show.Options{NoCheck: true}},
		{"demo-relative-broken-session", demo, show.Options{NoCheck: true, Relative: true, Match: msgfilter.Filter{Sessions: []string{"sess_eb1273ca151c1c3d"}}}},
		{"demo-replies", demo, show.Options{NoCheck: true, Match: msgfilter.Filter{Types: []string{"reply"}}, MessagesOnly: true}},
		{"golden-v1", goldenCapV, show.Options{NoCheck: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			st, err := show.Run(context.Background(), open(t, c.in), &out, c.opts)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if st.Records == 0 || st.Shown == 0 {
				t.Fatalf("Run read %d records, showed %d", st.Records, st.Shown)
			}
			if got := int64(strings.Count(out.String(), "\n")); got < st.Shown {
				t.Errorf("%d lines for %d shown records", got, st.Shown)
			}
			golden.Check(t, filepath.Join("testdata", c.name+".golden"), out.Bytes())
		})
	}
}

func TestRunMarksViolations(t *testing.T) {
	var out bytes.Buffer
	st, err := show.Run(context.Background(), open(t, demo), &out, show.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The demo's broken sessions break SEQ-STATE-CHAIN, SEQ-TOOL-PAIR-PRECEDED
	// and EVT-URGENCY-CRITICAL, each on its own message.
	for _, rule := range []string{"SEQ-STATE-CHAIN", "SEQ-TOOL-PAIR-PRECEDED", "EVT-URGENCY-CRITICAL"} {
		found := false
		for _, line := range strings.Split(out.String(), "\n") {
			if strings.Contains(line, " !! ") && strings.Contains(line, "MUST "+rule) && strings.Contains(line, " recv sess_") {
				found = true
			}
		}
		if !found {
			t.Errorf("no line marked with %s", rule)
		}
	}
	if st.Marked == 0 || st.Marked > st.Shown {
		t.Errorf("Marked = %d of %d shown", st.Marked, st.Shown)
	}
	// Findings the checker makes later get lines of their own.
	out.Reset()
	if _, err := show.Run(context.Background(), open(t, goldenCapV), &out, show.Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "\n  !! INFO SEQ-SESSION-INCOMPLETE end-of-stream sess_2c91a7b4d23f1eb2: ") {
		t.Errorf("no end-of-stream finding line for the unfinished session:\n%s", out.String())
	}
	if !strings.Contains(out.String(), " #1 s0 recv sess_59234f69a47e3d3a aaep:agent.tool.invoked Drafting a reply to the support ticket. !! MUST ") {
		t.Error("record 1 of golden-v1 (a tool call before session.started) is not marked")
	}
	// The same run without the checker marks nothing.
	out.Reset()
	if _, err := show.Run(context.Background(), open(t, demo), &out, show.Options{NoCheck: true}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "!!") {
		t.Error("--no-check still marked lines")
	}
}

func TestSummary(t *testing.T) {
	cases := []struct{ payload, want string }{
		{`{"type":"x","summary_normal":"Hello\nworld"}`, "Hello world"},
		{`{"type":"x","payload":{"summary_normal":"nested"}}`, "nested"},
		{`{"type":"aaep:agent.state.changed","from_state":"idle","to_state":"thinking"}`, "idle→thinking"},
		{`{"type":"t","tool":"search","status":"success","duration_ms":12}`, "tool=search status=success"},
		{`{"type":"confirmation.reply","decision":"accept"}`, "decision=accept"},
		{`{"event":"agent_transition","run_id":"r1","agent_id":"a7"}`, "event=agent_transition agent_id=a7"},
		{`{"type":"t","chunk":"Hi \"you\""}`, `chunk="Hi \"you\""`},
		{`not json`, "(not JSON, 8 bytes)"},
		{`{"type":"t"}`, ""},
		{"\xef\xbb\xbf{\"summary_normal\":\"x\"}", "(not JSON, 25 bytes)"},
		{`{"summary_normal":"x"} y`, "(not JSON, 24 bytes)"},
		{"{\"type\":\"t\",\"chunk\":\"caf\xe9\xe9\"}", "chunk=\"caf\uFFFD\uFFFD\""},
		{`{"tool":"top","payload":{"tool":"inner","status":"ok"},"status":null}`, "tool=top"},
		{`{"tool":"a","tool":"b"}`, "tool=b"},
		{`{"summary_normal":"` + strings.Repeat("é", 300) + `"}`, strings.Repeat("é", show.MaxSummary-1) + "…"},
	}
	for _, c := range cases {
		if got := show.Summary(payload.Decode([]byte(c.payload))); got != c.want {
			t.Errorf("Summary(%s) = %q, want %q", c.payload, got, c.want)
		}
	}
}

// lockedBuffer is a bytes.Buffer safe for one writer and one reader.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func event(i int) []byte {
	return []byte(fmt.Sprintf(`{"type":"aaep:agent.progress.updated","session_id":"sess_f1","event_id":"evt_%d","summary_normal":"step %d"}`, i, i))
}

// mustFindings checks path as check does (every model, the whole capture)
// and returns its MUST findings as "#INDEX RULE" (records) or "SESSION RULE"
// (the end of the stream).
func mustFindings(t *testing.T, path string) map[string]int {
	t.Helper()
	want := map[string]int{}
	sink := protocol.Sink{Finding: func(f protocol.Finding) {
		if f.Level != protocol.Must {
			return
		}
		if f.Index >= 0 {
			want[fmt.Sprintf("#%d %s", f.Index, f.RuleID)]++
		} else {
			want[f.Session+" "+f.RuleID]++
		}
	}}
	// What check finds: the analysis driver over the recording.
	if _, err := check.Run(context.Background(), open(t, path), check.Config{Models: models.All}, sink, nil); err != nil {
		t.Fatal(err)
	}
	return want
}

// grepMust is `show | grep ' !! MUST '`, read back into "#INDEX RULE" and
// "SESSION RULE" as mustFindings says them.
func grepMust(out string) map[string]int {
	got := map[string]int{}
	for _, line := range strings.Split(out, "\n") {
		if !strings.Contains(line, " !! MUST ") {
			continue
		}
		f := strings.Fields(line)
		if f[0] == "!!" { // a finding of its own: !! LEVEL RULE #N|end-of-stream SESSION: ...
			if f[3] == "end-of-stream" {
				got[f[4][:len(f[4])-1]+" "+f[2]]++
			} else {
				got[f[3]+" "+f[2]]++
			}
			continue
		}
		for i := 0; i+2 < len(f); i++ { // a message's line: ... #N ... !! MUST RULE !! ...
			if f[i] == "!!" && f[i+1] == "MUST" {
				got[f[1]+" "+f[i+2]]++
			}
		}
	}
	return got
}

// TestGrepFindsEveryMust holds the README's recipe to what check reports:
// every MUST finding (its record and rule) is on a line that
// grep ' !! MUST ' prints, the late ones too.
func TestGrepFindsEveryMust(t *testing.T) {
	gap := withGap(t)
	for _, path := range []string{demo, goldenCapV, gap} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			want := mustFindings(t, path)
			if len(want) == 0 {
				t.Fatal("the capture has no MUST finding to look for")
			}
			var out bytes.Buffer
			if _, err := show.Run(context.Background(), open(t, path), &out, show.Options{}); err != nil {
				t.Fatal(err)
			}
			got := grepMust(out.String())
			for k := range want {
				if got[k] == 0 {
					t.Errorf("check reports MUST %s; grep ' !! MUST ' does not find it", k)
				}
			}
			for k := range got {
				if want[k] == 0 {
					t.Errorf("grep finds MUST %s, which check does not report", k)
				}
			}
		})
	}
}

// withGap writes the demo capture without its record 9 (a progress update
// numbered 5 in its session): the sequence gap is found only when the
// session ends, about record 10 (numbered 6).
func withGap(t *testing.T) string {
	t.Helper()
	hdr, recs := capfiletest.ReadAll(t, demo)
	path := filepath.Join(t.TempDir(), "gap.aaep")
	w, err := capfile.Create(path, hdr, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		if i == 9 {
			continue
		}
		if err := w.Append(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLateFindingAfterItsLine checks that a finding made later than its
// message is printed right after the message's line when reading a file,
// and where it was found when following.
func TestLateFindingAfterItsLine(t *testing.T) {
	path := withGap(t)
	var out bytes.Buffer
	if _, err := show.Run(context.Background(), open(t, path), &out, show.Options{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	at := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "  !! ") && strings.Contains(l, " #10 ") {
			at = i
			break
		}
	}
	if at < 1 {
		t.Fatalf("no late finding about #10:\n%s", out.String())
	}
	for at > 0 && strings.HasPrefix(lines[at-1], "  !! ") {
		at--
	}
	if !strings.Contains(lines[at-1], " #10 s0 ") {
		t.Errorf("the late finding about #10 follows %q, not record 10's line", lines[at-1])
	}
	// Following, nothing is held back: the finding is printed where it was made.
	out.Reset()
	if _, err := show.Run(context.Background(), open(t, path), &out, show.Options{Follow: true, Poll: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), " #10 s0 recv sess_d0fd4a2cb8d12071 aaep:agent.state.changed Waiting for your approval to pay.\n  !! ") {
		t.Error("following, the late finding was moved back to its record's line")
	}
}

// TestFollow writes a capture while show follows it: records appear as
// the writer flushes them, and show ends when the writer closes the file.
func TestFollow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "live.aaep")
	w, err := capfile.Create(path, capfile.Header{Start: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Tool: "test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	appendN := func(from, to int) {
		for i := from; i < to; i++ {
			if err := w.Append(&capfile.Record{Kind: capfile.KindReceived, Time: int64(i) * int64(time.Millisecond), Session: "sess_f1", Payload: event(i)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	appendN(0, 3)
	out := &lockedBuffer{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	var st show.Stats
	followed := open(t, path)
	go func() {
		var err error
		st, err = show.Run(ctx, followed, out, show.Options{Follow: true, Poll: 5 * time.Millisecond, NoCheck: true})
		done <- err
	}()
	waitFor := func(s string) {
		t.Helper()
		for !strings.Contains(out.String(), s) {
			select {
			case err := <-done:
				t.Fatalf("show ended (%v) before printing %q; output:\n%s", err, s, out.String())
			case <-ctx.Done():
				t.Fatalf("no %q within the time limit; output:\n%s", s, out.String())
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	waitFor("step 2")
	appendN(3, 7)
	waitFor("step 6")
	if strings.Contains(out.String(), "step 7") {
		t.Fatal("printed a record that was never written")
	}
	appendN(7, 9)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("show --follow did not end when the recorder closed the capture")
	}
	if st.Records != 9 || st.Shown != 9 {
		t.Errorf("Stats = %+v, want 9 records read and shown", st)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 9 {
		t.Fatalf("%d lines, want 9 (each record once):\n%s", len(lines), out.String())
	}
	for i, line := range lines {
		if !strings.Contains(line, fmt.Sprintf(" #%d s0 recv sess_f1 aaep:agent.progress.updated step %d", i, i)) {
			t.Errorf("line %d = %q", i, line)
		}
	}
}

// TestPaceKeys: a paced listing started paused prints nothing until a key
// steps it, one line per '.', and plays on after a space.
func TestPaceKeys(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		keys := make(chan byte)
		out := &lockedBuffer{}
		done := make(chan error, 1)
		go func() {
			_, err := show.Run(t.Context(), open(t, demo), out, show.Options{Pace: true, Paused: true, Keys: keys, NoCheck: true, Timing: timing.Config{Speed: 10}})
			done <- err
		}()
		lines := func() int { return strings.Count(out.String(), "\n") }
		time.Sleep(time.Minute)
		synctest.Wait()
		if n := lines(); n != 0 {
			t.Fatalf("paused listing printed %d lines", n)
		}
		for want := 1; want <= 3; want++ {
			keys <- '.'
			synctest.Wait()
			if n := lines(); n != want {
				t.Fatalf("after %d steps: %d lines", want, n)
			}
		}
		keys <- ' '
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if n := lines(); n < 100 {
			t.Fatalf("after play: %d lines, want the whole capture", n)
		}
	})
}

// BenchmarkPace measures how closely show --pace keeps the recorded times:
// the demo capture at --speed 20, lateness of each line against its due
// time (first line's print time plus its scaled offset).
func BenchmarkPace(b *testing.B) {
	for b.Loop() {
		tw := &timedWriter{}
		if _, err := show.Run(context.Background(), open(b, demo), tw, show.Options{Pace: true, NoCheck: true, Relative: true, Timing: timing.Config{Speed: 20}}); err != nil {
			b.Fatal(err)
		}
		lat := tw.lateness(20)
		b.ReportMetric(float64(lat.P99.Microseconds()), "p99-late-µs")
		b.ReportMetric(float64(lat.Max.Microseconds()), "max-late-µs")
		b.ReportMetric(float64(lat.Drift.Microseconds()), "drift-µs")
	}
}

type timedWriter struct {
	at    []time.Time
	lines []string
}

func (w *timedWriter) Write(p []byte) (int, error) {
	w.at = append(w.at, time.Now())
	w.lines = append(w.lines, string(p))
	return len(p), nil
}

// lateness compares each line's print time with its due time, read from the
// relative offset that starts the line.
func (w *timedWriter) lateness(speed float64) timing.Summary {
	var lat timing.Lateness
	var first time.Duration
	for i, line := range w.lines {
		field, _, _ := strings.Cut(strings.TrimPrefix(line, "+"), " ")
		off, err := time.ParseDuration(field)
		if err != nil {
			continue
		}
		if i == 0 {
			first = off
		}
		due := w.at[0].Add(time.Duration(float64(off-first) / speed))
		lat.Observe(w.at[i].Sub(due))
	}
	return lat.Summary()
}

// open opens the capture at path as a recording.
func open(t testing.TB, path string) *recording.Recording {
	t.Helper()
	recs, err := recording.Open(context.Background(), []string{path}, recording.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return recording.Join(recs)
}
