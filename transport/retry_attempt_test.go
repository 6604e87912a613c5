package transport

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
)

// TestAttemptsNumberedFromOne: connection attempts are numbered from 1,
// and again from 1 after a connection that delivered messages was lost
// (the lost connection is no attempt); giving up counts the attempts made.
func TestAttemptsNumberedFromOne(t *testing.T) {
	var events []ConnEvent
	e := newEmitter(NewClock(), func(m *Message) error {
		if m.Conn != nil {
			events = append(events, *m.Conn)
		}
		return nil
	})
	e.url = "ws://test/"
	var gotN []int
	script := []outcome{
		{err: errors.New("refused"), ev: ConnEvent{}},               // attempt 1 fails
		{connected: true, delivered: true, err: errors.New("lost")}, // attempt 2 delivers, then drops
		{err: errors.New("refused again")},                          // attempt 1 after the drop
		{err: errors.New("refused again")},                          // attempt 2 after the drop: gives up
	}
	err := runRetrying(context.Background(), e, Retry{Initial: time.Millisecond, Max: time.Millisecond, MaxRetries: 2, Wait: true}, nil,
		func(ctx context.Context, n int) outcome {
			gotN = append(gotN, n)
			return script[len(gotN)-1]
		})
	if !errors.Is(err, ErrFailed) {
		t.Fatalf("err %v, want ErrFailed", err)
	}
	if want := []int{1, 2, 1, 2}; len(gotN) != len(want) || gotN[0] != 1 || gotN[1] != 2 || gotN[2] != 1 || gotN[3] != 2 {
		t.Errorf("attempts numbered %v, want %v", gotN, want)
	}
	var failed []int
	var gaveUp string
	for _, ev := range events {
		switch ev.Event {
		case capfile.ConnFailed:
			failed = append(failed, ev.Attempt)
		case capfile.ConnGaveUp:
			gaveUp = ev.Reason
		}
	}
	if len(failed) != 3 || failed[0] != 1 || failed[1] != 1 || failed[2] != 2 {
		t.Errorf("failed attempts numbered %v, want [1 1 2]", failed)
	}
	if gaveUp != "giving up after 2 attempts" {
		t.Errorf("gave up with %q", gaveUp)
	}
}
