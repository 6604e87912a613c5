package transport_test

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/transport"
	"github.com/aaep-tools/aaepkit/transport/transporttest"
)

func TestSSEByteExact(t *testing.T) {
	events := transporttest.Events(50)
	frames := transporttest.Frames(events)
	// Pretty-printed JSON spans several data: lines; the payload is the
	// lines joined with "\n" (the SSE standard), so it comes back whole.
	pretty := []byte("{\n  \"type\": \"aaep:agent.state.changed\",\n  \"event_id\": \"evt_pretty\"\n}")
	badJSON := []byte(`{"type":"aaep:agent.tool.invoked","event_id":"evt_bad",`)
	badUTF8 := []byte("{\"type\":\"aaep:agent.output.streaming\",\"chunk\":\"caf\xe9 \xff\"}")
	leadingSpace := []byte(`  {"type":"x"}`)
	// The last frame has an id, so that the reconnection after the end of
	// the stream resumes after it (and gets 204).
	frames = append(frames,
		transporttest.Frame{Data: badUTF8, NoID: true, Event: "ext.custom"},
		transporttest.Frame{Data: leadingSpace, NoID: true},
		transporttest.Frame{Data: pretty},
		transporttest.Frame{Data: badJSON, ID: "evt_bad"},
	)
	want := append(slices.Clone(events), badUTF8, leadingSpace, pretty, badJSON)

	for _, tc := range []struct {
		name, path string
		endpoint   func(origin string) string
	}{
		{"bare origin finds /aaep/v1/events", "", func(o string) string { return o }},
		{"bare origin falls back to /events", "/events", func(o string) string { return o + "/" }},
		{"explicit path", "/custom/stream", func(o string) string { return o + "/custom/stream" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &transporttest.SSEProducer{Frames: frames, Path: tc.path}
			origin := p.Start(t)
			src, err := transport.New(tc.endpoint(origin), testOpts())
			if err != nil {
				t.Fatal(err)
			}
			if info := src.Info(); info.Transport != "sse" {
				t.Fatalf("transport %q", info.Transport)
			}
			c := &collector{}
			if err := run(t, src, c); err != nil {
				t.Fatalf("Run: %v", err)
			}
			checkPayloads(t, c, want)
			checkMonotonic(t, c.all())
			rec := c.kind(capfile.KindReceived)
			if got := rec[0].attr("id"); got != "evt_0000000000000000" {
				t.Errorf("id attr %q", got)
			}
			if got := rec[0].attr("event"); got != "aaep.event" {
				t.Errorf("event attr %q", got)
			}
			if got := rec[len(events)].attr("event"); got != "ext.custom" {
				t.Errorf("custom event attr %q", got)
			}
			if got := rec[len(events)].attr("id"); got != "" {
				t.Errorf("event without id line has id attr %q", got)
			}
			// The stream ends after the last frame; the reconnection with
			// Last-Event-ID gets 204, which ends the source cleanly.
			if ev := c.events(); ev[len(ev)-1] != capfile.ConnClosed {
				t.Errorf("events %v, want a final closed", ev)
			}
			for _, r := range p.Requests() {
				if r.Method == http.MethodGet && r.URL.Path == p.Path && r.Header.Get("Accept") != "text/event-stream" {
					t.Errorf("Accept %q", r.Header.Get("Accept"))
				}
			}
		})
	}
}

func TestSSEReconnectAfterMidMessageDrop(t *testing.T) {
	events := transporttest.Events(10)
	p := &transporttest.SSEProducer{Frames: transporttest.Frames(events), DropAt: 4, Retry: 1}
	origin := p.Start(t)
	src, err := transport.New(origin+"/aaep/v1/events", testOpts())
	if err != nil {
		t.Fatal(err)
	}
	c := &collector{}
	if err := run(t, src, c); err != nil {
		t.Fatalf("Run: %v", err)
	}
	// Every event exactly once, in order: the torn one is re-sent after
	// the reconnection that names the last complete event.
	checkPayloads(t, c, events)
	checkMonotonic(t, c.all())

	wantEvents := []string{"connected", "disconnected", "connected", "disconnected", "closed"}
	if got := c.events(); !slices.Equal(got, wantEvents) {
		t.Fatalf("connection events %v, want %v", got, wantEvents)
	}
	conns := c.kind(capfile.KindConn)
	if conns[1].Conn.Partial == 0 {
		t.Errorf("the mid-message drop reports no partial bytes: %+v", conns[1].Conn)
	}
	if conns[1].Conn.RetryMS < 0 || conns[1].Conn.Error == "" {
		t.Errorf("disconnect without error: %+v", conns[1].Conn)
	}
	if got := conns[2].Conn.LastEventID; got != "evt_0000000000000003" {
		t.Errorf("reconnect last_event_id %q", got)
	}
	var lastIDs []string
	for _, r := range p.Requests() {
		lastIDs = append(lastIDs, r.Header.Get("Last-Event-ID"))
	}
	want := []string{"", "evt_0000000000000003", "evt_0000000000000009"}
	if !slices.Equal(lastIDs, want) {
		t.Errorf("Last-Event-ID of requests %q, want %q", lastIDs, want)
	}
}

func TestSSEOversizedEventRefused(t *testing.T) {
	events := transporttest.Events(6)
	big := []byte(`{"type":"aaep:agent.output.streaming","chunk":"` + strings.Repeat("x", 200_000) + `"}`)
	frames := transporttest.Frames(events[:3])
	frames = append(frames, transporttest.Frame{Data: big, ID: "evt_big"})
	frames = append(frames, transporttest.Frames(events[3:])...)
	p := &transporttest.SSEProducer{Frames: frames}
	origin := p.Start(t)
	opts := testOpts()
	opts.MaxMessageSize = 100_000 // larger than the read buffer: the long-line path
	src, _ := transport.New(origin, opts)
	c := &collector{}
	if err := run(t, src, c); err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkPayloads(t, c, events)
	var refused []*transport.ConnEvent
	for _, g := range c.kind(capfile.KindConn) {
		if g.Conn.Event == capfile.ConnRefused {
			refused = append(refused, g.Conn)
		}
	}
	if len(refused) != 1 || refused[0].Size != int64(len(big)) || refused[0].Limit != 100_000 {
		t.Fatalf("refused events %+v, want one of size %d", refused, len(big))
	}
	if n := len(p.Requests()); n != 2 {
		t.Errorf("%d requests: the oversized event must not cost a reconnection", n)
	}
}

func TestSSESubscribe(t *testing.T) {
	events := transporttest.Events(5)
	p := &transporttest.SSEProducer{Frames: transporttest.Frames(events), Subscribe: true, Path: "/stream"}
	origin := p.Start(t)
	opts := testOpts()
	opts.Subscribe = true
	src, _ := transport.New(origin, opts)
	c := &collector{}
	if err := run(t, src, c); err != nil {
		t.Fatalf("Run: %v", err)
	}
	all := c.all()
	if all[0].Kind != capfile.KindSent || all[1].Kind != capfile.KindReceived {
		t.Fatalf("first kinds %d %d, want sent then received", all[0].Kind, all[1].Kind)
	}
	bodies := p.Bodies()
	if len(bodies) != 1 || string(bodies[0]) != string(all[0].Payload) {
		t.Fatalf("recorded request %q, producer got %q", all[0].Payload, bodies)
	}
	if !strings.Contains(string(all[1].Payload), `"subscription.accepted"`) || all[1].attr("status") != "201" {
		t.Fatalf("recorded response %q attrs %v", all[1].Payload, all[1].Attrs)
	}
	checkPayloads(t, c, append([][]byte{all[1].Payload}, events...))
	// The stream was opened at the Location of the accepted subscription.
	var streamQueries []string
	for _, r := range p.Requests() {
		if r.Method == http.MethodGet {
			streamQueries = append(streamQueries, r.URL.RawQuery)
		}
	}
	if len(streamQueries) == 0 || streamQueries[0] != "subscription_id=sub_test" {
		t.Errorf("stream queries %q", streamQueries)
	}
}

func TestSSEResubscribesWhenSubscriptionExpires(t *testing.T) {
	events := transporttest.Events(8)
	p := &transporttest.SSEProducer{Frames: transporttest.Frames(events), Subscribe: true, DropAt: 3, ExpireOnDrop: true}
	origin := p.Start(t)
	opts := testOpts()
	opts.Subscribe = true
	src, _ := transport.New(origin, opts)
	c := &collector{}
	if err := run(t, src, c); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if n := len(p.Bodies()); n != 2 {
		t.Fatalf("%d subscription requests, want 2", n)
	}
	var got [][]byte
	for _, g := range c.kind(capfile.KindReceived) {
		if !strings.Contains(string(g.Payload), "subscription.accepted") {
			got = append(got, g.Payload)
		}
	}
	// The new subscription resumes after the last event received.
	if len(got) != len(events) {
		t.Fatalf("%d events, want %d", len(got), len(events))
	}
	var queries []string
	for _, r := range p.Requests() {
		if r.Method == http.MethodGet {
			queries = append(queries, r.URL.RawQuery+" last="+r.Header.Get("Last-Event-ID"))
		}
	}
	want := []string{"subscription_id=sub_test last=", "subscription_id=sub_test last=evt_0000000000000002",
		"subscription_id=sub_test2 last=evt_0000000000000002", "subscription_id=sub_test2 last=evt_0000000000000007"}
	if !slices.Equal(queries, want) {
		t.Fatalf("stream requests %q, want %q", queries, want)
	}
}

func TestSSESubscriptionRejected(t *testing.T) {
	p := &transporttest.SSEProducer{Frames: transporttest.Frames(transporttest.Events(2)), Subscribe: true, Reject: true}
	origin := p.Start(t)
	opts := testOpts()
	opts.Subscribe = true
	src, _ := transport.New(origin, opts)
	c := &collector{}
	err := run(t, src, c)
	if !errors.Is(err, transport.ErrFailed) || !errors.Is(err, transport.ErrRejected) {
		t.Fatalf("Run error %v, want ErrFailed and ErrRejected", err)
	}
	if n := len(p.Bodies()); n != 1 {
		t.Errorf("%d subscription attempts: a rejection is not retried", n)
	}
	rec := c.kind(capfile.KindReceived)
	if len(rec) != 1 || !strings.Contains(string(rec[0].Payload), "subscription.rejected") || rec[0].attr("status") != "403" {
		t.Fatalf("rejection not recorded: %+v", rec)
	}
	if ev := c.events(); ev[len(ev)-1] != capfile.ConnGaveUp {
		t.Errorf("events %v", ev)
	}
}

func TestSSEHeadersAndTLS(t *testing.T) {
	events := transporttest.Events(3)
	p := &transporttest.SSEProducer{Frames: transporttest.Frames(events), RequireHeader: [2]string{"Authorization", "Bearer s3cr3t-token"}}
	origin, caFile := p.StartTLS(t)
	pem, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)

	t.Run("with header", func(t *testing.T) {
		opts := testOpts()
		opts.TLS = &tls.Config{RootCAs: pool}
		opts.Header = http.Header{"Authorization": {"Bearer s3cr3t-token"}}
		src, _ := transport.New(origin, opts)
		c := &collector{}
		if err := run(t, src, c); err != nil {
			t.Fatalf("Run: %v", err)
		}
		checkPayloads(t, c, events)
		for _, g := range c.all() {
			if strings.Contains(string(g.Payload), "s3cr3t") {
				t.Fatalf("credential in a message: %s", g.Payload)
			}
		}
	})
	t.Run("without header: 401 is not retried", func(t *testing.T) {
		opts := testOpts()
		opts.TLS = &tls.Config{RootCAs: pool}
		before := len(p.Requests())
		src, _ := transport.New(origin+"/aaep/v1/events", opts)
		c := &collector{}
		err := run(t, src, c)
		if !errors.Is(err, transport.ErrRejected) {
			t.Fatalf("Run error %v, want ErrRejected", err)
		}
		if n := len(p.Requests()) - before; n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
	})
	t.Run("unknown certificate fails", func(t *testing.T) {
		opts := testOpts()
		opts.Retry.MaxRetries = 0
		src, _ := transport.New(origin, opts)
		c := &collector{}
		err := run(t, src, c)
		if !errors.Is(err, transport.ErrFailed) || !strings.Contains(err.Error(), "certificate") {
			t.Fatalf("Run error %v, want a certificate failure", err)
		}
	})
}

func TestSSEUserInfoBecomesAuthorization(t *testing.T) {
	events := transporttest.Events(2)
	p := &transporttest.SSEProducer{Frames: transporttest.Frames(events), RequireHeader: [2]string{"Authorization", "Basic dXNlcjpwYXNzd29yZDE="}}
	origin := p.Start(t)
	endpoint := strings.Replace(origin, "http://", "http://user:password1@", 1)
	src, err := transport.New(endpoint, testOpts())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(src.Info().Endpoint, "password1") {
		t.Fatalf("Info leaks the password: %s", src.Info().Endpoint)
	}
	c := &collector{}
	if err := run(t, src, c); err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkPayloads(t, c, events)
	for _, g := range c.kind(capfile.KindConn) {
		if strings.Contains(string(g.Payload), "password1") {
			t.Fatalf("password in %s", g.Payload)
		}
	}
}

func TestRetriesExhausted(t *testing.T) {
	// Port 1 on loopback and a missing socket: every attempt fails.
	for _, tc := range []struct {
		name     string
		endpoint string
	}{
		{"sse", "http://127.0.0.1:1/aaep/v1/events"},
		{"websocket", "ws://127.0.0.1:1/aaep/v1/ws"},
		{"unix", "unix://" + t.TempDir() + "/missing.sock"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := testOpts()
			opts.Retry.MaxRetries = 2
			opts.Retry.Wait = true // retry a refused first attempt
			src, err := transport.New(tc.endpoint, opts)
			if err != nil {
				t.Fatal(err)
			}
			c := &collector{}
			err = run(t, src, c)
			if !errors.Is(err, transport.ErrFailed) {
				t.Fatalf("Run error %v, want ErrFailed", err)
			}
			want := []string{"failed", "failed", "failed", "gave_up"}
			if got := c.events(); !slices.Equal(got, want) {
				t.Fatalf("events %v, want %v", got, want)
			}
			conns := c.kind(capfile.KindConn)
			for i := 0; i < 3; i++ {
				if conns[i].Conn.Attempt != i+1 {
					t.Errorf("attempt %d numbered %d", i+1, conns[i].Conn.Attempt)
				}
			}
		})
	}
}

// TestRefusedAtFirst checks that a first attempt that finds nothing
// listening fails at once without Retry.Wait, with a reason that says so.
func TestRefusedAtFirst(t *testing.T) {
	for _, tc := range []struct {
		name     string
		endpoint string
	}{
		{"sse", "http://127.0.0.1:1/aaep/v1/events"},
		{"websocket", "ws://127.0.0.1:1/aaep/v1/ws"},
		{"unix", "unix://" + t.TempDir() + "/missing.sock"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := testOpts()
			opts.Retry.MaxRetries = 5
			src, err := transport.New(tc.endpoint, opts)
			if err != nil {
				t.Fatal(err)
			}
			c := &collector{}
			err = run(t, src, c)
			if !errors.Is(err, transport.ErrFailed) || !errors.Is(err, transport.ErrRefusedAtFirst) || !strings.Contains(err.Error(), "--wait") {
				t.Fatalf("Run error %v, want ErrFailed and ErrRefusedAtFirst mentioning --wait", err)
			}
			if got, want := c.events(), []string{"failed", "gave_up"}; !slices.Equal(got, want) {
				t.Fatalf("events %v, want %v", got, want)
			}
			if e := c.kind(capfile.KindConn)[0].Conn.Error; !strings.Contains(e, "refused") && !strings.Contains(e, "no such file") {
				t.Errorf("failed attempt's error %q names no reason", e)
			}
		})
	}
}
