package serve

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/timing"
)

// memCursor is a Cursor over records in memory, for tests inside a
// testing/synctest bubble (no file, no decoder goroutines).
type memCursor struct {
	recs []capfile.Record
	i    int
}

func memOpener(recs []rec) Opener {
	cr := make([]capfile.Record, len(recs))
	for i, r := range recs {
		cr[i] = capfile.Record{Kind: r.kind, Flags: r.flags, Time: int64(r.at), Payload: []byte(r.payload)}
	}
	return func() (Cursor, error) { return &memCursor{recs: cr}, nil }
}

func (m *memCursor) Next() (*capfile.Record, error) {
	if m.i >= len(m.recs) {
		return nil, io.EOF
	}
	m.i++
	return &m.recs[m.i-1], nil
}

func (m *memCursor) SeekTime(t int64) error {
	m.i = 0
	for m.i < len(m.recs) && m.recs[m.i].Time < t {
		m.i++
	}
	return nil
}

func (m *memCursor) SeekRecord(i int64) error {
	if i < 0 || i > int64(len(m.recs)) {
		return errors.New("out of range")
	}
	m.i = int(i)
	return nil
}

func (m *memCursor) Index() int64 { return int64(m.i - 1) }
func (m *memCursor) Close() error { return nil }

// fakeWire records when each event was flushed. flushFor, when set, makes
// every flush take that long per event; stall makes flushes block until interrupted
// or until their deadline, which they then report as a timeout.
type fakeWire struct {
	mu        sync.Mutex
	pending   []*event
	sent      []*event
	at        []time.Time
	closeCode int
	flushFor  time.Duration
	stall     bool
	timeout   time.Duration
	interr    chan struct{}
}

func newFakeWire() *fakeWire {
	return &fakeWire{interr: make(chan struct{}, 1), timeout: DefaultWriteTimeout}
}

func (w *fakeWire) write(ev *event) error {
	w.mu.Lock()
	w.pending = append(w.pending, ev)
	w.mu.Unlock()
	return nil
}

func (w *fakeWire) flush() error {
	if w.stall {
		t := time.NewTimer(w.timeout)
		defer t.Stop()
		select {
		case <-t.C:
		case <-w.interr:
		}
		return os.ErrDeadlineExceeded
	}
	w.mu.Lock()
	n := len(w.pending)
	w.mu.Unlock()
	if w.flushFor > 0 {
		time.Sleep(w.flushFor * time.Duration(n))
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	for _, ev := range w.pending {
		w.sent = append(w.sent, ev)
		w.at = append(w.at, now)
	}
	w.pending = w.pending[:0]
	return nil
}

func (w *fakeWire) interrupt() { signal(w.interr) }

func (w *fakeWire) keepalive() error { return nil }

func (w *fakeWire) close(code int, _ string) {
	w.mu.Lock()
	w.closeCode = code
	w.mu.Unlock()
}

// runFake replays opts to one subscriber on a fake wire inside the current
// synctest bubble and returns the flush times relative to the start.
func runFake(t *testing.T, opts Options, terms *subscriptionTerms, w *fakeWire) (*Server, []time.Duration) {
	t.Helper()
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	sub, err := srv.newSubscriber("fake", "memory", "", w, terms)
	if err != nil {
		t.Fatal(err)
	}
	srv.start(sub, "")
	sub.writeLoop()
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	var rel []time.Duration
	for _, at := range w.at {
		rel = append(rel, at.Sub(start))
	}
	return srv, rel
}

func sameDurations(t *testing.T, got, want []time.Duration) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d times %v, want %d %v", len(got), got, len(want), want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("event %d sent at %v, want %v", i, got[i], want[i])
		}
	}
}

func TestServePacingFakeClock(t *testing.T) {
	ms := time.Millisecond
	recs := []rec{
		{kind: capfile.KindConn, at: 0, payload: `{}`},
		{kind: capfile.KindReceived, at: 1000 * ms, payload: ev(1, "session.started", "sess_a", "")},
		{kind: capfile.KindSent, at: 1100 * ms, payload: `{"type":"confirmation.reply"}`},
		{kind: capfile.KindReceived, at: 1500 * ms, payload: ev(2, "state.changed", "sess_a", "")},
		{kind: capfile.KindReceived, at: 1500 * ms, payload: ev(3, "state.changed", "sess_a", "")},
		{kind: capfile.KindReceived, at: 61500 * ms, payload: ev(4, "tool.invoked", "sess_a", "")},
		{kind: capfile.KindReceived, at: 61750 * ms, payload: ev(5, "session.completed", "sess_a", "")},
	}
	tests := []struct {
		name   string
		timing timing.Config
		clock  timing.Clock
		passes int
		want   []time.Duration
	}{
		{"real time", timing.Config{}, nil, 1, []time.Duration{0, 500 * ms, 500 * ms, 60500 * ms, 60750 * ms}},
		{"precise clock", timing.Config{}, timing.Precise(0), 1, []time.Duration{0, 500 * ms, 500 * ms, 60500 * ms, 60750 * ms}},
		{"speed 2 idle cap 5s", timing.Config{Speed: 2, MaxIdle: 5 * time.Second}, nil, 1, []time.Duration{0, 250 * ms, 250 * ms, 5250 * ms, 5375 * ms}},
		{"no delay", timing.Config{NoDelay: true}, nil, 1, []time.Duration{0, 0, 0, 0, 0}},
		{"two passes", timing.Config{Speed: 10}, nil, 2, []time.Duration{0, 50 * ms, 50 * ms, 6050 * ms, 6075 * ms, 6075 * ms, 6125 * ms, 6125 * ms, 12125 * ms, 12150 * ms}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := newFakeWire()
				srv, got := runFake(t, Options{CloseAtEnd: true, Open: memOpener(recs), Timing: tt.timing, Clock: tt.clock, Passes: tt.passes}, nil, w)
				sameDurations(t, got, tt.want)
				if w.closeCode != CloseClean {
					t.Errorf("close code %d", w.closeCode)
				}
				s := srv.Stats().Subscribers[0]
				if !tt.timing.NoDelay && (s.Lateness.Max != 0 || s.Lateness.Count != int64(len(tt.want))) {
					t.Errorf("lateness under the fake clock %+v", s.Lateness)
				}
				if s.PositionIndex != 6 || s.Sent != int64(len(tt.want)) {
					t.Errorf("position %d sent %d", s.PositionIndex, s.Sent)
				}
				// The schedule's start is the first event's deadline, and
				// every deadline is measured from it (what a subscriber
				// reads to measure its own lateness).
				if s.ScheduleStart == nil {
					t.Fatal("no schedule_start in the stats of an own timeline")
				}
				for i, at := range w.at {
					if due := s.ScheduleStart.Add(tt.want[i]); !tt.timing.NoDelay && !at.Equal(due) {
						t.Errorf("event %d flushed at %v, schedule_start + offset is %v", i, at, due)
					}
				}
				if s.Write.Count == 0 || s.Write.Max != 0 {
					t.Errorf("write figures under the fake clock %+v", s.Write)
				}
			})
		})
	}
}

func TestRateLimitHoldsNonCritical(t *testing.T) {
	ms := time.Millisecond
	var recs []rec
	for i := 1; i <= 4; i++ {
		recs = append(recs, rec{kind: capfile.KindReceived, at: 0, payload: ev(i, "progress.updated", "sess_a", "")})
	}
	recs = append(recs,
		rec{kind: capfile.KindReceived, at: 0, payload: ev(5, "session.errored", "sess_a", `,"urgency":"critical"`)},
		rec{kind: capfile.KindReceived, at: 3000 * ms, payload: ev(6, "progress.updated", "sess_a", "")},
	)
	synctest.Test(t, func(t *testing.T) {
		terms := &subscriptionTerms{Negotiated: true, Include: []string{"aaep:agent.*"}, MaxRate: 2}
		w := newFakeWire()
		srv, got := runFake(t, Options{CloseAtEnd: true, Open: memOpener(recs)}, terms, w)
		// Two tokens at once, then one every 500 ms; the critical event
		// takes no token (it waits only for the events ahead of it, whose
		// order the replay keeps); after a quiet spell the bucket is full.
		sameDurations(t, got, []time.Duration{0, 0, 500 * ms, 1000 * ms, 1000 * ms, 3000 * ms})
		if l := srv.Stats().Subscribers[0].Lateness; l.Max != 0 {
			t.Errorf("held events count as late: %+v", l)
		}
	})
}

func TestSlowSubscriberClosesFakeClock(t *testing.T) {
	var recs []rec
	for i := 0; i < 20; i++ {
		recs = append(recs, rec{kind: capfile.KindReceived, at: time.Duration(i) * time.Second, payload: ev(i, "progress.updated", "sess_a", "")})
	}
	tests := []struct {
		name  string
		wire  func() *fakeWire
		opts  Options
		cause string
		code  int
	}{
		{"write blocks past the timeout", func() *fakeWire { w := newFakeWire(); w.stall, w.timeout = true, 5*time.Second; return w },
			Options{WriteTimeout: 5 * time.Second}, CauseStalled, CloseViolation},
		{"falls behind schedule", func() *fakeWire { w := newFakeWire(); w.flushFor = 4 * time.Second; return w },
			Options{MaxLag: 30 * time.Second}, CauseLagging, CloseViolation},
		{"slow but within the lag", func() *fakeWire { w := newFakeWire(); w.flushFor = 900 * time.Millisecond; return w },
			Options{MaxLag: 30 * time.Second}, CauseFinished, CloseClean},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				opts := tt.opts
				opts.Open, opts.CloseAtEnd = memOpener(recs), true
				w := tt.wire()
				srv, _ := runFake(t, opts, nil, w)
				st := srv.Stats()
				if st.Closes[tt.cause] != 1 || w.closeCode != tt.code {
					t.Fatalf("closes %v code %d, want %s %d", st.Closes, w.closeCode, tt.cause, tt.code)
				}
			})
		})
	}
}

// TestSharedTimelineFakeClock puts a stalled and a healthy subscriber on one
// paced timeline: the stalled one is closed when its queue overflows, the
// healthy one gets every event on time.
func TestSharedTimelineFakeClock(t *testing.T) {
	var recs []rec
	for i := 0; i < 10; i++ {
		recs = append(recs, rec{kind: capfile.KindReceived, at: time.Duration(i) * 100 * time.Millisecond, payload: ev(i, "progress.updated", "sess_a", "")})
	}
	synctest.Test(t, func(t *testing.T) {
		srv, err := New(Options{CloseAtEnd: true, Open: memOpener(recs), Shared: true, QueueSize: 3, WriteTimeout: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		healthy, stalled := newFakeWire(), newFakeWire()
		stalled.stall, stalled.timeout = true, time.Hour
		start := time.Now()
		var subs []*subscriber
		for _, w := range []*fakeWire{healthy, stalled} {
			sub, err := srv.newSubscriber("fake", "memory", "", w, nil)
			if err != nil {
				t.Fatal(err)
			}
			subs = append(subs, sub)
		}
		var wg sync.WaitGroup
		for _, sub := range subs {
			wg.Add(1)
			go func() { defer wg.Done(); sub.writeLoop() }()
		}
		for _, sub := range subs {
			srv.start(sub, "")
		}
		wg.Wait()
		if err := srv.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		if len(healthy.at) != len(recs) {
			t.Fatalf("healthy got %d events", len(healthy.at))
		}
		for i, at := range healthy.at {
			if want := time.Duration(i) * 100 * time.Millisecond; at.Sub(start) != want {
				t.Errorf("event %d at %v, want %v", i, at.Sub(start), want)
			}
		}
		st := srv.Stats()
		if st.Closes[CauseTooSlow] != 1 || st.Closes[CauseFinished] != 1 || stalled.closeCode != CloseViolation {
			t.Fatalf("closes %v stalled code %d", st.Closes, stalled.closeCode)
		}
		var dropped int64
		for _, s := range st.Subscribers {
			dropped += s.Dropped
			if s.ScheduleStart != nil {
				t.Errorf("%s on the shared timeline has a schedule_start of its own", s.Subscription)
			}
		}
		if dropped == 0 {
			t.Error("no dropped events counted for the stalled subscriber")
		}
	})
}
