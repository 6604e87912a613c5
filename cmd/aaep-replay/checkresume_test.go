package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/sample"
	"github.com/aaep-tools/aaepkit/objstore/s3test"
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/check"
	"github.com/aaep-tools/aaepkit/protocol/models"
	"github.com/aaep-tools/aaepkit/recording"
)

// resumeRecording writes a rotated recording of n parts whose sessions
// (interleaved, some breaking the protocol, with replies and a reconnect
// half-way) span the parts' boundaries, and returns the parts' paths and
// each part's number of records.
func resumeRecording(t *testing.T, dir string, n int) ([]string, []int) {
	t.Helper()
	recs := []capfile.Record{{Kind: capfile.KindConn, Payload: []byte(`{"event":"connected"}`)}}
	msgs := sample.Stream(sample.Options{Sessions: 9, Seed: 7, Violations: true})
	for i, m := range msgs {
		kind := capfile.KindReceived
		if m.FromSubscriber {
			kind = capfile.KindSent
		}
		if i == len(msgs)/2 {
			recs = append(recs,
				capfile.Record{Kind: capfile.KindConn, Time: int64(m.Offset), Payload: []byte(`{"event":"disconnected"}`)},
				capfile.Record{Kind: capfile.KindConn, Time: int64(m.Offset), Payload: []byte(`{"event":"connected"}`)})
		}
		recs = append(recs, capfile.Record{Kind: kind, Time: int64(m.Offset), Session: m.Session, Payload: m.JSON})
	}
	var paths []string
	var counts []int
	for k := range n {
		from, to := k*len(recs)/n, (k+1)*len(recs)/n
		name := fmt.Sprintf("rec-%d.aaep", k+1)
		prev := ""
		if k > 0 {
			prev = fmt.Sprintf("rec-%d.aaep", k)
		}
		rotatedPart(t, dir, name, k+1, prev, recs[from:to])
		paths = append(paths, filepath.Join(dir, name))
		counts = append(counts, to-from)
	}
	return paths, counts
}

// findingKey is what a finding says, as the JSON report writes it.
func findingKey(proto, session, rule, level string, index, offset int64, msg string) string {
	return fmt.Sprintf("%s|%s|%s|%s|%d|%d|%s", proto, session, rule, level, index, offset, msg)
}

// emitted checks paths (one recording) through the driver and returns the
// findings reported while its records were read, and those reported at its
// end (the checkers' findings about what is left open).
func emitted(t *testing.T, paths []string, records int) (reading, atEnd []string) {
	t.Helper()
	ctx := context.Background()
	recs, err := recording.Open(ctx, paths, recording.Options{})
	if err != nil || len(recs) != 1 {
		t.Fatalf("open %v: %d recordings, %v", paths, len(recs), err)
	}
	ended := false
	seen := func(index int64) {
		if index == int64(records)-1 {
			ended = true
		}
	}
	sink := protocol.Sink{Finding: func(f protocol.Finding) {
		k := findingKey(f.Protocol, f.Session, f.RuleID, f.Level.String(), f.Index, int64(f.Offset), f.Message)
		if ended {
			atEnd = append(atEnd, k)
		} else {
			reading = append(reading, k)
		}
	}}
	obs := &check.Observer{
		Message: func(_ string, m *protocol.Message) { seen(m.Index) },
		Conn:    func(_ string, c *protocol.Conn) { seen(c.Index) },
	}
	if _, err := check.Run(ctx, recs[0], check.Config{Models: models.All}, sink, obs); err != nil {
		t.Fatal(err)
	}
	if !ended {
		t.Fatalf("%v: the last record (%d) was never seen", paths, records-1)
	}
	return reading, atEnd
}

type jsonSession struct {
	Protocol string `json:"protocol"`
	Session  string `json:"session"`
	Messages int    `json:"messages"`
	First    int64  `json:"first_offset_ns"`
	Last     int64  `json:"last_offset_ns"`
	State    string `json:"state"`
	Complete bool   `json:"complete"`
	Findings []struct {
		Protocol string `json:"protocol"`
		Session  string `json:"session"`
		Rule     string `json:"rule"`
		Level    string `json:"level"`
		Index    int64  `json:"index"`
		Offset   int64  `json:"offset_ns"`
		Message  string `json:"message"`
	} `json:"findings"`
}

// reportFindings reads a check's JSON report of one recording: its
// findings and its sessions (findings left out).
func reportFindings(t *testing.T, out string) ([]string, []jsonSession) {
	t.Helper()
	var doc struct {
		Recordings []struct {
			Sessions []jsonSession `json:"sessions"`
			// Findings about the stream, of no session.
			Streams []jsonSession `json:"streams"`
		} `json:"recordings"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Recordings) != 1 {
		t.Fatalf("report (%v): %s", err, out)
	}
	var keys []string
	var sessions []jsonSession
	for _, s := range doc.Recordings[0].Sessions {
		for _, f := range s.Findings {
			keys = append(keys, findingKey(f.Protocol, f.Session, f.Rule, f.Level, f.Index, f.Offset, f.Message))
		}
		s.Findings = nil
		sessions = append(sessions, s)
	}
	for _, st := range doc.Recordings[0].Streams {
		for _, f := range st.Findings {
			keys = append(keys, findingKey(f.Protocol, f.Session, f.Rule, f.Level, f.Index, f.Offset, f.Message))
		}
	}
	return keys, sessions
}

// minus returns the multiset a without b (each of b's items once).
func minus(a, b []string) []string {
	left := map[string]int{}
	for _, k := range b {
		left[k]++
	}
	var out []string
	for _, k := range a {
		if left[k] > 0 {
			left[k]--
			continue
		}
		out = append(out, k)
	}
	return out
}

// check --state goes on where the last run ended: for every boundary k of
// a rotated recording in a bucket, a run of parts 1..k and a run after
// parts k+1..n were added report between them what one check of the whole
// recording reports; the second reads none of the first k parts, and its
// sessions that end after the boundary are summed up as the full check
// sums them up. What must differ: the first run's findings at its end
// about what was still open (the recording ended there, as far as it
// knew), and the findings of a session that spans the boundary, which are
// split between the two reports.
func TestCheckStateGoesOn(t *testing.T) {
	srv := s3test.Start(t, "caps")
	srv.SetEnv(t)
	dir := t.TempDir()
	const n = 5
	paths, counts := resumeRecording(t, dir, n)
	total := 0
	for _, c := range counts {
		total += c
	}
	reading, atEnd := emitted(t, paths, total)
	full := append(append([]string(nil), reading...), atEnd...)
	if len(full) == 0 {
		t.Fatal("the recording has no findings to compare")
	}
	_, fullOut, errs := replay(t, "check", "--json", "--fail-on", "never", "--max-findings", "100000", filepath.Join(dir, "rec-*.aaep"))
	fullKeys, fullSessions := reportFindings(t, fullOut)
	slices.Sort(fullKeys)
	if want := slices.Sorted(slices.Values(full)); !slices.Equal(fullKeys, want) {
		t.Fatalf("the driver's findings differ from check's (%s):\n%s\n----\n%s", errs, strings.Join(want, "\n"), strings.Join(fullKeys, "\n"))
	}
	bySession := map[string]jsonSession{}
	for _, s := range fullSessions {
		bySession[s.Protocol+"|"+s.Session] = s
	}

	records := 0
	for k := 1; k < n; k++ {
		records += counts[k-1]
		t.Run(fmt.Sprintf("boundary after part %d", k), func(t *testing.T) {
			prefix := fmt.Sprintf("k%d/", k)
			state := fmt.Sprintf("s3://caps/state/k%d.state", k)
			put := func(i int) {
				t.Helper()
				b, err := os.ReadFile(paths[i])
				if err != nil {
					t.Fatal(err)
				}
				if err := srv.Put("caps", prefix+filepath.Base(paths[i]), b); err != nil {
					t.Fatal(err)
				}
			}
			args := []string{"check", "--json", "--fail-on", "never", "--max-findings", "100000", "--state", state, "s3://caps/" + prefix}
			for i := range k {
				put(i)
			}
			code, out1, errs := replay(t, args...)
			if code != 0 {
				t.Fatalf("run of parts 1..%d: exit %d: %s", k, code, errs)
			}
			first, _ := reportFindings(t, out1)
			before, _ := emitted(t, paths[:k], records)
			if extra := minus(before, first); len(extra) > 0 {
				t.Errorf("the first run does not report what it found reading:\n%s", strings.Join(extra, "\n"))
			}
			for i := k; i < n; i++ {
				put(i)
			}
			from := len(srv.Requests())
			code, out2, errs := replay(t, args...)
			if code != 0 {
				t.Fatalf("run after parts %d..%d: exit %d: %s", k+1, n, code, errs)
			}
			if !strings.Contains(errs, "1 of 1 recordings go on where the last check ended") {
				t.Errorf("the second run did not go on: %s", errs)
			}
			reads := objectReads(srv, "caps", from)
			for i, p := range paths {
				key := prefix + filepath.Base(p)
				if got := reads[key]; (i < k) != (got == 0) {
					t.Errorf("the second run fetched %s %d times (parts 1..%d were checked before)", key, got, k)
				}
			}
			second, sessions := reportFindings(t, out2)
			slices.Sort(second)
			want := minus(full, before)
			slices.Sort(want)
			if !slices.Equal(second, want) {
				t.Errorf("the second run's findings are not the full check's after part %d:\n got:\n%s\nwant:\n%s", k, strings.Join(second, "\n"), strings.Join(want, "\n"))
			}
			for _, s := range sessions {
				if f, ok := bySession[s.Protocol+"|"+s.Session]; !ok || fmt.Sprintf("%+v", f) != fmt.Sprintf("%+v", s) {
					t.Errorf("session %s summed up as %+v, the full check: %+v", s.Session, s, f)
				}
			}
		})
	}

	// One part at a time, as a live fleet's checks go: run j goes on from
	// run j-1's snapshot (itself restored from run j-2's, ...) and
	// reports what reading part j found, and what is open at its end.
	t.Run("one part at a time", func(t *testing.T) {
		const prefix, state = "each/", "s3://caps/state/each.state"
		var before []string
		records := 0
		for j := 1; j <= n; j++ {
			b, err := os.ReadFile(paths[j-1])
			if err != nil {
				t.Fatal(err)
			}
			if err := srv.Put("caps", prefix+filepath.Base(paths[j-1]), b); err != nil {
				t.Fatal(err)
			}
			records += counts[j-1]
			code, out, errs := replay(t, "check", "--json", "--fail-on", "never", "--max-findings", "100000", "--state", state, "s3://caps/"+prefix)
			if code != 0 {
				t.Fatalf("run %d: exit %d: %s", j, code, errs)
			}
			if j > 1 && !strings.Contains(errs, "1 of 1 recordings go on where the last check ended") {
				t.Errorf("run %d did not go on: %s", j, errs)
			}
			reading, atEnd := emitted(t, paths[:j], records)
			want := append(minus(reading, before), atEnd...)
			slices.Sort(want)
			got, _ := reportFindings(t, out)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("run %d's findings:\n got:\n%s\nwant:\n%s", j, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			before = reading
		}
	})
}
