package transport_test

import (
	"context"
	"encoding/json"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/transport"
	"github.com/aaep-tools/aaepkit/transport/transporttest"
)

func TestMain(m *testing.M) {
	transporttest.RunChild()
	// Children are this test binary: under -race they would otherwise
	// sleep a second at exit.
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	os.Exit(m.Run())
}

// got is a copy of a delivered message.
type got struct {
	Kind    capfile.Kind
	Time    int64
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

// collector records messages; onMsg (optional) runs after each one.
type collector struct {
	mu    sync.Mutex
	msgs  []got
	onMsg func(c *collector, g got)
}

func (c *collector) emit(m *transport.Message) error {
	g := got{Kind: m.Kind, Time: m.Time, Payload: append([]byte(nil), m.Payload...), Attrs: append([]capfile.Attr(nil), m.Attrs...)}
	if m.Conn != nil {
		ev := *m.Conn
		g.Conn = &ev
		// The payload must be the JSON of the event.
		var back transport.ConnEvent
		if err := json.Unmarshal(m.Payload, &back); err != nil || back != ev {
			panic("connection event payload does not match its struct: " + string(m.Payload))
		}
	}
	c.mu.Lock()
	c.msgs = append(c.msgs, g)
	on := c.onMsg
	c.mu.Unlock()
	if on != nil {
		on(c, g)
	}
	return nil
}

func (c *collector) all() []got {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]got(nil), c.msgs...)
}

func (c *collector) kind(k capfile.Kind) []got {
	var out []got
	for _, g := range c.all() {
		if g.Kind == k {
			out = append(out, g)
		}
	}
	return out
}

func (c *collector) events() []string {
	var out []string
	for _, g := range c.kind(capfile.KindConn) {
		out = append(out, g.Conn.Event)
	}
	return out
}

func (c *collector) countKind(k capfile.Kind) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, g := range c.msgs {
		if g.Kind == k {
			n++
		}
	}
	return n
}

// testOpts are fast-retrying options for tests.
func testOpts() transport.Options {
	return transport.Options{
		Clock: transport.NewClock(),
		Retry: transport.Retry{Initial: time.Millisecond, Max: 5 * time.Millisecond, MaxRetries: 3},
	}
}

// run runs src to its end, bounded by a generous timeout; the test fails if
// the timeout is what stopped it.
func run(t *testing.T, src transport.Source, c *collector) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := src.Run(ctx, c.emit)
	if ctx.Err() != nil {
		t.Fatalf("source did not stop by itself: %v", ctx.Err())
	}
	return err
}

// runUntil runs src and cancels it once stop reports true for the
// collected messages; it returns Run's error.
func runUntil(t *testing.T, src transport.Source, c *collector, stop func(c *collector) bool) error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c.onMsg = func(c *collector, _ got) {
		if stop(c) {
			cancel()
		}
	}
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx, c.emit) }()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		cancel()
		<-done
		t.Fatal("stop condition not reached in time")
		return nil
	}
}

func checkMonotonic(t *testing.T, msgs []got) {
	t.Helper()
	for i := 1; i < len(msgs); i++ {
		if msgs[i].Time < msgs[i-1].Time {
			t.Fatalf("message %d time %d < previous %d", i, msgs[i].Time, msgs[i-1].Time)
		}
	}
}

// checkPayloads asserts the received payloads equal want, in order.
func checkPayloads(t *testing.T, c *collector, want [][]byte) {
	t.Helper()
	rec := c.kind(capfile.KindReceived)
	if len(rec) != len(want) {
		for _, g := range c.all() {
			t.Logf("kind %d: %.120s", g.Kind, g.Payload)
		}
		t.Fatalf("received %d messages, want %d", len(rec), len(want))
	}
	for i := range want {
		if string(rec[i].Payload) != string(want[i]) {
			t.Fatalf("message %d:\n got %q\nwant %q", i, rec[i].Payload, want[i])
		}
	}
}
