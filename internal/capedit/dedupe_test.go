package capedit

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
)

// TestDedupeReconnect: a producer re-sends its recent events to a
// reconnecting subscriber; dedupe gives the capture without them.
func TestDedupeReconnect(t *testing.T) {
	ev := func(n int, extra string) []byte {
		return []byte(fmt.Sprintf(`{"type":"aaep:agent.progress.updated","event_id":"evt_%d","session_id":"s1"%s}`, n, extra))
	}
	at := func(ms int) int64 { return int64(time.Duration(ms) * time.Millisecond) }
	var all, want []capfile.Record
	add := func(r capfile.Record, duplicate bool) {
		all = append(all, r)
		if !duplicate {
			want = append(want, r)
		}
	}
	add(capfile.Record{Kind: capfile.KindConn, Time: 0, Payload: []byte(`{"event":"connected"}`)}, false)
	for i := 1; i <= 5; i++ {
		add(capfile.Record{Kind: capfile.KindReceived, Time: at(i * 100), Session: "s1", Payload: ev(i, "")}, false)
	}
	add(capfile.Record{Kind: capfile.KindConn, Time: at(600), Payload: []byte(`{"event":"disconnected"}`)}, false)
	add(capfile.Record{Kind: capfile.KindConn, Time: at(700), Payload: []byte(`{"event":"connected"}`)}, false)
	for i := 3; i <= 5; i++ { // the re-sent tail
		add(capfile.Record{Kind: capfile.KindReceived, Time: at(700 + i), Session: "s1", Payload: ev(i, ""), Attrs: []capfile.Attr{{Key: "id", Value: "x"}}}, true)
	}
	add(capfile.Record{Kind: capfile.KindReceived, Time: at(800), Session: "s1", Payload: ev(6, "")}, false)
	// Same id, other bytes: not a redelivery. Same bytes, other source: kept.
	add(capfile.Record{Kind: capfile.KindReceived, Time: at(900), Session: "s1", Payload: ev(6, `,"progress":1`)}, false)
	add(capfile.Record{Kind: capfile.KindReceived, Time: at(950), Origin: 1, Session: "s1", Payload: ev(6, "")}, false)
	// No event_id: never dropped. Sent messages: never dropped.
	add(capfile.Record{Kind: capfile.KindReceived, Time: at(960), Payload: []byte(`{"no":"id"}`)}, false)
	add(capfile.Record{Kind: capfile.KindReceived, Time: at(961), Payload: []byte(`{"no":"id"}`)}, false)
	add(capfile.Record{Kind: capfile.KindSent, Time: at(970), Payload: ev(1, "")}, false)

	dir := t.TempDir()
	h := testHeader()
	src := writeCapture(t, dir, "src.aaep", h, all)
	for _, window := range []time.Duration{0, time.Hour} {
		out := filepath.Join(dir, fmt.Sprintf("dedup-%v.aaep", window))
		res, err := Dedupe(ctx, []string{src}, out, DedupeOptions{Window: window})
		if err != nil {
			t.Fatal(err)
		}
		if res.Dropped != 3 || res.BySource[0] != 3 || res.Read != int64(len(all)) || res.Written != int64(len(want)) {
			t.Errorf("window %v: %+v; want 3 dropped from source 0", window, res)
		}
		oh, ors := readCapture(t, out)
		sameRecords(t, ors, want)
		if !oh.Start.Equal(h.Start) || oh.Meta["derived_from"] != "src.aaep" {
			t.Errorf("header %+v", oh)
		}
		// Dedupe of the result drops nothing more.
		again, err := Dedupe(ctx, []string{out}, filepath.Join(dir, "again.aaep"), DedupeOptions{Window: window})
		if err != nil || again.Dropped != 0 {
			t.Errorf("second dedupe: %+v, %v", again, err)
		}
	}
	// A window shorter than the gap forgets the first delivery.
	res, err := Dedupe(ctx, []string{src}, filepath.Join(dir, "short.aaep"), DedupeOptions{Window: 100 * time.Millisecond})
	if err != nil || res.Dropped != 0 {
		t.Errorf("100ms window: dropped %d, %v; want 0 (the first deliveries are 400 ms older)", res.Dropped, err)
	}
}
