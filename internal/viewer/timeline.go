package viewer

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/payload"
)

// Event kinds on the timeline (the page's legend names them).
const (
	kindOther = iota
	kindLifecycle
	kindState
	kindTool
	kindAwaiting
	kindReply
	kindOutput
	kindProgress
	kindConn
)

// kindOf classifies a record for the timeline.
func kindOf(rec *capfile.Record, f *payload.Routing) int {
	if rec.Kind != capfile.KindReceived && rec.Kind != capfile.KindSent {
		return kindConn
	}
	t := f.TypeName()
	switch {
	case rec.Kind == capfile.KindSent:
		return kindReply
	case strings.Contains(t, "session."):
		return kindLifecycle
	case strings.Contains(t, "state.changed"):
		return kindState
	case strings.Contains(t, "tool."):
		return kindTool
	case strings.Contains(t, "awaiting."):
		return kindAwaiting
	case strings.Contains(t, "output."):
		return kindOutput
	case strings.Contains(t, "progress."):
		return kindProgress
	}
	return kindOther
}

// Timeline bounds.
const (
	defaultTimelineMax = 5000
	maxTimelineMax     = 50000
	defaultBuckets     = 1000
	maxBuckets         = 8000
	// maxTimelineScan bounds the records one timeline answer reads; a wider
	// window over a larger capture answers with what it read (truncated).
	maxTimelineScan = 2_000_000
)

// lanes lists the timeline's lanes: one per session, then "other" for
// records without a session.
func (s *Server) lanes() ([]string, map[string]int) {
	ids := make([]string, 0, len(s.idx.Sessions)+1)
	for _, x := range s.idx.Sessions {
		ids = append(ids, x.ID)
	}
	s.an.mu.Lock()
	known := map[string]bool{}
	for _, id := range ids {
		known[id] = true
	}
	for _, id := range s.an.order {
		if !known[id] {
			ids = append(ids, id)
		}
	}
	s.an.mu.Unlock()
	pos := make(map[string]int, len(ids))
	for i, id := range ids {
		pos[id] = i
	}
	return append(ids, ""), pos
}

type timelineAnswer struct {
	Lanes    []string      `json:"lanes"`
	From     time.Duration `json:"from_ns"`
	To       time.Duration `json:"to_ns"`
	Capture  [2]int64      `json:"capture_ns"`
	Events   [][5]int64    `json:"events,omitempty"`  // index, offset, lane, kind, level
	Buckets  [][4]int64    `json:"buckets,omitempty"` // lane, bucket, count, worst level
	BucketNS int64         `json:"bucket_ns,omitempty"`
	Count    int64         `json:"count"`
	// Truncated is set when the scan stopped before To (at ScannedTo).
	Truncated bool          `json:"truncated,omitempty"`
	ScannedTo time.Duration `json:"scanned_to_ns,omitempty"`
}

func (s *Server) serveTimeline(w http.ResponseWriter, r *http.Request) {
	first, last := s.idx.FirstTime(), s.idx.LastTime()
	from, err := intQuery(r, "from_ns", first)
	to, err2 := intQuery(r, "to_ns", last)
	mx, err3 := intQuery(r, "max", defaultTimelineMax)
	nb, err4 := intQuery(r, "buckets", defaultBuckets)
	if err = errors.Join(err, err2, err3, err4); err == nil {
		switch {
		case to < from:
			err = fmt.Errorf("to_ns %d is before from_ns %d", to, from)
		case mx < 1 || mx > maxTimelineMax:
			err = fmt.Errorf("max: want 1 to %d", maxTimelineMax)
		case nb < 1 || nb > maxBuckets:
			err = fmt.Errorf("buckets: want 1 to %d", maxBuckets)
		}
	}
	if err != nil {
		apiError(w, http.StatusBadRequest, "%v", err)
		return
	}
	lanes, pos := s.lanes()
	ans := timelineAnswer{Lanes: lanes, From: time.Duration(from), To: time.Duration(to), Capture: [2]int64{first, last}, Events: [][5]int64{}}
	if s.idx.Records == 0 {
		writeJSON(w, http.StatusOK, ans)
		return
	}
	rd, ok := s.openAt(w, func(rd *capfile.Reader) error { return rd.SeekTime(from) })
	if !ok {
		return
	}
	defer rd.Close()
	width := max((to-from+nb-1)/nb, 1)
	type bkey struct{ lane, b int64 }
	var buckets map[bkey]*[2]int64
	toBucket := func(e [5]int64) {
		k := bkey{e[2], min((e[1]-from)/width, nb-1)}
		b := buckets[k]
		if b == nil {
			b = &[2]int64{}
			buckets[k] = b
		}
		b[0]++
		b[1] = max(b[1], e[4])
	}
	scanned := 0
	var doc payload.Doc
	for {
		rec, err := rd.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) && !capfile.IsTorn(err) {
				apiError(w, http.StatusInternalServerError, "%s: %v", s.title(), err)
				return
			}
			break
		}
		if rec.Time > to {
			break
		}
		if scanned++; scanned > maxTimelineScan {
			ans.Truncated, ans.ScannedTo = true, rec.Offset()
			break
		}
		idx := rd.Index()
		doc.Decode(rec.Payload)
		f := &doc.Routing
		key := rec.Session
		if key == "" {
			key = f.SessionKey()
		}
		lane, ok := pos[key]
		if !ok {
			lane = len(lanes) - 1
		}
		s.an.mu.Lock()
		worst, _ := s.an.worstAt(idx, "")
		s.an.mu.Unlock()
		e := [5]int64{idx, rec.Time, int64(lane), int64(kindOf(rec, f)), int64(worst)}
		ans.Count++
		if buckets == nil {
			ans.Events = append(ans.Events, e)
			if int64(len(ans.Events)) > mx {
				buckets = map[bkey]*[2]int64{}
				for _, e := range ans.Events {
					toBucket(e)
				}
				ans.Events = nil
			}
			continue
		}
		toBucket(e)
	}
	if buckets != nil {
		ans.BucketNS = width
		for k, b := range buckets {
			ans.Buckets = append(ans.Buckets, [4]int64{k.lane, k.b, b[0], b[1]})
		}
		sort.Slice(ans.Buckets, func(i, j int) bool {
			a, b := ans.Buckets[i], ans.Buckets[j]
			return a[0] < b[0] || a[0] == b[0] && a[1] < b[1]
		})
	}
	writeJSON(w, http.StatusOK, ans)
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// sortRules orders rules by protocol (as given), then level (MUST first), then ID.
func sortRules(rules []ruleDoc) {
	sort.SliceStable(rules, func(i, j int) bool {
		a, b := rules[i], rules[j]
		if a.Protocol != b.Protocol {
			return false
		}
		if a.Level != b.Level {
			return a.Level > b.Level
		}
		return a.ID < b.ID
	})
}
