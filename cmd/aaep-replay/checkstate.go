package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/outfile"
	"github.com/aaep-tools/aaepkit/objstore"
	"github.com/aaep-tools/aaepkit/protocol/check"
	"github.com/aaep-tools/aaepkit/recording"
)

// parseSince parses check --since: an RFC 3339 time, or a duration (24h)
// meaning that long before now.
func parseSince(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, cli.Usagef("--since %q: neither an RFC 3339 time (2026-11-26T00:00:00Z) nor a duration (24h) before now", s)
}

// stateVersion is the version of check --state's file; version 1 (parts
// only, no header and no recording to go on with) is read too.
const stateVersion = 2

// checkState is what check --state remembers: each part checked, by name,
// with what its listing said of it then and its header; and, for each
// recording a later part may extend, where its check goes on.
type checkState struct {
	Version int                   `json:"version"`
	Parts   map[string]stateEntry `json:"parts"`
	// Recordings are by their first part's name.
	Recordings map[string]*recordingState `json:"recordings,omitempty"`

	settled map[string]bool // parts of a recording that can go on (known)
}

type stateEntry struct {
	Size     int64     `json:"size"`
	Modified time.Time `json:"modified"`
	ETag     string    `json:"etag,omitempty"`
	// Header is a capture's header: a run that goes on after the part
	// does not read it again.
	Header *capfile.Header `json:"header,omitempty"`
}

// recordingState is where the check of a recording goes on: after the
// parts read, from the analysis state at their end (the records still
// open, check.Snapshot).
type recordingState struct {
	Parts    []string        `json:"parts"`
	Snapshot *check.Snapshot `json:"snapshot"`
}

func entryOf(s recording.Stamp, p *recording.Part) stateEntry {
	e := stateEntry{Size: s.Size, Modified: s.Modified.UTC(), ETag: s.ETag}
	if p.Format == recording.FormatCapture {
		h := p.Header
		e.Header = &h
	}
	return e
}

// same reports whether a part's stamp is what the state remembers: the same
// size and ETag (objects), or size and modification time (files).
func (e stateEntry) same(s recording.Stamp) bool {
	if e.Size != s.Size {
		return false
	}
	if e.ETag != "" || s.ETag != "" {
		return e.ETag == s.ETag
	}
	return e.Modified.Equal(s.Modified)
}

// readState reads check --state's file (or object: s3://bucket/key); a
// missing one is an empty state (the first run checks everything).
func readState(a *app, path string) (*checkState, error) {
	st := &checkState{Version: stateVersion, Parts: map[string]stateEntry{}}
	var data []byte
	var err error
	if objstore.IsURL(path) {
		data, err = readStateObject(a, path)
	} else {
		data, err = os.ReadFile(path)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return st, nil
	case err != nil:
		return nil, cli.Input(fmt.Errorf("--state: %w", err))
	}
	if err := decodeState(data, st); err != nil {
		return nil, cli.Usagef("--state %s: not a state file of check: %w", path, err)
	}
	if st.Version != stateVersion && st.Version != 1 {
		return nil, cli.Usagef("--state %s: version %d, this aaep-replay reads versions 1 and %d", path, st.Version, stateVersion)
	}
	if st.Parts == nil {
		st.Parts = map[string]stateEntry{}
	}
	return st, nil
}

// incremental is what check --since and --state select: the parts named
// (with their stamps) and which of them are new.
type incremental struct {
	since   time.Time
	state   *checkState
	listed  map[string]recording.Stamp
	order   int // parts listed
	picked  int // parts new
	resumed int // recordings checked from where the last run ended
}

// changed is recording.Options.Changed: a part is new when it was modified
// at or after --since and is not in the state file as it is now. Standard
// input (no stamp) is always new.
func (c *incremental) changed(name string, s recording.Stamp) bool {
	if c.listed == nil {
		c.listed = map[string]recording.Stamp{}
	}
	c.listed[name] = s
	c.order++
	isNew := true
	if name != "-" {
		if !c.since.IsZero() && s.Modified.Before(c.since) {
			isNew = false
		}
		if c.state != nil {
			if e, ok := c.state.Parts[name]; ok && e.same(s) {
				isNew = false
			}
		}
	}
	if isNew {
		c.picked++
	}
	return isNew
}

// known is recording.Options.Known: the header of a part checked before,
// unchanged, of a recording whose check goes on after it (every part the
// state names for it unchanged), which this run does not read again.
func (c *incremental) known(name string, s recording.Stamp) (capfile.Header, bool) {
	st := c.state
	if st == nil {
		return capfile.Header{}, false
	}
	if st.settled == nil {
		st.settled = map[string]bool{}
		for _, rs := range st.Recordings {
			if !c.resumable(rs) {
				continue
			}
			for _, p := range rs.Parts {
				st.settled[p] = true
			}
		}
	}
	e, ok := st.Parts[name]
	if !ok || !st.settled[name] || e.Header == nil || !e.same(s) {
		return capfile.Header{}, false
	}
	return *e.Header, true
}

// resumable reports whether a recording's check can go on where the state
// says: a snapshot this aaep-replay reads, and every part it was taken
// after listed as it was then.
func (c *incremental) resumable(rs *recordingState) bool {
	if rs == nil || rs.Snapshot == nil || rs.Snapshot.Version != check.SnapshotVersion || len(rs.Parts) == 0 {
		return false
	}
	for _, p := range rs.Parts {
		e, ok := c.state.Parts[p]
		if s, listed := c.listed[p]; !ok || !listed || !e.same(s) || e.Header == nil {
			return false
		}
	}
	return true
}

// resumeOf says how the check of rec goes on: from the state's snapshot
// after the parts it was taken after, when rec begins with them and has
// more; from the start otherwise. Either way the run keeps a snapshot for
// the next.
func (c *incremental) resumeOf(rec *recording.Recording) *check.Resume {
	r := &check.Resume{Keep: true}
	if c.state == nil {
		return r
	}
	rs := c.state.Recordings[rec.Parts[0].Name]
	if !c.resumable(rs) || len(rec.Parts) <= len(rs.Parts) {
		return r
	}
	for i, p := range rs.Parts {
		if rec.Parts[i].Name != p {
			return r
		}
	}
	r.From, r.Part = rs.Snapshot, len(rs.Parts)
	c.resumed++
	return r
}

// save writes the state file after a run: the parts checked with their
// stamps now, the other parts still listed as the state had them (parts no
// longer listed are forgotten). It is written whole, replacing the old
// file only once written (the repository's output policy).
//
// A recording checked whole keeps its snapshot (snaps[i] for recs[i], nil:
// none), from which the next run goes on once it has a new part; the
// recordings not checked keep theirs while their first part is listed.
func (c *incremental) save(a *app, path string, recs []*recording.Recording, snaps []*check.Snapshot, inputs []string) error {
	next := &checkState{Version: stateVersion, Parts: map[string]stateEntry{}, Recordings: map[string]*recordingState{}}
	for name := range c.listed {
		if e, ok := c.state.Parts[name]; ok && name != "-" {
			next.Parts[name] = e
		}
		if rs, ok := c.state.Recordings[name]; ok {
			next.Recordings[name] = rs
		}
	}
	for i, r := range recs {
		var names []string
		for _, p := range r.Parts {
			if s, ok := c.listed[p.Name]; ok && p.Name != "-" {
				next.Parts[p.Name] = entryOf(s, p)
			}
			names = append(names, p.Name)
		}
		delete(next.Recordings, r.Parts[0].Name)
		if i < len(snaps) && snaps[i] != nil {
			next.Recordings[r.Parts[0].Name] = &recordingState{Parts: names, Snapshot: snaps[i]}
		}
	}
	data, err := encodeState(next)
	if err != nil {
		return err
	}
	if objstore.IsURL(path) {
		u, err := objstore.Parse(path)
		if err != nil {
			return err
		}
		st, err := objstore.Open(a.ctx, u, a.storage)
		if err != nil {
			return err
		}
		// Put replaces the object only once the whole of it is stored.
		return st.Put(a.ctx, u.Key, bytes.NewReader(data), int64(len(data)))
	}
	return outfile.WriteFile(path, outfile.Options{Inputs: inputs, NoStdout: "the state file is read back by the next run"}, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// what says what the parts were judged by, for the line on stderr.
func (c *incremental) what(opts *CheckOptions) string {
	var by []string
	if !c.since.IsZero() {
		by = append(by, "modified since "+c.since.UTC().Format(time.RFC3339))
	}
	if c.state != nil {
		by = append(by, "not in "+opts.State+" as they are now")
	}
	return strings.Join(by, " and ")
}

// checkStateURL refuses a --state in object storage that is not an object
// a check could keep (a prefix), or that a check reads (a capture or JSON
// Lines name, an input): the state never replaces what it judges.
func checkStateURL(state string, inputs []string) error {
	u, err := objstore.Parse(state)
	if err != nil {
		return err
	}
	if u.IsPrefix() {
		return fmt.Errorf("%s is a prefix: name the object to keep the state in (s3://bucket/aaep/shard-0.state)", state)
	}
	for _, ext := range recording.Extensions {
		if strings.HasSuffix(u.Key, ext) {
			return fmt.Errorf("%s ends in %s, as the recordings check reads: name the state otherwise (.state, .json)", state, ext)
		}
	}
	for _, in := range inputs {
		if in == state {
			return fmt.Errorf("%s is an input", state)
		}
	}
	return nil
}

// readStateObject reads a state kept in object storage: nil data and
// fs.ErrNotExist when there is none yet.
func readStateObject(a *app, path string) ([]byte, error) {
	u, err := objstore.Parse(path)
	if err != nil {
		return nil, err
	}
	st, err := objstore.Open(a.ctx, u, a.storage)
	if err != nil {
		return nil, err
	}
	obj, err := st.Stat(a.ctx, u.Key)
	switch {
	case errors.Is(err, objstore.ErrNoBucket):
		return nil, err
	case errors.Is(err, objstore.ErrNotFound):
		return nil, fs.ErrNotExist
	case err != nil:
		return nil, err
	}
	data := make([]byte, obj.Size)
	n, _, err := st.ReadRange(a.ctx, u.Key, 0, data)
	if err != nil {
		return nil, err
	}
	return data[:n], nil
}

// The state is written as zstd-compressed JSON (zstd -dc FILE | jq reads
// it): its part names, headers and the payloads of the sessions still
// open repeat themselves, and a check every minute reads it every time.
// Plain JSON (a state of version 1) is read too.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

func encodeState(st *checkState) ([]byte, error) {
	data, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBetterCompression), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	defer enc.Close()
	return enc.EncodeAll(data, nil), nil
}

func decodeState(data []byte, st *checkState) error {
	if bytes.HasPrefix(data, zstdMagic) {
		dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(1<<30))
		if err != nil {
			return err
		}
		defer dec.Close()
		if data, err = dec.DecodeAll(data, nil); err != nil {
			return err
		}
	}
	return json.Unmarshal(data, st)
}
