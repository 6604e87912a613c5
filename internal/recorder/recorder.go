// Package recorder writes the messages of sources into capture files: it
// flags messages that are not valid JSON or UTF-8, applies redaction and the
// type, session and urgency filters, enforces the stop conditions
// (--max-events, --max-bytes), rotates files, and keeps the statistics that
// aaep-capture reports.
//
// Sources call the Emit function of their source id from their own
// goroutines. The UTF-8 check, redaction, the filters and the stop
// conditions run there; one writer goroutine decodes each message once with
// the JSON front end (package payload) for its validity and session key,
// then appends records
// to the capture, so reading and compressing use different cores. Emit copies a message
// into a batch and returns; the writer takes whole batches, so a fast stream
// is written in large batches and a slow one message by message.
//
// Times never go backwards in a capture: a message stamped earlier than the
// previous one (another source's clock reading raced it) takes the previous
// time.
package recorder

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/outfile"
	"github.com/aaep-tools/aaepkit/msgfilter"
	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/transport"
)

// DefaultLevel is the zstd level of captures: the fastest, because a
// recorder must keep up with the stream. On AAEP events its files are about
// 5% larger than capfile's default level and it compresses about a third
// faster (capfile's BenchmarkWrite).
const DefaultLevel = zstd.SpeedFastest

// ErrWrite wraps every failure to create or write a capture file.
var ErrWrite = errors.New("write capture")

// Stop reasons reported by Stats.StopReason and OnStop.
const (
	StopMaxEvents = "max-events"
	StopMaxBytes  = "max-bytes"
)

// Config configures a Recorder.
type Config struct {
	// Path is the capture file. With rotation it is the pattern of the
	// rotated files: "run.aaep" gives run-000001.aaep, run-000002.aaep, ...
	Path string
	// Header is written to every file; Start is set from Clock (and to the
	// start of its part for rotated files), Redacted from Redact.
	Header capfile.Header
	// Writer tunes the capture writer (flush interval, frame size, level).
	// A zero Level selects DefaultLevel.
	Writer capfile.WriterOptions
	// Clock is the sources' clock.
	Clock *transport.Clock
	// Filter selects the received messages to record (sent messages and
	// connection events are always recorded, and so are received messages
	// that are not JSON objects, so that garbage is never silently lost).
	Filter msgfilter.Filter
	// Redact lists JSON fields whose values are replaced (see RedactedValue).
	Redact []string
	// MaxEvents and MaxBytes stop the capture after that many received
	// messages, or that many bytes of received payloads, were recorded.
	MaxEvents int64
	MaxBytes  int64
	// RotateSize starts a new file once the current one reaches this many
	// bytes on disk (checked as the file grows, at each flush); RotateEvery
	// starts one at each multiple of this duration since the capture's
	// start. Ring keeps only the newest Ring files (0 keeps all).
	RotateSize  int64
	RotateEvery time.Duration
	Ring        int
	// PartName, when set, names part n (1-based) of a rotated capture
	// starting at wall-clock time start, instead of the pattern of Path.
	// Object storage outputs name parts by their start time so that the
	// parts of recordings restarted after a crash still sort in time order.
	PartName func(n int, start time.Time) string
	// OnPartClosed, when set, is called from the writer goroutine with the
	// path of every capture file once it is closed (index written, synced):
	// each rotated part, and the last file at Close. It must not block.
	OnPartClosed func(path string)
	// Force lets the capture replace existing non-empty files; without it
	// they are refused (outfile.ErrExists), as live data cannot be
	// recorded again.
	Force bool
	// Inputs are files the sources read: the capture never writes over them
	// (outfile.ErrSameFile).
	Inputs []string
	// Stdout is where a Path of "-" writes (without rotation).
	Stdout io.Writer
	// Secrets are strings that must never reach a file (header values,
	// passwords). Connection events have them replaced; received and sent
	// payloads are recorded as they are.
	Secrets []string
	// OnStop is called once, from a source's goroutine, when MaxEvents or
	// MaxBytes is reached. Received messages after that are dropped.
	OnStop func(reason string)
}

// Stats are the running totals of a capture.
type Stats struct {
	Events       int64 // received messages recorded
	Filtered     int64 // received messages the filter left out
	Dropped      int64 // received messages after a stop condition
	Sent         int64 // sent messages recorded
	ConnEvents   int64 // connection events recorded
	InvalidJSON  int64 // recorded messages that are not valid JSON
	InvalidUTF8  int64 // recorded messages that are not valid UTF-8
	Redacted     int64 // messages with redacted fields
	Refused      int64 // messages refused as too large
	Reconnects   int64 // connections after a source's first
	Disconnects  int64 // connections lost (disconnected events)
	EventBytes   int64 // payload bytes of the recorded received messages
	PayloadBytes int64 // payload bytes of every record written
	FileBytes    int64 // bytes written to capture files (deleted ring files included)
	Records      int64 // records written
	// CloseCodes counts the WebSocket close codes received.
	CloseCodes map[int]int64
	// Files are the capture files that exist, oldest first.
	Files []string
	// StopReason is StopMaxEvents or StopMaxBytes once one was reached.
	StopReason string
	// NotReplaced lists the existing files that Force would have replaced,
	// kept because no message was recorded to replace them with.
	NotReplaced []string
}

// Recorder writes the messages of sources into capture files.
type Recorder struct {
	cfg      Config
	rotating bool

	mu        sync.Mutex
	work      *sync.Cond // the writer waits for messages
	space     *sync.Cond // emitters wait for room
	pending   *batch
	spare     *batch
	idle      bool // the writer waits on work
	closing   bool
	last      int64 // time of the last accepted message
	err       error // sticky write error
	stats     Stats
	connected map[uint16]int
	stopOnce  sync.Once

	worth bool // a message or a connection was recorded: the file is kept

	// Owned by the writer goroutine.
	w         *capfile.Writer
	out       *outfile.File // the current file, under internal/outfile's policy
	shown     bool          // out is visible at its path (Publish ran)
	part      int
	fileBase  int64 // clock time of the current file's start
	closedB   int64 // file bytes of closed files
	files     []string
	produced  bool   // a message of the producer was written (a file that replaces another needs one)
	curPath   string // the file being written (or last written)
	rec       capfile.Record
	doc       payload.Doc // the writer's decoding of each message
	writerOut chan struct{}
}

// maxPending bounds the payload bytes waiting for the writer; emitters wait
// beyond it. Batches of a few MiB amortize the hand-over; larger ones only
// cost memory (and copying while they grow).
const maxPending = 4 << 20

// A writer woken for fewer than gatherMin messages waits gatherWait for more.
const (
	gatherMin  = 64
	gatherWait = 250 * time.Microsecond
)

// New creates the first capture file and starts the writer.
func New(cfg Config) (*Recorder, error) {
	if cfg.Clock == nil {
		return nil, errors.New("recorder: no clock")
	}
	if cfg.Writer.Level == 0 {
		cfg.Writer.Level = DefaultLevel
	}
	r := &Recorder{
		cfg:       cfg,
		rotating:  cfg.RotateSize > 0 || cfg.RotateEvery > 0,
		pending:   &batch{},
		spare:     &batch{},
		connected: map[uint16]int{},
		writerOut: make(chan struct{}),
	}
	if r.rotating && cfg.PartName == nil && !cfg.Force {
		// Later parts are opened mid-capture: refuse now, not then.
		if err := checkParts(cfg.Path); err != nil {
			return nil, err
		}
	}
	r.stats.CloseCodes = map[int]int64{}
	r.work = sync.NewCond(&r.mu)
	r.space = sync.NewCond(&r.mu)
	if err := r.openPart(0); err != nil {
		return nil, err
	}
	go r.writer()
	return r, nil
}

// Emit returns the function through which source src delivers its messages.
// Each source must use its own (they hold per-source scratch space).
func (r *Recorder) Emit(src uint16) transport.Emit {
	c := &classifier{r: r, src: src, redact: newRedactor(r.cfg.Redact)}
	return c.emit
}

// classifier does the per-message work in the source's goroutine.
type classifier struct {
	r      *Recorder
	src    uint16
	redact *redactor
	scrub  []byte
	doc    payload.Doc // decodes the message for redaction and the filters
}

func (c *classifier) emit(m *transport.Message) error {
	r := c.r
	msg := m.Payload
	var flags capfile.Flags
	var session string
	// check: JSON validity and UTF-8 are still to be found; scan: the
	// session key is. Unless redaction or the filters need the message
	// decoded here, the writer goroutine finds them with one decoding, so
	// that a message is parsed once, and the reading goroutine stays free
	// to read.
	keep, check, scan, handshake := true, false, false, false
	decoded := false // c.doc holds payload
	if m.Kind == capfile.KindConn {
		msg = c.scrubSecrets(msg)
	} else {
		needFields := !r.cfg.Filter.Empty() || r.cfg.MaxEvents > 0 || r.cfg.MaxBytes > 0
		// What the filters and redaction read of the message: the
		// routing fields, the members.
		var need payload.Need
		if needFields {
			need |= payload.NeedRouting
		}
		if c.redact != nil {
			need |= payload.NeedMembers
		}
		if need != 0 {
			// Validity is that of the message as received, so it is
			// checked before redaction (which could repair it).
			c.doc.DecodeOnly(msg, need)
			decoded = true
			flags |= docFlags(&c.doc)
		} else {
			check = true
		}
		if c.redact != nil {
			var changed bool
			if msg, changed = c.redact.apply(msg, &c.doc); changed {
				flags |= capfile.FlagRedacted
				decoded = false
			}
		}
		if !needFields {
			scan = true
		} else {
			// Filters and limits need the type now: handshake messages
			// (subscription.*) are not events, so they are always kept
			// and never counted towards --max-events or --max-bytes.
			if !decoded {
				c.doc.DecodeOnly(msg, payload.NeedRouting)
			}
			f := &c.doc.Routing
			session = f.SessionKey()
			handshake = isHandshake(f.Type)
			if m.Kind == capfile.KindReceived && c.doc.IsObject() && !handshake && !r.cfg.Filter.Match(f) {
				keep = false
			}
		}
	}

	r.mu.Lock()
	if r.err != nil {
		err := r.err
		r.mu.Unlock()
		return err
	}
	if r.closing {
		r.mu.Unlock()
		return fmt.Errorf("%w: recorder closed", ErrWrite)
	}
	stop := ""
	switch m.Kind {
	case capfile.KindReceived:
		switch {
		case r.stats.StopReason != "":
			r.stats.Dropped++
			r.mu.Unlock()
			return nil
		case !keep:
			r.stats.Filtered++
			r.mu.Unlock()
			return nil
		}
		if handshake {
			break
		}
		r.stats.Events++
		r.stats.EventBytes += int64(len(msg))
		switch {
		case r.cfg.MaxEvents > 0 && r.stats.Events >= r.cfg.MaxEvents:
			stop = StopMaxEvents
		case r.cfg.MaxBytes > 0 && r.stats.EventBytes >= r.cfg.MaxBytes:
			stop = StopMaxBytes
		}
		if stop != "" {
			r.stats.StopReason = stop
		}
	case capfile.KindSent:
		r.stats.Sent++
	case capfile.KindConn:
		r.stats.ConnEvents++
		r.countConn(c.src, m.Conn)
	}
	if m.Kind != capfile.KindConn || (m.Conn != nil && m.Conn.Event == capfile.ConnConnected) {
		r.worth = true
	}
	if flags&capfile.FlagInvalidJSON != 0 {
		r.stats.InvalidJSON++
	}
	if flags&capfile.FlagInvalidUTF8 != 0 {
		r.stats.InvalidUTF8++
	}
	if flags&capfile.FlagRedacted != 0 {
		r.stats.Redacted++
	}
	t := m.Time
	if t < r.last {
		t = r.last
	}
	r.last = t
	r.pending.add(m.Kind, flags, check, scan, c.src, t, session, m.Attrs, msg)
	if r.idle {
		r.work.Signal()
	}
	for r.pending.size > maxPending && r.err == nil && !r.closing {
		r.space.Wait()
	}
	r.mu.Unlock()
	if stop != "" && r.cfg.OnStop != nil {
		r.stopOnce.Do(func() { r.cfg.OnStop(stop) })
	}
	return nil
}

func (r *Recorder) countConn(src uint16, ev *transport.ConnEvent) {
	if ev == nil {
		return
	}
	switch ev.Event {
	case capfile.ConnConnected:
		r.connected[src]++
		if r.connected[src] > 1 {
			r.stats.Reconnects++
		}
	case capfile.ConnDisconnected:
		r.stats.Disconnects++
	case capfile.ConnRefused:
		r.stats.Refused++
	case capfile.ConnClosed:
		if ev.Code >= 1000 && ev.Code < 5000 {
			r.stats.CloseCodes[ev.Code]++
		}
	}
}

// scrubSecrets replaces every secret in a connection event's payload.
func (c *classifier) scrubSecrets(p []byte) []byte {
	for _, s := range c.r.cfg.Secrets {
		if len(s) < 3 || !bytes.Contains(p, []byte(s)) {
			continue
		}
		c.scrub = bytes.ReplaceAll(p, []byte(s), []byte(transport.Redacted))
		p = c.scrub
	}
	return p
}

// Stats returns the running totals.
func (r *Recorder) Stats() Stats {
	r.mu.Lock()
	s := r.stats
	s.CloseCodes = make(map[int]int64, len(r.stats.CloseCodes))
	for k, v := range r.stats.CloseCodes {
		s.CloseCodes[k] = v
	}
	s.Files = append([]string(nil), r.stats.Files...)
	s.NotReplaced = append([]string(nil), r.stats.NotReplaced...)
	r.mu.Unlock()
	return s
}

// Close writes what is pending, closes the capture file (writing its index)
// and returns the first write error.
func (r *Recorder) Close() error {
	r.mu.Lock()
	if !r.closing {
		r.closing = true
		r.work.Signal()
		r.space.Broadcast()
	}
	r.mu.Unlock()
	<-r.writerOut
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// writer appends batches to the capture until Close.
func (r *Recorder) writer() {
	defer close(r.writerOut)
	for {
		r.mu.Lock()
		for len(r.pending.entries) == 0 && !r.closing {
			r.idle = true
			r.work.Wait()
		}
		r.idle = false
		if n := len(r.pending.entries); n > 0 && n < gatherMin && !r.closing {
			// Woken for a few messages: let more gather, so that a fast
			// stream is not written (and the writer woken) one message at
			// a time. A slow stream only waits gatherWait more.
			r.mu.Unlock()
			time.Sleep(gatherWait)
			r.mu.Lock()
		}
		if len(r.pending.entries) == 0 || r.err != nil {
			r.mu.Unlock()
			break
		}
		b := r.pending
		r.pending, r.spare = r.spare, nil
		r.space.Broadcast()
		r.mu.Unlock()

		err := r.write(b)
		b.reset()
		r.mu.Lock()
		r.spare = b
		if err != nil && r.err == nil {
			r.err = err
			r.space.Broadcast()
		}
		r.mu.Unlock()
	}
	err := r.closeFile()
	r.mu.Lock()
	if err != nil && r.err == nil {
		r.err = err
	}
	r.stats.FileBytes = r.closedB
	r.mu.Unlock()
}

func (r *Recorder) write(b *batch) error {
	var invalid, invalidUTF8 int64
	for i := range b.entries {
		e := &b.entries[i]
		msg := b.data[e.off : e.off+e.n]
		switch {
		case e.scan || e.check:
			// Validity, UTF-8 and the session key are all the writer
			// reads: the front end works out nothing else.
			r.doc.DecodeOnly(msg, payload.NeedSession)
			if e.check {
				f := docFlags(&r.doc)
				e.flags |= f
				if f&capfile.FlagInvalidJSON != 0 {
					invalid++
				}
				if f&capfile.FlagInvalidUTF8 != 0 {
					invalidUTF8++
				}
			}
			if e.scan {
				e.session = r.doc.Routing.SessionKey()
			}
		}
		if !r.produced && e.kind == capfile.KindReceived {
			r.produced = fromProducer(&r.doc, msg)
		}
		if r.rotating {
			if err := r.maybeRotate(e.time); err != nil {
				return err
			}
		}
		r.rec = capfile.Record{
			Kind:    e.kind,
			Flags:   e.flags,
			Origin:  e.src,
			Time:    e.time - r.fileBase,
			Session: e.session,
			Attrs:   b.attrs[e.attrOff : e.attrOff+e.attrN],
			Payload: msg,
		}
		if err := r.w.Append(&r.rec); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrWrite, r.curPath, err)
		}
	}
	if r.keep() && !r.shown {
		if err := r.publish(); err != nil {
			return err
		}
	}
	ws := r.w.Stats()
	r.mu.Lock()
	r.stats.Records += int64(len(b.entries))
	r.stats.InvalidJSON += invalid
	r.stats.InvalidUTF8 += invalidUTF8
	r.stats.PayloadBytes += int64(len(b.data))
	r.stats.FileBytes = r.closedB + ws.FileBytes
	r.mu.Unlock()
	return nil
}

func (r *Recorder) maybeRotate(t int64) error {
	every := int64(r.cfg.RotateEvery)
	switch {
	case every > 0 && t-r.fileBase >= every:
		return r.rotate(r.fileBase + (t-r.fileBase)/every*every)
	case r.cfg.RotateSize > 0 && r.w.Stats().FileBytes >= r.cfg.RotateSize:
		return r.rotate(t)
	}
	return nil
}

// rotate closes the current file and starts the next part at clock time base.
func (r *Recorder) rotate(base int64) error {
	if err := r.closeFile(); err != nil {
		return err
	}
	return r.openPart(base)
}

// closeFile closes the current file. A file that recorded neither a message
// nor a connection (only failures to connect, or nothing) is removed: a
// recording that fails before it records anything leaves no file behind.
func (r *Recorder) closeFile() error {
	if r.w == nil {
		return nil
	}
	keep := r.keep()
	err := r.w.Close()
	r.closedB += r.w.Stats().FileBytes
	r.w = nil
	if !r.shown && !keep && r.out.Kind() == outfile.Regular {
		if r.out.Replaces() {
			r.mu.Lock()
			r.stats.NotReplaced = append(r.stats.NotReplaced, r.curPath)
			r.mu.Unlock()
		}
		r.out.Discard()
		return nil
	}
	if err == nil && !r.shown {
		err = r.publish()
	}
	if cerr := r.out.Commit(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%w: close %s: %w", ErrWrite, r.curPath, err)
	}
	if r.cfg.OnPartClosed != nil {
		r.cfg.OnPartClosed(r.curPath)
	}
	return nil
}

// keep reports whether the current file holds what is worth keeping: a
// message or a connection; and, when it would replace an existing file
// (--force), a message of the producer (fromProducer). What the recorder
// writes itself, connection events and its own side of the handshake, is
// not a recording: an endpoint that answered, read the subscription.request
// and closed never replaces a capture.
func (r *Recorder) keep() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.worth && (r.produced || !r.out.Replaces())
}

// fromProducer reports whether msg, a received message, is one the
// producer sent of its own: anything but the subscription handshake's
// answers (subscription.accepted, .rejected), which only answer the
// recorder's request. A message that is not a JSON object counts: garbage
// is what the producer sent too. It decodes msg into d.
func fromProducer(d *payload.Doc, msg []byte) bool {
	d.DecodeOnly(msg, payload.NeedRouting)
	return !d.IsObject() || !isHandshake(d.Routing.Type)
}

// publish makes the current file visible at its path and lists it; with a
// ring, the oldest file beyond it is removed.
func (r *Recorder) publish() error {
	if err := r.out.Publish(); err != nil {
		return fmt.Errorf("%w: %w", ErrWrite, err)
	}
	r.shown = true
	r.files = append(r.files, r.curPath)
	if r.cfg.Ring > 0 && len(r.files) > r.cfg.Ring {
		old := r.files[0]
		r.files = r.files[1:]
		if err := os.Remove(old); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%w: ring: %w", ErrWrite, err)
		}
	}
	r.mu.Lock()
	r.stats.Files = append(r.stats.Files[:0], r.files...)
	r.mu.Unlock()
	return nil
}

// checkParts refuses an earlier rotated capture with the same pattern: a
// non-empty file named like one of its parts.
func checkParts(path string) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	ext := filepath.Ext(base)
	prefix := strings.TrimSuffix(base, ext) + "-"
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil // the part's own open reports what is wrong
	}
	for _, e := range ents {
		n := e.Name()
		digits := strings.TrimSuffix(strings.TrimPrefix(n, prefix), ext)
		if len(n) != len(prefix)+6+len(ext) || !strings.HasPrefix(n, prefix) || !strings.HasSuffix(n, ext) || strings.Trim(digits, "0123456789") != "" {
			continue
		}
		if st, err := os.Stat(filepath.Join(dir, n)); err == nil && st.Mode().IsRegular() && st.Size() > 0 {
			return fmt.Errorf("%w: %w", ErrWrite, &outfile.Error{Op: "refuse", Path: filepath.Join(dir, n), Err: outfile.ErrExists})
		}
	}
	return nil
}

// partPath names part n (1-based) of a rotated capture.
func partPath(path string, n int) string {
	ext := filepath.Ext(path)
	return fmt.Sprintf("%s-%06d%s", strings.TrimSuffix(path, ext), n, ext)
}

func (r *Recorder) openPart(base int64) error {
	r.part++
	path := r.cfg.Path
	h := r.cfg.Header
	h.Start = r.cfg.Clock.Start().Add(time.Duration(base))
	h.Redacted = append([]string(nil), r.cfg.Redact...)
	if r.rotating {
		path = partPath(r.cfg.Path, r.part)
		if r.cfg.PartName != nil {
			path = r.cfg.PartName(r.part, h.Start)
		}
		meta := map[string]string{}
		for k, v := range r.cfg.Header.Meta {
			meta[k] = v
		}
		meta["part"] = strconv.Itoa(r.part)
		if r.part > 1 {
			meta["previous"] = filepath.Base(r.curPath)
		}
		h.Meta = meta
	}
	// A live recording: never over an input or (without Force) an earlier
	// recording; out of sight until publish.
	out, err := outfile.Open(path, outfile.Options{Inputs: r.cfg.Inputs, Stdout: r.cfg.Stdout, Binary: true, Live: true, Force: r.cfg.Force})
	if err != nil {
		return fmt.Errorf("%w: %w", ErrWrite, err)
	}
	w, err := capfile.NewWriter(out, h, &r.cfg.Writer)
	if err != nil {
		out.Discard()
		return fmt.Errorf("%w: %s: %w", ErrWrite, path, err)
	}
	r.w, r.out, r.shown = w, out, false
	r.curPath = path
	r.fileBase = base
	return nil
}
