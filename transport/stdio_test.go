package transport_test

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/transport"
	"github.com/aaep-tools/aaepkit/transport/transporttest"
)

// syncBuffer is a bytes.Buffer safe for the child's stderr copier.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

const acceptedStdio = `{"type":"subscription.accepted","subscription_id":"sub_stdio","aaep_version":"1.0.0","producer":{"agent_id":"retirement-planner"},"honored_capabilities":{}}`

func TestStdioUnwrapsEvents(t *testing.T) {
	events := transporttest.Events(25)
	child := transporttest.StdioChild{Events: len(events), Ping: true, Invalid: true, Stderr: "producer: hello from stderr"}
	opts := testOpts()
	stderr := &syncBuffer{}
	opts.Stderr = stderr
	src, err := transport.NewExec(child.Args(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if info := src.Info(); info.Transport != "stdio" || !strings.HasPrefix(info.Endpoint, "exec:") {
		t.Fatalf("info %+v", info)
	}
	c := &collector{}
	if err := run(t, src, c); err != nil {
		t.Fatalf("Run: %v", err)
	}
	ping := []byte(`{"jsonrpc":"2.0","id":"ping-1","method":"aaep.ping"}`)
	want := append([][]byte{[]byte(acceptedStdio), ping}, events...)
	want = append(want, transporttest.InvalidJSONLine, transporttest.InvalidUTF8Params)
	checkPayloads(t, c, want)
	checkMonotonic(t, c.all())

	rec := c.kind(capfile.KindReceived)
	if rec[0].attr("method") != "aaep.subscribe" || rec[2].attr("method") != "aaep.event" || rec[1].attr("method") != "aaep.ping" {
		t.Errorf("method attrs %v %v %v", rec[0].Attrs, rec[1].Attrs, rec[2].Attrs)
	}
	if rec[len(rec)-2].attr("method") != "" {
		t.Errorf("an invalid line has a method attr: %v", rec[len(rec)-2].Attrs)
	}
	sent := c.kind(capfile.KindSent)
	if len(sent) != 2 || !strings.Contains(string(sent[0].Payload), "subscription.request") || sent[0].attr("method") != "aaep.subscribe" {
		t.Fatalf("sent %d: %q", len(sent), sent[0].Payload)
	}
	if string(sent[1].Payload) != `{"jsonrpc":"2.0","id":"ping-1","result":{}}` {
		t.Errorf("ping answer %q", sent[1].Payload)
	}
	if !strings.Contains(stderr.String(), "producer: hello from stderr") {
		t.Errorf("child stderr not passed through: %q", stderr.String())
	}
	last := c.all()[len(c.all())-1].Conn
	if last == nil || last.Event != capfile.ConnClosed || last.Code != 0 {
		t.Fatalf("last %+v, want closed with exit status 0", last)
	}
}

func TestStdioExitStatus(t *testing.T) {
	child := transporttest.StdioChild{Events: 2, Exit: 3}
	src, _ := transport.NewExec(child.Args(), testOpts())
	c := &collector{}
	err := run(t, src, c)
	if !errors.Is(err, transport.ErrFailed) || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("Run error %v, want ErrFailed with exit status 3", err)
	}
	if n := c.countKind(capfile.KindReceived); n != 3 {
		t.Errorf("%d received, want accepted + 2 events", n)
	}
}

func TestStdioStop(t *testing.T) {
	for _, tc := range []struct {
		name  string
		child transporttest.StdioChild
	}{
		{"stdin closed", transporttest.StdioChild{Events: 3, Wait: true}},
		{"ignores SIGTERM", transporttest.StdioChild{Events: 3, IgnoreTerm: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, _ := transport.NewExec(tc.child.Args(), testOpts())
			c := &collector{}
			start := time.Now()
			err := runUntil(t, src, c, func(c *collector) bool { return c.countKind(capfile.KindReceived) == 4 })
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			sent := c.kind(capfile.KindSent)
			if len(sent) != 2 || sent[1].attr("method") != "aaep.close" || !strings.Contains(string(sent[1].Payload), "sub_stdio") {
				t.Fatalf("sent %d messages; want subscribe then aaep.close", len(sent))
			}
			if got := c.events(); !slices.Equal(got, []string{"connected", "closed"}) {
				t.Fatalf("events %v", got)
			}
			t.Logf("stopped in %v", time.Since(start))
		})
	}
}

func TestStdioMissingCommand(t *testing.T) {
	src, _ := transport.NewExec([]string{"/nonexistent/producer"}, testOpts())
	c := &collector{}
	err := run(t, src, c)
	if !errors.Is(err, transport.ErrFailed) {
		t.Fatalf("Run error %v, want ErrFailed", err)
	}
	if got := c.events(); !slices.Equal(got, []string{"failed"}) {
		t.Fatalf("events %v", got)
	}
}

func TestExecEndpointMasksCredentials(t *testing.T) {
	src, err := transport.New("exec:./producer --token abc123 --mode fast api_key=zzz9", testOpts())
	if err != nil {
		t.Fatal(err)
	}
	got := src.Info().Endpoint
	if strings.Contains(got, "abc123") || strings.Contains(got, "zzz9") || !strings.Contains(got, "--mode fast") {
		t.Fatalf("endpoint %q", got)
	}
}
