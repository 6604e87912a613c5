package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/timing"
)

// spaced returns n events gap apart, starting at gap.
func spaced(n int, gap time.Duration) []rec {
	var recs []rec
	for i := 1; i <= n; i++ {
		recs = append(recs, rec{kind: capfile.KindReceived, at: time.Duration(i) * gap, payload: ev(i, "progress.updated", "sess_a", "")})
	}
	return recs
}

// rawSSE reads an SSE response body line by line until EOF or until stop
// returns true for the lines so far.
func rawSSE(body io.Reader, stop func(lines []string) bool) []string {
	var lines []string
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 4<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if stop != nil && stop(lines) {
			break
		}
	}
	return lines
}

func count(lines []string, prefix string) int {
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

// TestSSEFramingAsRecorded replays captures from SSE producers that name
// their events, that do not (the TypeScript reference producer), and from a
// WebSocket, under each --sse-event policy, and checks the event: and id:
// lines on the wire.
func TestSSEFramingAsRecorded(t *testing.T) {
	sse := capfile.Origin{ID: 0, Transport: "sse", Endpoint: "http://127.0.0.1:9/events"}
	ws := capfile.Origin{ID: 0, Transport: "websocket", Endpoint: "ws://127.0.0.1:9/aaep/v1/ws"}
	plain := []rec{
		{kind: capfile.KindReceived, at: 1, payload: ev(1, "session.started", "s", "")},
		{kind: capfile.KindReceived, at: 2, payload: ev(2, "session.completed", "s", "")},
	}
	named := []rec{
		{kind: capfile.KindReceived, at: 1, payload: ev(1, "session.started", "s", ""), attrs: []capfile.Attr{{Key: "event", Value: "agent"}, {Key: "id", Value: "41"}}},
		{kind: capfile.KindReceived, at: 2, payload: ev(2, "session.completed", "s", ""), attrs: []capfile.Attr{{Key: "event", Value: "agent"}, {Key: "id", Value: "42"}}},
	}
	tests := []struct {
		name     string
		src      capfile.Origin
		recs     []rec
		policy   string
		wantName []string // "" means no event: line
		wantID   []string
	}{
		{"unnamed SSE producer", sse, plain, "", []string{"", ""}, []string{"evt_0001", "evt_0002"}},
		{"named SSE producer", sse, named, "", []string{"agent", "agent"}, []string{"41", "42"}},
		{"WebSocket capture", ws, plain, "", []string{"aaep.event", "aaep.event"}, []string{"evt_0001", "evt_0002"}},
		{"recorded, explicitly", ws, plain, SSEEventRecorded, []string{"aaep.event", "aaep.event"}, []string{"evt_0001", "evt_0002"}},
		{"forced unnamed", sse, named, SSEEventNone, []string{"", ""}, []string{"41", "42"}},
		{"forced name", sse, plain, "aaep.event", []string{"aaep.event", "aaep.event"}, []string{"evt_0001", "evt_0002"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeCaptureFrom(t, tt.src, tt.recs)
			_, ts := startServer(t, Options{CloseAtEnd: true, Open: OpenFile(path), Timing: timing.Config{NoDelay: true}, SSEEvent: tt.policy})
			resp := getSSE(t, ts.URL+"/events", nil)
			lines := rawSSE(resp.Body, nil)
			var names, ids []string
			name, hasName := "", false
			for _, l := range lines {
				switch {
				case strings.HasPrefix(l, "event: "):
					name, hasName = strings.TrimPrefix(l, "event: "), true
				case strings.HasPrefix(l, "id: "):
					ids = append(ids, strings.TrimPrefix(l, "id: "))
				case strings.HasPrefix(l, "data: "):
					if !hasName {
						name = ""
					}
					names = append(names, name)
					name, hasName = "", false
				}
			}
			if strings.Join(names, ",") != strings.Join(tt.wantName, ",") || strings.Join(ids, ",") != strings.Join(tt.wantID, ",") {
				t.Fatalf("event names %q ids %q, want %q %q\n%s", names, ids, tt.wantName, tt.wantID, strings.Join(lines, "\n"))
			}
		})
	}

	// A recorded id (not the event_id) resumes too.
	path := writeCaptureFrom(t, sse, named)
	_, ts := startServer(t, Options{CloseAtEnd: true, Open: OpenFile(path), Timing: timing.Config{NoDelay: true}})
	resp := getSSE(t, ts.URL+"/events", http.Header{"Last-Event-Id": {"41"}})
	events := readSSE(t, resp.Body)
	if len(events) != 1 || events[0].id != "42" {
		t.Fatalf("resume after recorded id 41: %+v", events)
	}
}

func TestCheckSSEEvent(t *testing.T) {
	for _, v := range []string{"", "recorded", "none", "aaep.event", "custom"} {
		if err := CheckSSEEvent(v); err != nil {
			t.Errorf("%q: %v", v, err)
		}
	}
	if err := CheckSSEEvent("a\nb"); err == nil {
		t.Error("a name with a line break was accepted")
	}
}

// preflight sends a CORS preflight as a browser would before POSTing JSON.
func preflight(t *testing.T, url, origin string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodOptions, url, nil)
	req.Header.Set("Origin", origin)
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "content-type,authorization,x-trace")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

func TestCORS(t *testing.T) {
	path := writeCapture(t, standardRecords())
	const page = "http://localhost:5173"
	t.Run("any origin", func(t *testing.T) {
		_, ts := startServer(t, Options{CloseAtEnd: true, Open: OpenFile(path), Timing: timing.Config{NoDelay: true}})
		for _, p := range []string{"/messages", "/aaep/v1/replies", "/aaep/v1/subscriptions", "/aaep/v1/events"} {
			resp := preflight(t, ts.URL+p, page)
			h := resp.Header
			if resp.StatusCode != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != page {
				t.Fatalf("%s: preflight %d, Allow-Origin %q", p, resp.StatusCode, h.Get("Access-Control-Allow-Origin"))
			}
			if !strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") {
				t.Errorf("%s: Allow-Methods %q", p, h.Get("Access-Control-Allow-Methods"))
			}
			allow := strings.ToLower(h.Get("Access-Control-Allow-Headers"))
			for _, want := range []string{"content-type", "authorization", "last-event-id", "x-trace"} {
				if !strings.Contains(allow, want) {
					t.Errorf("%s: Allow-Headers %q lacks %s", p, allow, want)
				}
			}
		}
		// The real response carries the header too (here a 400 for a bad reply).
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/messages", strings.NewReader(`{"type":"confirmation.reply","reply_token":"nope","decision":"accept"}`))
		req.Header.Set("Origin", page)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Access-Control-Allow-Origin") != page {
			t.Errorf("POST /messages: %d, Allow-Origin %q", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
		}
		// Without an Origin (not a browser): the wildcard.
		resp, err = http.Get(ts.URL + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("GET /healthz without Origin: Allow-Origin %q", resp.Header.Get("Access-Control-Allow-Origin"))
		}
	})
	t.Run("restricted", func(t *testing.T) {
		_, ts := startServer(t, Options{CloseAtEnd: true, Open: OpenFile(path), Timing: timing.Config{NoDelay: true}, CORSOrigins: []string{"HTTP://LOCALHOST:5173/"}})
		if resp := preflight(t, ts.URL+"/messages", page); resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != page {
			t.Errorf("allowed origin: %d %q", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
		}
		resp := preflight(t, ts.URL+"/messages", "http://evil.example")
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("other origin: %d %q", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
		}
		d := websocket.Dialer{Subprotocols: []string{Subprotocol}, HandshakeTimeout: testTimeout}
		if _, r, err := d.Dial(wsURL(ts, "/aaep/v1/ws"), http.Header{"Origin": {"http://evil.example"}}); err == nil || r == nil || r.StatusCode != http.StatusForbidden {
			t.Errorf("WebSocket from another origin: err %v", err)
		}
		c, _, err := d.Dial(wsURL(ts, "/aaep/v1/ws"), http.Header{"Origin": {page}})
		if err != nil {
			t.Fatalf("WebSocket from the allowed origin: %v", err)
		}
		c.Close()
	})
	if _, err := newCORSPolicy([]string{"localhost:3000"}); err == nil {
		t.Error("an origin without a scheme was accepted")
	}
}

// TestKeepaliveSSE replays a pause and checks that a keepalive comment
// fills it (and none with keepalives off).
func TestKeepaliveSSE(t *testing.T) {
	t.Parallel()
	path := writeCapture(t, []rec{
		{kind: capfile.KindReceived, at: 0, payload: ev(1, "session.started", "s", "")},
		{kind: capfile.KindReceived, at: MinKeepalive + 300*time.Millisecond, payload: ev(2, "session.completed", "s", "")},
	})
	for _, tt := range []struct {
		keepalive time.Duration
		want      bool
	}{{MinKeepalive, true}, {-1, false}} {
		_, ts := startServer(t, Options{CloseAtEnd: true, Open: OpenFile(path), Keepalive: tt.keepalive})
		lines := rawSSE(getSSE(t, ts.URL+"/events", nil).Body, nil)
		got := count(lines, ": keepalive")
		if (got > 0) != tt.want || count(lines, "data: ") != 2 {
			t.Errorf("keepalive %v: %d keepalive comments, %d events\n%s", tt.keepalive, got, count(lines, "data: "), strings.Join(lines, "\n"))
		}
	}
}

// TestKeepaliveWebSocket checks that a pause brings pings, that a peer
// answering them is kept (even one that answers slower than the pings
// come), and that one that does not is closed.
func TestKeepaliveWebSocket(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		delay time.Duration // before each pong
	}{
		{"answering peer", 0},
		// Pings every second, each answered 1.2 s later: never the answer
		// to the latest ping when the next is due, always within PongWait.
		{"slow peer", MinKeepalive + 200*time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// A pause of four keepalive periods: two pings at least,
			// however late a loaded machine runs the writer's timer.
			path := writeCapture(t, spaced(2, 4*MinKeepalive+500*time.Millisecond))
			_, ts := startServer(t, Options{CloseAtEnd: true, Open: OpenFile(path), Keepalive: MinKeepalive, Grace: time.Millisecond})
			c := dialWS(t, ts)
			var pings atomic.Int32
			c.SetPingHandler(func(data string) error {
				pings.Add(1)
				go func() {
					time.Sleep(tt.delay)
					c.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(time.Second))
				}()
				return nil
			})
			frames, ce := readAll(t, c)
			if len(frames) != 2 || ce == nil || ce.Code != CloseClean || pings.Load() < 2 {
				t.Fatalf("%d frames, close %v, %d pings; want 2 frames, 4000 and two pings", len(frames), ce, pings.Load())
			}
		})
	}
	t.Run("silent peer", func(t *testing.T) {
		t.Parallel()
		path := writeCapture(t, spaced(2, 10*time.Second))
		srv, ts := startServer(t, Options{CloseAtEnd: true, Open: OpenFile(path), Keepalive: MinKeepalive, PongWait: 100 * time.Millisecond, Grace: time.Millisecond})
		c := dialWS(t, ts)
		c.SetPingHandler(func(string) error { return nil }) // never answers
		frames, ce := readAll(t, c)
		// The first event goes out at once; the second is 10 s later.
		if ce == nil || ce.Code != CloseViolation || !strings.Contains(ce.Text, "unresponsive") || len(frames) != 1 {
			t.Fatalf("close %v after %d frames, want 4004 unresponsive after 1", ce, len(frames))
		}
		waitIdle(t, srv)
		if n := srv.Stats().Closes[CauseUnresponsive]; n != 1 {
			t.Errorf("closes %v", srv.Stats().Closes)
		}
	})
}

// TestEndOfReplayStaysOpen checks the default end of a replay: the stream
// stays open with keepalives and no more data, the statistics say the
// subscriber has it all, and it closes when the subscriber leaves.
func TestEndOfReplayStaysOpen(t *testing.T) {
	t.Parallel()
	recs := standardRecords()
	path := writeCapture(t, recs)
	var seen notices
	srv, ts := startServer(t, Options{Open: OpenFile(path), Timing: timing.Config{NoDelay: true}, Keepalive: MinKeepalive, Grace: time.Millisecond, Notify: seen.add})
	want := len(received(recs))

	t.Run("sse", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/events", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		// Read every event, then three keepalives: the stream is still open.
		// (Each event's first data line starts its JSON object.)
		lines := rawSSE(resp.Body, func(l []string) bool { return count(l, ": keepalive") >= 3 && count(l, "data: {") >= want })
		if got := count(lines, "data: {"); got != want || count(lines, ": keepalive") < 3 {
			t.Fatalf("%d events (want %d), %d keepalives", got, want, count(lines, ": keepalive"))
		}
	})
	t.Run("websocket", func(t *testing.T) {
		c := dialWS(t, ts)
		pinged := make(chan struct{}, 1)
		c.SetPingHandler(func(string) error { signal(pinged); return nil })
		c.SetReadDeadline(time.Now().Add(testTimeout))
		for i := 0; i < want; i++ {
			if _, _, err := c.ReadMessage(); err != nil {
				t.Fatalf("frame %d: %v", i, err)
			}
		}
		// Reading on: pings come, no close frame.
		go func() {
			for {
				if _, _, err := c.ReadMessage(); err != nil {
					return
				}
			}
		}()
		select {
		case <-pinged:
		case <-time.After(testTimeout):
			t.Fatal("no ping after the end of the replay")
		}
		c.Close()
	})

	resp, err := http.Get(ts.URL + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	var st Stats
	err = json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if st.Complete != 2 || len(st.Subscribers) != 2 {
		t.Fatalf("GET /stats: complete %d of %d subscribers", st.Complete, len(st.Subscribers))
	}
	for _, s := range st.Subscribers {
		if !s.Complete || s.CompletedAt == nil || s.Sent != int64(want) {
			t.Errorf("subscriber %+v", s)
		}
	}
	waitIdle(t, srv)
	if st := srv.Stats(); st.Closes[CauseFinished] != 0 || st.Closes[CauseDisconnected]+st.Closes[CauseSubscriber] != 2 {
		t.Errorf("closes %v: want both closed by their subscriber", st.Closes)
	}
	if n := len(seen.kind(NoticeComplete)); n != 2 {
		t.Errorf("%d complete notices, want 2", n)
	}
}

// TestSharedLastEventID checks resuming on a shared timeline: after an
// event already sent (what was missed comes from the timeline's history),
// after one still to come (skipped through), and once the timeline is over
// (204, which stops an EventSource).
func TestSharedLastEventID(t *testing.T) {
	recs := spaced(10, 150*time.Millisecond)
	path := writeCapture(t, recs)
	_, ts := startServer(t, Options{CloseAtEnd: true, Open: OpenFile(path), Shared: true})
	all := received(recs)

	ids := func(events []sseEvent) []string {
		var out []string
		for _, e := range events {
			out = append(out, e.id)
		}
		return out
	}
	// An early subscriber asks to resume after event 9, still to come.
	ahead := make(chan []sseEvent, 1)
	go func() {
		resp := getSSE(t, ts.URL+"/events", http.Header{"Last-Event-Id": {"evt_0009"}})
		ahead <- readSSENoFatal(resp.Body)
	}()

	// Another reads three events and drops the connection.
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	first := rawSSE(resp.Body, func(l []string) bool { return count(l, "data: ") == 3 })
	cancel()
	resp.Body.Close()
	if count(first, "id: evt_0003") != 1 {
		t.Fatalf("first connection: %q", first)
	}
	// It reconnects as an EventSource would: what it missed, then the rest.
	again := readSSE(t, getSSE(t, ts.URL+"/events", http.Header{"Last-Event-Id": {"evt_0003"}}).Body)
	sameFrames(t, dataOf(again), all[3:])

	if got := <-ahead; strings.Join(ids(got), ",") != "evt_0010" {
		t.Errorf("resume after an event still to come: got %q, want evt_0010 only", ids(got))
	}
	// The timeline is over: reconnecting gets 204.
	deadline := time.Now().Add(testTimeout)
	for {
		resp := getSSE(t, ts.URL+"/events", http.Header{"Last-Event-Id": {"evt_0005"}})
		if resp.StatusCode == http.StatusNoContent {
			break
		}
		// The timeline may still be closing its last subscriptions.
		io.Copy(io.Discard, resp.Body)
		if time.Now().After(deadline) {
			t.Fatalf("after the timeline ended: status %d, want 204", resp.StatusCode)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func dataOf(events []sseEvent) [][]byte {
	var out [][]byte
	for _, e := range events {
		out = append(out, e.data)
	}
	return out
}

// readSSENoFatal is readSSE for other goroutines: it returns what it parsed.
func readSSENoFatal(body io.Reader) []sseEvent {
	var out []sseEvent
	var cur sseEvent
	for _, l := range rawSSE(body, nil) {
		switch {
		case l == "":
			if cur.data != nil {
				out = append(out, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(l, "id: "):
			cur.id = strings.TrimPrefix(l, "id: ")
		case strings.HasPrefix(l, "data: "):
			cur.data = []byte(strings.TrimPrefix(l, "data: "))
		}
	}
	return out
}

// sourceless is a recording whose header cannot grow.
type sourceless struct{ memRecord }

func (*sourceless) AddOrigin(capfile.Origin) error { return capfile.ErrHeaderFixed }

// TestRecordListsSubscribers checks that each subscriber is listed as a
// source before its first record, and that a recording that cannot list it
// gets source 0 (listed) and a warning.
func TestRecordListsSubscribers(t *testing.T) {
	path := writeCapture(t, standardRecords())
	var listed memRecord
	_, ts := startServer(t, Options{CloseAtEnd: true, Open: OpenFile(path), Timing: timing.Config{NoDelay: true}, Grace: time.Millisecond, Record: &listed})
	readAll(t, dialWS(t, ts))
	readSSE(t, getSSE(t, ts.URL+"/events", nil).Body)
	listed.mu.Lock()
	srcs := fmt.Sprint(listed.sources)
	ids := map[uint16]bool{0: true}
	for _, s := range listed.sources {
		ids[s.ID] = true
	}
	for _, r := range listed.recs {
		if !ids[r.Origin] {
			t.Errorf("record of source %d, listed %s", r.Origin, srcs)
		}
	}
	listed.mu.Unlock()
	if len(ids) != 3 || !strings.Contains(srcs, "websocket") || !strings.Contains(srcs, "sse") {
		t.Errorf("listed %s, want a websocket and an sse subscriber", srcs)
	}

	var fixed sourceless
	var seen notices
	_, ts = startServer(t, Options{CloseAtEnd: true, Open: OpenFile(path), Timing: timing.Config{NoDelay: true}, Grace: time.Millisecond, Record: &fixed, Notify: seen.add})
	readAll(t, dialWS(t, ts))
	fixed.mu.Lock()
	for _, r := range fixed.recs {
		if r.Origin != 0 {
			t.Errorf("record of source %d in a recording that lists none", r.Origin)
		}
	}
	fixed.mu.Unlock()
	if w := seen.kind(NoticeWarning); len(w) != 1 || !strings.Contains(w[0].Reason, "source 0") {
		t.Errorf("warnings %+v", w)
	}
}
