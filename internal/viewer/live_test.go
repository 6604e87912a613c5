package viewer_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/sample"
	"github.com/aaep-tools/aaepkit/internal/viewer"
	"github.com/aaep-tools/aaepkit/serve"
)

// liveCapture is a capture a capfile.Writer is writing as a recorder
// would: each message appended at its real receive time (since the
// header's start), flushed by the writer's timer.
type liveCapture struct {
	t     *testing.T
	path  string
	w     *capfile.Writer
	start time.Time
	msgs  []sample.Msg
	next  int
}

func newLiveCapture(t *testing.T, n int) *liveCapture {
	t.Helper()
	path := filepath.Join(t.TempDir(), "live.aaep")
	start := time.Now()
	w, err := capfile.Create(path, capfile.Header{Start: start, Tool: "aaep-capture/test",
		Origins: []capfile.Origin{{ID: 0, Transport: "websocket", Endpoint: "ws://127.0.0.1:8765/aaep/v1/ws"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	c := &liveCapture{t: t, path: path, w: w, start: start, msgs: sample.Stream(sample.Options{Sessions: 4, Seed: 7, Start: start})}
	c.add(n)
	return c
}

// add appends the next n messages now.
func (c *liveCapture) add(n int) {
	c.t.Helper()
	for range n {
		m := c.msgs[c.next%len(c.msgs)]
		c.next++
		kind := capfile.KindReceived
		if m.FromSubscriber {
			kind = capfile.KindSent
		}
		if err := c.w.Append(&capfile.Record{Kind: kind, Time: int64(time.Since(c.start)), Session: m.Session, Payload: m.JSON}); err != nil {
			c.t.Fatal(err)
		}
	}
}

// liveEvent is one event of /api/live.
type liveEvent struct {
	Records int64 `json:"records"`
	Writing bool  `json:"being_written"`
	Ended   bool  `json:"ended"`
	Check   struct {
		Messages int64 `json:"messages"`
	} `json:"check"`
}

// TestLiveEvents: view --follow pushes an event each time the capture has
// grown and been checked, its counts current; the capture is named as
// being written, not torn; the last event says the recording ended.
func TestLiveEvents(t *testing.T) {
	c := newLiveCapture(t, 20)
	ts := startViewOf(t, serve.OpenFile(c.path), viewer.Options{Path: c.path, Follow: true, FollowPoll: 10 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+"/api/live", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("/api/live: %d %s", resp.StatusCode, ct)
	}
	sc := bufio.NewScanner(resp.Body)
	next := func() liveEvent {
		t.Helper()
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var ev liveEvent
				if err := json.Unmarshal([]byte(data), &ev); err != nil {
					t.Fatal(err)
				}
				return ev
			}
		}
		t.Fatalf("/api/live ended: %v", sc.Err())
		return liveEvent{}
	}
	until := func(records int64) liveEvent {
		t.Helper()
		for {
			ev := next()
			if ev.Records > records {
				t.Fatalf("event of %d records, want %d", ev.Records, records)
			}
			if ev.Records == records && ev.Check.Messages == records {
				return ev
			}
		}
	}
	ev := until(20)
	if !ev.Writing || ev.Ended {
		t.Errorf("event while recording: %+v, want being written", ev)
	}
	var info struct {
		Records int64 `json:"records"`
		Writing bool  `json:"being_written"`
		Rebuilt bool  `json:"index_rebuilt"`
	}
	getJSON(t, ts.URL+"/api/capture", 200, &info)
	if info.Records != 20 || !info.Writing {
		t.Errorf("/api/capture while recording: %+v", info)
	}
	// Later records than the buckets the check started with were made
	// for: the buckets widen, and the timeline's overview draws the new
	// records at its end, not piled on the first ones.
	time.Sleep(300 * time.Millisecond)
	c.add(5)
	until(25)
	// The messages checked so far say so in the inspector, though the
	// check goes on as long as the recording.
	var ev24 struct {
		Checked bool `json:"checked"`
	}
	getJSON(t, ts.URL+"/api/event/24", 200, &ev24)
	if !ev24.Checked {
		t.Error("/api/event/24: not checked, though the check has read it")
	}
	var tl struct {
		Overview [][3]int64 `json:"overview"`
	}
	getJSON(t, ts.URL+"/api/timeline?px=100", 200, &tl)
	var end, all int64
	for _, col := range tl.Overview {
		all += col[1]
		if col[0] >= 90 {
			end += col[1]
		}
	}
	if end < 4 || all < 24 {
		t.Errorf("overview after growing: %d messages in its last tenth, %d in all; want the 5 new ones at the end: %v", end, all, tl.Overview)
	}
	var rows struct {
		Total int64 `json:"total"`
	}
	getJSON(t, ts.URL+"/api/rows?from=0&limit=1", 200, &rows)
	if rows.Total != 25 {
		t.Errorf("rows after growth: %d, want 25", rows.Total)
	}
	c.add(3)
	if err := c.w.Close(); err != nil {
		t.Fatal(err)
	}
	for ev = next(); !ev.Ended; ev = next() {
	}
	if ev.Records != 28 || ev.Writing {
		t.Errorf("last event: %+v, want 28 records, not being written", ev)
	}
	info.Records, info.Writing, info.Rebuilt = 0, false, true
	getJSON(t, ts.URL+"/api/capture", 200, &info)
	if info.Records != 28 || info.Writing || info.Rebuilt {
		t.Errorf("/api/capture once closed: %+v, want its stored index", info)
	}
}
