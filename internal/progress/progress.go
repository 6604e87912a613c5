// Package progress draws the status line of a long read on a terminal:
// where the read is (record number and capture time), how fast it goes,
// how much of the input is done (from the capture's index, or from the
// bytes of a text file) and when it will finish.
//
// A Meter draws only on a terminal: On reports whether a writer is one, and
// a nil *Meter (what New returns otherwise) accepts every call and does
// nothing, so commands call it unconditionally. Counting is one atomic add
// per record; the line is redrawn by a goroutine a few times a second and
// erased by Stop.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/term"
)

// Timing of the display. Delay keeps commands that finish at once from
// flashing a line; tests set it to 0.
var (
	Delay    = 400 * time.Millisecond
	Interval = 250 * time.Millisecond
)

// On reports whether w is a terminal, the only place a Meter draws.
func On(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Meter counts the records of a read and draws its progress.
type Meter struct {
	w     io.Writer
	label string

	records      atomic.Int64
	totalRecords atomic.Int64
	bytes        atomic.Int64
	totalBytes   atomic.Int64
	position     atomic.Int64 // capture time of the last record, ns; -1: none
	file         atomic.Pointer[string]

	mu    sync.Mutex // serialises drawing with Stop and Printf
	drawn bool
	start time.Time
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
}

// New starts a meter drawing on w, with label (usually the command) at the
// start of the line, when show is true and w is a terminal. Otherwise it
// returns nil, which does nothing. Call Stop when the read ends.
func New(w io.Writer, label string, show bool) *Meter {
	if !show || !On(w) {
		return nil
	}
	return start(w, label)
}

// start starts a meter on w whatever w is (tests of the line's text use it).
func start(w io.Writer, label string) *Meter {
	m := &Meter{w: w, label: label, start: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	m.position.Store(-1)
	go m.loop()
	return m
}

// AddTotal adds n to the number of records the read is expected to see
// (from a capture's index). Percentage and ETA come from it.
func (m *Meter) AddTotal(n int64) {
	if m != nil {
		m.totalRecords.Add(n)
	}
}

// AddTotalBytes adds n to the bytes the read is expected to see; the
// percentage comes from bytes only when no record total is known.
func (m *Meter) AddTotalBytes(n int64) {
	if m != nil {
		m.totalBytes.Add(n)
	}
}

// Record counts one record read at capture time at (negative: a record
// without a time, such as a line of text).
func (m *Meter) Record(at time.Duration) {
	if m != nil {
		m.records.Add(1)
		m.position.Store(int64(at))
	}
}

// Bytes counts n bytes read.
func (m *Meter) Bytes(n int64) {
	if m != nil {
		m.bytes.Add(n)
	}
}

// File names the input being read, for a read of several files.
func (m *Meter) File(name string) {
	if m != nil {
		m.file.Store(&name)
	}
}

// Printf writes a message on its own line, above the status line.
func (m *Meter) Printf(w io.Writer, format string, args ...any) {
	if m == nil {
		fmt.Fprintf(w, format, args...)
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.erase()
	fmt.Fprintf(w, format, args...)
}

// Stop ends the display and erases the status line. It may be called more
// than once.
func (m *Meter) Stop() {
	if m == nil {
		return
	}
	m.once.Do(func() {
		close(m.stop)
		<-m.done
		m.mu.Lock()
		m.erase()
		m.mu.Unlock()
	})
}

func (m *Meter) erase() {
	if m.drawn {
		fmt.Fprint(m.w, "\r\x1b[K")
		m.drawn = false
	}
}

func (m *Meter) loop() {
	defer close(m.done)
	if Delay > 0 {
		select {
		case <-m.stop:
			return
		case <-time.After(Delay):
		}
	}
	t := time.NewTicker(Interval)
	defer t.Stop()
	rate := newRate(m.start)
	for {
		now := time.Now()
		m.mu.Lock()
		fmt.Fprint(m.w, "\r\x1b[K"+m.line(now, rate))
		m.drawn = true
		m.mu.Unlock()
		select {
		case <-m.stop:
			return
		case <-t.C:
		}
	}
}

// line is the status line at now.
func (m *Meter) line(now time.Time, rt *rateMeter) string {
	n := m.records.Load()
	var b strings.Builder
	b.WriteString(m.label)
	b.WriteString(": ")
	if f := m.file.Load(); f != nil {
		b.WriteString(*f)
		b.WriteString(" ")
	}
	fmt.Fprintf(&b, "%s records", Count(n))
	if p := m.position.Load(); p >= 0 {
		fmt.Fprintf(&b, " (at %s)", Clock(time.Duration(p)))
	}
	r := rt.update(now, n)
	if r > 0 {
		fmt.Fprintf(&b, "  %s rec/s", Count(int64(r+0.5)))
	}
	frac := -1.0
	if t := m.totalRecords.Load(); t > 0 {
		frac = float64(n) / float64(t)
	} else if t := m.totalBytes.Load(); t > 0 {
		frac = float64(m.bytes.Load()) / float64(t)
	}
	if frac >= 0 {
		frac = min(frac, 1)
		fmt.Fprintf(&b, "  %3.0f%%", frac*100)
		if elapsed := now.Sub(m.start); frac > 0.001 && elapsed > 0 {
			left := time.Duration(float64(elapsed) * (1 - frac) / frac)
			fmt.Fprintf(&b, "  ETA %s", Clock(left))
		}
	}
	return b.String()
}

// rateMeter smooths the records/s figure over the last few redraws.
type rateMeter struct {
	last  time.Time
	n     int64
	value float64
}

func newRate(start time.Time) *rateMeter { return &rateMeter{last: start} }

func (r *rateMeter) update(now time.Time, n int64) float64 {
	dt := now.Sub(r.last).Seconds()
	if dt <= 0 {
		return r.value
	}
	cur := float64(n-r.n) / dt
	if r.value == 0 {
		r.value = cur
	} else {
		r.value = 0.7*r.value + 0.3*cur
	}
	r.last, r.n = now, n
	return r.value
}

// Count writes n with thousands separators (1,234,567).
func Count(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// Size writes a byte count n with a binary unit (12 B, 3.4 KiB, 1.0 GiB).
func Size(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// Clock writes d as h:mm:ss, or m:ss under an hour.
func Clock(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	if s < 3600 {
		return fmt.Sprintf("%d:%02d", s/60, s%60)
	}
	return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
}
