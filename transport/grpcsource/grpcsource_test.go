package grpcsource_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/grpcbind/aaepv1"
	"github.com/aaep-tools/aaepkit/grpcbind/grpctest"
	"github.com/aaep-tools/aaepkit/transport"
	_ "github.com/aaep-tools/aaepkit/transport/grpcsource"
)

// got is a copy of a delivered message.
type got struct {
	Kind    capfile.Kind
	Payload []byte
	Attrs   []capfile.Attr
	Conn    *transport.ConnEvent
}

func (g got) attr(k string) string {
	for _, a := range g.Attrs {
		if a.Key == k {
			return a.Value
		}
	}
	return ""
}

type collector struct {
	mu    sync.Mutex
	msgs  []got
	last  int64
	onMsg func(g got)
	bad   string
}

func (c *collector) emit(m *transport.Message) error {
	g := got{Kind: m.Kind, Payload: bytes.Clone(m.Payload), Attrs: append([]capfile.Attr(nil), m.Attrs...)}
	if m.Conn != nil {
		ev := *m.Conn
		g.Conn = &ev
	}
	c.mu.Lock()
	if m.Time < c.last {
		c.bad = "times go backwards"
	}
	c.last = m.Time
	c.msgs = append(c.msgs, g)
	on := c.onMsg
	c.mu.Unlock()
	if on != nil {
		on(g)
	}
	return nil
}

func (c *collector) all() []got {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]got(nil), c.msgs...)
}

func (c *collector) received() [][]byte {
	var out [][]byte
	for _, g := range c.all() {
		if g.Kind == capfile.KindReceived && g.attr("grpc_method") == "" {
			out = append(out, g.Payload)
		}
	}
	return out
}

func (c *collector) events(name string) []transport.ConnEvent {
	var out []transport.ConnEvent
	for _, g := range c.all() {
		if g.Conn != nil && g.Conn.Event == name {
			out = append(out, *g.Conn)
		}
	}
	return out
}

// run records endpoint with opts until the source returns (bounded).
func run(t *testing.T, ctx context.Context, endpoint string, opts transport.Options, c *collector) error {
	t.Helper()
	if opts.Clock == nil {
		opts.Clock = transport.NewClock()
	}
	if opts.Retry.Initial == 0 {
		opts.Retry.Initial = 20 * time.Millisecond
		opts.Retry.Max = 100 * time.Millisecond
		opts.Retry.MaxRetries = 5
	}
	src, err := transport.New(endpoint, opts)
	if err != nil {
		t.Fatal(err)
	}
	if info := src.Info(); info.Transport != "grpc" || info.Endpoint != strings.TrimSuffix(endpoint, "/") {
		t.Errorf("Info = %+v", info)
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	err = src.Run(ctx, c.emit)
	if c.bad != "" {
		t.Error(c.bad)
	}
	return err
}

// sendAll sends accepted and n events of session sess, then ends with err.
func sendAll(s grpctest.Stream, sess string, n int, err error) error {
	if e := s.Send(&aaepv1.AaepMessage{Json: grpctest.Accepted("sub_" + sess), MessageType: "subscription.accepted"}); e != nil {
		return e
	}
	for i := range n {
		if e := s.Send(&aaepv1.AaepMessage{Json: grpctest.Event(sess, i), MessageType: "aaep:agent.output.streaming"}); e != nil {
			return e
		}
	}
	return err
}

func start(t *testing.T, p aaepv1.AaepServiceServer, opts ...grpc.ServerOption) string {
	ln := grpctest.Listen(t, "")
	grpctest.Serve(t, p, ln, opts...)
	return ln.Addr().String()
}

func TestRecordsByteForByte(t *testing.T) {
	odd := []byte("{ \"type\" :\"aaep:agent.output.streaming\",\"session_id\":\"s1\",\"chunk\":\"caf\\u00e9 \u00e9\" }")
	p := &grpctest.Producer{Manifest: grpctest.Manifest, Handle: func(s grpctest.Stream, _ int, _ *aaepv1.AaepMessage) error {
		if err := sendAll(s, "s1", 3, nil); err != nil {
			return err
		}
		return s.Send(&aaepv1.AaepMessage{Json: odd})
	}}
	addr := start(t, p)
	c := &collector{}
	opts := transport.Options{Header: http.Header{"Authorization": {"Bearer sekrit-token"}}, Request: []byte(`{"type":"subscription.request","aaep_version":"1.0.0","capabilities":{"preferred_verbosity":"detailed"}}`)}
	if err := run(t, context.Background(), "grpc://"+addr, opts, c); err != nil {
		t.Fatalf("Run: %v", err)
	}
	msgs := c.all()
	// connected, manifest, request sent, accepted, 3 events, odd, closed.
	if len(msgs) != 9 {
		t.Fatalf("%d messages: %+v", len(msgs), msgs)
	}
	if msgs[0].Conn == nil || msgs[0].Conn.Event != "connected" {
		t.Errorf("first: %+v", msgs[0])
	}
	if !bytes.Equal(msgs[1].Payload, grpctest.Manifest) || msgs[1].attr("grpc_method") != "GetManifest" || msgs[1].Kind != capfile.KindReceived {
		t.Errorf("manifest: %+v", msgs[1])
	}
	if msgs[2].Kind != capfile.KindSent || !bytes.Equal(msgs[2].Payload, opts.Request) {
		t.Errorf("sent: %+v", msgs[2])
	}
	if reqs := p.Requests(); len(reqs) != 1 || !bytes.Equal(reqs[0], opts.Request) {
		t.Errorf("producer got %q", reqs)
	}
	want := [][]byte{grpctest.Accepted("sub_s1"), grpctest.Event("s1", 0), grpctest.Event("s1", 1), grpctest.Event("s1", 2), odd}
	if gotRecv := c.received(); len(gotRecv) != len(want) {
		t.Fatalf("received %q", gotRecv)
	} else {
		for i := range want {
			if !bytes.Equal(gotRecv[i], want[i]) {
				t.Errorf("message %d: %q, want %q", i, gotRecv[i], want[i])
			}
		}
	}
	if mt := msgs[4].attr("message_type"); mt != "aaep:agent.output.streaming" {
		t.Errorf("message_type = %q", mt)
	}
	if mt := msgs[7].attr("message_type"); mt != "" {
		t.Errorf("odd message has message_type %q", mt)
	}
	if last := msgs[8]; last.Conn == nil || last.Conn.Event != "closed" {
		t.Errorf("last: %+v", last)
	}
	// The token reached the producer as metadata, and no record holds it.
	for _, md := range p.Metadata() {
		if got := md.Get("authorization"); len(got) != 1 || got[0] != "Bearer sekrit-token" {
			t.Errorf("authorization metadata %q", got)
		}
	}
	for _, m := range msgs {
		if bytes.Contains(m.Payload, []byte("sekrit")) {
			t.Errorf("token recorded: %s", m.Payload)
		}
	}
}

func TestNoManifest(t *testing.T) {
	p := &grpctest.Producer{Handle: func(s grpctest.Stream, _ int, _ *aaepv1.AaepMessage) error { return sendAll(s, "s1", 1, nil) }}
	addr := start(t, p)
	c := &collector{}
	if err := run(t, context.Background(), "grpc://"+addr, transport.Options{}, c); err != nil {
		t.Fatal(err)
	}
	conn := c.events("connected")
	if len(conn) != 1 || !strings.Contains(conn[0].Reason, "UNIMPLEMENTED") {
		t.Errorf("connected: %+v", conn)
	}
	if n := len(c.received()); n != 2 {
		t.Errorf("%d received", n)
	}
}

// A stream that fails mid-session is subscribed again, the request sent
// again; so is one whose deadline passes; a manifest unchanged is kept once.
func TestReconnectResends(t *testing.T) {
	for _, tc := range []struct {
		name     string
		deadline time.Duration
		end      func(s grpctest.Stream) error
		reason   string
	}{
		{"closed mid-session", 0, func(grpctest.Stream) error { return status.Error(codes.Unavailable, "going away") }, "UNAVAILABLE"},
		{"deadline", time.Second, func(s grpctest.Stream) error {
			<-s.Context().Done()
			return status.FromContextError(s.Context().Err()).Err()
		}, "DEADLINE_EXCEEDED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &grpctest.Producer{Manifest: grpctest.Manifest}
			p.Handle = func(s grpctest.Stream, n int, _ *aaepv1.AaepMessage) error {
				if n == 3 {
					return sendAll(s, "s3", 1, nil) // the end
				}
				if err := sendAll(s, "s"+string(rune('0'+n)), 2, nil); err != nil {
					return err
				}
				return tc.end(s)
			}
			addr := start(t, p)
			c := &collector{}
			if err := run(t, context.Background(), "grpc://"+addr, transport.Options{StreamDeadline: tc.deadline}, c); err != nil {
				t.Fatal(err)
			}
			if n := len(p.Requests()); n != 3 {
				t.Errorf("%d subscription requests, want 3", n)
			}
			if n := len(c.received()); n != 3+3+2 {
				t.Errorf("%d received, want 8", n)
			}
			disc := c.events("disconnected")
			if len(disc) != 2 || !strings.Contains(disc[0].Error, tc.reason) {
				t.Errorf("disconnections: %+v", disc)
			}
			manifests := 0
			for _, g := range c.all() {
				if g.attr("grpc_method") == "GetManifest" {
					manifests++
				}
			}
			if manifests != 1 {
				t.Errorf("%d manifests recorded, want 1 (unchanged)", manifests)
			}
		})
	}
}

// A producer that restarts on the same address is reached again.
func TestProducerRestarts(t *testing.T) {
	ln := grpctest.Listen(t, "")
	addr := ln.Addr().String()
	var srv1 *grpc.Server
	restarted := make(chan struct{})
	p1 := &grpctest.Producer{Manifest: grpctest.Manifest, Handle: func(s grpctest.Stream, _ int, _ *aaepv1.AaepMessage) error {
		if err := sendAll(s, "a", 2, nil); err != nil {
			return err
		}
		<-s.Context().Done()
		return nil
	}}
	p2 := &grpctest.Producer{Manifest: []byte(`{"type":"aaep:producer.manifest","agent_id":"grpctest","agent_version":"2"}`), Handle: func(s grpctest.Stream, _ int, _ *aaepv1.AaepMessage) error {
		return sendAll(s, "b", 2, nil)
	}}
	srv1 = grpctest.Serve(t, p1, ln)
	c := &collector{}
	c.onMsg = func(g got) {
		if bytes.Equal(g.Payload, grpctest.Event("a", 1)) {
			go func() {
				srv1.Stop()
				grpctest.Serve(t, p2, grpctest.Listen(t, addr))
				close(restarted)
			}()
		}
	}
	// Retries enough for a restart on a loaded machine.
	retry := transport.Retry{Initial: 20 * time.Millisecond, Max: 100 * time.Millisecond, MaxRetries: 100}
	if err := run(t, context.Background(), "grpc://"+addr, transport.Options{Retry: retry}, c); err != nil {
		t.Fatal(err)
	}
	<-restarted
	if n := len(p2.Requests()); n != 1 {
		t.Errorf("restarted producer got %d requests", n)
	}
	if n := len(c.received()); n != 6 {
		t.Errorf("%d received, want 6", n)
	}
	manifests := 0
	for _, g := range c.all() {
		if g.attr("grpc_method") == "GetManifest" {
			manifests++
		}
	}
	if manifests != 2 {
		t.Errorf("%d manifests, want 2 (the restarted producer's differs)", manifests)
	}
}

func TestLargeMessages(t *testing.T) {
	big := func(n int) []byte {
		b := bytes.Repeat([]byte("a"), n)
		copy(b, `{"type":"aaep:agent.output.streaming","session_id":"s","chunk":"`)
		copy(b[n-2:], `"}`)
		return b
	}
	five := big(5 << 20)
	overByLittle := big(1<<20 + 100)
	p := &grpctest.Producer{Manifest: grpctest.Manifest}
	p.Handle = func(s grpctest.Stream, n int, _ *aaepv1.AaepMessage) error {
		if err := sendAll(s, "s", 1, nil); err != nil {
			return err
		}
		if n == 1 {
			if err := s.Send(&aaepv1.AaepMessage{Json: overByLittle}); err != nil {
				return err
			}
			if err := s.Send(&aaepv1.AaepMessage{Json: grpctest.Event("s", 7)}); err != nil {
				return err
			}
			if err := s.Send(&aaepv1.AaepMessage{Json: five}); err != nil {
				return err
			}
			<-s.Context().Done()
		}
		return nil
	}
	addr := start(t, p, grpc.MaxSendMsgSize(16<<20))

	t.Run("5 MiB recorded", func(t *testing.T) {
		p2 := &grpctest.Producer{Handle: func(s grpctest.Stream, _ int, _ *aaepv1.AaepMessage) error {
			return s.Send(&aaepv1.AaepMessage{Json: five})
		}}
		c := &collector{}
		if err := run(t, context.Background(), "grpc://"+start(t, p2), transport.Options{}, c); err != nil {
			t.Fatal(err)
		}
		if r := c.received(); len(r) != 1 || !bytes.Equal(r[0], five) {
			t.Errorf("5 MiB message not recorded byte for byte (%d messages)", len(r))
		}
	})
	t.Run("over the limit", func(t *testing.T) {
		c := &collector{}
		if err := run(t, context.Background(), "grpc://"+addr, transport.Options{MaxMessageSize: 1 << 20}, c); err != nil {
			t.Fatal(err)
		}
		ref := c.events("refused")
		if len(ref) != 2 || ref[0].Size != int64(len(overByLittle)) || ref[0].Limit != 1<<20 || ref[1].Size <= int64(len(five)) {
			t.Errorf("refused: %+v", ref)
		}
		// The small refusal keeps the stream: event 7 follows it. The large
		// one ends it (gRPC's limit): subscribed again.
		r := c.received()
		if len(r) != 5 || !bytes.Equal(r[2], grpctest.Event("s", 7)) {
			t.Errorf("received %d: %q", len(r), r)
		}
		if n := len(p.Requests()); n != 2 {
			t.Errorf("%d requests", n)
		}
		if d := c.events("disconnected"); len(d) != 1 || !strings.Contains(d[0].Error, "--max-message-size") {
			t.Errorf("disconnected: %+v", d)
		}
	})
}

// Stopping the capture says goodbye: subscription.close on the stream,
// recorded, and a closed event.
func TestCancelSaysGoodbye(t *testing.T) {
	p := &grpctest.Producer{Manifest: grpctest.Manifest}
	p.Handle = func(s grpctest.Stream, _ int, _ *aaepv1.AaepMessage) error {
		if err := sendAll(s, "s", 1, nil); err != nil {
			return err
		}
		for {
			m, err := s.Recv()
			if err != nil {
				return nil
			}
			p.Keep(m.GetJson())
		}
	}
	addr := start(t, p)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := &collector{}
	c.onMsg = func(g got) {
		if bytes.Equal(g.Payload, grpctest.Event("s", 0)) {
			cancel()
		}
	}
	if err := run(t, ctx, "grpc://"+addr, transport.Options{}, c); err != nil {
		t.Fatal(err)
	}
	got := p.Received()
	if len(got) != 1 || !bytes.Contains(got[0], []byte(`"subscription.close"`)) || !bytes.Contains(got[0], []byte(`"sub_s"`)) {
		t.Errorf("producer received %q", got)
	}
	msgs := c.all()
	if len(msgs) < 2 {
		t.Fatal(msgs)
	}
	if g := msgs[len(msgs)-2]; g.Kind != capfile.KindSent || !bytes.Equal(g.Payload, got[0]) {
		t.Errorf("goodbye not recorded: %+v", g)
	}
	if g := msgs[len(msgs)-1]; g.Conn == nil || g.Conn.Event != "closed" || g.Conn.Reason != "capture stopped" {
		t.Errorf("last: %+v", g)
	}
}

// Failures that asking again will not fix end the source at once, with a
// message that says what the server is; transient ones are retried.
func TestFailures(t *testing.T) {
	httpSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("hello")) }))
	defer httpSrv.Close()
	noService := start(t, nil) // gRPC, without AaepService
	exhausted := &grpctest.Producer{Manifest: grpctest.Manifest, Handle: func(grpctest.Stream, int, *aaepv1.AaepMessage) error {
		return status.Error(codes.ResourceExhausted, "too many subscribers")
	}}
	denied := &grpctest.Producer{Manifest: grpctest.Manifest, Handle: func(grpctest.Stream, int, *aaepv1.AaepMessage) error {
		return status.Error(codes.Unauthenticated, "bad token")
	}}
	rejected := &grpctest.Producer{Manifest: grpctest.Manifest, Handle: func(s grpctest.Stream, _ int, _ *aaepv1.AaepMessage) error {
		return s.Send(&aaepv1.AaepMessage{Json: []byte(`{"type":"subscription.rejected","reason_code":"version_unsupported"}`)})
	}}
	free := grpctest.Listen(t, "")
	freeAddr := free.Addr().String()
	free.Close()
	for _, tc := range []struct {
		name, endpoint string
		want           []string
		is             error
		attempts       int // failed events
	}{
		{"not gRPC", "grpc://" + strings.TrimPrefix(httpSrv.URL, "http://"), []string{"is not a gRPC server"}, transport.ErrFailed, 1},
		{"UNIMPLEMENTED", "grpc://" + noService, []string{"does not implement aaep.v1.AaepService/Subscribe", "UNIMPLEMENTED"}, transport.ErrFailed, 0},
		{"RESOURCE_EXHAUSTED", "grpc://" + start(t, exhausted), []string{"RESOURCE_EXHAUSTED", "too many subscribers", "giving up after 3 attempts"}, transport.ErrFailed, 0},
		{"UNAUTHENTICATED", "grpc://" + start(t, denied), []string{"UNAUTHENTICATED", "bad token"}, transport.ErrRejected, 0},
		{"rejected", "grpc://" + start(t, rejected), []string{"subscription.rejected"}, transport.ErrRejected, 0},
		{"refused", "grpc://" + freeAddr, []string{"connection refused", "--wait"}, transport.ErrRefusedAtFirst, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &collector{}
			err := run(t, context.Background(), tc.endpoint, transport.Options{Retry: transport.Retry{Initial: 10 * time.Millisecond, Max: 20 * time.Millisecond, MaxRetries: 2}}, c)
			if err == nil || !errors.Is(err, tc.is) {
				t.Fatalf("err = %v, want %v", err, tc.is)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if g := c.events("gave_up"); len(g) != 1 {
				t.Errorf("gave_up events: %+v", g)
			}
			if tc.attempts > 0 {
				if f := c.events("failed"); len(f) != tc.attempts {
					t.Errorf("failed events %+v, want %d", f, tc.attempts)
				}
			}
		})
	}
}

func TestMutualTLS(t *testing.T) {
	ca := grpctest.NewCA(t)
	p := &grpctest.Producer{Manifest: grpctest.Manifest, Handle: func(s grpctest.Stream, _ int, _ *aaepv1.AaepMessage) error { return sendAll(s, "s", 1, nil) }}
	addr := start(t, p, grpc.Creds(credentials.NewTLS(ca.ServerTLS(true))))
	retry := transport.Retry{Initial: 10 * time.Millisecond, Max: 20 * time.Millisecond, MaxRetries: 1}

	c := &collector{}
	withCert := &tls.Config{RootCAs: ca.Pool, Certificates: []tls.Certificate{ca.Client}}
	if err := run(t, context.Background(), "grpcs://"+addr, transport.Options{TLS: withCert, Retry: retry}, c); err != nil {
		t.Fatalf("with a client certificate: %v", err)
	}
	if n := len(c.received()); n != 2 {
		t.Errorf("%d received", n)
	}

	c = &collector{}
	err := run(t, context.Background(), "grpcs://"+addr, transport.Options{TLS: &tls.Config{RootCAs: ca.Pool}, Retry: retry}, c)
	if err == nil || !errors.Is(err, transport.ErrFailed) {
		t.Fatalf("without a client certificate: %v", err)
	}
	if len(c.received()) != 0 {
		t.Error("recorded without a client certificate")
	}

	c = &collector{}
	err = run(t, context.Background(), "grpcs://"+addr, transport.Options{Retry: retry}, c)
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("untrusted server: %v", err)
	}
}

func TestEndpoints(t *testing.T) {
	for _, tc := range []struct{ endpoint, want string }{
		{"grpc://127.0.0.1", "no port"},
		{"grpc://127.0.0.1:1/aaep", "HOST:PORT only"},
		{"grpc://", "no host"},
	} {
		_, err := transport.New(tc.endpoint, transport.Options{Clock: transport.NewClock()})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.endpoint, err, tc.want)
		}
	}
	src, err := transport.New("grpcs://user:pw@example.com", transport.Options{Clock: transport.NewClock()})
	if err != nil {
		t.Fatal(err)
	}
	if e := src.Info().Endpoint; e != "grpcs://example.com:443" {
		t.Errorf("endpoint %q", e)
	}
	b, _ := json.Marshal(src.Info())
	if bytes.Contains(b, []byte("pw")) {
		t.Errorf("credentials in %s", b)
	}
}
