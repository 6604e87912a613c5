package capedit

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/recording"
	"github.com/aaep-tools/aaepkit/timing"
)

// InfoOptions tune Info.
type InfoOptions struct {
	// Speed and MaxIdle are the replay settings for Summary.Replay (see
	// timing.Config). Zero Speed means 1.
	Speed   float64
	MaxIdle time.Duration
	// Gap is the shortest silence between two received messages reported as
	// a gap (default DefaultGap).
	Gap time.Duration
	Input
}

// DefaultGap is the default InfoOptions.Gap.
const DefaultGap = 10 * time.Second

// Bounds on what a Summary lists, so that its memory stays bounded.
const (
	maxTypes      = 1000 // distinct types; the rest count under "(other)"
	maxSessions   = 10000
	maxGapsListed = 5
)

// Summary describes a capture.
type Summary struct {
	File    string            `json:"file"`
	Version int               `json:"format_version"`
	Tool    string            `json:"tool"`
	Start   time.Time         `json:"start"`
	End     time.Time         `json:"end"`
	Meta    map[string]string `json:"meta,omitempty"`
	// Redacted lists the fields whose values the recorder replaced.
	Redacted []string `json:"redacted,omitempty"`
	// Duration is the time of the last record (nanoseconds in JSON).
	Duration time.Duration `json:"duration_ns"`
	// Status is "clean" (closed cleanly), "writing" (being written: its
	// recorder holds it open; every record written so far was read),
	// "torn" (the writer did not finish; every record before the tail was
	// read) or "damaged" (reading stopped at damage; Problem says where).
	Status string `json:"status"`
	// Problem describes a torn tail or damage.
	Problem string `json:"problem,omitempty"`
	// Torn is the torn tail the summary stopped at (nil: none).
	Torn *Warning `json:"-"`
	// Records is the number of records read.
	Records int64            `json:"records"`
	Kinds   map[string]int64 `json:"records_by_kind"`
	// Types counts messages by type and direction, most frequent first.
	Types []TypeCount `json:"messages_by_type"`
	// Sessions lists the session keys in order of first appearance.
	Sessions          []SessionSummary `json:"sessions"`
	SessionsTruncated bool             `json:"sessions_truncated,omitempty"`
	Origins           []OriginSummary  `json:"sources"`
	Connection        ConnSummary      `json:"connection"`
	Gaps              GapSummary       `json:"gaps"`
	Invalid           InvalidSummary   `json:"invalid"`
	Size              SizeSummary      `json:"size"`
	Replay            ReplaySummary    `json:"replay"`
}

// TypeCount is the number of messages of one type in one direction.
type TypeCount struct {
	Type  string `json:"type"`
	Dir   string `json:"dir"` // "in" received, "out" sent
	Count int64  `json:"count"`
}

// SessionSummary describes one session key.
type SessionSummary struct {
	ID      string        `json:"id"`
	Records int64         `json:"records"`
	First   time.Duration `json:"first_ns"`
	Last    time.Duration `json:"last_ns"`
}

// OriginSummary is an origin of the header with its record count.
type OriginSummary struct {
	capfile.Origin
	Records int64 `json:"records"`
	// Listed is false for an origin id that records use but the header's
	// origin table lacks.
	Listed bool `json:"listed"`
}

// ConnSummary counts connection events.
type ConnSummary struct {
	// Events counts connection events by their "event" name.
	Events map[string]int64 `json:"events"`
	// Reconnects counts "connected" events after a source's first.
	Reconnects int64 `json:"reconnects"`
}

// GapSummary describes silences between received messages.
type GapSummary struct {
	Threshold time.Duration `json:"threshold_ns"`
	Count     int64         `json:"count"`
	// Longest lists the longest gaps, longest first.
	Longest []Gap `json:"longest"`
}

// Gap is a silence before a received message.
type Gap struct {
	// Record is the number of the message that ended the silence.
	Record int64 `json:"record"`
	// At is when the silence started (time of the previous received message).
	At     time.Duration `json:"at_ns"`
	Length time.Duration `json:"length_ns"`
}

// InvalidSummary counts flagged records.
type InvalidSummary struct {
	JSON       int64 `json:"invalid_json"`
	UTF8       int64 `json:"invalid_utf8"`
	Redacted   int64 `json:"redacted"`
	NoRecvTime int64 `json:"no_recv_time"`
}

// SizeSummary gives the capture's sizes in bytes.
type SizeSummary struct {
	// File is the size on disk (compressed).
	File int64 `json:"file_bytes"`
	// Records is the size of the uncompressed record stream (from the index).
	Records int64 `json:"record_bytes"`
	// Payloads is the total size of the payloads.
	Payloads int64 `json:"payload_bytes"`
	Frames   int   `json:"frames"`
	// Ratio is Records / File.
	Ratio float64 `json:"ratio"`
}

// ReplaySummary is how long a replay of the received messages takes.
type ReplaySummary struct {
	Speed    float64       `json:"speed"`
	MaxIdle  time.Duration `json:"max_idle_ns,omitempty"`
	Duration time.Duration `json:"duration_ns"`
}

// Info reads the capture at path and summarises it. For a torn capture it
// summarises the intact records (Status "torn") and returns no error. For a
// damaged one it returns the summary of the records before the damage with
// Status "damaged", together with the error naming the file and offset.
func Info(ctx context.Context, path string, opts InfoOptions) (*Summary, error) {
	recs, err := recording.Open(ctx, []string{path}, opts.Inputs)
	if err != nil {
		return nil, err
	}
	if len(recs) != 1 || len(recs[0].Parts) != 1 {
		return nil, fmt.Errorf("%s: names %d files; info summarises one at a time", path, len(recording.Names(recs)))
	}
	return InfoPart(ctx, recs[0].Parts[0], opts)
}

// InfoPart summarises one file (or object) of a recording as Info does.
func InfoPart(ctx context.Context, part *recording.Part, opts InfoOptions) (*Summary, error) {
	if opts.Gap <= 0 {
		opts.Gap = DefaultGap
	}
	cfg := timing.Config{Speed: opts.Speed, MaxIdle: opts.MaxIdle}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r, err := part.Recording().Records(ctx)
	if err != nil {
		return nil, err
	}
	in := &input{path: part.Name, r: r, meter: opts.Progress}
	opts.Progress.AddTotal(recording.Total(r))
	defer in.close()
	path := part.Name
	h := in.r.Header()
	s := &Summary{
		File: path, Version: h.Version, Tool: h.Tool, Start: h.Start, Meta: h.Meta, Redacted: h.Redacted,
		Status:     "clean",
		Kinds:      map[string]int64{},
		Connection: ConnSummary{Events: map[string]int64{}},
		Gaps:       GapSummary{Threshold: opts.Gap, Longest: []Gap{}},
		Replay:     ReplaySummary{Speed: cfg.Speed, MaxIdle: opts.MaxIdle},
		Types:      []TypeCount{},
		Sessions:   []SessionSummary{},
	}
	if s.Replay.Speed == 0 {
		s.Replay.Speed = 1
	}
	s.Size.File = max(part.Size(), 0)
	var (
		types    = map[TypeCount]int64{} // Count unused in the key
		sessions = map[string]int{}
		sources  = map[uint16]*OriginSummary{}
		connSeen = map[uint16]bool{}
		sched    = timing.NewSchedule(time.Time{}, cfg)
		lastRecv = int64(-1)
		cc       = ctxCheck{ctx: ctx}
	)
	for _, src := range h.Origins {
		sources[src.ID] = &OriginSummary{Origin: src, Listed: true}
	}
	var readErr error
	var doc payload.Doc
	for {
		if err := cc.err(); err != nil {
			return nil, err
		}
		rec, err := in.next()
		if err != nil {
			readErr = err
			break
		}
		if rec == nil {
			break
		}
		s.Records++
		s.Duration = time.Duration(rec.Time)
		s.Kinds[rec.Kind.String()]++
		s.Size.Payloads += int64(len(rec.Payload))
		src := sources[rec.Origin]
		if src == nil {
			src = &OriginSummary{Origin: capfile.Origin{ID: rec.Origin}}
			sources[rec.Origin] = src
		}
		src.Records++
		countFlags(&s.Invalid, rec.Flags)
		switch rec.Kind {
		case capfile.KindReceived, capfile.KindSent:
			doc.Decode(rec.Payload)
			tc := TypeCount{Type: typeName(&doc, rec.Flags), Dir: dirOf(rec.Kind)}
			if _, ok := types[tc]; !ok && len(types) >= maxTypes {
				tc.Type = "(other)"
			}
			types[tc]++
			if rec.Kind == capfile.KindReceived {
				if lastRecv >= 0 && rec.Time-lastRecv >= int64(opts.Gap) {
					s.Gaps.add(Gap{Record: in.r.Index(), At: time.Duration(lastRecv), Length: time.Duration(rec.Time - lastRecv)})
				}
				lastRecv = rec.Time
				s.Replay.Duration = sched.Elapsed(time.Duration(rec.Time))
			}
		case capfile.KindConn:
			doc.Decode(rec.Payload)
			ev := doc.Routing.Event
			if ev == "" {
				ev = "(unknown)"
			}
			s.Connection.Events[ev]++
			if ev == capfile.ConnConnected {
				if connSeen[rec.Origin] {
					s.Connection.Reconnects++
				}
				connSeen[rec.Origin] = true
			}
		}
		key := rec.Session
		if key == "" && (rec.Kind == capfile.KindReceived || rec.Kind == capfile.KindSent) {
			key = doc.Routing.SessionKey()
		}
		if key != "" {
			k, ok := sessions[key]
			if !ok {
				if len(sessions) >= maxSessions {
					s.SessionsTruncated = true
					continue
				}
				k = len(s.Sessions)
				sessions[key] = k
				s.Sessions = append(s.Sessions, SessionSummary{ID: key, First: time.Duration(rec.Time)})
			}
			s.Sessions[k].Records++
			s.Sessions[k].Last = time.Duration(rec.Time)
		}
	}
	s.End = s.Start.Add(s.Duration)
	switch {
	case readErr != nil:
		s.Status, s.Problem = "damaged", readErr.Error()
	case in.torn != nil && capfile.IsLive(in.torn.Err):
		s.Status, s.Problem, s.Torn = "writing", in.torn.Err.Error(), in.torn
	case in.torn != nil:
		s.Status, s.Problem, s.Torn = "torn", in.torn.Err.Error(), in.torn
	case !in.r.Clean():
		s.Status = "torn"
	}
	if x, err := in.r.FileIndex(); err == nil && x != nil {
		for _, fr := range x.Frames {
			s.Size.Records += fr.RawSize
		}
		s.Size.Frames = len(x.Frames)
	}
	if s.Size.File > 0 {
		s.Size.Ratio = float64(s.Size.Records) / float64(s.Size.File)
	}
	for tc, n := range types {
		tc.Count = n
		s.Types = append(s.Types, tc)
	}
	sort.Slice(s.Types, func(i, j int) bool {
		a, b := s.Types[i], s.Types[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		if a.Type != b.Type {
			return a.Type < b.Type
		}
		return a.Dir < b.Dir
	})
	for _, src := range sources {
		s.Origins = append(s.Origins, *src)
	}
	sort.Slice(s.Origins, func(i, j int) bool { return s.Origins[i].ID < s.Origins[j].ID })
	return s, readErr
}

// typeName is the name a message is counted under.
func typeName(d *payload.Doc, flags capfile.Flags) string {
	f := &d.Routing
	switch {
	case f.Type != "":
		return f.Type
	case f.Performative != "":
		return f.Performative
	case f.Event != "":
		return f.Event
	case flags&capfile.FlagInvalidJSON != 0:
		return "(invalid JSON)"
	case !d.IsObject():
		return "(not a JSON object)"
	}
	return "(no type)"
}

func countFlags(s *InvalidSummary, f capfile.Flags) {
	if f&capfile.FlagInvalidJSON != 0 {
		s.JSON++
	}
	if f&capfile.FlagInvalidUTF8 != 0 {
		s.UTF8++
	}
	if f&capfile.FlagRedacted != 0 {
		s.Redacted++
	}
	if f&capfile.FlagNoRecvTime != 0 {
		s.NoRecvTime++
	}
}

// add records a gap, keeping the longest few.
func (g *GapSummary) add(x Gap) {
	g.Count++
	i := sort.Search(len(g.Longest), func(i int) bool { return g.Longest[i].Length < x.Length })
	if i >= maxGapsListed {
		return
	}
	g.Longest = append(g.Longest, Gap{})
	copy(g.Longest[i+1:], g.Longest[i:])
	g.Longest[i] = x
	if len(g.Longest) > maxGapsListed {
		g.Longest = g.Longest[:maxGapsListed]
	}
}
