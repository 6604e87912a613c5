package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/capfile/capfiletest"
	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/payload"
)

// TestDedupeRecordingOfReconnectingProducer records, with the real
// aaep-capture, a producer that re-sends everything it sent before on each
// new connection; dedupe gives the recording without the re-sent events.
func TestDedupeRecordingOfReconnectingProducer(t *testing.T) {
	t.Parallel()
	at := time.Now().Add(-time.Minute)
	p := &tsProducer{batches: [][]string{
		tsSession("a", at),
		tsSession("b", at.Add(5*time.Second)),
		tsSession("c", at.Add(10*time.Second)),
	}}
	url := p.start(t)
	dir := t.TempDir()
	rec := filepath.Join(dir, "ts.aaep")
	// 10 + (10 + 10) + (20 + 10) events: three connections, 30 re-sent.
	runCapture(t, url, "-o", rec, "--max-events", "60", "-q")
	_, recs := capfiletest.ReadAll(t, rec)

	// What dedupe must leave: every record but a received event whose
	// source, event_id and bytes were seen before.
	type key struct {
		src     uint16
		id, raw string
	}
	seen := map[key]bool{}
	var want []capfile.Record
	for _, r := range recs {
		if r.Kind == capfile.KindReceived {
			f := &payload.Decode(r.Payload).Routing
			k := key{r.Origin, f.EventID, string(r.Payload)}
			if f.EventID != "" && seen[k] {
				continue
			}
			seen[k] = true
		}
		want = append(want, r)
	}
	if len(recs)-len(want) != 30 {
		t.Fatalf("the recording holds %d re-sent events, want 30", len(recs)-len(want))
	}

	out := filepath.Join(dir, "once.aaep")
	code, stdout, stderr := replay(t, "dedupe", rec, "-o", out)
	if code != 0 || !strings.Contains(stdout, "dropped 30 redelivered events") {
		t.Fatalf("dedupe: exit %d\n%s%s", code, stdout, stderr)
	}
	_, got := capfiletest.ReadAll(t, out)
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Kind != want[i].Kind || got[i].Time != want[i].Time || string(got[i].Payload) != string(want[i].Payload) {
			t.Fatalf("record %d differs: %+v, want %+v", i, got[i], want[i])
		}
	}
	// The deduplicated recording checks without redelivery findings.
	_, report, _ := replay(t, "check", "--all", out)
	if strings.Contains(report, "SEQ-EVENT-ID-REDELIVERED") || !strings.Contains(report, "PASS") {
		t.Errorf("check of the deduplicated recording:\n%s", report)
	}
}

func TestSplitAndTimeShiftVerbs(t *testing.T) {
	t.Parallel()
	whole := brokenCapture(t)
	dir := t.TempDir()
	prefix := filepath.Join(dir, "part.aaep")
	code, stdout, stderr := replay(t, "split", whole, "--records", "200", "-o", prefix)
	if code != 0 || !strings.Contains(stdout, "into 3 parts") {
		t.Fatalf("split: exit %d\n%s%s", code, stdout, stderr)
	}
	// The parts read as one stream give the whole capture's report.
	_, want, _ := replay(t, "check", "--json", whole)
	_, got, _ := replay(t, "check", "--json", filepath.Join(dir, "part-*.aaep"))
	if dropInput(t, got) != dropInput(t, want) {
		t.Error("check of the split parts differs from the whole's")
	}
	// Again without --force: refused, nothing changed.
	before, _ := os.ReadFile(filepath.Join(dir, "part-000001.aaep"))
	code, _, stderr = replay(t, "split", whole, "--records", "200", "-o", prefix)
	after, _ := os.ReadFile(filepath.Join(dir, "part-000001.aaep"))
	if code != cli.ExitUsage || !strings.Contains(stderr, "--force") || string(before) != string(after) {
		t.Errorf("split over existing parts: exit %d, %q", code, stderr)
	}
	for _, args := range [][]string{
		{"split", whole},
		{"split", whole, "--records", "5", "--by-session"},
		{"split", whole, "--records", "-5"},
		{"split"},
		{"dedupe", whole},
		{"merge", whole, whole + "x", "--time-shift", "+1s", "-o", filepath.Join(dir, "m.aaep")},
		{"cut", whole, "--time-shift", "yesterday", "-o", filepath.Join(dir, "c.aaep")},
	} {
		if code, _, stderr := replay(t, args...); code != cli.ExitUsage {
			t.Errorf("%q: exit %d, want 2 (%s)", args, code, stderr)
		}
	}
	// By session: one part per session.
	code, stdout, _ = replay(t, "split", whole, "--by-session", "-o", filepath.Join(dir, "s.aaep"))
	if code != 0 || strings.Count(stdout, "wrote ") != 40 {
		t.Errorf("split --by-session: exit %d, %d parts\n%s", code, strings.Count(stdout, "wrote "), stdout)
	}

	// --time-shift on merge aligns two machines' clocks.
	late := filepath.Join(dir, "late.aaep")
	if code, _, stderr := replay(t, "cut", whole, "--time-shift", "+1h", "-o", late); code != 0 {
		t.Fatal(stderr)
	}
	_, info, _ := replay(t, "info", "--json", late)
	if !strings.Contains(info, `"start": "2026-11-02T10:00:00Z"`) || !strings.Contains(info, `"time_shift": "+1h0m0s"`) {
		t.Errorf("cut --time-shift +1h: %s", info)
	}
	both := filepath.Join(dir, "both.aaep")
	if code, _, stderr := replay(t, "merge", whole, late, "--time-shift", "late.aaep=-1h", "--join-sources", "-o", both); code != 0 {
		t.Fatal(stderr)
	}
	h, recs := capfiletest.ReadAll(t, both)
	if !h.Start.Equal(time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)) || len(recs) != 2*540 || recs[0].Time != recs[1].Time {
		t.Errorf("merge of a capture with itself shifted back: start %v, %d records", h.Start, len(recs))
	}
}
