package viewer

import (
	"context"
	"sync"
	"sync/atomic"
)

// pauser holds the background check while the trace of a session is being
// built: the user who selected the session waits for its trace, and the
// check of the whole capture would take a core from it (on two cores, the
// trace of 100,000 messages took three times as long). The check goes on
// when no trace is being built.
type pauser struct {
	n    atomic.Int32
	mu   sync.Mutex
	idle chan struct{} // closed while n is 0
}

func newPauser() *pauser {
	p := &pauser{idle: make(chan struct{})}
	close(p.idle)
	return p
}

// hold pauses the check until the matching release.
func (p *pauser) hold() {
	p.mu.Lock()
	if p.n.Add(1) == 1 {
		p.idle = make(chan struct{})
	}
	p.mu.Unlock()
}

func (p *pauser) release() {
	p.mu.Lock()
	if p.n.Add(-1) == 0 {
		close(p.idle)
	}
	p.mu.Unlock()
}

// wait returns when no trace is being built or ctx ends.
func (p *pauser) wait(ctx context.Context) {
	if p.n.Load() == 0 {
		return
	}
	p.mu.Lock()
	idle := p.idle
	p.mu.Unlock()
	select {
	case <-idle:
	case <-ctx.Done():
	}
}
