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
	"errors"
	"io"
	"sync"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/outfile"
	"github.com/aaep-tools/aaepkit/msgfilter"
	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/transport"
	"github.com/klauspost/compress/zstd"
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
	Events      int64 // received messages recorded
	Filtered    int64 // received messages the filter left out
	Dropped     int64 // received messages after a stop condition
	Sent        int64 // sent messages recorded
	ConnEvents  int64 // connection events recorded
	InvalidJSON int64 // recorded messages that are not valid JSON
	InvalidUTF8 int64 // recorded messages that are not valid UTF-8
	Redacted    int64 // messages with redacted fields
	Refused     int64 // messages refused as too large
	Reconnects  int64 // connections after a source's first
	Disconnects int64 // connections lost (disconnected events)
	// Connected is the number of sources connected now: connected, and
	// not disconnected, closed or given up since.
	Connected    int64
	EventBytes   int64 // payload bytes of the recorded received messages
	PayloadBytes int64 // payload bytes of every record written
	FileBytes    int64 // bytes written to capture files (deleted ring files included; closed files as compacted)
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
	up        map[uint16]bool // the sources connected now
	stopOnce  sync.Once

	worth bool // a message or a connection was recorded: the file is kept

	// Owned by the writer goroutine.
	w         *capfile.Writer
	out       *outfile.File // the current file, under internal/outfile's policy
	shown     bool          // out is visible at its path (Publish ran)
	part      int
	fileBase  int64 // clock time of the current file's start
	closedB   int64 // file bytes of closed files
	compacted bool  // the file closed last was written again (capfile.Compact)
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
		up:        map[uint16]bool{},
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
