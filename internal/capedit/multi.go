package capedit

import (
	"context"
	"errors"
	"path/filepath"
	"strings"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/inputs"
	"github.com/aaep-tools/aaepkit/internal/progress"
)

// multiInput reads several captures as one, ordered by absolute receive
// time, as the records of "merge --join-sources" of the same captures: the
// header starts at the earliest start, sources of the same transport,
// endpoint and subprotocol are one source (inputs.SourceMap), and the
// records' times count from the earliest start. One input is read as it
// is.
type multiInput struct {
	ins     []*input
	hdr     capfile.Header
	sources *inputs.SourceMap
	merge   *inputs.Merge
	starts  []int64 // each input's start, ns since the epoch
	base    int64
	cur     []*capfile.Record
	rec     capfile.Record
}

// openInputs opens srcs; meter (which may be nil) counts their records.
func openInputs(ctx context.Context, srcs []inputs.Source, meter *progress.Meter) (*multiInput, error) {
	if len(srcs) == 0 {
		return nil, errors.New("no input")
	}
	m := &multiInput{}
	for _, s := range srcs {
		in, err := openSource(ctx, s, meter)
		if err != nil {
			m.close()
			return nil, err
		}
		m.ins = append(m.ins, in)
	}
	if len(m.ins) == 1 {
		m.hdr = m.ins[0].r.Header()
		return m, nil
	}
	m.sources = inputs.NewSourceMap()
	streams := make([]inputs.Stream, len(m.ins))
	m.cur = make([]*capfile.Record, len(m.ins))
	var names, tools []string
	m.hdr.Meta = map[string]string{}
	for i, in := range m.ins {
		h := in.r.Header()
		m.sources.Add(i, h)
		m.starts = append(m.starts, h.Start.UnixNano())
		if i == 0 || h.Start.Before(m.hdr.Start) {
			m.hdr.Start = h.Start
		}
		if !contains(tools, h.Tool) {
			tools = append(tools, h.Tool)
		}
		for _, f := range h.Redacted {
			if !contains(m.hdr.Redacted, f) {
				m.hdr.Redacted = append(m.hdr.Redacted, f)
			}
		}
		names = append(names, filepath.Base(in.path))
		streams[i] = &inputStream{m: m, i: i}
	}
	m.hdr.Version = m.ins[0].r.Header().Version
	m.hdr.Tool = strings.Join(tools, ", ")
	m.hdr.Origins = append([]capfile.Origin(nil), m.sources.Sources...)
	m.hdr.Meta["merged_from"] = strings.Join(names, ", ")
	m.base = m.hdr.Start.UnixNano()
	m.merge = inputs.NewMerge(streams)
	return m, nil
}

// inputStream is one input of a multiInput as an inputs.Stream.
type inputStream struct {
	m *multiInput
	i int
}

func (s *inputStream) Next() (int64, bool, error) {
	rec, err := s.m.ins[s.i].next()
	if err != nil || rec == nil {
		return 0, false, err
	}
	s.m.cur[s.i] = rec
	return s.m.starts[s.i] + rec.Time, true, nil
}

// next returns the next record, or nil at the end. The record is valid
// until the next call.
func (m *multiInput) next() (*capfile.Record, error) {
	if len(m.ins) == 1 {
		return m.ins[0].next()
	}
	i, at, ok, err := m.merge.Next()
	if err != nil || !ok {
		return nil, err
	}
	m.rec = *m.cur[i]
	m.rec.Time = at - m.base
	m.rec.Origin = m.sources.ID(i, m.rec.Origin)
	return &m.rec, nil
}

// warnings lists the torn inputs.
func (m *multiInput) warnings() []Warning {
	var out []Warning
	for _, in := range m.ins {
		if in.torn != nil {
			out = append(out, *in.torn)
		}
	}
	return out
}

// paths lists the local files among the inputs.
func (m *multiInput) paths() []string {
	var out []string
	for _, in := range m.ins {
		if in.opened == nil {
			out = append(out, in.path)
		}
	}
	return out
}

func (m *multiInput) close() {
	for _, in := range m.ins {
		in.close()
	}
}
