package capfile

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/url"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
	"weak"

	"github.com/klauspost/compress/zstd"
)

// Defaults for WriterOptions. DefaultLevel was chosen by measurement
// (BenchmarkWrite, BenchmarkSize): on realistic AAEP events it writes about
// 500,000 events per CPU second and makes files about 10% smaller than
// zstd.SpeedDefault, which is about a third faster.
const (
	DefaultFlushInterval = 100 * time.Millisecond
	DefaultFrameSize     = 1 << 20
	DefaultLevel         = zstd.SpeedBetterCompression
)

// WriterOptions tune a Writer. The zero value (or a nil pointer) selects the defaults.
type WriterOptions struct {
	// FlushInterval bounds how long an appended record may stay in memory:
	// at most this long after Append, a timer flushes the compressor so the
	// record is decodable from the file, without closing the zstd frame.
	// Default DefaultFlushInterval; a negative value disables timed flushes.
	FlushInterval time.Duration
	// FrameSize is the number of uncompressed record bytes after which the
	// current zstd frame is closed and the next record starts a new one.
	// Smaller frames make seeks cheaper and compress worse. Default DefaultFrameSize.
	FrameSize int
	// Level is the zstd compression level used while records arrive
	// quickly. Default DefaultLevel. When timed flushes find fewer than 50
	// records per second (and until the first timed flush), new frames use
	// zstd.SpeedDefault with a 256 KiB window instead: each flush then ends
	// a small block, which compresses worse, and the stronger level costs
	// little CPU at such rates.
	Level zstd.EncoderLevel
	// SyncOnFlush makes every timed flush also fsync the file (when the
	// underlying writer has a Sync method).
	SyncOnFlush bool
	// HeaderReserve keeps this many bytes of room after the header's JSON
	// (as spaces, which readers skip), so that AddOrigin can grow the
	// origin table in place. 0 keeps none.
	HeaderReserve int
	// HeaderAt is where AddOrigin rewrites the header, which must start at
	// its offset 0; nil means the destination itself when it is an
	// io.WriterAt (a fresh *os.File is).
	HeaderAt io.WriterAt

	// window, when set, is the zstd window instead of the one FrameSize
	// implies (Compact's: frames of a megabyte, a low-rate encoder's window).
	window int
}

func (o *WriterOptions) withDefaults() WriterOptions {
	var r WriterOptions
	if o != nil {
		r = *o
	}
	if r.FlushInterval == 0 {
		r.FlushInterval = DefaultFlushInterval
	}
	if r.FrameSize <= 0 {
		r.FrameSize = DefaultFrameSize
	}
	if r.Level == 0 {
		r.Level = DefaultLevel
	}
	return r
}

// WriterStats are a Writer's running totals.
type WriterStats struct {
	Records      int64 // records appended
	PayloadBytes int64 // payload bytes appended (uncompressed)
	FileBytes    int64 // bytes written to the file so far
	Frames       int64 // zstd data frames closed so far
	Flushes      int64 // flushes that ended a zstd block inside a frame (timed, Flush, Sync)
}

// Writer appends records to a capture. Its methods are safe for concurrent
// use. Records become decodable from the file at the next flush: a timed one
// (WriterOptions.FlushInterval), an explicit Flush or Sync, or the close of a
// frame. Errors from the underlying writer are sticky: once a write failed,
// every later call returns that error and nothing more is written, so the
// file keeps every record written before the failure.
type Writer struct {
	mu     sync.Mutex
	opts   WriterOptions
	cw     countingWriter
	file   *os.File // set by Create; closed by Close
	syncer interface{ Sync() error }
	enc    *zstd.Encoder // the current frame's encoder: fast or slow
	fast   *zstd.Encoder // at opts.Level, made when first needed
	slow   *zstd.Encoder // at lowRateLevel, made when first needed
	window int
	buf    []byte

	inFrame   bool
	frameRaw  int
	framePrev int64 // Time of the frame's last record
	dirty     bool  // the encoder holds records not yet flushed
	timer     *time.Timer
	armed     bool
	lastTime  int64

	slowMode    bool      // low-rate mode: new frames use the slow encoder
	rateAt      time.Time // time of the last timed flush
	rateRecords int64     // stats.Records at rateAt

	ib     indexBuilder
	stats  WriterStats
	err    error
	closed bool

	// The header as written, the size of its JSON (padding included) and
	// where to rewrite it (nil: the header cannot grow).
	hdr     Header
	hdrJSON int
	hdrAt   io.WriterAt

	// unmark lets go of the mark of a capture being written (see
	// BeingWritten), nil when there is none.
	unmark func()
}

// ErrHeaderFixed is AddOrigin's error when the header cannot be rewritten:
// no HeaderReserve, an output that is not a seekable file, or an origin
// table that has outgrown the reserve.
var ErrHeaderFixed = errors.New("capfile: the header's source table cannot grow")

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	return n, err
}

// Create creates (or truncates) the file at path and writes a capture header
// to it. Close closes the file.
func Create(path string, h Header, opts *WriterOptions) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("capfile: create: %w", err)
	}
	w, err := NewWriter(f, h, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	w.file = f
	return w, nil
}

// NewWriter writes a capture header to w and returns a Writer appending
// records to it. Sync is a no-op unless w has a Sync() error method. Close
// does not close w.
func NewWriter(w io.Writer, h Header, opts *WriterOptions) (*Writer, error) {
	o := opts.withDefaults()
	window := 1 << 16
	for window < o.FrameSize && window < 8<<20 {
		window <<= 1
	}
	if o.window > 0 {
		window = o.window
	}
	cw := &Writer{opts: o, cw: countingWriter{w: w}, window: window}
	// A writer with timed flushes starts in low-rate mode: most recorders
	// run beside agents that emit a few events per second, and the first
	// timed flush switches to the fast level if records arrive quickly. A
	// writer without timed flushes (a batch copy) never measures a rate
	// and stays fast.
	cw.slowMode = o.FlushInterval > 0
	cw.rateAt = time.Now()
	// The encoder is made before anything is written, so that a failure
	// leaves the destination untouched.
	if _, err := cw.encoder(); err != nil {
		return nil, err
	}
	if s, ok := w.(interface{ Sync() error }); ok {
		cw.syncer = s
	}
	h = normalHeader(h)
	hdr, js, err := encodeHeaderSized(h, 0, o.HeaderReserve)
	if err != nil {
		return nil, err
	}
	cw.hdr, cw.hdrJSON = h, js
	if o.HeaderReserve > 0 {
		cw.hdrAt = o.HeaderAt
		if wa, ok := w.(io.WriterAt); ok && cw.hdrAt == nil {
			cw.hdrAt = wa
		}
	}
	if sc, ok := w.(syscall.Conn); ok {
		// A regular file is marked as being written from its header on.
		cw.unmark = markWriting(sc)
	}
	if _, err := cw.cw.Write(hdr); err != nil {
		cw.dropMark()
		return nil, fmt.Errorf("capfile: write header: %w", err)
	}
	cw.stats.FileBytes = cw.cw.n
	return cw, nil
}

// encoderKey names the settings an encoder was made with.
type encoderKey struct {
	level  zstd.EncoderLevel
	window int
}

// spareEncoders holds, weakly, the encoder of the last Writer closed with
// each setting, for the next Writer with the same settings. A recorder
// rotating parts every few seconds would otherwise hold a new 1.5 MiB
// encoder per part until the collector ran (make bench, the recorder to
// s3://). A sync.Pool would keep it where another processor's Get does not
// look.
var spareEncoders struct {
	sync.Mutex
	m map[encoderKey]weak.Pointer[zstd.Encoder]
}

func newEncoder(level zstd.EncoderLevel, window int) (*zstd.Encoder, error) {
	key := encoderKey{level, window}
	spareEncoders.Lock()
	p, ok := spareEncoders.m[key]
	delete(spareEncoders.m, key)
	spareEncoders.Unlock()
	if enc := p.Value(); ok && enc != nil {
		return enc, nil
	}
	enc, err := zstd.NewWriter(nil,
		zstd.WithEncoderLevel(level),
		zstd.WithEncoderConcurrency(1),
		zstd.WithWindowSize(window),
		zstd.WithEncoderCRC(true))
	if err != nil {
		return nil, fmt.Errorf("capfile: zstd encoder: %w", err)
	}
	return enc, nil
}

// spareEncoder offers enc, made by newEncoder(level, window) and no longer
// used by its Writer, to the next Writer.
func spareEncoder(enc *zstd.Encoder, level zstd.EncoderLevel, window int) {
	if enc == nil {
		return
	}
	enc.Reset(nil) // forget the destination and any unfinished frame
	spareEncoders.Lock()
	if spareEncoders.m == nil {
		spareEncoders.m = map[encoderKey]weak.Pointer[zstd.Encoder]{}
	}
	spareEncoders.m[encoderKey{level, window}] = weak.Make(enc)
	spareEncoders.Unlock()
}

// Low-rate mode. When records arrive slowly, each timed flush ends a small
// zstd block, which compresses worse; the writer then takes a level whose
// CPU cost is negligible at such rates. The rate is measured at timed
// flushes; a change of mode closes the frame and lets the other encoder go.
//
// Measured on AAEP events flushed one by one (10 events/s), bytes per event
// and encoder heap: SpeedBestCompression 57.9 B, 35 MiB; SpeedBetterCompression
// 59.7 B, 5.5 MiB; SpeedDefault 66.7 B, 2.7 MiB; SpeedFastest 67.6 B,
// 1.6 MiB. A sidecar recorder's budget (16 MiB resident, S3 client
// included) leaves room for SpeedDefault only; a window beyond 256 KiB
// (a minute of history at such rates) gains under 1%.
const (
	lowRateLevel  = zstd.SpeedDefault
	lowRateWindow = 256 << 10
	slowBelow     = 50  // records per second
	fastAbove     = 500 // records per second
)

// encoder returns the encoder of the current mode, making it when needed
// (or taking a spare) and offering the other mode's as a spare, so that
// only one is held at a time.
func (w *Writer) encoder() (*zstd.Encoder, error) {
	var err error
	if w.slowMode {
		spareEncoder(w.fast, w.opts.Level, w.window)
		w.fast = nil
		if w.slow == nil {
			w.slow, err = newEncoder(lowRateLevel, min(w.window, lowRateWindow))
		}
		return w.slow, err
	}
	spareEncoder(w.slow, lowRateLevel, min(w.window, lowRateWindow))
	w.slow = nil
	if w.fast == nil {
		w.fast, err = newEncoder(w.opts.Level, w.window)
	}
	return w.fast, err
}

// AddOrigin adds o to the origin table of the header already written,
// rewriting the header in place (a no-op when its id is listed). It needs
// WriterOptions.HeaderReserve and a destination that is an io.WriterAt with
// the header at offset 0, such as a fresh *os.File; otherwise, or when the
// reserve is used up, it returns ErrHeaderFixed and the file is unchanged.
// The rewrite is one write of the header's bytes: a killed writer leaves
// either header, both complete.
func (w *Writer) AddOrigin(o Origin) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	for _, s := range w.hdr.Origins {
		if s.ID == o.ID {
			return nil
		}
	}
	if w.hdrAt == nil {
		return ErrHeaderFixed
	}
	h := w.hdr
	h.Origins = append(append([]Origin(nil), h.Origins...), o)
	h = normalHeader(h)
	frame, _, err := encodeHeaderSized(h, w.hdrJSON, 0)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrHeaderFixed, err)
	}
	if _, err := w.hdrAt.WriteAt(frame, 0); err != nil {
		return w.fail("rewrite header", err)
	}
	w.hdr = h
	return nil
}

// Header returns the header as written (with AddOrigin's origins).
func (w *Writer) Header() Header {
	w.mu.Lock()
	defer w.mu.Unlock()
	h := w.hdr
	h.Origins = append([]Origin(nil), h.Origins...)
	return h
}

// normalHeader sets the version and start and removes credentials from
// endpoints.
func normalHeader(h Header) Header {
	h.Version = Version
	if h.Start.IsZero() {
		h.Start = time.Now()
	}
	h.Start = h.Start.Round(0) // drop the monotonic reading
	h.Origins = append([]Origin(nil), h.Origins...)
	for i := range h.Origins {
		h.Origins[i].Endpoint = StripCredentials(h.Origins[i].Endpoint)
	}
	return h
}

// encodeHeader returns the header skippable frame for h, with the version set
// and credentials removed from endpoints.
func encodeHeader(h Header) ([]byte, error) {
	frame, _, err := encodeHeaderSized(normalHeader(h), 0, 0)
	return frame, err
}

// encodeHeaderSized encodes a normalized header with its JSON padded by
// spaces to exactly size bytes (size 0: no padding but reserve spaces). It
// returns the frame and the JSON's length, padding included.
func encodeHeaderSized(h Header, size, reserve int) ([]byte, int, error) {
	js, err := json.Marshal(&h)
	if err != nil {
		return nil, 0, fmt.Errorf("capfile: encode header: %w", err)
	}
	if size == 0 {
		size = len(js) + reserve
	}
	if len(js) > size {
		return nil, 0, fmt.Errorf("capfile: header of %d bytes exceeds its room (%d)", len(js), size)
	}
	if size > MaxHeaderSize {
		return nil, 0, fmt.Errorf("capfile: header of %d bytes exceeds MaxHeaderSize (%d)", size, MaxHeaderSize)
	}
	for len(js) < size {
		js = append(js, ' ')
	}
	c := make([]byte, 0, headerFixedLen+len(js))
	c = append(c, headerSig...)
	c = binary.LittleEndian.AppendUint16(c, Version)
	c = binary.LittleEndian.AppendUint16(c, 0)
	c = binary.LittleEndian.AppendUint32(c, crc32.Checksum(js, castagnoli))
	c = append(c, js...)
	return appendSkippable(make([]byte, 0, skippableHeaderLen+len(c)), headerMagic, c), size, nil
}

// sensitiveParams are query parameters dropped from endpoint URLs.
var sensitiveParams = []string{"token", "access_token", "auth", "authorization", "key", "api_key", "apikey",
	"password", "passwd", "secret", "client_secret", "signature", "sig", "session_token", "jwt"}

// StripCredentials returns endpoint without user info and without query
// parameters that usually carry secrets (token, key, password, ...).
// Endpoints that are not URLs (socket paths, commands) are returned unchanged.
func StripCredentials(endpoint string) string {
	if !strings.Contains(endpoint, "://") {
		return endpoint
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		// An unparsable URL may still hold user info; cut it out by hand.
		if at := strings.LastIndex(endpoint, "@"); at >= 0 {
			scheme := endpoint[:strings.Index(endpoint, "://")+3]
			return scheme + endpoint[at+1:]
		}
		return endpoint
	}
	u.User = nil
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			for _, s := range sensitiveParams {
				if strings.EqualFold(k, s) {
					q.Del(k)
				}
			}
		}
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// Append adds rec to the capture. It copies what it needs, so rec may be
// reused when Append returns. A record whose Time is before the previous
// record's (ErrTimeOrder) or that exceeds a limit (MaxPayload, MaxSession,
// MaxAttrs, MaxAttrLen) is rejected without affecting the Writer.
func (w *Writer) Append(rec *Record) error {
	if err := checkRecord(rec); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	if w.err != nil {
		return w.err
	}
	if rec.Time < w.lastTime {
		return fmt.Errorf("%w: time %d after %d", ErrTimeOrder, rec.Time, w.lastTime)
	}
	if !w.inFrame {
		enc, err := w.encoder()
		if err != nil {
			return err
		}
		w.enc = enc
		w.enc.Reset(&w.cw)
		w.ib.startFrame(w.cw.n)
		w.inFrame = true
		w.frameRaw = 0
		w.framePrev = 0
	}
	w.buf = appendRecord(w.buf[:0], rec, w.framePrev)
	if _, err := w.enc.Write(w.buf); err != nil {
		return w.fail("write record", err)
	}
	w.lastTime = rec.Time
	w.framePrev = rec.Time
	w.ib.add(rec.Time, rec.Session, len(w.buf))
	w.frameRaw += len(w.buf)
	w.stats.Records++
	w.stats.PayloadBytes += int64(len(rec.Payload))
	if w.frameRaw >= w.opts.FrameSize {
		return w.closeFrame()
	}
	w.dirty = true
	w.armTimer()
	return nil
}

// fail records a sticky error.
func (w *Writer) fail(what string, err error) error {
	if errors.Is(err, ErrClosed) {
		return err
	}
	w.err = fmt.Errorf("capfile: %s: %w", what, err)
	w.stats.FileBytes = w.cw.n
	return w.err
}

func (w *Writer) armTimer() {
	if w.armed || w.opts.FlushInterval < 0 {
		return
	}
	w.armed = true
	if w.timer == nil {
		w.timer = time.AfterFunc(w.opts.FlushInterval, w.timedFlush)
	} else {
		w.timer.Reset(w.opts.FlushInterval)
	}
}

func (w *Writer) timedFlush() { w.flushTick(time.Now()) }

// flushTick is a timed flush at time now: it flushes, then updates the
// low-rate mode from the number of records appended since the last tick.
func (w *Writer) flushTick(now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.armed = false
	if w.closed || w.err != nil {
		return
	}
	if w.flushLocked() != nil {
		return
	}
	{
		if d := now.Sub(w.rateAt).Seconds(); d > 0 {
			rate := float64(w.stats.Records-w.rateRecords) / d
			mode := w.slowMode
			if rate < slowBelow {
				mode = true
			} else if rate > fastAbove {
				mode = false
			}
			if mode != w.slowMode && w.inFrame {
				if w.closeFrame() != nil {
					return
				}
			}
			w.slowMode = mode
		}
	}
	w.rateAt, w.rateRecords = now, w.stats.Records
	if w.opts.SyncOnFlush && w.syncer != nil {
		if err := w.syncer.Sync(); err != nil {
			w.fail("sync", err)
		}
	}
}

// closeFrame finishes the current zstd frame.
func (w *Writer) closeFrame() error {
	if err := w.enc.Close(); err != nil {
		return w.fail("close frame", err)
	}
	w.ib.endFrame(w.cw.n)
	w.inFrame = false
	w.dirty = false
	w.stats.Frames++
	w.stats.FileBytes = w.cw.n
	return nil
}

func (w *Writer) flushLocked() error {
	if w.err != nil {
		return w.err
	}
	if !w.dirty {
		return nil
	}
	if err := w.enc.Flush(); err != nil {
		return w.fail("flush", err)
	}
	w.dirty = false
	w.stats.Flushes++
	w.stats.FileBytes = w.cw.n
	return nil
}

// Flush writes every appended record to the underlying writer, decodable
// without closing the current frame.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	return w.flushLocked()
}

// Sync flushes and then fsyncs the underlying writer, if it has a Sync method.
func (w *Writer) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	if err := w.flushLocked(); err != nil {
		return err
	}
	if w.syncer != nil {
		if err := w.syncer.Sync(); err != nil {
			return w.fail("sync", err)
		}
	}
	return nil
}

// Stats returns the running totals.
func (w *Writer) Stats() WriterStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stats.FileBytes = w.cw.n
	return w.stats
}

// Close finishes the current frame, writes the index and trailer, and, for a
// Writer made by Create, fsyncs and closes the file. After a write error it
// writes nothing more, closes the file and returns the error. Close may be
// called more than once; later calls return nil, and later Appends ErrClosed.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	if w.timer != nil {
		w.timer.Stop()
	}
	err := w.err
	if err == nil {
		err = w.finish()
	}
	if err == nil && w.file != nil {
		if serr := w.file.Sync(); serr != nil {
			err = w.fail("sync", serr)
		}
	}
	// Complete (or failed for good): no longer being written.
	w.dropMark()
	spareEncoder(w.slow, lowRateLevel, min(w.window, lowRateWindow))
	spareEncoder(w.fast, w.opts.Level, w.window)
	w.enc, w.slow, w.fast = nil, nil, nil
	if w.file != nil {
		if cerr := w.file.Close(); cerr != nil && err == nil {
			err = w.fail("close", cerr)
		}
	}
	return err
}

// dropMark lets go of the mark of a capture being written.
func (w *Writer) dropMark() {
	if w.unmark != nil {
		w.unmark()
		w.unmark = nil
	}
}

func (w *Writer) finish() error {
	if w.inFrame {
		if err := w.closeFrame(); err != nil {
			return err
		}
	}
	indexOff := w.cw.n
	frame := appendSkippable(nil, indexMagic, encodeIndex(&w.ib.idx))
	frame = append(frame, encodeTrailer(indexOff, int64(len(frame)))...)
	if _, err := w.cw.Write(frame); err != nil {
		return w.fail("write index", err)
	}
	w.stats.FileBytes = w.cw.n
	return nil
}
