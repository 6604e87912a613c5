package capedit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/outfile"
	"github.com/aaep-tools/aaepkit/internal/progress"
	"github.com/aaep-tools/aaepkit/recording"
)

// MergeOptions tune Merge.
type MergeOptions struct {
	// JoinSources gives sources with the same transport, endpoint and
	// subprotocol one id in the output (use it to put back together pieces
	// of one capture). By default every input's sources stay apart.
	JoinSources bool
	Output
	// TimeShifts re-anchor the inputs' wall clocks before they are merged,
	// one per input in order (missing ones shift nothing): align captures
	// of machines whose clocks differ.
	TimeShifts []TimeShift
	Input
}

// MergeResult says what Merge did.
type MergeResult struct {
	Result
	// Origins maps, for each input, its origin ids to the output's.
	Origins []map[uint16]uint16
}

// Merge writes the records of every input to out, ordered by absolute
// receive time (each header's start plus the record's time; on a tie, the
// earlier input first), as recording.Merge interleaves streams. The output
// starts at the earliest input's start.
//
// Sources stay apart: the output's source table lists every input's sources,
// renumbered where two inputs use the same id (the first input keeps its
// ids). Records whose source id is missing from their input's table get an
// entry of transport "unlisted". Merge reads each input twice, first to
// collect the source ids its records use.
func Merge(ctx context.Context, inputs []string, out string, opts MergeOptions) (*MergeResult, error) {
	if len(inputs) == 0 {
		return nil, errors.New("no input files")
	}
	recs, err := recording.Open(ctx, inputs, opts.Inputs)
	if err != nil {
		return nil, err
	}
	inputs = recording.Names(recs) // every file of every recording, each merged as an input
	if err := opts.check(out, inputs...); err != nil {
		return nil, err
	}
	res := &MergeResult{}
	srcs := make([]*input, 0, len(inputs))
	defer func() {
		for _, s := range srcs {
			s.close()
		}
	}()
	used := make([]map[uint16]bool, len(inputs))
	for i, path := range inputs {
		u, err := usedOrigins(ctx, path, opts.Inputs, opts.Progress)
		if err != nil {
			return nil, err
		}
		used[i] = u
		s, err := openInput(ctx, path, opts.Inputs, opts.Progress)
		if err != nil {
			return nil, err
		}
		srcs = append(srcs, s)
	}
	hdr, ids, err := mergeHeader(srcs, used, opts)
	if err != nil {
		return nil, err
	}
	res.Origins = ids
	shift := make([]int64, len(srcs))
	for i, s := range srcs {
		shift[i] = opts.shift(i).Apply(s.r.Header().Start).Sub(hdr.Start).Nanoseconds()
	}
	err = opts.write(out, inputs, func(w io.Writer) error {
		cw, err := newCaptureWriter(w, hdr)
		if err != nil {
			return err
		}
		defer cw.Close()
		streams := make([]recording.Stream, len(srcs))
		ins := make([]*mergeInput, len(srcs))
		for i, s := range srcs {
			ins[i] = &mergeInput{in: s, shift: shift[i]}
			streams[i] = ins[i]
		}
		m := recording.NewMerge(streams)
		cc := ctxCheck{ctx: ctx}
		for {
			i, at, ok, err := m.Next()
			if err != nil {
				return err
			}
			if !ok {
				break
			}
			if err := cc.err(); err != nil {
				return err
			}
			o := *ins[i].rec
			o.Time = at
			o.Origin = ids[i][o.Origin]
			if err := cw.Append(&o); err != nil {
				return fmt.Errorf("write output: %w", err)
			}
			res.Written++
		}
		if err := cw.Close(); err != nil {
			return fmt.Errorf("write output: %w", err)
		}
		return nil
	})
	for _, s := range srcs {
		res.Read += s.read
		if s.torn != nil {
			res.Warnings = append(res.Warnings, *s.torn)
		}
	}
	return res, err
}

// mergeInput is an input of Merge as a recording.Stream: its records
// on the output's clock.
type mergeInput struct {
	in    *input
	shift int64
	rec   *capfile.Record // the current record
}

func (s *mergeInput) Next() (int64, bool, error) {
	rec, err := s.in.next()
	if err != nil || rec == nil {
		return 0, false, err
	}
	s.rec = rec
	return rec.Time + s.shift, true, nil
}

// usedOrigins returns the origin ids the records of the capture at path use.
func usedOrigins(ctx context.Context, path string, ro recording.Options, meter *progress.Meter) (map[uint16]bool, error) {
	s, err := openInput(ctx, path, ro, meter)
	if err != nil {
		return nil, err
	}
	defer s.close()
	used := make(map[uint16]bool)
	cc := ctxCheck{ctx: ctx}
	for {
		if err := cc.err(); err != nil {
			return nil, err
		}
		rec, err := s.next()
		if outfile.IsPartial(err) {
			// Damage: the records before it are merged, then the
			// second pass reports it.
			return used, nil
		}
		if err != nil || rec == nil {
			return used, err
		}
		used[rec.Origin] = true
	}
}

// originKey identifies an origin for JoinSources.
type originKey struct {
	transport, endpoint, subprotocol string
	unlisted                         int // old id + 1 for an unlisted source
}

// mergeHeader builds the output header and each input's source id mapping.
func mergeHeader(srcs []*input, used []map[uint16]bool, opts MergeOptions) (capfile.Header, []map[uint16]uint16, error) {
	var hdr capfile.Header
	hdr.Meta = map[string]string{}
	taken := make(map[uint16]bool)
	joined := make(map[originKey]uint16)
	ids := make([]map[uint16]uint16, len(srcs))
	var next uint32
	alloc := func(want uint16) (uint16, error) {
		if !taken[want] {
			taken[want] = true
			return want, nil
		}
		for next < 1<<16 && taken[uint16(next)] {
			next++
		}
		if next >= 1<<16 {
			return 0, errors.New("the inputs have more than 65536 sources together")
		}
		taken[uint16(next)] = true
		return uint16(next), nil
	}
	var names, shifts []string
	var hj capfile.HeaderJoin
	metaSeen := map[string]string{}
	metaConflict := map[string]bool{}
	for i, s := range srcs {
		h := s.r.Header()
		names = append(names, filepath.Base(s.path))
		hj.Add(h, opts.shift(i).Apply(h.Start))
		if ts := opts.shift(i); !ts.IsZero() {
			shifts = append(shifts, filepath.Base(s.path)+" "+ts.String())
		}
		for k, v := range h.Meta {
			if old, ok := metaSeen[k]; ok && old != v {
				metaConflict[k] = true
			}
			metaSeen[k] = v
		}
		listed := make(map[uint16]capfile.Origin, len(h.Origins))
		for _, src := range h.Origins {
			listed[src.ID] = src
		}
		all := make([]uint16, 0, len(listed)+len(used[i]))
		for id := range listed {
			all = append(all, id)
		}
		for id := range used[i] {
			if _, ok := listed[id]; !ok {
				all = append(all, id)
			}
		}
		sort.Slice(all, func(a, b int) bool { return all[a] < all[b] })
		ids[i] = make(map[uint16]uint16, len(all))
		for _, old := range all {
			src, ok := listed[old]
			key := originKey{transport: src.Transport, endpoint: src.Endpoint, subprotocol: src.Subprotocol}
			if !ok {
				src = capfile.Origin{Transport: "unlisted", Endpoint: fmt.Sprintf("%s source %d", filepath.Base(s.path), old)}
				key = originKey{unlisted: int(old) + 1}
			}
			if opts.JoinSources {
				if id, ok := joined[key]; ok {
					ids[i][old] = id
					continue
				}
			}
			id, err := alloc(old)
			if err != nil {
				return hdr, nil, err
			}
			ids[i][old] = id
			joined[key] = id
			src.ID = id
			hdr.Origins = append(hdr.Origins, src)
		}
	}
	sort.Slice(hdr.Origins, func(a, b int) bool { return hdr.Origins[a].ID < hdr.Origins[b].ID })
	hdr.Start, hdr.Tool, hdr.Redacted = hj.Start, hj.Tool(), hj.Redacted
	for k, v := range metaSeen {
		if !metaConflict[k] {
			hdr.Meta[k] = v
		}
	}
	// What cut and filter noted about their inputs is not true of the merge.
	delete(hdr.Meta, capfile.MetaDerivedFrom)
	delete(hdr.Meta, "cut")
	delete(hdr.Meta, "filter")
	hdr.Meta[capfile.MetaMergedFrom] = strings.Join(names, ", ")
	if len(shifts) > 0 {
		hdr.Meta["time_shift"] = strings.Join(shifts, ", ")
	}
	if hdr.Start.IsZero() {
		hdr.Start = time.Unix(0, 0).UTC()
	}
	return hdr, ids, nil
}

// shift returns the time shift of input i.
func (o *MergeOptions) shift(i int) TimeShift {
	if i < len(o.TimeShifts) {
		return o.TimeShifts[i]
	}
	return TimeShift{}
}
