package subtest

import (
	"flag"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"
)

// defaultRuns is how many runs (run in run_test.go) wait side by side
// unless -parallel says otherwise: more than there are cores, as a run
// spends its time waiting on the replay's pace and the subscriber's
// delays, not computing.
const defaultRuns = 6

// TestMain bounds the runs that play at once to -parallel, or to
// defaultRuns when it is not given. Then every test may start at once
// (-parallel is raised to let them): the runs, not the tests, wait for a
// turn (runTurns), the longest first. Left to -parallel, the tests took
// their turns in the order the runtime woke them, and the scenario that
// pauses for 40 s began last and ended the package's run.
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	runs := defaultRuns
	if set {
		if n, err := strconv.Atoi(flag.Lookup("test.parallel").Value.String()); err == nil && n > 0 {
			runs = n
		}
	} else {
		_ = flag.Set("test.parallel", "256")
	}
	turns = &runTurns{free: runs}
	os.Exit(m.Run())
}

// turns are the turns of the package's runs.
var turns *runTurns

// runTurns lets a bounded number of runs play at once; a run that waits
// for its turn gets it before those expected to be shorter (then in the
// order they came).
type runTurns struct {
	mu      sync.Mutex
	free    int
	seq     int
	waiting []*turnWaiter
}

type turnWaiter struct {
	expect time.Duration
	seq    int
	ready  chan struct{}
}

// take waits for a turn for a run expected to take expect, and returns
// the function that gives it back.
func (r *runTurns) take(expect time.Duration) (done func()) {
	r.mu.Lock()
	if r.free > 0 && len(r.waiting) == 0 {
		r.free--
		r.mu.Unlock()
		return r.give
	}
	w := &turnWaiter{expect: expect, seq: r.seq, ready: make(chan struct{})}
	r.seq++
	r.waiting = append(r.waiting, w)
	r.mu.Unlock()
	<-w.ready
	return r.give
}

// give hands the turn to the waiting run expected to take longest.
func (r *runTurns) give() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.waiting) == 0 {
		r.free++
		return
	}
	next := 0
	for i, w := range r.waiting {
		if best := r.waiting[next]; w.expect > best.expect || (w.expect == best.expect && w.seq < best.seq) {
			next = i
		}
	}
	w := r.waiting[next]
	r.waiting = append(r.waiting[:next], r.waiting[next+1:]...)
	close(w.ready)
}

// expectedLength is how long a run of sc at least waits on its own: its
// pauses and its linger time.
func expectedLength(sc *Scenario) time.Duration {
	d := sc.Linger
	for _, f := range sc.Faults {
		if f.Kind == FaultPause {
			d += f.For
		}
	}
	return d
}
