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

	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/outfile"
	"github.com/aaep-tools/aaepkit/objstore"
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

// stateVersion is the version of check --state's file.
const stateVersion = 1

// checkState is what check --state remembers: each part checked, by name,
// with what its listing said of it then.
type checkState struct {
	Version int                   `json:"version"`
	Parts   map[string]stateEntry `json:"parts"`
}

type stateEntry struct {
	Size     int64     `json:"size"`
	Modified time.Time `json:"modified"`
	ETag     string    `json:"etag,omitempty"`
}

func entryOf(s recording.Stamp) stateEntry {
	return stateEntry{Size: s.Size, Modified: s.Modified.UTC(), ETag: s.ETag}
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
	if err := json.Unmarshal(data, st); err != nil {
		return nil, cli.Usagef("--state %s: not a state file of check: %w", path, err)
	}
	if st.Version != stateVersion {
		return nil, cli.Usagef("--state %s: version %d, this aaep-replay reads version %d", path, st.Version, stateVersion)
	}
	if st.Parts == nil {
		st.Parts = map[string]stateEntry{}
	}
	return st, nil
}

// incremental is what check --since and --state select: the parts named
// (with their stamps) and which of them are new.
type incremental struct {
	since  time.Time
	state  *checkState
	listed map[string]recording.Stamp
	order  int // parts listed
	picked int // parts new
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

// save writes the state file after a run: the parts checked with their
// stamps now, the other parts still listed as the state had them (parts no
// longer listed are forgotten). It is written whole, replacing the old
// file only once written (the repository's output policy).
func (c *incremental) save(a *app, path string, recs []*recording.Recording, inputs []string) error {
	next := &checkState{Version: stateVersion, Parts: map[string]stateEntry{}}
	for name := range c.listed {
		if e, ok := c.state.Parts[name]; ok && name != "-" {
			next.Parts[name] = e
		}
	}
	for _, r := range recs {
		for _, p := range r.Parts {
			if s, ok := c.listed[p.Name]; ok && p.Name != "-" {
				next.Parts[p.Name] = entryOf(s)
			}
		}
	}
	data, err := json.MarshalIndent(next, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
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
