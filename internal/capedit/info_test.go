package capedit

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	goldenfile "github.com/aaep-tools/aaepkit/internal/golden"
)

func TestInfo(t *testing.T) {
	dir := t.TempDir()
	recs := sampleRecords()
	src := writeCapture(t, dir, "src.aaep", testHeader(), recs)
	s, err := Info(ctx, src, InfoOptions{Speed: 2})
	if err != nil {
		t.Fatal(err)
	}
	var kinds = map[string]int64{}
	firstRecv, lastRecv := int64(-1), int64(0)
	sessions := map[string]bool{}
	for _, r := range recs {
		kinds[r.Kind.String()]++
		if r.Kind == capfile.KindReceived {
			if firstRecv < 0 {
				firstRecv = r.Time
			}
			lastRecv = r.Time
		}
		if r.Session != "" {
			sessions[r.Session] = true
		}
	}
	if s.Status != "clean" || s.Problem != "" || s.Records != int64(len(recs)) || s.Version != capfile.Version || s.Tool != "capedit-test/1" {
		t.Errorf("status %q %q, records %d, version %d, tool %q", s.Status, s.Problem, s.Records, s.Version, s.Tool)
	}
	if !equalJSON(s.Kinds, kinds) {
		t.Errorf("kinds = %v, want %v", s.Kinds, kinds)
	}
	if s.Duration != time.Duration(recs[len(recs)-1].Time) || !s.End.Equal(testStart.Add(s.Duration)) {
		t.Errorf("duration %v, end %v", s.Duration, s.End)
	}
	if len(s.Sessions) != len(sessions) {
		t.Errorf("%d sessions, want %d", len(s.Sessions), len(sessions))
	}
	if s.Connection.Reconnects != 1 || s.Connection.Events["connected"] != 2 || s.Connection.Events["disconnected"] != 1 || s.Connection.Events["closed"] != 1 {
		t.Errorf("connection = %+v", s.Connection)
	}
	if s.Gaps.Count != 1 || len(s.Gaps.Longest) != 1 || s.Gaps.Longest[0].Length < 15*time.Second {
		t.Errorf("gaps = %+v, want the one 15 s silence", s.Gaps)
	}
	if s.Invalid.JSON != 1 || s.Invalid.UTF8 != 1 {
		t.Errorf("invalid = %+v", s.Invalid)
	}
	if len(s.Origins) != 2 || s.Origins[0].Records+s.Origins[1].Records != int64(len(recs)) || !s.Origins[1].Listed {
		t.Errorf("sources = %+v", s.Origins)
	}
	// A replay starts with the first received message.
	if want := time.Duration(lastRecv-firstRecv) / 2; s.Replay.Duration != want || s.Replay.Speed != 2 {
		t.Errorf("replay = %+v, want %v at speed 2", s.Replay, want)
	}
	if s.Size.File == 0 || s.Size.Records <= s.Size.Payloads || s.Size.Frames < 3 || s.Size.Ratio <= 1 {
		t.Errorf("size = %+v", s.Size)
	}
	var typed int64
	for _, tc := range s.Types {
		typed += tc.Count
	}
	if typed != kinds["received"]+kinds["sent"] {
		t.Errorf("types count %d messages, want %d", typed, kinds["received"]+kinds["sent"])
	}
	for i := 1; i < len(s.Types); i++ {
		if s.Types[i].Count > s.Types[i-1].Count {
			t.Errorf("types not sorted by count: %v", s.Types)
		}
	}

	idle, err := Info(ctx, src, InfoOptions{MaxIdle: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if full := time.Duration(lastRecv - firstRecv); idle.Replay.Duration > full-14*time.Second {
		t.Errorf("replay with a 1 s idle cap takes %v, want at least 14 s less than %v", idle.Replay.Duration, full)
	}

	// Sizes depend on the compressor; they are checked above, not in the golden files.
	s.File = "src.aaep"
	s.Size = SizeSummary{File: 10000, Records: 30000, Payloads: 28000, Frames: 7, Ratio: 3}
	var text bytes.Buffer
	if err := s.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	golden(t, "info.golden", text.Bytes())
	js, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "info.json.golden", append(js, '\n'))
}

func TestInfoEmptyAndBadOptions(t *testing.T) {
	dir := t.TempDir()
	src := writeCapture(t, dir, "empty.aaep", testHeader(), nil)
	s, err := Info(ctx, src, InfoOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Records != 0 || s.Duration != 0 || s.Status != "clean" || s.Replay.Duration != 0 {
		t.Errorf("summary of an empty capture = %+v", s)
	}
	if _, err := Info(ctx, src, InfoOptions{Speed: 5000}); err == nil {
		t.Error("speed 5000 accepted")
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name), got)
}
