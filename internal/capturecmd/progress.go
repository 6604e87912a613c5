package capturecmd

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aaep-tools/aaepkit/internal/cli"
	meter "github.com/aaep-tools/aaepkit/internal/progress"
	"github.com/aaep-tools/aaepkit/internal/recorder"
	"github.com/aaep-tools/aaepkit/transport"
)

// progressEvery is how often the progress line is redrawn.
const progressEvery = 500 * time.Millisecond

// progress draws a status line on a terminal's stderr and prints messages
// above it; it is silent (only messages pass) when stderr is not a terminal
// or with --quiet.
type progress struct {
	mu    sync.Mutex
	w     io.Writer // the status line's (its control characters its own)
	msgs  io.Writer // the messages' (names quoted: cli.MessageWriter)
	live  bool      // a status line is drawn
	on    bool
	done  chan struct{}
	wg    sync.WaitGroup
	rec   *recorder.Recorder
	clock *transport.Clock
	// conn, when set, says what connecting endpoints are doing.
	conn func(now time.Time) string
}

func startProgress(o *options, rec *recorder.Recorder, clock *transport.Clock, conn func(time.Time) string) *progress {
	p := &progress{w: cli.Raw(o.Err), msgs: o.Err, on: o.ErrIsTTY && !o.quiet, done: make(chan struct{}), rec: rec, clock: clock, conn: conn}
	if p.on {
		p.wg.Add(1)
		go p.loop()
	}
	return p
}

func (p *progress) loop() {
	defer p.wg.Done()
	t := time.NewTicker(progressEvery)
	defer t.Stop()
	var lastEvents int64
	last := time.Now()
	for {
		select {
		case <-p.done:
			return
		case now := <-t.C:
			st := p.rec.Stats()
			rate := float64(st.Events-lastEvents) / now.Sub(last).Seconds()
			lastEvents, last = st.Events, now
			line := statusLine(st, rate, time.Duration(p.clock.Now()))
			if p.conn != nil {
				if c := p.conn(now); c != "" {
					line += "  " + c
				}
			}
			p.mu.Lock()
			fmt.Fprintf(p.w, "\r\x1b[K%s", line)
			p.live = true
			p.mu.Unlock()
		}
	}
}

// statusLine is the live progress: events, rate, bytes written,
// compression ratio, reconnects, elapsed.
func statusLine(st recorder.Stats, rate float64, elapsed time.Duration) string {
	return fmt.Sprintf("%d events  %.0f ev/s  %s written  ratio %s  %d reconnects  %s",
		st.Events, rate, meter.Size(st.FileBytes), ratio(st), st.Reconnects, elapsed.Truncate(time.Second))
}

func ratio(st recorder.Stats) string {
	if st.FileBytes == 0 || st.PayloadBytes == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fx", float64(st.PayloadBytes)/float64(st.FileBytes))
}

// printf prints a message, above the status line when one is drawn.
func (p *progress) printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.live = false
	}
	fmt.Fprintf(p.msgs, format, args...)
}

// stop ends the display and clears the status line.
func (p *progress) stop() {
	if !p.on {
		return
	}
	close(p.done)
	p.wg.Wait()
	p.mu.Lock()
	if p.live {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.live = false
	}
	p.mu.Unlock()
}

// summary is the end-of-capture report.
type summary struct {
	Events           int64            `json:"events"`
	Sent             int64            `json:"sent"`
	ConnectionEvents int64            `json:"connection_events"`
	Filtered         int64            `json:"filtered"`
	Dropped          int64            `json:"dropped_after_stop"`
	InvalidJSON      int64            `json:"invalid_json"`
	InvalidUTF8      int64            `json:"invalid_utf8"`
	Redacted         int64            `json:"redacted"`
	Refused          int64            `json:"refused"`
	Reconnects       int64            `json:"reconnects"`
	Disconnects      int64            `json:"disconnects"`
	EventBytes       int64            `json:"event_bytes"`
	FileBytes        int64            `json:"file_bytes"`
	Ratio            float64          `json:"compression_ratio"`
	Seconds          float64          `json:"duration_seconds"`
	EventsPerSecond  float64          `json:"events_per_second"`
	StopReason       string           `json:"stop_reason"`
	CloseCodes       []closeCodeCount `json:"close_codes"`
	Files            []string         `json:"files"`
	Sources          []sourceSummary  `json:"sources"`
	// Withheld lists what producers' subscription.accepted said they would
	// not send (event types, reply-bearing events, a rate limit).
	Withheld []string       `json:"withheld_by_producer"`
	Upload   *uploadSummary `json:"upload,omitempty"`
	ExitCode int            `json:"exit_code"`
}

// uploadSummary says what reached object storage and what stays in the
// spool.
type uploadSummary struct {
	Prefix    string `json:"prefix"`
	Spool     string `json:"spool"`
	Uploaded  int64  `json:"uploaded"`
	Bytes     int64  `json:"bytes"`
	Retries   int64  `json:"retries"`
	Recovered int64  `json:"recovered"`
	Pending   int    `json:"pending"`
	// Waiting names the parts left in the spool (file names in Spool).
	Waiting []string `json:"waiting"`
	// Dropped names the parts deleted unuploaded to keep the spool within
	// --spool-max-size and --spool-min-free.
	Dropped []string `json:"dropped"`
	// Conflicts names the parts not uploaded because another object
	// holds their names; they stay in the spool.
	Conflicts []string `json:"conflicts"`
	Error     string   `json:"error,omitempty"`
}

// line is the upload summary for people: what is stored, what stays in
// the spool, by name.
func (u *uploadSummary) line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "aaep-capture: uploaded %d part(s), %s, to %s", u.Uploaded, meter.Size(u.Bytes), u.Prefix)
	if u.Retries > 0 {
		fmt.Fprintf(&b, " (%d failed attempt(s) retried)", u.Retries)
	}
	if len(u.Waiting) == 0 {
		b.WriteString("; nothing left in the spool")
	} else {
		fmt.Fprintf(&b, "; %d part(s) stay in the spool %s: %s", len(u.Waiting), u.Spool, nameList(u.Waiting))
	}
	if len(u.Conflicts) > 0 {
		fmt.Fprintf(&b, "; %d part(s) not uploaded, their names taken by other objects, stay in the spool: %s", len(u.Conflicts), nameList(u.Conflicts))
	}
	if len(u.Dropped) > 0 {
		fmt.Fprintf(&b, "; %d part(s) dropped unuploaded to keep the spool within its limits: %s", len(u.Dropped), nameList(u.Dropped))
	}
	return b.String()
}

// nameList lists names, the first ten of them.
func nameList(names []string) string {
	const shown = 10
	if len(names) > shown {
		return strings.Join(names[:shown], ", ") + fmt.Sprintf(" and %d more", len(names)-shown)
	}
	return strings.Join(names, ", ")
}

type closeCodeCount struct {
	Code  int    `json:"code"`
	Name  string `json:"name,omitempty"`
	Count int64  `json:"count"`
}

type sourceSummary struct {
	ID        int    `json:"id"`
	Transport string `json:"transport"`
	Endpoint  string `json:"endpoint"`
	Error     string `json:"error,omitempty"`
}

func newSummary(st recorder.Stats, results []sourceResult, reason string, elapsed time.Duration, code int) *summary {
	s := &summary{
		Events: st.Events, Sent: st.Sent, ConnectionEvents: st.ConnEvents, Filtered: st.Filtered, Dropped: st.Dropped,
		InvalidJSON: st.InvalidJSON, InvalidUTF8: st.InvalidUTF8, Redacted: st.Redacted, Refused: st.Refused,
		Reconnects: st.Reconnects, Disconnects: st.Disconnects, EventBytes: st.EventBytes, FileBytes: st.FileBytes,
		Seconds: elapsed.Seconds(), StopReason: reason, Files: st.Files, ExitCode: code,
		CloseCodes: []closeCodeCount{}, Withheld: []string{},
	}
	if st.FileBytes > 0 {
		s.Ratio = float64(st.PayloadBytes) / float64(st.FileBytes)
	}
	if elapsed > 0 {
		s.EventsPerSecond = float64(st.Events) / elapsed.Seconds()
	}
	for c, n := range st.CloseCodes {
		s.CloseCodes = append(s.CloseCodes, closeCodeCount{Code: c, Name: transport.CloseCodeName(c), Count: n})
	}
	sort.Slice(s.CloseCodes, func(i, j int) bool { return s.CloseCodes[i].Code < s.CloseCodes[j].Code })
	for i, r := range results {
		ss := sourceSummary{ID: i, Transport: r.info.Transport, Endpoint: r.info.Endpoint}
		if r.err != nil {
			ss.Error = r.err.Error()
		}
		s.Sources = append(s.Sources, ss)
	}
	return s
}

// line is the one-line human summary.
func (s *summary) line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "aaep-capture: %d events", s.Events)
	var notes []string
	for _, n := range []struct {
		v    int64
		what string
	}{{s.InvalidJSON, "invalid JSON"}, {s.InvalidUTF8, "invalid UTF-8"}, {s.Refused, "refused as too large"}, {s.Filtered, "filtered out"}, {s.Redacted, "redacted"}} {
		if n.v > 0 {
			notes = append(notes, fmt.Sprintf("%d %s", n.v, n.what))
		}
	}
	if len(notes) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(notes, ", "))
	}
	plural := "s"
	if len(s.Sources) == 1 {
		plural = ""
	}
	fmt.Fprintf(&b, " from %d source%s in %s (%.0f ev/s)", len(s.Sources), plural, time.Duration(s.Seconds*float64(time.Second)).Round(time.Millisecond), s.EventsPerSecond)
	if s.Reconnects > 0 || s.Disconnects > 0 {
		fmt.Fprintf(&b, ", %d reconnects", s.Reconnects)
	}
	file := "no file (nothing was recorded)"
	if len(s.Files) == 1 {
		file = s.Files[0]
	} else if len(s.Files) > 1 {
		file = fmt.Sprintf("%d files (%s ... %s)", len(s.Files), s.Files[0], s.Files[len(s.Files)-1])
	}
	r := "-"
	if s.Ratio > 0 {
		r = fmt.Sprintf("%.1fx", s.Ratio)
	}
	fmt.Fprintf(&b, "; %s to %s (ratio %s)", meter.Size(s.FileBytes), file, r)
	if len(s.CloseCodes) > 0 {
		var cc []string
		for _, c := range s.CloseCodes {
			name := ""
			if c.Name != "" {
				name = " " + c.Name
			}
			cc = append(cc, fmt.Sprintf("%d%s x%d", c.Code, name, c.Count))
		}
		fmt.Fprintf(&b, "; closed: %s", strings.Join(cc, ", "))
	}
	if len(s.Withheld) > 0 {
		fmt.Fprintf(&b, "; the producer withheld: %s", strings.Join(s.Withheld, ", "))
	}
	fmt.Fprintf(&b, "; stopped: %s", s.StopReason)
	return b.String()
}

func (s *summary) writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	return nil
}
