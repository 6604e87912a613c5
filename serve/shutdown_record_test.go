package serve

import (
	"context"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/aaep-tools/aaepkit/capfile"
)

// closingRecord is a slow recording that counts what arrives after it was
// closed (what a replay's --record file would lose).
type closingRecord struct {
	mu     sync.Mutex
	sent   int
	closed bool
	late   atomic.Int64
}

func (c *closingRecord) Append(r *capfile.Record) error {
	time.Sleep(200 * time.Microsecond) // a file write that takes a moment
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		c.late.Add(1)
		return capfile.ErrClosed
	}
	if r.Kind == capfile.KindSent {
		c.sent++
	}
	return nil
}

func (c *closingRecord) close() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	return c.sent
}

// TestShutdownWaitsForReplies: every message a WebSocket subscriber sent
// that the server handled (and announced) before Shutdown returned is in the
// recording; none is handled after it.
func TestShutdownWaitsForReplies(t *testing.T) {
	path := writeCapture(t, openEndedRecords())
	var handled atomic.Int64
	rec := &closingRecord{}
	srv, err := New(Options{Open: OpenFile(path), Record: rec, Notify: func(n Notice) {
		if n.Kind == NoticeMessage || n.Kind == NoticeReply {
			handled.Add(1)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	c, _, err := websocket.DefaultDialer.Dial(wsURL(ts, "/aaep/v1/ws"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The subscriber keeps talking (messages the server prints and
	// records) until its connection goes away.
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if c.WriteMessage(websocket.TextMessage, []byte(`"a reply that is not an object"`)) != nil {
				return
			}
		}
	}()
	defer close(stop)
	waitFor(t, func() bool { return handled.Load() > 200 })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	sent := rec.close()
	time.Sleep(50 * time.Millisecond) // a reader still running would show here
	if late := rec.late.Load(); late != 0 {
		t.Errorf("%d records arrived after Shutdown returned", late)
	}
	if h := handled.Load(); int64(sent) != h {
		t.Errorf("%d messages handled, %d recorded", h, sent)
	}
}
