package serve

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/aaep-tools/aaepkit/timing"
)

// controlPost posts an action and decodes the answer.
func controlPost(t *testing.T, ts *httptest.Server, path string, body string, wantCode int) ControlStatus {
	t.Helper()
	resp, err := http.Post(ts.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var raw json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&raw); err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	if resp.StatusCode != wantCode {
		t.Fatalf("POST %s: %d %s, want %d", path, resp.StatusCode, raw, wantCode)
	}
	var st ControlStatus
	if wantCode == http.StatusOK {
		if err := json.Unmarshal(raw, &st); err != nil {
			t.Fatal(err)
		}
	} else if !bytes.Contains(raw, []byte(`"error"`)) {
		t.Fatalf("POST %s: error answer %s has no error message", path, raw)
	}
	return st
}

func controlGet(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

// waitState polls GET /control until the replay is in state.
func waitState(t *testing.T, ts *httptest.Server, state string) ControlStatus {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for {
		var st ControlStatus
		controlGet(t, ts.URL+"/control", &st)
		if st.State == state {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("replay state %q, want %q", st.State, state)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// readFrame reads one frame from c.
func readFrame(t *testing.T, c *websocket.Conn) []byte {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(testTimeout))
	_, msg, err := c.ReadMessage()
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return msg
}

// expectNothing checks that no frame arrives while the replay is paused:
// a status round trip after the wait shows the replay released nothing.
func expectNothing(t *testing.T, ts *httptest.Server, c *websocket.Conn, released int64) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(150 * time.Millisecond))
	if _, msg, err := c.ReadMessage(); err == nil {
		t.Fatalf("a paused replay sent %s", msg)
	}
	var st ControlStatus
	controlGet(t, ts.URL+"/control", &st)
	if st.Released != released {
		t.Fatalf("released %d events, want %d", st.Released, released)
	}
}

func TestControlStepSeekPlay(t *testing.T) {
	recs := standardRecords()
	want := received(recs)
	path := writeCapture(t, recs)
	ctl := timing.NewController(nil, timing.Config{}, true)
	_, ts := startServer(t, Options{Open: OpenFile(path), Shared: true, Control: ctl, Grace: 10 * time.Millisecond})

	if st := waitState(t, ts, StateWaiting); st.Position.Index != -1 {
		t.Fatalf("position before any event: %+v", st.Position)
	}
	controlPost(t, ts, "/control/step", "", http.StatusConflict)

	c := dialWS(t, ts)
	waitState(t, ts, StatePaused)
	// A read deadline that expires breaks a gorilla connection for good,
	// so absence is checked on a second subscriber.
	c2 := dialWS(t, ts)
	// And an SSE subscriber on the same timeline.
	sse := sseEvents(t, getSSE(t, ts.URL+"/aaep/v1/events", nil))
	waitSubscribers(t, ts, 3)
	expectNothing(t, ts, c2, 0)

	// Each POST answers with the state after its action: the step's
	// events released and queued, the position on the last of them.
	st := controlPost(t, ts, "/control/step", "", http.StatusOK)
	if st.Released != 1 || st.Position.Index != 2 || st.StepsPending != 0 || st.State != StatePaused {
		t.Fatalf("step answered %+v; want released 1, position #2", st)
	}
	if got := readFrame(t, c); !bytes.Equal(got, want[0]) {
		t.Fatalf("step sent %s, want %s", got, want[0])
	}
	if got := nextSSE(t, sse); !bytes.Equal(got, want[0]) {
		t.Fatalf("step sent %s to the SSE subscriber, want %s", got, want[0])
	}
	st = controlPost(t, ts, "/control/step?count=2", "", http.StatusOK)
	if st.Released != 3 || st.Position.Index != 4 || st.Position.Session != "sess_b" || st.StepsPending != 0 {
		t.Fatalf("step?count=2 answered %+v; want released 3, position #4", st)
	}
	for i := 1; i <= 2; i++ {
		if got := readFrame(t, c); !bytes.Equal(got, want[i]) {
			t.Fatalf("step %d sent %s, want %s", i, got, want[i])
		}
	}
	st = waitReleased(t, ts, 3)
	if st.State != StatePaused || st.Position.Index != 4 || st.Position.Session != "sess_b" {
		t.Fatalf("after three steps: %+v", st)
	}

	// Seek to the confirmation (record 7), step it, answer it.
	if st.Next != -1 {
		t.Fatalf("no seek pending, next is %d", st.Next)
	}
	if st := controlPost(t, ts, "/control/seek", `{"index": 7}`, http.StatusOK); st.Released != 3 || st.Position.Index != 4 || st.Next != 7 {
		t.Fatalf("seek while paused answered %+v; want the position unchanged, next #7", st)
	}
	if st := controlPost(t, ts, "/control/step", `{"count": 1}`, http.StatusOK); st.Released != 4 || st.Position.Index != 7 || st.Next != -1 {
		t.Fatalf("step after the seek answered %+v; want released 4, position #7, no next", st)
	}
	if got := readFrame(t, c); !bytes.Equal(got, want[5]) {
		t.Fatalf("after seek to #7: %s, want %s", got, want[5])
	}
	for i := 1; i <= 2; i++ {
		nextSSE(t, sse)
	}
	if got := nextSSE(t, sse); !bytes.Equal(got, want[5]) {
		t.Fatalf("after seek to #7 the SSE subscriber got %s, want %s", got, want[5])
	}
	subID := waitReleased(t, ts, 4).Subscribers[0].Subscription
	reply := `{"type":"confirmation.reply","reply_token":"rpl_conf1","decision":"accept","subscription_id":"` + subID + `","timestamp":"2026-05-24T14:22:30.000Z"}`
	if err := c.WriteMessage(websocket.TextMessage, []byte(reply)); err != nil {
		t.Fatal(err)
	}
	page := waitLog(t, ts, subID, func(e LogEntry) bool { return e.Kind == LogReceive && e.Message == "confirmation.reply" })
	var events []int64
	for _, e := range page.Entries {
		if e.Kind == LogEvent {
			events = append(events, e.Index)
		}
		if e.Kind == LogReceive && e.Verdict != VerdictAccepted {
			t.Errorf("reply verdict %q (%s), want accepted", e.Verdict, e.Reason)
		}
	}
	if got := jsonText(events); got != "[2,3,4,7]" {
		t.Errorf("log of %s lists events %s, want [2,3,4,7]", subID, got)
	}

	// Play the rest at top speed: the replay holds at its end, attached.
	controlPost(t, ts, "/control/speed?value=1000", "", http.StatusOK)
	if st := controlPost(t, ts, "/control/play", "", http.StatusOK); st.Released < 4 {
		t.Fatalf("play answered %+v", st)
	}
	for _, w := range want[6:] {
		if got := readFrame(t, c); !bytes.Equal(got, w) {
			t.Fatalf("play sent %s, want %s", got, w)
		}
	}
	if st := waitState(t, ts, StateEnded); len(st.Subscribers) != 3 || st.Subscribers[0].State != "active" {
		t.Fatalf("at the end: %+v", st)
	}
	// Seek by time to 20ms (record 5) plays again from there.
	controlPost(t, ts, "/control/seek?to=20ms", "", http.StatusOK)
	if got := readFrame(t, c); !bytes.Equal(got, want[3]) {
		t.Fatalf("after seek to 20ms: %s, want %s", got, want[3])
	}

	for _, bad := range []struct {
		path, body string
		code       int
	}{
		{"/control/speed", "", http.StatusBadRequest},
		{"/control/speed?value=0", "", http.StatusBadRequest},
		{"/control/speed?value=5000", "", http.StatusBadRequest},
		{"/control/seek", "", http.StatusBadRequest},
		{"/control/seek?index=1&to=1s", "", http.StatusBadRequest},
		{"/control/seek?index=999", "", http.StatusBadRequest},
		{"/control/seek?to=tomorrow", "", http.StatusBadRequest},
		{"/control/step?count=0", "", http.StatusBadRequest},
		{"/control/step", "{not json", http.StatusBadRequest},
		{"/control/rewind", "", http.StatusNotFound},
	} {
		controlPost(t, ts, bad.path, bad.body, bad.code)
	}
}

// sseEvents reads the data of each SSE event of resp in the background.
func sseEvents(t *testing.T, resp *http.Response) <-chan []byte {
	t.Helper()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("SSE: %s", resp.Status)
	}
	out := make(chan []byte, 64)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<16), 1<<20)
		var data []string
		for sc.Scan() {
			line := sc.Text()
			if line == "" {
				if data != nil {
					out <- []byte(strings.Join(data, "\n"))
				}
				data = nil
				continue
			}
			if v, ok := strings.CutPrefix(line, "data:"); ok {
				data = append(data, strings.TrimPrefix(v, " "))
			}
		}
	}()
	return out
}

func nextSSE(t *testing.T, events <-chan []byte) []byte {
	t.Helper()
	select {
	case ev, ok := <-events:
		if !ok {
			t.Fatal("the SSE stream ended")
		}
		return ev
	case <-time.After(testTimeout):
		t.Fatal("no SSE event")
		return nil
	}
}

func TestControlNeedsShared(t *testing.T) {
	path := writeCapture(t, standardRecords())
	_, err := New(Options{Open: OpenFile(path), Control: timing.NewController(nil, timing.Config{}, false)})
	if err == nil || !strings.Contains(err.Error(), "shared") {
		t.Fatalf("New without Shared: %v, want an error about the shared timeline", err)
	}
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func waitSubscribers(t *testing.T, ts *httptest.Server, n int) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for {
		var st ControlStatus
		controlGet(t, ts.URL+"/control", &st)
		if len(st.Subscribers) >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d subscribers, want %d", len(st.Subscribers), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func waitReleased(t *testing.T, ts *httptest.Server, n int64) ControlStatus {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for {
		var st ControlStatus
		controlGet(t, ts.URL+"/control", &st)
		if st.Released >= n {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("released %d, want %d", st.Released, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func waitLog(t *testing.T, ts *httptest.Server, sub string, done func(LogEntry) bool) LogPage {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for {
		var p LogPage
		controlGet(t, ts.URL+"/control/log?subscription="+sub, &p)
		for _, e := range p.Entries {
			if done(e) {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("log of %s never matched: %+v", sub, p.Entries)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
