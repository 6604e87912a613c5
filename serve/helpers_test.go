package serve

import (
	"bufio"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/aaep-tools/aaepkit/capfile"
)

// testTimeout bounds every network loop in these tests.
const testTimeout = 20 * time.Second

// ev renders one AAEP event. extra is appended inside the object.
func ev(i int, typ, session string, extra string) string {
	return fmt.Sprintf(`{"@context":"https://aaep-protocol.org/context/v1","type":"aaep:agent.%s","event_id":"evt_%04d","session_id":"%s","timestamp":"2026-05-24T14:22:%02d.000Z","producer":{"agent_id":"test-agent","agent_version":"1.0.0"}%s}`,
		typ, i, session, i%60, extra)
}

// rec is a record for writeCapture.
type rec struct {
	kind    capfile.Kind
	at      time.Duration
	payload string
	flags   capfile.Flags
	attrs   []capfile.Attr
}

// writeCapture writes recs to a capture file under t.TempDir(), recorded
// from a WebSocket (so without SSE framing).
func writeCapture(t testing.TB, recs []rec) string {
	t.Helper()
	return writeCaptureFrom(t, capfile.Origin{ID: 0, Transport: "websocket", Endpoint: "ws://127.0.0.1:9/aaep/v1/ws"}, recs)
}

// writeCaptureFrom writes recs as recorded from src.
func writeCaptureFrom(t testing.TB, src capfile.Origin, recs []rec) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "test.aaep")
	w, err := capfile.Create(path, capfile.Header{
		Start:   time.Date(2026, 5, 24, 14, 22, 0, 0, time.UTC),
		Tool:    "serve-test",
		Origins: []capfile.Origin{src},
	}, &capfile.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		cr := &capfile.Record{Kind: r.kind, Flags: r.flags, Time: int64(r.at), Attrs: r.attrs, Payload: []byte(r.payload)}
		if r.kind == capfile.KindReceived {
			if s := sessionOf(r.payload); s != "" {
				cr.Session = s
			}
		}
		if err := w.Append(cr); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func sessionOf(payload string) string {
	const key = `"session_id":"`
	i := strings.Index(payload, key)
	if i < 0 {
		return ""
	}
	rest := payload[i+len(key):]
	return rest[:strings.IndexByte(rest, '"')]
}

// standardRecords is a small realistic capture: two interleaved sessions
// with a confirmation and a clarification, plus records that must not be
// replayed (the recorder's own request, a connection event).
func standardRecords() []rec {
	ms := time.Millisecond
	return []rec{
		{kind: capfile.KindConn, at: 0, payload: `{"event":"connected"}`},
		{kind: capfile.KindSent, at: 1 * ms, payload: `{"type":"subscription.request","aaep_version":"1.0.0","subscriber_id":"rec","capabilities":{}}`},
		{kind: capfile.KindReceived, at: 10 * ms, payload: ev(1, "session.started", "sess_a", "")},
		{kind: capfile.KindReceived, at: 12 * ms, payload: ev(2, "state.changed", "sess_a", `,"from_state":"idle","to_state":"thinking"`)},
		{kind: capfile.KindReceived, at: 15 * ms, payload: ev(3, "session.started", "sess_b", "")},
		{kind: capfile.KindReceived, at: 20 * ms, payload: ev(4, "tool.invoked", "sess_a", `,"tool":"fetch","urgency":"normal"`)},
		{kind: capfile.KindReceived, at: 25 * ms, payload: ev(5, "progress.updated", "sess_b", `,"urgency":"background"`)},
		{kind: capfile.KindReceived, at: 30 * ms, payload: ev(6, "awaiting.confirmation", "sess_a", `,"urgency":"critical","action":"Transfer","consequence":"Money moves","reply_token":"rpl_conf1","timeout_seconds":300,"default_decision":"reject"`)},
		{kind: capfile.KindReceived, at: 31 * ms, payload: ev(7, "awaiting.clarification", "sess_b", `,"urgency":"critical","question":"Which age?","reply_token":"rpl_clar1","timeout_seconds":300,"accepted_response_kinds":["multiple_choice"],"choices":[{"value":"65","label":"65"},{"value":"67","label":"67"}]`)},
		{kind: capfile.KindSent, at: 40 * ms, payload: `{"type":"confirmation.reply","reply_token":"rpl_conf1","decision":"accept","subscription_id":"sub_x","timestamp":"2026-05-24T14:22:24.812Z"}`},
		{kind: capfile.KindReceived, at: 45 * ms, payload: ev(8, "output.streaming", "sess_a", `,"output_id":"out_1","chunk":"Done.","position":0,"complete":true,"coalesce_hint":"completion"`)},
		{kind: capfile.KindReceived, at: 50 * ms, payload: ev(9, "session.completed", "sess_a", "")},
		{kind: capfile.KindReceived, at: 55 * ms, payload: "{\n  \"type\": \"aaep:agent.session.completed\",\n  \"event_id\": \"evt_0010\",\n  \"session_id\": \"sess_b\"\n}"},
		{kind: capfile.KindMarker, at: 56 * ms, payload: `{"note":"end"}`},
	}
}

// received returns the payloads of recs that a replay sends, in order.
func received(recs []rec) [][]byte {
	var out [][]byte
	for _, r := range recs {
		if r.kind == capfile.KindReceived {
			out = append(out, []byte(r.payload))
		}
	}
	return out
}

// startServer serves opts on a loopback httptest server.
func startServer(t testing.TB, opts Options) (*Server, *httptest.Server) {
	t.Helper()
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(srv)
	ts.Listener = Listener(ts.Listener)
	ts.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		ts.Close()
	})
	return srv, ts
}

func wsURL(ts *httptest.Server, path string) string {
	return "ws" + strings.TrimPrefix(ts.URL, "http") + path
}

// dialWS opens a WebSocket to the server offering aaep.v1.
func dialWS(t testing.TB, ts *httptest.Server) *websocket.Conn {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{Subprotocol}, HandshakeTimeout: testTimeout}
	c, resp, err := d.Dial(wsURL(ts, "/aaep/v1/ws"), nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	if got := resp.Header.Get("Sec-WebSocket-Protocol"); got != Subprotocol {
		t.Fatalf("subprotocol %q, want %q", got, Subprotocol)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// readAll reads frames until the server closes the connection. It returns
// the frames and the close frame's code and text.
func readAll(t testing.TB, c *websocket.Conn) ([][]byte, *websocket.CloseError) {
	t.Helper()
	var frames [][]byte
	c.SetReadDeadline(time.Now().Add(testTimeout))
	for {
		_, msg, err := c.ReadMessage()
		if err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				return frames, ce
			}
			t.Fatalf("read after %d frames: %v", len(frames), err)
		}
		frames = append(frames, msg)
	}
}

// readAllNoFatal is readAll for goroutines other than the test's: it
// returns a nil close error on any other failure.
func readAllNoFatal(c *websocket.Conn) ([][]byte, *websocket.CloseError) {
	var frames [][]byte
	c.SetReadDeadline(time.Now().Add(testTimeout))
	for {
		_, msg, err := c.ReadMessage()
		if err != nil {
			var ce *websocket.CloseError
			errors.As(err, &ce)
			return frames, ce
		}
		frames = append(frames, msg)
	}
}

func digest(b []byte) [32]byte { return sha256.Sum256(b) }

// sameFrames fails unless got and want hold the same byte strings in order.
func sameFrames(t testing.TB, got, want [][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d frames, want %d", len(got), len(want))
	}
	for i := range got {
		if digest(got[i]) != digest(want[i]) {
			t.Fatalf("frame %d differs:\n got %q\nwant %q", i, got[i], want[i])
		}
	}
}

// sseEvent is one event read from an SSE stream.
type sseEvent struct {
	event, id string
	data      []byte
}

// readSSE parses an SSE stream until EOF.
func readSSE(t testing.TB, body io.Reader) []sseEvent {
	t.Helper()
	var (
		out  []sseEvent
		cur  sseEvent
		data []string
		have bool
	)
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if have {
				cur.data = []byte(strings.Join(data, "\n"))
				out = append(out, cur)
			}
			cur, data, have = sseEvent{}, nil, false
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			cur.event, have = value, true
		case "id":
			cur.id, have = value, true
		case "data":
			data, have = append(data, value), true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read SSE: %v", err)
	}
	return out
}

// getSSE opens an SSE stream with optional headers.
func getSSE(t testing.TB, url string, header http.Header) *http.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// notices collects notices for assertions.
type notices struct {
	mu   sync.Mutex
	list []Notice
}

func (n *notices) add(x Notice) {
	n.mu.Lock()
	n.list = append(n.list, x)
	n.mu.Unlock()
}

func (n *notices) kind(kind string) []Notice {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []Notice
	for _, x := range n.list {
		if x.Kind == kind {
			out = append(out, x)
		}
	}
	return out
}

// memRecord collects a replay's recording and the sources it lists.
type memRecord struct {
	mu      sync.Mutex
	recs    []capfile.Record
	sources []capfile.Origin
}

func (m *memRecord) AddOrigin(src capfile.Origin) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sources = append(m.sources, src)
	return nil
}

func (m *memRecord) Append(r *capfile.Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := *r
	c.Payload = append([]byte(nil), r.Payload...)
	c.Attrs = append([]capfile.Attr(nil), r.Attrs...)
	m.recs = append(m.recs, c)
	return nil
}

// waitIdle waits until every subscription has closed.
func waitIdle(t testing.TB, srv *Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := srv.Wait(ctx); err != nil {
		t.Fatalf("subscriptions still active: %v", err)
	}
}

func bufioWriter(w io.Writer) *bufio.Writer { return bufio.NewWriter(w) }
