package capedit

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/msgfilter"
	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/timing"
)

func pos(t *testing.T, s string) timing.Position {
	t.Helper()
	p, err := timing.ParsePosition(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// absolute returns the records with their times made absolute (ns since the
// Unix epoch) so that captures with different starts compare.
func absolute(h capfile.Header, recs []capfile.Record) []capfile.Record {
	out := make([]capfile.Record, len(recs))
	for i, r := range recs {
		r.Time += h.Start.UnixNano()
		out[i] = r
	}
	return out
}

func TestCut(t *testing.T) {
	dir := t.TempDir()
	recs := sampleRecords()
	h := testHeader()
	src := writeCapture(t, dir, "src.aaep", h, recs)
	n := int64(len(recs))
	mid := recs[n/2].Time
	firstAt := func(t0 int64) int64 {
		for i, r := range recs {
			if r.Time >= t0 {
				return int64(i)
			}
		}
		return n
	}
	firstAfter := func(t0 int64) int64 { return firstAt(t0 + 1) }
	tests := []struct {
		name     string
		from, to string
		lo, hi   int64 // expected record range [lo, hi)
		shift    int64 // expected start shift
	}{
		{name: "whole", lo: 0, hi: n},
		{name: "records", from: "#10", to: "#30", lo: 10, hi: 31, shift: recs[10].Time},
		{name: "plain record numbers", from: "10", to: "30", lo: 10, hi: 31, shift: recs[10].Time},
		{name: "from record", from: "#40", lo: 40, hi: n, shift: recs[40].Time},
		{name: "to record", to: "#5", lo: 0, hi: 6},
		{name: "times", from: "3s", to: time.Duration(mid).String(), lo: firstAt(3e9), hi: firstAfter(mid), shift: 3e9},
		{name: "clock times", from: "0:03", to: "0:20.5", lo: firstAt(3e9), hi: firstAfter(20.5e9), shift: 3e9},
		{name: "mixed", from: "#20", to: "20s", lo: 20, hi: firstAfter(20e9), shift: recs[20].Time},
		{name: "one record", from: "#7", to: "#7", lo: 7, hi: 8, shift: recs[7].Time},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "cut.aaep")
			var opts CutOptions
			if tc.from != "" {
				opts.From = pos(t, tc.from)
			}
			if tc.to != "" {
				opts.To = pos(t, tc.to)
			}
			res, err := Cut(ctx, []string{src}, out, opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.Written != tc.hi-tc.lo || len(res.Warnings) != 0 {
				t.Errorf("result %+v, want %d written", res, tc.hi-tc.lo)
			}
			gh, got := readCapture(t, out)
			if tc.hi > tc.lo && !gh.Start.Equal(h.Start.Add(time.Duration(tc.shift))) {
				t.Errorf("start = %v, want start + %v", gh.Start, time.Duration(tc.shift))
			}
			sameRecords(t, absolute(gh, got), absolute(h, recs[tc.lo:tc.hi]))
			if gh.Meta["cut"] == "" || gh.Meta["derived_from"] != "src.aaep" || gh.Meta["note"] != "generated" {
				t.Errorf("meta = %v", gh.Meta)
			}
		})
	}
	// An empty selection is an error that says what the capture holds, and
	// writes nothing.
	gap := recs[10].Time + 1 // between two records
	for _, tc := range []struct{ name, from, to, want string }{
		{"backwards range", "#9", "#3", "ends before it starts"},
		{"backwards times", "10s", "5s", "ends before it starts"},
		{"past the end", "1h", "", "--from 1h0m0s is past the last record"},
		{"record past the end", "#100000", "", "--from #100000 is past the last record"},
		{"record just past the end", fmt.Sprint(n), "", "is past the last record"},
		{"between two records", fmt.Sprintf("%dns", gap), fmt.Sprintf("%dns", gap), "no record from"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "x.aaep")
			opts := CutOptions{From: pos(t, tc.from)}
			if tc.to != "" {
				opts.To = pos(t, tc.to)
			}
			_, err := Cut(ctx, []string{src}, out, opts)
			if !errors.Is(err, ErrEmptySelection) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want ErrEmptySelection and %q", err, tc.want)
			}
			holds := fmt.Sprintf("the capture holds %d records (#0 to #%d)", n, n-1)
			if !strings.Contains(err.Error(), holds) || !strings.Contains(err.Error(), firstSession(recs)) {
				t.Errorf("error %q does not say what the capture holds (%q, session %s)", err, holds, firstSession(recs))
			}
			if names := dirNames(t, dir); len(names) != 0 {
				t.Errorf("files left: %v", names)
			}
		})
	}
}

// TestCutAndMergeBack splits a capture in three and merges the pieces back.
func TestCutAndMergeBack(t *testing.T) {
	dir := t.TempDir()
	recs := sampleRecords()
	h := testHeader()
	src := writeCapture(t, dir, "src.aaep", h, recs)
	// Record numbers split as --to #16, --from #17; times as --to T, --from
	// T+1ns (no record of the sample falls on a whole second).
	for _, split := range [][4]string{{"#16", "#17", "#59", "#60"}, {"4s", "4000000001ns", "22.5s", "22500000001ns"}, {"#0", "#1", "#60", "#61"}} {
		for _, r := range recs {
			if r.Time == 4e9 || r.Time == 22.5e9 {
				t.Fatal("a record falls on a split time")
			}
		}
		a, b, c := filepath.Join(dir, "a.aaep"), filepath.Join(dir, "b.aaep"), filepath.Join(dir, "c.aaep")
		if _, err := Cut(ctx, []string{src}, a, CutOptions{To: pos(t, split[0])}); err != nil {
			t.Fatal(err)
		}
		if _, err := Cut(ctx, []string{src}, b, CutOptions{From: pos(t, split[1]), To: pos(t, split[2])}); err != nil {
			t.Fatal(err)
		}
		if _, err := Cut(ctx, []string{src}, c, CutOptions{From: pos(t, split[3])}); err != nil {
			t.Fatal(err)
		}
		whole := filepath.Join(dir, "whole.aaep")
		res, err := Merge(ctx, []string{a, b, c}, whole, MergeOptions{JoinSources: true})
		if err != nil {
			t.Fatal(err)
		}
		gh, got := readCapture(t, whole)
		if res.Written != int64(len(recs)) || !gh.Start.Equal(h.Start) || !equalJSON(gh.Origins, h.Origins) {
			t.Errorf("split %v: merged %d records, start %v, sources %+v", split, res.Written, gh.Start, gh.Origins)
		}
		sameRecords(t, got, recs)
	}
}

func TestFilter(t *testing.T) {
	dir := t.TempDir()
	recs := sampleRecords()
	src := writeCapture(t, dir, "src.aaep", testHeader(), recs)
	session := recs[1].Session
	tests := []struct {
		name string
		opts FilterOptions
	}{
		{"session", FilterOptions{Match: msgfilter.Filter{Sessions: []string{session}}}},
		{"type suffix", FilterOptions{Match: msgfilter.Filter{Types: []string{"tool.invoked", "state.changed"}}}},
		{"urgency", FilterOptions{Match: msgfilter.Filter{Urgencies: []string{"critical"}}}},
		{"messages only", FilterOptions{MessagesOnly: true}},
		{"session messages only", FilterOptions{Match: msgfilter.Filter{Sessions: []string{session}}, MessagesOnly: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var want []capfile.Record
			for _, r := range recs {
				if r.Kind == capfile.KindReceived || r.Kind == capfile.KindSent {
					if !tc.opts.Match.Match(&payload.Decode(r.Payload).Routing) {
						continue
					}
				} else if tc.opts.MessagesOnly {
					continue
				}
				want = append(want, r)
			}
			if len(want) == 0 || len(want) == len(recs) {
				t.Fatalf("filter keeps %d of %d records: not a useful case", len(want), len(recs))
			}
			out := filepath.Join(t.TempDir(), "f.aaep")
			res, err := Filter(ctx, []string{src}, out, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.Read != int64(len(recs)) || res.Written != int64(len(want)) {
				t.Errorf("result %+v, want %d written", res, len(want))
			}
			gh, got := readCapture(t, out)
			sameRecords(t, got, want)
			if !gh.Start.Equal(testStart) || gh.Meta["filter"] == "" {
				t.Errorf("header %+v", gh)
			}
		})
	}
}

func TestFilterSessionKeepsOnlyThatSession(t *testing.T) {
	dir := t.TempDir()
	recs := sampleRecords()
	src := writeCapture(t, dir, "src.aaep", testHeader(), recs)
	session := recs[1].Session
	out := filepath.Join(dir, "f.aaep")
	if _, err := Filter(ctx, []string{src}, out, FilterOptions{Match: msgfilter.Filter{Sessions: []string{session}}, MessagesOnly: true}); err != nil {
		t.Fatal(err)
	}
	_, got := readCapture(t, out)
	for i, r := range got {
		f := &payload.Decode(r.Payload).Routing
		if f.SessionKey() != session {
			t.Errorf("record %d has session %q, want %q", i, f.SessionKey(), session)
		}
	}
}

func TestMergeSourcesApart(t *testing.T) {
	dir := t.TempDir()
	ha := testHeader()
	hb := testHeader()
	hb.Start = ha.Start.Add(1500 * time.Millisecond)
	hb.Tool = "other/2"
	hb.Origins = []capfile.Origin{{ID: 0, Transport: "unix", Endpoint: "/run/agent.sock"}}
	ra := []capfile.Record{
		{Kind: capfile.KindReceived, Time: 0, Origin: 0, Payload: []byte(`{"n":"a0"}`)},
		{Kind: capfile.KindReceived, Time: 2e9, Origin: 1, Payload: []byte(`{"n":"a1"}`)},
		{Kind: capfile.KindReceived, Time: 3e9, Origin: 5, Payload: []byte(`{"n":"a2 unlisted"}`)},
	}
	rb := []capfile.Record{
		{Kind: capfile.KindReceived, Time: 0, Origin: 0, Payload: []byte(`{"n":"b0"}`)},
		{Kind: capfile.KindReceived, Time: 5e8, Origin: 0, Payload: []byte(`{"n":"b1"}`)},
		{Kind: capfile.KindSent, Time: 1.5e9, Origin: 1, Payload: []byte(`{"n":"b2 unlisted"}`)},
	}
	a := writeCapture(t, dir, "a.aaep", ha, ra)
	b := writeCapture(t, dir, "b.aaep", hb, rb)
	out := filepath.Join(dir, "m.aaep")
	res, err := Merge(ctx, []string{b, a}, out, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	gh, got := readCapture(t, out)
	if !gh.Start.Equal(ha.Start) || gh.Tool != "other/2, capedit-test/1" || gh.Meta["merged_from"] != "b.aaep, a.aaep" {
		t.Errorf("header = %+v", gh)
	}
	// b's sources keep ids 0 and 1 (unlisted); a's 0, 1 and 5 (unlisted) become 2, 3 and 5.
	wantSources := []capfile.Origin{
		{ID: 0, Transport: "unix", Endpoint: "/run/agent.sock"},
		{ID: 1, Transport: "unlisted", Endpoint: "b.aaep source 1"},
		{ID: 2, Transport: "websocket", Endpoint: "ws://127.0.0.1:8765/aaep/v1/ws", Subprotocol: "aaep.v1"},
		{ID: 3, Transport: "sse", Endpoint: "http://127.0.0.1:8766/aaep/v1/events"},
		{ID: 5, Transport: "unlisted", Endpoint: "a.aaep source 5"},
	}
	if !equalJSON(gh.Origins, wantSources) {
		t.Errorf("sources = %+v\nwant %+v", gh.Origins, wantSources)
	}
	want := []capfile.Record{
		{Kind: capfile.KindReceived, Time: 0, Origin: 2, Payload: []byte(`{"n":"a0"}`)},
		{Kind: capfile.KindReceived, Time: 1.5e9, Origin: 0, Payload: []byte(`{"n":"b0"}`)},
		{Kind: capfile.KindReceived, Time: 2e9, Origin: 0, Payload: []byte(`{"n":"b1"}`)},
		{Kind: capfile.KindReceived, Time: 2e9, Origin: 3, Payload: []byte(`{"n":"a1"}`)},
		{Kind: capfile.KindSent, Time: 3e9, Origin: 1, Payload: []byte(`{"n":"b2 unlisted"}`)},
		{Kind: capfile.KindReceived, Time: 3e9, Origin: 5, Payload: []byte(`{"n":"a2 unlisted"}`)},
	}
	sameRecords(t, got, want)
	if res.Read != 6 || res.Written != 6 {
		t.Errorf("result %+v", res)
	}
}

func TestMergeJoinSources(t *testing.T) {
	dir := t.TempDir()
	h := testHeader()
	a := writeCapture(t, dir, "a.aaep", h, []capfile.Record{{Kind: capfile.KindReceived, Time: 1, Origin: 1, Payload: []byte(`1`)}})
	h2 := testHeader()
	h2.Origins = append(h2.Origins[1:], capfile.Origin{ID: 4, Transport: "unix", Endpoint: "/s"})
	h2.Origins[0].ID = 0 // the SSE source under another id
	b := writeCapture(t, dir, "b.aaep", h2, []capfile.Record{{Kind: capfile.KindReceived, Time: 2, Origin: 0, Payload: []byte(`2`)}, {Kind: capfile.KindReceived, Time: 3, Origin: 4, Payload: []byte(`3`)}})
	out := filepath.Join(dir, "m.aaep")
	if _, err := Merge(ctx, []string{a, b}, out, MergeOptions{JoinSources: true}); err != nil {
		t.Fatal(err)
	}
	gh, got := readCapture(t, out)
	if len(gh.Origins) != 3 {
		t.Errorf("sources = %+v, want the two of a plus the unix one", gh.Origins)
	}
	if got[0].Origin != 1 || got[1].Origin != 1 || got[2].Origin != 4 {
		t.Errorf("sources of records = %d %d %d, want 1 1 4", got[0].Origin, got[1].Origin, got[2].Origin)
	}
}
