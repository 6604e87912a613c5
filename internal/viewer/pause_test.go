package viewer

import (
	"context"
	"testing"
)

// idle reports whether p lets the background check go on.
func idle(p *pauser) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.idle:
		return true
	default:
		return false
	}
}

// TestPauser: the check is held from the first hold to the last release,
// and a held wait still ends with its context.
func TestPauser(t *testing.T) {
	p := newPauser()
	p.wait(context.Background()) // not held: returns at once
	steps := []struct {
		hold bool
		idle bool
	}{{true, false}, {true, false}, {false, false}, {false, true}, {true, false}, {false, true}}
	for i, st := range steps {
		if st.hold {
			p.hold()
		} else {
			p.release()
		}
		if got := idle(p); got != st.idle {
			t.Fatalf("step %d (hold %v): idle %v, want %v", i, st.hold, got, st.idle)
		}
	}
	p.hold()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p.wait(ctx) // held, but the context has ended: returns
	p.release()
	p.wait(context.Background())
}
