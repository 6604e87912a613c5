// Package show prints a capture one line per record, as tcpdump -r prints
// packets: receive time, record number, source, direction, session, type,
// the human summary, and a mark on the lines of messages that break a rule.
// It can follow a capture that is still being written, and play one back at
// its recorded pace in a terminal.
//
// Line format (fields separated by one space, the summary last but for the
// mark):
//
//	09:00:01.204000 #12 s0 recv sess_3f2a agent.tool.invoked Calling search_flights: LIS to OSL !! MUST SEQ-TOOL-ORDER
//
// The time is the receive time in UTC (header start plus the record's
// offset), or the offset since the capture's start with Options.Relative.
// Direction is recv (the recorder received it from the producer), sent (the
// recorder's side sent it), conn (a connection event) or mark (an
// annotation). A session or type that is unknown prints as "-".
//
// Findings: the protocol checker runs over every message (whatever the
// filters). Every finding is printed in one form, "!! LEVEL RULE", after a
// space, so that one grep finds them all:
//
//	show FILE | grep ' !! '        every finding
//	show FILE | grep ' !! MUST '   every MUST finding
//
// A message's line ends with the findings made when it was read, worst
// first ("!! MUST SEQ-TOOL-ORDER !! INFO SEQ-X"). A finding the checker can
// only make later (a sequence gap seen at the next message, a reply that
// never came) gets a line of its own that names its record:
//
//	!! MUST SEQ-GAP #12 sess_3f2a: sequence jumps from 4 to 7
//
// Reading a file (not following, not paced), such a line is printed right
// after the line of the message it is about when that message is at most
// LookAhead records back; otherwise where it was found. A finding about a
// whole session (one that never ended) names no record:
//
//	!! INFO SEQ-SESSION-INCOMPLETE end-of-stream sess_3f2a: ...
package show

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/msgfilter"
	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/check"
	"github.com/aaep-tools/aaepkit/protocol/models"
	"github.com/aaep-tools/aaepkit/recording"
	"github.com/aaep-tools/aaepkit/timing"
)

// LookAhead is how many records Run holds back, reading a file, so that a
// finding made later lands right after the line of its message.
const LookAhead = 4096

// Options configure Run.
type Options struct {
	// Match selects the messages printed, with filter's semantics.
	Match msgfilter.Filter
	// MessagesOnly leaves out connection events and markers (which are
	// otherwise printed whatever Match says).
	MessagesOnly bool
	// Follow waits for records appended to a capture being written.
	Follow bool
	// Poll is how often a followed capture is looked at (DefaultPoll).
	Poll time.Duration
	// NoCheck leaves the protocol checker out (no marks).
	NoCheck bool
	// Check configures the checker (its Models default to models.All).
	Check check.Config
	// Relative prints offsets since the capture's start instead of times.
	Relative bool
	// Pace prints each line at its recorded time, scaled by Timing.
	Pace   bool
	Timing timing.Config
	// Clock paces the lines (nil: the system clock).
	Clock timing.Clock
	// Keys steer a paced listing: ' ' pauses and resumes, '.' steps one
	// line while paused. Nil when there is no terminal.
	Keys <-chan byte
	// Paused starts a paced listing paused.
	Paused bool
	// CRLF ends lines with \r\n, for a terminal in raw mode (see TerminalKeys).
	CRLF bool
}

// Stats say what Run read.
type Stats struct {
	Records  int64 // records read
	Shown    int64 // lines printed for records
	Marked   int64 // of them, lines with a finding
	Findings int64 // findings of the checker, all levels
	// Torn is set when the capture ends in a torn tail (followed: its
	// recorder is gone without closing it).
	Torn error
}

// Run prints the recording rec to w until its end (or, following, until
// the recorder closes it or ctx ends). A cancelled ctx ends following or
// pacing without an error; a read it interrupts otherwise is one, after the
// lines read before it. The
// findings come from the analysis driver's incremental form (check.Pass):
// the same engines, stream information and connection records as check.
// Following reads a recording of one part (the capture being written).
func Run(ctx context.Context, rec *recording.Recording, w io.Writer, opts Options) (Stats, error) {
	var st Stats
	path := rec.Name
	if opts.Follow && len(rec.Parts) > 1 {
		return st, fmt.Errorf("%s: --follow follows one capture being written, not %d files", path, len(rec.Parts))
	}
	src, err := openRecords(ctx, rec, opts.Follow, opts.Poll)
	if err != nil {
		return st, err
	}
	defer src.close()
	p := &printer{w: w, opts: &opts, start: src.hdr.Start}
	if !opts.Follow && !opts.Pace {
		p.hold = LookAhead
	}
	var pass *check.Pass
	if !opts.NoCheck {
		cfg := opts.Check
		if cfg.Models == nil {
			cfg.Models = models.All
		}
		pass, err = check.NewPass(cfg, rec, protocol.Sink{Finding: func(f protocol.Finding) { p.found = append(p.found, f) }})
		if err != nil {
			return st, err
		}
	}
	var doc payload.Doc // the current message, decoded
	var ctl *timing.Controller
	if opts.Pace {
		ctl = timing.NewController(opts.Clock, opts.Timing, opts.Paused)
		if opts.Keys != nil {
			kctx, cancel := context.WithCancel(ctx)
			defer cancel()
			go steer(kctx, ctl, opts.Keys)
		}
	}
	var msg protocol.Message
	var conn protocol.Conn
	attrs := map[string]string{}
	for {
		r, idx, err := src.read(ctx)
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			if ctx.Err() != nil && (opts.Follow || opts.Pace) {
				err = nil // Ctrl-C is how following and pacing end
			}
			// The lines held for late findings are what was read: they
			// are printed before the error (damage, an interrupted read).
			p.flush(0)
			st.Torn = src.torn
			if err != nil {
				err = fmt.Errorf("%s: %w", path, err)
			}
			return st, errors.Join(err, p.err)
		}
		st.Records++
		isMsg := r.Kind == capfile.KindReceived || r.Kind == capfile.KindSent
		switch {
		case isMsg:
			recording.FromRecord(&msg, r, idx, src.hdr.Start, attrs)
			msg.Recording = src.recording()
			if pass != nil {
				pass.Message(&msg)
			}
			doc.Decode(r.Payload)
		case r.Kind == capfile.KindConn && pass != nil:
			recording.ConnFromRecord(&conn, r, idx, attrs)
			conn.Recording = src.recording()
			pass.Conn(&conn)
		}
		show := isMsg && opts.Match.Match(&doc.Routing) || !isMsg && !opts.MessagesOnly
		own := p.take(idx)
		if show {
			if ctl != nil {
				if _, err := ctl.Wait(ctx, r.Offset()); err != nil {
					break
				}
			}
			p.line(r, idx, &doc, own)
			st.Shown++
			if len(own) > 0 {
				st.Marked++
			}
		}
		st.Findings += int64(len(own))
		st.Findings += p.late(opts.Match)
		if p.err != nil {
			return st, p.err
		}
	}
	if pass != nil && ctx.Err() == nil {
		pass.Finish()
		st.Findings += p.late(opts.Match)
	}
	p.flush(0)
	st.Torn = src.torn
	return st, p.err
}

// steer applies the keys of a terminal to a paced listing.
func steer(ctx context.Context, ctl *timing.Controller, keys <-chan byte) {
	for {
		select {
		case <-ctx.Done():
			return
		case k, ok := <-keys:
			if !ok {
				return
			}
			switch k {
			case ' ':
				if ctl.State().Paused {
					ctl.Play()
				} else {
					ctl.Pause()
				}
			case '.':
				ctl.Step(1)
			}
		}
	}
}

// printer writes lines and keeps the findings not yet printed. With hold
// set, the lines of the last hold records wait in held, so that a late
// finding about one of them is printed right after it.
type printer struct {
	w     io.Writer
	opts  *Options
	start time.Time
	found []protocol.Finding
	buf   []byte
	err   error
	hold  int
	held  []heldLine
	first int           // position in held of the oldest line not written
	at    map[int64]int // record index -> position in held
}

// heldLine is a record's line (or a late finding's, idx -1) not written yet,
// with the late findings about it.
type heldLine struct {
	idx   int64
	line  string
	after []string
}

// take removes and returns the pending findings about record idx.
func (p *printer) take(idx int64) []protocol.Finding {
	var own []protocol.Finding
	rest := p.found[:0]
	for _, f := range p.found {
		if f.Index == idx {
			own = append(own, f)
		} else {
			rest = append(rest, f)
		}
	}
	p.found = rest
	return own
}

// late prints the pending findings about other records (or the end of the
// stream) on lines of their own, those of sessions the filter lets through,
// and returns how many there were.
func (p *printer) late(m msgfilter.Filter) int64 {
	n := int64(len(p.found))
	for _, f := range p.found {
		if len(m.Sessions) > 0 && !slices.Contains(m.Sessions, f.Session) {
			continue
		}
		about := "end-of-stream"
		if f.Index >= 0 {
			about = "#" + strconv.FormatInt(f.Index, 10)
		}
		sess := f.Session
		if sess == "" {
			sess = "-"
		}
		line := fmt.Sprintf("  !! %s %s %s %s: %s\n", f.Level, f.RuleID, about, sess, oneLine(f.Message))
		if i, ok := p.at[f.Index]; ok && f.Index >= 0 {
			h := &p.held[i-p.first]
			h.after = append(h.after, line)
			continue
		}
		p.emit(-1, line)
	}
	p.found = p.found[:0]
	return n
}

// emit writes the line of record idx (-1: not a record's), or holds it.
func (p *printer) emit(idx int64, line string) {
	if p.hold == 0 {
		p.write(line)
		return
	}
	if p.at == nil {
		p.at = map[int64]int{}
	}
	if idx >= 0 {
		p.at[idx] = p.first + len(p.held)
	}
	p.held = append(p.held, heldLine{idx: idx, line: line})
	p.flush(p.hold)
}

// flush writes the held lines but the last keep.
func (p *printer) flush(keep int) {
	n := len(p.held) - keep
	if n <= 0 {
		return
	}
	for i := range n {
		h := &p.held[i]
		p.write(h.line)
		for _, a := range h.after {
			p.write(a)
		}
		if h.idx >= 0 {
			delete(p.at, h.idx)
		}
		*h = heldLine{}
	}
	p.first += n
	p.held = append(p.held[:0], p.held[n:]...)
}

func (p *printer) write(s string) {
	if p.err != nil {
		return
	}
	if p.opts.CRLF && strings.HasSuffix(s, "\n") {
		s = s[:len(s)-1] + "\r\n"
	}
	if _, err := io.WriteString(p.w, s); err != nil {
		p.err = err
	}
}

// line prints one record.
func (p *printer) line(rec *capfile.Record, idx int64, d *payload.Doc, own []protocol.Finding) {
	f := &d.Routing
	b := p.buf[:0]
	if p.opts.Relative {
		b = append(b, '+')
		b = strconv.AppendFloat(b, rec.Offset().Seconds(), 'f', 6, 64)
		b = append(b, 's')
	} else {
		b = p.start.Add(rec.Offset()).UTC().AppendFormat(b, "15:04:05.000000")
	}
	b = append(b, " #"...)
	b = strconv.AppendInt(b, idx, 10)
	b = append(b, " s"...)
	b = strconv.AppendUint(b, uint64(rec.Origin), 10)
	switch rec.Kind {
	case capfile.KindReceived, capfile.KindSent:
		if rec.Kind == capfile.KindReceived {
			b = append(b, " recv "...)
		} else {
			b = append(b, " sent "...)
		}
		b = append(b, orDash(f.SessionKey())...)
		b = append(b, ' ')
		b = append(b, orDash(oneWord(f.TypeName()))...)
		if s := Summary(d); s != "" {
			b = append(b, ' ')
			b = append(b, s...)
		}
	default:
		if rec.Kind == capfile.KindConn {
			b = append(b, " conn -"...)
		} else {
			b = append(b, " mark -"...)
		}
		if s := connSummary(rec.Payload); s != "" {
			b = append(b, ' ')
			b = append(b, s...)
		}
	}
	if len(own) > 0 {
		b = append(b, mark(own)...)
	}
	b = append(b, '\n')
	p.buf = b
	p.emit(idx, string(b))
}

// mark is the end of a line with findings: " !! MUST RULE !! SHOULD RULE",
// each rule once, the worst first.
func mark(fs []protocol.Finding) string {
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].Level > fs[j].Level })
	var b strings.Builder
	seen := map[string]bool{}
	for _, f := range fs {
		if seen[f.RuleID] {
			continue
		}
		seen[f.RuleID] = true
		b.WriteString(" !! " + f.Level.String() + " " + f.RuleID)
	}
	return b.String()
}

// connSummary renders a connection event or marker: its "event" first,
// then its other scalar fields as key=value.
func connSummary(raw []byte) string {
	d := payload.Decode(raw)
	if !d.IsObject() {
		return clip(string(raw))
	}
	return Summary(d)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oneWord keeps a field value in its column: spaces and control characters
// become underscores.
func oneWord(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' }) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r <= ' ' {
			return '_'
		}
		return r
	}, s)
}
