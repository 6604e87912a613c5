package capedit

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/outfile"
	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/recording"
)

// SplitOptions choose how Split cuts a capture: exactly one of Records,
// Duration and BySession.
type SplitOptions struct {
	// Records starts a new part every this many records (every kind counts,
	// as record numbers do).
	Records int64
	// Duration starts a new part at every multiple of this much capture
	// time since the capture's start, as rotation does (--rotate-every).
	// Empty intervals make no part.
	Duration time.Duration
	// BySession writes one part per session: the messages of the session
	// (by the session key the capture indexes, else the message's
	// session_id, sessionId or run_id) and every connection event and
	// marker. Messages outside any session go to one more part, named
	// "no-session".
	BySession bool
	// Force replaces existing files at the parts' names; without it Split
	// refuses to write over any file.
	Force bool
	// TimeShift re-anchors every part's wall clock (see TimeShift).
	TimeShift TimeShift
	Input
}

// SplitPart is one file Split wrote.
type SplitPart struct {
	Path    string `json:"path"`
	Session string `json:"session,omitempty"`
	Records int64  `json:"records"`
	// First and Last are the capture times (since the input's start) of
	// the part's first and last record.
	First time.Duration `json:"first_ns"`
	Last  time.Duration `json:"last_ns"`
}

// SplitResult says what Split did.
type SplitResult struct {
	Result
	Parts []SplitPart
}

// maxOpenParts bounds the parts a session split writes at once; a capture
// of more sessions is read once per batch.
const maxOpenParts = 16

// PartName returns the name of part n (from 1) of a split into prefix:
// "run.aaep" gives run-000001.aaep, the names rotation uses; for a session
// part (session not empty) run-SESSION.aaep, with every character other
// than letters, digits, '.', '_' and '-' replaced by '_'.
func PartName(prefix string, n int, session string) string {
	ext := filepath.Ext(prefix)
	if ext == "" {
		ext = ".aaep"
	}
	base := strings.TrimSuffix(prefix, filepath.Ext(prefix))
	if session != "" {
		return base + "-" + safeName(session) + ext
	}
	return fmt.Sprintf("%s-%06d%s", base, n, ext)
}

func safeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() > 100 {
		return b.String()[:100]
	}
	return b.String()
}

// Split writes the capture in into parts named after prefix (see PartName),
// each a complete capture: the input's header (with "split" and
// "derived_from" in its meta) and a fresh index. Count and duration parts
// start at their first record (at the interval's start for Duration), so
// their records keep their absolute times and merge --join-sources puts
// them back together; the first part and session parts keep the input's
// start (as rotation's first part and filter do).
//
// Nothing is written over an existing file unless opts.Force, and never
// over the input. Damage in the input ends the split: the parts before it
// are complete captures, the part being written holds every record before
// the damage, and the error names the file, offset and record.
func Split(ctx context.Context, ins []string, prefix string, opts SplitOptions) (*SplitResult, error) {
	n := 0
	if opts.Records > 0 {
		n++
	}
	if opts.Duration > 0 {
		n++
	}
	if opts.BySession {
		n++
	}
	if n != 1 {
		return nil, errors.New("split needs exactly one of: a record count, a duration, by session")
	}
	if prefix == "" {
		if len(ins) > 1 {
			return nil, fmt.Errorf("split of several inputs needs -o to name its parts (%s)", inputName(ins))
		}
		prefix = ins[0]
	}
	src, err := openInputs(ctx, ins, opts.Inputs, opts.Progress)
	if err != nil {
		return nil, err
	}
	defer src.close()
	s := &splitter{in: inputName(ins), ins: ins, prefix: prefix, opts: opts, src: src, res: &SplitResult{}}
	if opts.Records > 0 && !opts.Force {
		// Refuse before writing anything when the index says how many.
		if total := recording.Total(src.r); total > 0 {
			for k := 1; int64(k-1)*opts.Records < total; k++ {
				if name := PartName(prefix, k, ""); exists(name) {
					return nil, fmt.Errorf("%s: %w (--force replaces it)", name, fs.ErrExist)
				}
			}
		}
	}
	if opts.BySession {
		err = s.bySession(ctx)
	} else {
		err = s.byCount(ctx)
	}
	src.warn(&s.res.Warnings)
	return s.res, err
}

type splitter struct {
	in, prefix string
	ins        []string // the inputs, read as one capture (in names them)
	opts       SplitOptions
	src        *input
	res        *SplitResult
}

// part is one output being written.
type part struct {
	SplitPart
	f     *outfile.File
	w     *capfile.Writer
	shift int64 // subtracted from record times
}

// create opens the part at path, refusing an existing file without Force.
// A part of a count or duration split (number n > 0) says so in its
// header as rotation does ("part", and "previous": the part before it), so
// that the parts read back as one recording (package recording).
func (s *splitter) create(path, session, note string, shift int64, n int, previous string) (*part, error) {
	if !s.opts.Force && exists(path) {
		return nil, fmt.Errorf("%s: %w (--force replaces it)", path, fs.ErrExist)
	}
	f, err := outfile.Open(path, outfile.Options{Inputs: s.ins, Force: s.opts.Force})
	if err != nil {
		return nil, err
	}
	hdr := cloneHeader(s.src.r.Header())
	hdr.Meta[capfile.MetaDerivedFrom] = derivedFrom(s.ins)
	hdr.Meta["split"] = note
	delete(hdr.Meta, recording.MetaPart)
	delete(hdr.Meta, recording.MetaPrevious)
	if n > 0 {
		hdr.Meta[recording.MetaPart] = strconv.Itoa(n)
		if previous != "" {
			hdr.Meta[recording.MetaPrevious] = filepath.Base(previous)
		}
	}
	hdr.Start = s.opts.TimeShift.shiftHeader(hdr.Start.Add(time.Duration(shift)), hdr.Meta)
	w, err := newCaptureWriter(f, hdr)
	if err != nil {
		f.Abort()
		return nil, err
	}
	return &part{SplitPart: SplitPart{Path: path, Session: session, First: -1}, f: f, w: w, shift: shift}, nil
}

func (p *part) append(rec *capfile.Record) error {
	o := *rec
	o.Time -= p.shift
	if err := p.w.Append(&o); err != nil {
		return fmt.Errorf("write %s: %w", p.Path, err)
	}
	if p.First < 0 {
		p.First = time.Duration(rec.Time)
	}
	p.Last = time.Duration(rec.Time)
	p.Records++
	return nil
}

// finish closes and commits the part.
func (s *splitter) finish(p *part) error {
	if err := p.w.Close(); err != nil {
		p.f.Abort()
		return fmt.Errorf("write %s: %w", p.Path, err)
	}
	if err := p.f.Commit(); err != nil {
		return err
	}
	if p.First < 0 {
		p.First = 0
	}
	s.res.Parts = append(s.res.Parts, p.SplitPart)
	return nil
}

// byCount splits by record count or by duration, one part open at a time.
func (s *splitter) byCount(ctx context.Context) error {
	var (
		cur   *part
		index int64 = -1
		slot  int64 = -1
		cc          = ctxCheck{ctx: ctx}
	)
	fail := func(err error) error {
		// What was read before the damage stays, as a complete capture.
		if cur != nil && outfile.IsPartial(err) {
			if ferr := s.finish(cur); ferr != nil {
				return errors.Join(err, ferr)
			}
		} else if cur != nil {
			cur.w.Close()
			cur.f.Abort()
		}
		return err
	}
	for {
		if err := cc.err(); err != nil {
			return fail(err)
		}
		rec, err := s.src.next()
		if err != nil {
			return fail(err)
		}
		if rec == nil {
			break
		}
		index++
		s.res.Read++
		var k, shift int64
		var note string
		if s.opts.Records > 0 {
			k, shift = index/s.opts.Records, rec.Time
			if k == 0 {
				shift = 0 // the first part starts where the capture did
			}
			note = fmt.Sprintf("records #%d to #%d", k*s.opts.Records, (k+1)*s.opts.Records-1)
		} else {
			d := int64(s.opts.Duration)
			k = rec.Time / d
			shift = k * d
			note = fmt.Sprintf("from %s to %s", time.Duration(k*d), time.Duration((k+1)*d))
		}
		if cur == nil || k != slot {
			if cur != nil {
				if err := s.finish(cur); err != nil {
					return err
				}
			}
			slot = k
			previous := ""
			if n := len(s.res.Parts); n > 0 {
				previous = s.res.Parts[n-1].Path
			}
			if cur, err = s.create(PartName(s.prefix, len(s.res.Parts)+1, ""), "", note, shift, len(s.res.Parts)+1, previous); err != nil {
				return err
			}
		}
		if err := cur.append(rec); err != nil {
			return fail(err)
		}
		s.res.Written++
	}
	if cur == nil {
		return fmt.Errorf("%s: no records to split", s.in)
	}
	return s.finish(cur)
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// sessionOf is the session a record belongs to: "" for a message outside
// any session; ok is false for a connection event or marker (every part).
func sessionOf(rec *capfile.Record) (key string, ok bool) {
	if rec.Kind != capfile.KindReceived && rec.Kind != capfile.KindSent {
		return "", false
	}
	if rec.Session != "" {
		return rec.Session, true
	}
	return payload.Decode(rec.Payload).Routing.SessionKey(), true
}

// noSession is the part name of the messages outside any session.
const noSession = "no-session"

// bySession writes one part per session, at most maxOpenParts at a time:
// a first pass lists the sessions (from the index when the capture has
// one), and each batch of sessions is one more pass over the input.
func (s *splitter) bySession(ctx context.Context) error {
	sessions, err := s.sessions(ctx)
	if err != nil {
		return err
	}
	if len(sessions) == 0 {
		return fmt.Errorf("%s: no sessions to split by", s.in)
	}
	names := map[string]string{}
	used := map[string]bool{}
	for _, id := range sessions {
		label := id
		if label == "" {
			label = noSession
		}
		name := PartName(s.prefix, 0, label)
		for k := 2; used[name]; k++ {
			name = PartName(s.prefix, 0, label+"-"+strconv.Itoa(k))
		}
		used[name] = true
		names[id] = name
	}
	if !s.opts.Force {
		for _, id := range sessions {
			if exists(names[id]) {
				return fmt.Errorf("%s: %w (--force replaces it)", names[id], fs.ErrExist)
			}
		}
	}
	for first := 0; first < len(sessions); first += maxOpenParts {
		batch := sessions[first:min(first+maxOpenParts, len(sessions))]
		if first > 0 {
			// Read the input again for the next batch.
			s.src.close()
			src, err := openInputs(ctx, s.ins, s.opts.Inputs, nil)
			if err != nil {
				return err
			}
			s.src = src
		}
		if err := s.sessionPass(ctx, batch, names, first == 0); err != nil {
			return err
		}
	}
	return nil
}

// sessionPass writes the parts of one batch of sessions in one pass.
func (s *splitter) sessionPass(ctx context.Context, batch []string, names map[string]string, count bool) error {
	parts := map[string]*part{}
	var order []*part
	abort := func() {
		for _, p := range order {
			p.w.Close()
			p.f.Abort()
		}
	}
	for _, id := range batch {
		label := id
		if label == "" {
			label = noSession
		}
		p, err := s.create(names[id], label, "session "+label, 0, 0, "")
		if err != nil {
			abort()
			return err
		}
		parts[id] = p
		order = append(order, p)
	}
	cc := ctxCheck{ctx: ctx}
	var readErr error
	for {
		if err := cc.err(); err != nil {
			abort()
			return err
		}
		rec, err := s.src.next()
		if err != nil {
			readErr = err
			break
		}
		if rec == nil {
			break
		}
		if count {
			s.res.Read++
		}
		key, isMsg := sessionOf(rec)
		if !isMsg {
			for _, p := range order {
				if err := p.append(rec); err != nil {
					abort()
					return err
				}
			}
			continue
		}
		if p := parts[key]; p != nil {
			if err := p.append(rec); err != nil {
				abort()
				return err
			}
			s.res.Written++
		}
	}
	if readErr != nil && !outfile.IsPartial(readErr) {
		abort()
		return readErr
	}
	for _, p := range order {
		if err := s.finish(p); err != nil {
			return errors.Join(readErr, err)
		}
	}
	return readErr
}

// sessions lists the sessions of the input in order of first appearance,
// "" last when messages outside any session exist. It reads the input once
// (the capture's index does not know about messages without a session key).
func (s *splitter) sessions(ctx context.Context) ([]string, error) {
	src, err := openInputs(ctx, s.ins, s.opts.Inputs, nil)
	if err != nil {
		return nil, err
	}
	defer src.close()
	seen := map[string]bool{}
	var out []string
	none := false
	cc := ctxCheck{ctx: ctx}
	for {
		if err := cc.err(); err != nil {
			return nil, err
		}
		rec, err := src.next()
		if err != nil && !outfile.IsPartial(err) {
			return nil, err
		}
		if rec == nil || err != nil {
			break
		}
		key, isMsg := sessionOf(rec)
		switch {
		case !isMsg:
		case key == "":
			none = true
		case !seen[key]:
			seen[key] = true
			out = append(out, key)
		}
	}
	if none {
		out = append(out, "")
	}
	return out, nil
}
