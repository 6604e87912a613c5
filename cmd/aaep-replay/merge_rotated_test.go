package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/sample"
	"github.com/aaep-tools/aaepkit/recording"
	"github.com/aaep-tools/aaepkit/recording/recordingtest"
)

// checkSummary runs check --json on names and returns its sessions (stream,
// id and message count of each, sorted), its findings ("SESSION LEVEL
// RULE @INDEX", sorted, the stream's findings among them) and its counts
// per level.
func checkSummary(t *testing.T, names ...string) (sessions, findings []string, counts map[string]int) {
	t.Helper()
	doc := checkOneRecording(t, names...)
	for _, s := range doc.Sessions {
		sessions = append(sessions, fmt.Sprintf("%s/%s %d", s.Stream, s.Session, s.Messages))
		for _, f := range s.Findings {
			findings = append(findings, fmt.Sprintf("%s %s %s @%d", s.Session, f.Level, f.Rule, f.Index))
		}
	}
	for _, st := range doc.Streams {
		for _, f := range st.Findings {
			findings = append(findings, fmt.Sprintf("stream %q: %s %s %s @%d", st.Stream, f.Session, f.Level, f.Rule, f.Index))
		}
	}
	sort.Strings(sessions)
	sort.Strings(findings)
	return sessions, findings, doc.Counts
}

// TestMergeRotatedParts: merge of one recording's rotated parts, named by a
// glob without --join-sources, writes that recording's one stream: a check
// of the merge finds what a check of the parts finds, session for session
// (before, each part was a source of its own: sessions running across parts
// were split, with false SEQ-SESSION-ID-REUSE and findings counted twice).
// A part merged beside another recording keeps the recording's stream too.
func TestMergeRotatedParts(t *testing.T) {
	dir := t.TempDir()
	opts := sample.Options{Sessions: 8, Seed: 34, Violations: true}
	recs := producerCapture(t, filepath.Join(dir, "whole.aaep"), opts, true)
	rot := filepath.Join(dir, "rot")
	if err := os.Mkdir(rot, 0o755); err != nil {
		t.Fatal(err)
	}
	n := len(recs)
	parts := recordingtest.WriteRotated(t, rot, "r", opts.Start0(), recs, []int{n / 5, 2 * n / 5, 3 * n / 5, 4 * n / 5})
	if len(parts) != 5 {
		t.Fatalf("%d parts", len(parts))
	}
	glob := filepath.Join(rot, "r-*.aaep")
	wantSess, wantFind, wantCounts := checkSummary(t, glob)
	if len(wantSess) < 8 || len(wantFind) == 0 {
		t.Fatalf("check of the parts: sessions %v, findings %v; want 8 sessions and some findings", wantSess, wantFind)
	}
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"glob", []string{glob}},
		{"parts named out of order", []string{parts[3], parts[0], parts[4], parts[2], parts[1]}},
		{"join-sources", []string{"--join-sources", glob}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := filepath.Join(t.TempDir(), "m.aaep")
			if code, _, stderr := replay(t, append(append([]string{"merge"}, tt.args...), "-o", m)...); code != 0 {
				t.Fatalf("merge: exit %d: %s", code, stderr)
			}
			r, err := capfile.Open(m)
			if err != nil {
				t.Fatal(err)
			}
			h := r.Header()
			r.Close()
			if h.Meta[recording.MetaPart] != "" || h.Meta[recording.MetaPrevious] != "" {
				t.Errorf("the merge's header says it is a rotated part: %v", h.Meta)
			}
			sess, find, counts := checkSummary(t, m)
			if strings.Join(sess, "\n") != strings.Join(wantSess, "\n") {
				t.Errorf("sessions of the merge:\n%s\nwant (check of the parts):\n%s", strings.Join(sess, "\n"), strings.Join(wantSess, "\n"))
			}
			if strings.Join(find, "\n") != strings.Join(wantFind, "\n") {
				t.Errorf("findings of the merge:\n%s\nwant (check of the parts):\n%s", strings.Join(find, "\n"), strings.Join(wantFind, "\n"))
			}
			if fmt.Sprint(counts) != fmt.Sprint(wantCounts) {
				t.Errorf("counts of the merge %v, of the parts %v", counts, wantCounts)
			}
		})
	}
	// Beside another recording (another producer's capture), the parts
	// are still their recording's one stream: its sessions and their
	// findings are the same (the record numbers differ, interleaved).
	t.Run("beside another recording", func(t *testing.T) {
		other := filepath.Join(dir, "other.aaep")
		producerCapture(t, other, sample.Options{Sessions: 3, Seed: 35}, true)
		m := filepath.Join(t.TempDir(), "m.aaep")
		if code, _, stderr := replay(t, "merge", glob, other, "-o", m); code != 0 {
			t.Fatalf("merge: exit %d: %s", code, stderr)
		}
		sess, find, _ := checkSummary(t, m)
		got := map[string]bool{}
		for _, s := range sess {
			got[s] = true
		}
		for _, s := range wantSess {
			if !got[s] {
				t.Errorf("the merge lacks session %s of the parts:\n%s", s, strings.Join(sess, "\n"))
			}
		}
		noIndex := func(fs []string, keep map[string]bool) []string {
			var out []string
			for _, f := range fs {
				if keep[strings.Fields(f)[0]] {
					out = append(out, f[:strings.LastIndex(f, " @")])
				}
			}
			sort.Strings(out)
			return out
		}
		ours := map[string]bool{}
		for _, s := range wantSess {
			ours[strings.Fields(strings.TrimPrefix(s, "/"))[0]] = true
		}
		if g, w := noIndex(find, ours), noIndex(wantFind, ours); strings.Join(g, "\n") != strings.Join(w, "\n") {
			t.Errorf("findings of the parts' sessions in the merge:\n%s\nwant:\n%s", strings.Join(g, "\n"), strings.Join(w, "\n"))
		}
	})
	// One recording has one clock: its parts are shifted alike or not at all.
	m := filepath.Join(dir, "m.aaep")
	code, _, stderr := replay(t, "merge", glob, "--time-shift", "r-000001.aaep=+1h", "--time-shift", "r-000003.aaep=-1h", "-o", m)
	if code != cli.ExitUsage || !strings.Contains(stderr, "r-000003.aaep are parts of one recording") {
		t.Errorf("parts shifted apart: exit %d, %s; want %d naming the parts", code, stderr, cli.ExitUsage)
	}
	if _, err := os.Stat(m); !os.IsNotExist(err) {
		t.Errorf("parts shifted apart: %v, want no output", err)
	}
}

// TestMergeRealRotatedRecording: the real aaep-capture records, rotating
// every second, a producer that drops the connection twice and re-sends what it
// sent (§8.2.4); merge of the parts (a glob, no --join-sources) is checked
// as the parts are: the same sessions and the same findings, the
// redeliveries about the stream among them.
func TestMergeRealRotatedRecording(t *testing.T) {
	at := time.Now().Add(-time.Minute)
	p := &tsProducer{batches: [][]string{
		append(tsSession("a", at), tsConfirmSession("b", at.Add(2*time.Second))...),
		append(tsSession("c", at.Add(4*time.Second)), tsSession("d", at.Add(6*time.Second))...),
		tsConfirmSession("e", at.Add(8*time.Second)),
	}, gap: 1100 * time.Millisecond} // a new part for each connection's new events
	url := p.start(t)
	dir := t.TempDir()
	// 22 + (22 + 20) + (42 + 12) events over three connections.
	runCapture(t, url, "-o", filepath.Join(dir, "r.aaep"), "--rotate-every", "1s", "--max-events", "118", "-q")
	parts, err := filepath.Glob(filepath.Join(dir, "r-*.aaep"))
	if err != nil || len(parts) < 3 {
		t.Fatalf("%d parts (%v), want several", len(parts), err)
	}
	glob := filepath.Join(dir, "r-*.aaep")
	wantSess, wantFind, wantCounts := checkSummary(t, glob)
	if len(wantSess) != 5 || !strings.Contains(strings.Join(wantFind, "\n"), "SEQ-EVENT-ID-REDELIVERED") {
		t.Fatalf("check of the parts: sessions %v, findings %v; want 5 sessions and the redeliveries", wantSess, wantFind)
	}
	m := filepath.Join(t.TempDir(), "m.aaep")
	if code, _, stderr := replay(t, "merge", glob, "-o", m); code != 0 {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	sess, find, counts := checkSummary(t, m)
	if strings.Join(sess, "\n") != strings.Join(wantSess, "\n") || strings.Join(find, "\n") != strings.Join(wantFind, "\n") || fmt.Sprint(counts) != fmt.Sprint(wantCounts) {
		t.Errorf("check of the merge of %d parts:\n%s\n%s\n%v\nwant (check of the parts):\n%s\n%s\n%v", len(parts),
			strings.Join(sess, "\n"), strings.Join(find, "\n"), counts, strings.Join(wantSess, "\n"), strings.Join(wantFind, "\n"), wantCounts)
	}
}
