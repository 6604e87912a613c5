package recording

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/objstore"
	"github.com/aaep-tools/aaepkit/protocol"
)

// Options say how names are opened. The zero value reads local files and
// standard input, and reaches object storage as the environment says
// (AWS_ENDPOINT_URL_S3, the AWS credential chain).
type Options struct {
	// Storage reaches object storage for s3:// names: endpoint, addressing
	// and where credentials come from. Passed where a recording is opened,
	// never registered globally.
	Storage objstore.Options
	// Stdin is what "-" reads (os.Stdin when nil).
	Stdin io.Reader
	// Extensions, when set, replaces the package's Extensions for
	// directories and prefixes (a command that reads only captures lists
	// ".aaep").
	Extensions []string
	// Changed, when set, says which parts to read: it is asked once for
	// every part named (with what its listing or file system says of it,
	// a zero Stamp for standard input) and Open reads only the parts it
	// answers true for, and the earlier parts of their recordings (found
	// by the previous part each header names); the others are not read at
	// all. Open then returns no recording, and no error, when it answers
	// false for every part (an incremental check of a prefix: only what
	// is new).
	Changed func(name string, s Stamp) bool
	// Known, when set with Changed, gives the header of a part Changed
	// answered false for that Open needs as an earlier part of a new
	// one: a part the caller checked before and will not read again (see
	// ReadOptions.From). Open takes that header instead of reading the
	// part's; a part Known does not know (false) is read as before.
	Known func(name string, s Stamp) (capfile.Header, bool)
	// PeekHead, for objects, reads only the first bytes of each part to
	// learn its header, never a small part whole: for a reader that will
	// read few of the parts it opens (a shard of a prefix, whose other
	// parts belong to other shards).
	PeekHead bool
	// Concurrency bounds the objects fetched at once while the parts are
	// opened (their headers read, a small object whole); 0:
	// DefaultConcurrency.
	Concurrency int
}

// DefaultConcurrency is Options.Concurrency's default, sized for a 2-core
// machine: enough requests in flight to hide the network's waits, few
// enough that the check of what came keeps up.
const DefaultConcurrency = 4

// Stamp is what a listing says of a part without reading it: its size, when
// it was last modified and (for objects) its ETag.
type Stamp struct {
	Size     int64
	Modified time.Time
	ETag     string
}

// Recording is one recording: the parts a recorder wrote for one run, in
// order, with what they hold. A capture that is not a rotated part, a JSON
// Lines file and standard input are each a recording of one part.
type Recording struct {
	// Name is how reports name the recording: its first part's name, with
	// the number of parts when there are several.
	Name string
	// Parts are the recording's files or objects, in order: a rotated
	// recording's parts chained by their headers' "part" and "previous".
	Parts []*Part
	// Problems says, one sentence each, which parts of the recording are
	// missing or foreign (a part whose previous part was not given, a part
	// that names as its previous one a part of another recording). A
	// recording with problems is read all the same; a check of it is
	// INCOMPLETE.
	Problems []string
	// Origins are the recording's origins, one table for all its parts
	// (origins with the same transport, endpoint and subprotocol are one),
	// with the ids messages and records carry when read.
	Origins []Origin

	joined []*Recording // set for Join: these recordings, merged by time
	replay map[int]bool // the ids of Origins that recorded a replay
	smu    sync.Mutex
	smap   *OriginMap // the joint origin table, by part (see originMap)
}

// Origin is one origin of a recording: a producer endpoint a recorder
// subscribed to, or a subscriber of a replay (serve --record).
type Origin struct {
	capfile.Origin
	// Replay is set for an origin that recorded a replay (aaep-replay
	// serve --record, push --record): the events' own timestamps are the
	// original producer's, not the subscriber's clock.
	Replay bool
}

// Open opens what names name (files, globs, directories, s3:// objects and
// prefixes, "-" for standard input) as recordings: the parts of a rotated
// recording, found by the "part" and "previous" its recorder wrote into
// each part's header, become one recording in part order, wherever they
// were named and however they sort; every other capture or JSON Lines file
// is a recording of its own. Recordings come in the order their first parts
// were named (sorted by name within a glob, directory or prefix). A part
// whose previous part is missing, or that another recording's part claims,
// is said in the recording's Problems. Open reads each capture's header
// (and, for objects, only that); it reads no record.
func Open(ctx context.Context, names []string, opts Options) ([]*Recording, error) {
	parts, err := expand(ctx, names, &opts)
	if err != nil {
		return nil, err
	}
	if opts.PeekHead {
		for _, p := range parts {
			p.peekHead = true
		}
	}
	var errs []error
	if opts.Changed != nil {
		if parts, errs = changedParts(ctx, parts, &opts); len(parts) == 0 {
			return nil, nil
		}
	} else {
		errs = peekAll(ctx, parts, opts.Concurrency)
	}
	// A part that cannot be read (a damaged header) fails Open when it is
	// all there is; among others it stays a recording of its own, and
	// reading it says what is wrong (check reports it INCOMPLETE, info
	// goes on with the other files), as each file of a prefix was before.
	failed := 0
	for _, err := range errs {
		if err != nil {
			failed++
		}
	}
	if failed == len(parts) {
		return nil, &PartError{Err: errs[0]}
	}
	recs := link(parts)
	for _, r := range recs {
		r.finish()
	}
	return recs, nil
}

// changedParts returns the parts changed says are new, with the earlier
// parts of their recordings (each header's previous part, read in turn), in
// the order they were named, and each one's error of reading its header.
// Only those parts' headers are read, and of the earlier parts only those
// opts.Known does not know.
func changedParts(ctx context.Context, parts []*Part, opts *Options) ([]*Part, []error) {
	changed, parallel := opts.Changed, opts.Concurrency
	type key struct{ dir, base string }
	byName := map[key]*Part{}
	keep := map[*Part]bool{}
	var todo []*Part
	for _, p := range parts {
		byName[key{p.dir(), p.base()}] = p
		if changed(p.Name, p.stamp) {
			keep[p] = true
			todo = append(todo, p)
		}
	}
	perr := map[*Part]error{}
	for len(todo) > 0 {
		var peek []*Part
		for _, p := range todo {
			if !p.known {
				peek = append(peek, p)
			}
		}
		for i, err := range peekAll(ctx, peek, parallel) {
			perr[peek[i]] = err
		}
		var more []*Part
		for _, p := range todo {
			if perr[p] != nil || p.Number <= 1 || p.Previous == "" {
				continue
			}
			if q := byName[key{p.dir(), p.Previous}]; q != nil && !keep[q] {
				keep[q] = true
				if opts.Known != nil {
					if h, ok := opts.Known(q.Name, q.stamp); ok {
						q.setHeader(h)
						q.known = true
					}
				}
				more = append(more, q)
			}
		}
		todo = more
	}
	var out []*Part
	var errs []error
	for _, p := range parts {
		if keep[p] {
			out = append(out, p)
			errs = append(errs, perr[p])
		}
	}
	return out, errs
}

// PartError is the error of Open when no part named could be read as a
// capture or JSON Lines (a damaged header, a file that cannot be opened);
// its message names the (first) part. An error of Open
// that is not a PartError is about the names themselves (nothing matches).
type PartError struct{ Err error }

func (e *PartError) Error() string { return e.Err.Error() }
func (e *PartError) Unwrap() error { return e.Err }

// peekAll reads every part's header, objects several at a time, and
// returns each part's error.
func peekAll(ctx context.Context, parts []*Part, parallel int) []error {
	if parallel <= 0 {
		parallel = DefaultConcurrency
	}
	errs := make([]error, len(parts))
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i, p := range parts {
		if p.store == nil {
			errs[i] = p.peek(ctx)
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			errs[i] = p.peek(ctx)
		}()
	}
	wg.Wait()
	return errs
}

// link groups parts into recordings (see Open).
func link(parts []*Part) []*Recording {
	type key struct{ dir, base string }
	byName := map[key]*Part{}
	for _, p := range parts {
		byName[key{p.dir(), p.base()}] = p
	}
	prev := map[*Part]*Part{} // a part's previous part, when linked
	next := map[*Part]*Part{}
	problems := map[*Part][]string{}
	for _, p := range parts {
		if p.Number <= 1 {
			continue
		}
		q := byName[key{p.dir(), p.Previous}]
		switch {
		case p.Previous == "" || q == nil:
			name := p.Previous
			if name == "" {
				name = "its previous part"
			}
			problems[p] = append(problems[p], fmt.Sprintf("%s is part %d of a rotated recording, but part %d (%s) was not given: sessions begun before it are judged from the middle", p.Name, p.Number, p.Number-1, name))
		case q.Number != p.Number-1 || !sameOrigins(q.Header, p.Header) || next[q] != nil:
			var why string
			switch {
			case !sameOrigins(q.Header, p.Header):
				why = "they recorded different sources"
			case q.Number != p.Number-1:
				why = fmt.Sprintf("that is part %d, not %d", q.Number, p.Number-1)
			default:
				why = fmt.Sprintf("%s claims it too", next[q].Name)
			}
			problems[p] = append(problems[p], fmt.Sprintf("%s is part %d and names %s as its previous part, but %s: a foreign part, read as a recording of its own", p.Name, p.Number, q.Name, why))
		default:
			prev[p], next[q] = q, p
		}
	}
	var recs []*Recording
	for _, p := range parts {
		if prev[p] != nil {
			continue // read with the part before it
		}
		r := &Recording{}
		for q := p; q != nil; q = next[q] {
			r.Parts = append(r.Parts, q)
			r.Problems = append(r.Problems, problems[q]...)
		}
		recs = append(recs, r)
	}
	return recs
}

// sameOrigins reports whether two parts list the same origins: the parts
// of one recording do (a recorder's sources do not change between parts).
func sameOrigins(a, b capfile.Header) bool {
	key := func(h capfile.Header) string {
		var s []string
		for _, o := range h.Origins {
			s = append(s, o.Transport+" "+o.Endpoint+" "+o.Subprotocol)
		}
		return strings.Join(s, "\n")
	}
	return key(a) == key(b) && a.Tool == b.Tool
}

// finish names the recording and works out its sources.
func (r *Recording) finish() {
	r.Name = r.Parts[0].Name
	if n := len(r.Parts); n > 1 {
		r.Name = fmt.Sprintf("%s (%d parts, to %s)", r.Parts[0].Name, n, r.Parts[n-1].base())
	}
	m := r.originMap()
	r.Origins = make([]Origin, len(m.Origins))
	for i, o := range m.Origins {
		r.Origins[i] = Origin{Origin: o, Replay: m.replay[o.ID]}
	}
	r.noteReplays()
}

// Sources returns the recording's origin table as the capture headers
// hold it (nil for a JSON Lines file, which names none).
func (r *Recording) Sources() []capfile.Origin {
	var out []capfile.Origin
	for _, o := range r.Origins {
		out = append(out, o.Origin)
	}
	return out
}

// noteReplays indexes the sources that recorded a replay.
func (r *Recording) noteReplays() {
	r.replay = map[int]bool{}
	for _, s := range r.Origins {
		if s.Replay {
			r.replay[int(s.ID)] = true
		}
	}
}

// Join returns the recordings as one, their records (or messages)
// interleaved by absolute time, as "merge --join-sources" of all their
// parts would write them: offsets count from the earliest start, record
// numbers run over all of them, and sources of the same transport and
// endpoint are one. One recording is returned as it is.
func Join(recs []*Recording) *Recording {
	if len(recs) == 1 {
		return recs[0]
	}
	j := &Recording{joined: recs}
	var names []string
	for _, r := range recs {
		j.Parts = append(j.Parts, r.Parts...)
		j.Problems = append(j.Problems, r.Problems...)
		names = append(names, r.Parts[0].Name)
	}
	j.Name = strings.Join(names, ", ")
	m := j.originMap()
	for _, o := range m.Origins {
		j.Origins = append(j.Origins, Origin{Origin: o, Replay: m.replay[o.ID]})
	}
	j.noteReplays()
	return j
}

// originMap is the joint origin table of the recording's parts, part i of
// r.Parts being input i.
func (r *Recording) originMap() *OriginMap {
	r.smu.Lock()
	defer r.smu.Unlock()
	if r.smap == nil {
		r.smap = NewOriginMap()
		for i, p := range r.Parts {
			if p.Format == FormatJSONL {
				r.smap.Add(i, capfile.Header{Origins: []capfile.Origin{{ID: 0, Transport: "jsonl"}}})
				continue
			}
			r.smap.Add(i, p.Header)
		}
	}
	return r.smap
}

// Header returns the recording's header as one capture would have it: its
// first part's (the earliest start of joined recordings), with the joint
// origin table. It is the zero header for JSON Lines.
func (r *Recording) Header() capfile.Header {
	h := r.Parts[0].Header
	if r.joined != nil {
		h = joinHeader(r)
	}
	h.Origins = append([]capfile.Origin(nil), r.originMap().Origins...)
	return h
}

// Start is the wall-clock time offsets count from (zero when unknown).
func (r *Recording) Start() time.Time { return r.Header().Start }

// Replay reports whether the recording records a replay (aaep-replay serve
// --record or push --record): its streams are its subscriptions.
func (r *Recording) Replay() bool { return len(r.replay) > 0 }

// Paths returns the local file paths among the recordings' parts (for
// commands that must not write over an input).
func Paths(recs []*Recording) []string {
	var out []string
	for _, r := range recs {
		for _, p := range r.Parts {
			if p.path != "" {
				out = append(out, p.path)
			}
		}
	}
	return out
}

// Names returns the names of the recordings' parts, in order.
func Names(recs []*Recording) []string {
	var out []string
	for _, r := range recs {
		for _, p := range r.Parts {
			out = append(out, p.Name)
		}
	}
	return out
}

// StreamOf returns the stream of the recording message m (as read by Read)
// belongs to: "" in a recording that is one stream; in a recording of a
// replay (Replay), the subscription the record names (its "subscription"
// attribute), each subscription being a stream of its own whose replies
// are judged against its own copy of the replay. Recordings read joined
// (Join) are judged each on its own, as check judges them: a message's
// stream is its recording's name (Message.Recording), followed by "/" and
// its subscription in a recording of a replay.
func (r *Recording) StreamOf(m *protocol.Message) string {
	return r.streamOf(m.Recording, m.Source, m.Attrs)
}

// StreamOfConn is StreamOf for a connection record.
func (r *Recording) StreamOfConn(c *protocol.Conn) string {
	return r.streamOf(c.Recording, c.Source, c.Attrs)
}

func (r *Recording) streamOf(rec, source int, attrs map[string]string) string {
	sub := ""
	if r.replaySource(source) {
		sub = attrs[AttrSubscription]
	}
	if r.joined == nil || rec < 0 || rec >= len(r.joined) {
		return sub
	}
	name := r.joined[rec].Name
	if sub == "" {
		return name
	}
	return name + "/" + sub
}

// Joined returns the recordings r joins (Join), or nil for one recording.
func (r *Recording) Joined() []*Recording { return r.joined }

// RecordingOfStream returns the recording a stream of r belongs to: r
// itself, or for recordings read joined (Join) the one named by the
// stream (see StreamOf).
func (r *Recording) RecordingOfStream(name string) *Recording {
	for _, j := range r.joined {
		if name == j.Name || strings.HasPrefix(name, j.Name+"/") {
			return j
		}
	}
	return r
}

func (r *Recording) replaySource(id int) bool { return r.replay[id] }

// StreamInfo describes stream name of the recording for the engine that
// checks it: the recording tool and every source with its replay flag.
func (r *Recording) StreamInfo(name string) protocol.StreamInfo {
	info := protocol.StreamInfo{Stream: name, Tool: r.RecordingOfStream(name).Parts[0].Header.Tool}
	for _, s := range r.Origins {
		info.Sources = append(info.Sources, protocol.SourceInfo{ID: int(s.ID), Transport: s.Transport, Endpoint: s.Endpoint, Replay: s.Replay})
	}
	return info
}

// joinHeader is the header of joined recordings, as merge --join-sources
// writes it: the earliest start, every tool and redacted field, and the
// parts merged.
func joinHeader(j *Recording) capfile.Header {
	var hj capfile.HeaderJoin
	var names []string
	for _, p := range j.Parts {
		hj.Add(p.Header, p.Header.Start)
		names = append(names, p.base())
	}
	return capfile.Header{
		Version:  hj.Version,
		Start:    hj.Start,
		Tool:     hj.Tool(),
		Redacted: hj.Redacted,
		Meta:     map[string]string{capfile.MetaMergedFrom: strings.Join(names, ", ")},
	}
}
