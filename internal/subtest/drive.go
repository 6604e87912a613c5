package subtest

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/aaep-tools/aaepkit/serve"
)

// reconnectWait bounds the wait for a subscriber to come back after a cut.
const reconnectWait = 10 * time.Second

// drive releases the events, applying each fault after its event, then
// waits for the end of the range (or for every subscriber to be gone).
func (r *runner) drive(ctx context.Context) error {
	faults := slices.Clone(r.sc.Faults)
	slices.SortStableFunc(faults, func(a, b Fault) int { return a.After - b.After })
	released := 0
	for _, f := range faults {
		if n := f.After - released; n > 0 {
			r.ctl.Step(n)
			if !r.waitReleased(ctx, f.After) {
				break
			}
			released = f.After
		}
		switch f.Kind {
		case FaultPause:
			if err := sleep(ctx, f.For); err != nil {
				return err
			}
		case FaultSlow:
			if err := r.ctl.SetSpeed(r.speed() * f.Speed); err != nil {
				return err
			}
		case FaultCut, FaultRedeliver:
			before := r.joinedCount()
			if f.Kind == FaultRedeliver {
				// The subscription that comes back gets the event again
				// as it joins, right behind its handshake answer. A seek
				// once it was seen back (as before) left it a moment with
				// nothing: a WebSocket subscriber that answered the
				// prompt then, on its new subscription, sent a reply no
				// prompt of that subscription had issued yet (a false
				// SEQ-REPLY-KNOWN-TOKEN on a loaded machine).
				r.srv.RedeliverFrom(r.events[f.After-1].Index)
			}
			for _, id := range r.srv.Active() {
				r.srv.Cut(id)
			}
			r.waitRejoin(ctx, before)
		}
	}
	r.ctl.Play()
	return r.waitEnd(ctx)
}

// waitReleased waits until n events have been released and written to
// every attached subscriber (a fault must not overtake them: a cut drops
// what is still queued); false when the replay ended or nobody has been
// attached for the linger time. An event a subscriber's terms filter out
// never reaches it: after deliverWait the fault goes ahead anyway.
func (r *runner) waitReleased(ctx context.Context, n int) bool {
	alone := r.aloneFor()
	target := r.events[n-1].Index
	var releasedAt time.Time
	return poll(ctx, 0, func() (bool, bool) {
		st, _ := r.srv.ControlStatus()
		if st.Released < int64(n) {
			return st.State == serve.StateEnded || alone(), false
		}
		if releasedAt.IsZero() {
			releasedAt = time.Now()
		}
		for _, s := range st.Subscribers {
			if s.State == "active" && s.PositionIndex < target && time.Since(releasedAt) < deliverWait {
				return false, false
			}
		}
		return true, true
	})
}

// deliverWait bounds the wait for released events to be written.
const deliverWait = 5 * time.Second

// aloneFor returns a function that reports whether no subscriber has
// been attached for the scenario's linger time.
func (r *runner) aloneFor() func() bool {
	var since time.Time
	return func() bool {
		if len(r.srv.Active()) > 0 {
			since = time.Time{}
			return false
		}
		if since.IsZero() {
			since = time.Now()
		}
		return time.Since(since) >= r.sc.Linger
	}
}

// waitRejoin waits for a subscription after the one that was cut, until
// it follows the timeline (so that nothing is released before it is
// there). An SSE subscriber that negotiated by POST comes back under the
// same subscription id; a cut subscription is never on the timeline.
func (r *runner) waitRejoin(ctx context.Context, before int) {
	poll(ctx, reconnectWait, func() (bool, bool) {
		if r.joinedCount() <= before {
			return false, false
		}
		for _, id := range r.srv.Active() {
			if r.srv.OnTimeline(id) {
				return true, true
			}
		}
		return false, false
	})
}

// waitEnd waits until the range has been played and written to every
// attached subscriber, or until no subscriber has been attached for the
// linger time (it left, or was rejected). A subscriber held back by its
// honoured rate (max_events_per_second) gets the rest of the range; one
// whose position has not moved for deliverWait is waited for no longer.
func (r *runner) waitEnd(ctx context.Context) error {
	alone := r.aloneFor()
	last := r.events[len(r.events)-1].Index
	var moved time.Time
	var pos int64 = -1
	poll(ctx, 0, func() (bool, bool) {
		if alone() {
			return true, true
		}
		st, _ := r.srv.ControlStatus()
		if st.State != serve.StateEnded {
			return false, false
		}
		behind := int64(-1)
		for _, s := range st.Subscribers {
			if s.State == "active" && s.PositionIndex < last {
				behind = max(behind, s.PositionIndex)
			}
		}
		if behind < 0 {
			return true, true
		}
		if behind != pos {
			pos, moved = behind, time.Now()
		}
		return time.Since(moved) >= deliverWait, true
	})
	return context.Cause(ctx)
}

// linger gives the subscriber time for its last replies: the scenario's
// linger time always (whatever else comes, a second reply or an
// auto-response, is judged too), and beyond it until every expected reply
// has come, at most its within.
func (r *runner) linger(ctx context.Context) error {
	wait := r.sc.Linger
	for _, e := range r.sc.Expect {
		if e.Kind == ExpectReply {
			wait = max(wait, e.Within)
		}
	}
	start := time.Now()
	poll(ctx, wait, func() (bool, bool) {
		// Whatever else comes (a second reply, an auto-response) is
		// judged too: the linger time is always given.
		if time.Since(start) < r.sc.Linger {
			return false, false
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, e := range r.sc.Expect {
			if e.Kind == ExpectReply && !r.replied[strings.ToLower(e.Token)] {
				return false, false
			}
		}
		return true, true
	})
	return context.Cause(ctx)
}

// poll calls cond every 10ms until it says done (its second result is
// then returned), ctx ends or limit (0: none) passes.
func poll(ctx context.Context, limit time.Duration, cond func() (done, result bool)) bool {
	var deadline <-chan time.Time
	if limit > 0 {
		t := time.NewTimer(limit)
		defer t.Stop()
		deadline = t.C
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if done, res := cond(); done {
			return res
		}
		select {
		case <-tick.C:
		case <-deadline:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
