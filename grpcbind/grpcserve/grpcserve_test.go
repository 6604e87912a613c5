package grpcserve_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/grpcbind/aaepv1"
	"github.com/aaep-tools/aaepkit/grpcbind/grpcserve"
	"github.com/aaep-tools/aaepkit/grpcbind/grpctest"
	"github.com/aaep-tools/aaepkit/serve"
	"github.com/aaep-tools/aaepkit/transport"
	_ "github.com/aaep-tools/aaepkit/transport/grpcsource"
)

const ms = time.Millisecond

func ev(n int, typ, sess, extra string) []byte {
	return fmt.Appendf(nil, `{"@context":"https://aaep-protocol.org/context/v1","type":"aaep:agent.%s","event_id":"evt_%04d","session_id":%q,"timestamp":"2026-05-24T14:22:11.342Z","producer":{"agent_id":"planner","agent_version":"1.4.2"},"summary_normal":"event %d"%s}`, typ, n, sess, n, extra)
}

var (
	manifest = []byte(`{"type":"aaep:producer.manifest","agent_id":"planner","aaep_versions_supported":["1.0.0"]}`)
	events   = [][]byte{
		ev(1, "session.started", "sess_a", ""),
		ev(2, "awaiting.confirmation", "sess_a", `,"urgency":"critical","action":"Transfer","consequence":"Money moves","reply_token":"rpl_conf1","timeout_seconds":300,"default_decision":"reject"`),
		ev(3, "output.streaming", "sess_a", `,"output_id":"out_1","chunk":"caf\u00e9 é","position":0,"complete":true`),
		ev(4, "session.completed", "sess_a", ""),
	}
)

// writeCapture writes a gRPC capture: its manifest, the recorder's
// request, the events (20 ms apart, the last a second after the start).
func writeCapture(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "grpc.aaep")
	w, err := capfile.Create(path, capfile.Header{Start: time.Now(), Tool: "test", Origins: []capfile.Origin{{ID: 0, Transport: "grpc", Endpoint: "grpc://127.0.0.1:1"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	recs := []capfile.Record{
		{Kind: capfile.KindReceived, Time: 0, Attrs: []capfile.Attr{{Key: "grpc_method", Value: "GetManifest"}}, Payload: manifest},
		{Kind: capfile.KindSent, Time: int64(ms), Payload: []byte(`{"type":"subscription.request","aaep_version":"1.0.0","capabilities":{}}`)},
	}
	for i, e := range events {
		at := 10*ms + time.Duration(i)*20*ms
		if i == len(events)-1 {
			// A second after the confirmation: time for a subscriber's
			// reply before the end closes the stream, however loaded the
			// machine.
			at = time.Second
		}
		recs = append(recs, capfile.Record{Kind: capfile.KindReceived, Time: int64(at), Session: "sess_a", Payload: e})
	}
	for i := range recs {
		if err := w.Append(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// memRecord is a RecordWriter in memory.
type memRecord struct {
	mu   sync.Mutex
	recs []capfile.Record
}

func (m *memRecord) Append(r *capfile.Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := *r
	c.Payload = bytes.Clone(r.Payload)
	c.Attrs = append([]capfile.Attr(nil), r.Attrs...)
	m.recs = append(m.recs, c)
	return nil
}

func (m *memRecord) all() []capfile.Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]capfile.Record(nil), m.recs...)
}

// start serves the capture at path over gRPC.
func start(t *testing.T, opts serve.Options) (*serve.Server, string) {
	t.Helper()
	srv, err := serve.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	gs := grpcserve.New(grpctest.Listen(t, ""), srv, nil)
	served := make(chan error, 1)
	go func() { served <- gs.Serve() }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		gs.Stop()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return srv, gs.Addr().String()
}

// TestCaptureWhatServeSends records a gRPC replay with the gRPC capture
// source: the manifest answered is the capture's, the events arrive byte
// for byte, paced, and the replay's end ends the stream with status OK.
func TestCaptureWhatServeSends(t *testing.T) {
	rec := &memRecord{}
	_, addr := start(t, serve.Options{Open: serve.OpenFile(writeCapture(t)), CloseAtEnd: true, Record: rec})
	var mu sync.Mutex
	var got []transport.Message
	src, err := transport.New("grpc://"+addr, transport.Options{Clock: transport.NewClock(), Retry: transport.Retry{MaxRetries: 1}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err = src.Run(ctx, func(m *transport.Message) error {
		mu.Lock()
		defer mu.Unlock()
		c := *m
		c.Payload = bytes.Clone(m.Payload)
		c.Attrs = append([]capfile.Attr(nil), m.Attrs...)
		got = append(got, c)
		return nil
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	var recv []transport.Message
	for _, m := range got {
		if m.Kind == capfile.KindReceived {
			recv = append(recv, m)
		}
	}
	if len(recv) != 2+len(events) {
		t.Fatalf("%d received", len(recv))
	}
	if !bytes.Equal(recv[0].Payload, manifest) {
		t.Errorf("manifest %s", recv[0].Payload)
	}
	if !bytes.Contains(recv[1].Payload, []byte(`"subscription.accepted"`)) || attr(recv[1].Attrs, "message_type") != "subscription.accepted" {
		t.Errorf("handshake answer %s %v", recv[1].Payload, recv[1].Attrs)
	}
	for i, e := range events {
		if !bytes.Equal(recv[i+2].Payload, e) {
			t.Errorf("event %d: %s", i, recv[i+2].Payload)
		}
	}
	if mt := attr(recv[2].Attrs, "message_type"); mt != "aaep:agent.session.started" {
		t.Errorf("message_type %q", mt)
	}
	// Paced: the replay starts once the request has come, and the last
	// event is due 60 ms after the first, which goes at the start: it cannot come
	// sooner after the request was sent.
	var sentAt int64 = -1
	for _, m := range got {
		if m.Kind == capfile.KindSent {
			sentAt = m.Time
			break
		}
	}
	if d := time.Duration(recv[len(recv)-1].Time - sentAt); sentAt < 0 || d < 60*ms {
		t.Errorf("the last event came %v after the request, before its time (60 ms after the first)", d)
	}
	last := got[len(got)-1]
	if last.Kind != capfile.KindConn || !strings.Contains(string(last.Payload), `"closed"`) {
		t.Errorf("last %s", last.Payload)
	}
	// The recording lists the subscriber as a gRPC source and holds its request.
	var sent int
	for _, r := range rec.all() {
		if r.Kind == capfile.KindSent && bytes.Contains(r.Payload, []byte("subscription.request")) {
			sent++
		}
	}
	if sent != 1 {
		t.Errorf("recorded %d requests", sent)
	}
}

func attr(as []capfile.Attr, k string) string {
	for _, a := range as {
		if a.Key == k {
			return a.Value
		}
	}
	return ""
}

// The first message must be a subscription.request; a rejected one is
// answered, then the stream ends PERMISSION_DENIED. One sent after the
// WebSocket grace period is answered before any event (the stream never
// starts without it: on a loaded machine, 50 gRPC subscribers of serve
// got an event before their accepted); a stream that ends its sending side
// without one ends INVALID_ARGUMENT, nothing sent.
func TestHandshake(t *testing.T) {
	_, addr := start(t, serve.Options{Open: serve.OpenFile(writeCapture(t)), CloseAtEnd: true, Grace: 20 * time.Millisecond})
	cc, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	client := aaepv1.NewAaepServiceClient(cc)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, tc := range []struct {
		name, first string
		code        codes.Code
		answer      string
		after       time.Duration // the first message is sent after this
		events      int           // events that follow the answer
	}{
		{name: "not a request", first: `{"type":"confirmation.reply","reply_token":"x","decision":"accept"}`, code: codes.InvalidArgument},
		{name: "rejected", first: `{"type":"subscription.request","aaep_version":"9.0.0","capabilities":{}}`, code: codes.PermissionDenied, answer: "subscription.rejected"},
		{name: "after the grace period", after: 300 * time.Millisecond,
			first: `{"type":"subscription.request","aaep_version":"1.0.0","capabilities":{"supports_confirmation_reply":true,"supports_clarification_reply":true}}`,
			code:  codes.OK, answer: "subscription.accepted", events: len(events)},
		{name: "none: the sending side ended", code: codes.InvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := client.Subscribe(ctx)
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(tc.after)
			if tc.first == "" {
				err = st.CloseSend()
			} else {
				err = st.Send(&aaepv1.AaepMessage{Json: []byte(tc.first)})
			}
			if err != nil {
				t.Fatal(err)
			}
			var msgs []string
			for {
				m, err := st.Recv()
				if err != nil {
					if code := status.Code(err); errors.Is(err, io.EOF) && tc.code != codes.OK || !errors.Is(err, io.EOF) && code != tc.code {
						t.Errorf("ended %v, want %v", err, tc.code)
					}
					break
				}
				msgs = append(msgs, string(m.GetJson()))
			}
			if tc.answer == "" && len(msgs) != 0 || tc.answer != "" && (len(msgs) != 1+tc.events || !strings.Contains(msgs[0], tc.answer)) {
				t.Errorf("got %q", msgs)
			}
		})
	}
}

// A subscriber that cancels its call ends its subscription; one that
// stops reading is closed as stalled (its connection closed) while another
// goes on.
func TestCancelAndStall(t *testing.T) {
	// A capture of 400 events of 64 KiB, sent without delay.
	path := filepath.Join(t.TempDir(), "big.aaep")
	w, err := capfile.Create(path, capfile.Header{Start: time.Now(), Tool: "test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("x", 64<<10)
	for i := range 400 {
		if err := w.Append(&capfile.Record{Kind: capfile.KindReceived, Time: int64(i), Payload: ev(i, "output.streaming", "s", `,"chunk":"`+pad+`"`)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// Two servers: the one for the cancel waits long before calling a
	// subscriber stalled, so that a slow test machine is never taken for
	// a stalled subscriber; the other calls it stalled after 300 ms.
	dial := func(writeTimeout time.Duration) (*serve.Server, aaepv1.AaepServiceClient) {
		var tm serve.Options
		tm.Open = serve.OpenFile(path)
		tm.Timing.NoDelay = true
		tm.WriteTimeout = writeTimeout
		srv, addr := start(t, tm)
		cc, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(8<<20)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cc.Close() })
		return srv, aaepv1.NewAaepServiceClient(cc)
	}
	req := &aaepv1.AaepMessage{Json: []byte(`{"type":"subscription.request","aaep_version":"1.0.0","capabilities":{}}`)}

	srv, client := dial(time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	st, err := client.Subscribe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(req); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := st.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	waitClosed(t, srv, "subscriber")

	srv, client = dial(300 * ms)
	stalled, err := client.Subscribe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := stalled.Send(req); err != nil {
		t.Fatal(err)
	}
	if _, err := stalled.Recv(); err != nil { // the answer; then it reads no more
		t.Fatal(err)
	}
	waitClosed(t, srv, "stalled")
	for {
		if _, err := stalled.Recv(); err != nil {
			if status.Code(err) != codes.Unavailable && status.Code(err) != codes.ResourceExhausted {
				t.Errorf("stalled stream ended %v", err)
			}
			break
		}
	}
}

// waitClosed waits until Stats counts a close with cause.
func waitClosed(t *testing.T, srv *serve.Server, cause string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if srv.Stats().Closes[cause] > 0 {
			return
		}
		time.Sleep(10 * ms)
	}
	t.Fatalf("no subscription closed as %s: %+v", cause, srv.Stats().Closes)
}

// TestPythonSubscriber feeds a subscriber written with Python's grpcio: it
// gets the manifest and every event byte for byte, its reply on the stream
// is accepted and recorded.
func TestPythonSubscriber(t *testing.T) {
	pb := grpctest.PythonModules(t)
	rec := &memRecord{}
	srv, addr := start(t, serve.Options{Open: serve.OpenFile(writeCapture(t)), CloseAtEnd: true, Record: rec})
	cmd := exec.Command(grpctest.Python, grpctest.Peer("subscriber.py"), pb, addr)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python subscriber: %v\n%s", err, out)
	}
	lines := parsePeer(t, bytes.NewReader(out))
	if !bytes.Equal(lines["MANIFEST"][0], manifest) {
		t.Errorf("manifest %s", lines["MANIFEST"])
	}
	recv := lines["RECV"]
	if len(recv) != 1+len(events) {
		t.Fatalf("python got %d messages", len(recv))
	}
	for i, e := range events {
		if !bytes.Equal(recv[i+1], e) {
			t.Errorf("event %d: %s", i, recv[i+1])
		}
	}
	if end := string(lines["END"][0]); end != "OK" {
		t.Errorf("stream ended %s", end)
	}
	if n := srv.Stats().RepliesAccepted; n != 1 {
		t.Errorf("%d replies accepted", n)
	}
	var replies int
	for _, r := range rec.all() {
		if r.Kind == capfile.KindSent && bytes.Contains(r.Payload, []byte(`"confirmation.reply"`)) && attr(r.Attrs, "verdict") == serve.VerdictAccepted {
			replies++
		}
	}
	if replies != 1 {
		t.Errorf("%d accepted replies recorded", replies)
	}
}

// parsePeer reads a peer's "WORD [type] hex" lines: for RECV the json, for
// MANIFEST the manifest, for END the status name.
func parsePeer(t *testing.T, r io.Reader) map[string][][]byte {
	t.Helper()
	out := map[string][][]byte{}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "END":
			out["END"] = append(out["END"], []byte(f[1]))
		case "MANIFEST", "RECV":
			b, err := hex.DecodeString(f[len(f)-1])
			if err != nil {
				t.Fatalf("peer line %q: %v", sc.Text(), err)
			}
			out[f[0]] = append(out[f[0]], b)
		}
	}
	return out
}
