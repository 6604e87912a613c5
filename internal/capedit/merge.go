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
	inputs = recording.Names(recs) // every file of every recording
	if err := opts.check(out, inputs...); err != nil {
		return nil, err
	}
	if opts.TimeShifts, err = recordingShifts(recs, opts.TimeShifts); err != nil {
		return nil, err
	}
	res := &MergeResult{}
	srcs := make([]*input, 0, len(recs))
	defer func() {
		for _, s := range srcs {
			s.close()
		}
	}()
	// Each recording is one input: a rotated recording's parts are read
	// one after the other with the recording's one origin table, as every
	// reader reads them, never as captures of sources of their own.
	used := make([]map[uint16]bool, len(recs))
	parts := make([][]string, len(recs))
	for i, r := range recs {
		u, err := usedOrigins(ctx, r, opts.Progress)
		if err != nil {
			return nil, err
		}
		used[i] = u
		s, err := openRecordings(ctx, []*recording.Recording{r}, opts.Progress)
		if err != nil {
			return nil, err
		}
		srcs = append(srcs, s)
		parts[i] = recording.Names([]*recording.Recording{r})
	}
	hdr, ids, err := mergeHeader(srcs, parts, used, opts)
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
		if s.torn == nil && s.r.Torn() != nil {
			// A torn part that was not its recording's last: its
			// records before the tear were merged, then the next part's.
			s.torn = &Warning{File: s.path, Records: s.read, Err: s.r.Torn()}
		}
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

// usedOrigins returns the origin ids the records of the recording use.
func usedOrigins(ctx context.Context, r *recording.Recording, meter *progress.Meter) (map[uint16]bool, error) {
	s, err := openRecordings(ctx, []*recording.Recording{r}, meter)
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

// recordingShifts gives each recording the time shift of its parts (shifts
// are given per part, in the order recording.Names lists the recordings'
// parts): a recording's parts share one wall clock, so two different
// shifts of one recording's parts are refused.
func recordingShifts(recs []*recording.Recording, shifts []TimeShift) ([]TimeShift, error) {
	out := make([]TimeShift, len(recs))
	k := 0
	for i, r := range recs {
		from := ""
		for _, p := range r.Parts {
			if k < len(shifts) && !shifts[k].IsZero() {
				if from != "" && (shifts[k].By != out[i].By || !shifts[k].To.Equal(out[i].To)) {
					return nil, fmt.Errorf("%s and %s are parts of one recording, which has one clock: shift them alike, or only one of them", from, p.Name)
				}
				out[i], from = shifts[k], p.Name
			}
			k++
		}
	}
	return out, nil
}

// originKey identifies an origin for JoinSources.
type originKey struct {
	transport, endpoint, subprotocol string
	unlisted                         int // old id + 1 for an unlisted source
}

// mergeHeader builds the output header and each input's source id mapping;
// parts are the names of each input's parts.
func mergeHeader(srcs []*input, parts [][]string, used []map[uint16]bool, opts MergeOptions) (capfile.Header, []map[uint16]uint16, error) {
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
		for _, p := range parts[i] {
			names = append(names, filepath.Base(p))
		}
		first := filepath.Base(parts[i][0])
		hj.Add(h, opts.shift(i).Apply(h.Start))
		if ts := opts.shift(i); !ts.IsZero() {
			shifts = append(shifts, first+" "+ts.String())
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
				src = capfile.Origin{Transport: "unlisted", Endpoint: fmt.Sprintf("%s source %d", first, old)}
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
	// Nor is being a rotated recording's part (parts of one recording
	// disagree on these, but two parts agree on being part 1).
	delete(hdr.Meta, recording.MetaPart)
	delete(hdr.Meta, recording.MetaPrevious)
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
