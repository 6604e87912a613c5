package viewer

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// sessionRow is one line of the sessions list.
type sessionRow struct {
	ID string `json:"id"`
	// Key is the session's handle, unique in the capture (the API's
	// session parameters take it): its id in a recording of one stream;
	// else, sessions of several recordings, or of the subscriptions of a
	// recording of a replay, sharing ids, its stream (Stream: the
	// recording's name, any subscription), "|" and its id.
	Key    string `json:"key"`
	Stream string `json:"stream,omitempty"`
	// Records, First and Last come from the index (all records of the
	// session key) when it knows the session and the capture is one
	// stream, else from the check.
	Records int64         `json:"records"`
	First   time.Duration `json:"first_ns"`
	Last    time.Duration `json:"last_ns"`
	sessionFacts
	Lane    int  `json:"lane"`
	Checked bool `json:"checked"`
}

func (s *Server) sessionRow(v *sessionView, done bool) sessionRow {
	row := sessionRow{ID: v.ID, Key: v.Key, Stream: v.Stream, Records: v.Facts.Messages, First: v.Facts.First, Last: v.Facts.Last, sessionFacts: v.Facts, Lane: v.Lane, Checked: done}
	if x, ok := s.sessionIndex()[v.ID]; ok && v.Stream == "" {
		row.Records, row.First, row.Last = x.Records, time.Duration(x.FirstTime), time.Duration(x.LastTime)
	}
	return row
}

// sessionKeys are the sort keys of /api/sessions.
var sessionKeys = map[string]func(a, b *sessionView) int{
	"id":       func(a, b *sessionView) int { return strings.Compare(a.ID, b.ID) },
	"protocol": func(a, b *sessionView) int { return strings.Compare(a.Facts.Protocol, b.Facts.Protocol) },
	"state":    func(a, b *sessionView) int { return strings.Compare(a.Facts.State, b.Facts.State) },
	"messages": func(a, b *sessionView) int { return cmp.Compare(a.Facts.Messages, b.Facts.Messages) },
	"first":    func(a, b *sessionView) int { return cmp.Compare(a.Facts.First, b.Facts.First) },
	"last":     func(a, b *sessionView) int { return cmp.Compare(a.Facts.Last, b.Facts.Last) },
	"span": func(a, b *sessionView) int {
		return cmp.Compare(a.Facts.Last-a.Facts.First, b.Facts.Last-b.Facts.First)
	},
	"must":   func(a, b *sessionView) int { return cmp.Compare(a.Facts.Verdict.Must, b.Facts.Verdict.Must) },
	"should": func(a, b *sessionView) int { return cmp.Compare(a.Facts.Verdict.Should, b.Facts.Verdict.Should) },
	"info":   func(a, b *sessionView) int { return cmp.Compare(a.Facts.Verdict.Info, b.Facts.Verdict.Info) },
	"recording": func(a, b *sessionView) int {
		return strings.Compare(a.Facts.Recording, b.Facts.Recording)
	},
}

// sortedSessions returns the snapshot's sessions in the order asked,
// computed once per snapshot and order.
func sortedSessions(sn *snapshot, key string, desc bool) []*sessionView {
	if key == "" || key == "order" {
		if !desc {
			return sn.sessions
		}
	}
	ck := key + "/" + strconv.FormatBool(desc)
	if v, ok := sn.sorted.Load(ck); ok {
		return v.([]*sessionView)
	}
	out := slices.Clone(sn.sessions)
	cmp := sessionKeys[key]
	if cmp == nil {
		cmp = func(a, b *sessionView) int { return a.Lane - b.Lane }
	}
	slices.SortStableFunc(out, func(a, b *sessionView) int {
		c := cmp(a, b)
		if desc {
			c = -c
		}
		if c == 0 {
			c = a.Lane - b.Lane
		}
		return c
	})
	sn.sorted.Store(ck, out)
	return out
}

// serveSessions answers a page of the sessions, sorted by any column
// (sort=must&desc=1), only those with findings (findings=1 any level,
// findings=must|should), only those whose id contains q, only those of
// one of several recordings viewed (recording=NAME), only the session of
// a key (key=KEY, or the sessions of id KEY); from and limit page through
// them.
func (s *Server) serveSessions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	from, err := intQuery(r, "from", 0)
	limit, err2 := intQuery(r, "limit", defaultSessionLimit)
	if err = errors.Join(err, err2); err == nil {
		switch {
		case from < 0:
			err = errors.New("from: want 0 or more")
		case limit < 1 || limit > maxSessionLimit:
			err = fmt.Errorf("limit: want 1 to %d", maxSessionLimit)
		}
	}
	key := q.Get("sort")
	if _, ok := sessionKeys[key]; !ok && key != "" && key != "order" && err == nil {
		err = fmt.Errorf("sort: want one of order, %s", strings.Join(slices.Sorted(maps.Keys(sessionKeys)), ", "))
	}
	if err != nil {
		apiError(w, http.StatusBadRequest, "%v", err)
		return
	}
	sn := s.analysis().snap.Load()
	all := sortedSessions(sn, key, q.Get("desc") == "1")
	with, text := q.Get("findings"), q.Get("q")
	recName, byRec := q.Get("recording"), q.Has("recording")
	key, byKey := q.Get("key"), q.Has("key")
	keyed := byKey && sn.byKey(key) != nil
	if byKey && !keyed && len(sn.byID(key)) == 0 && sn.done {
		apiError(w, http.StatusNotFound, "%v", errNoSession(key, s.title()))
		return
	}
	keep := func(v *sessionView) bool {
		if byRec && v.Facts.Recording != recName {
			return false
		}
		if byKey && v.Key != key && (keyed || v.ID != key) {
			return false
		}
		switch with {
		case "must":
			if v.Facts.Verdict.Must == 0 {
				return false
			}
		case "should":
			if v.Facts.Verdict.Must+v.Facts.Verdict.Should == 0 {
				return false
			}
		case "1", "any":
			if v.Facts.Verdict.Must+v.Facts.Verdict.Should+v.Facts.Verdict.Info == 0 {
				return false
			}
		}
		return text == "" || strings.Contains(strings.ToLower(v.ID), strings.ToLower(text))
	}
	rows := []sessionRow{}
	total := int64(0)
	for _, v := range all {
		if !keep(v) {
			continue
		}
		if total >= from && int64(len(rows)) < limit {
			// Following, a session's verdict is the check's so far:
			// it goes on as long as the recording.
			rows = append(rows, s.sessionRow(v, sn.done || s.opts.Follow))
		}
		total++
	}
	// Sessions the index keys that the check has not reached yet, after
	// the others, while it runs.
	pending := 0
	if !sn.done && with == "" && !byRec {
		ci := s.cur.Load()
		for i := range ci.sessionCount() {
			x := ci.session(i)
			k := x.Key
			if k == "" {
				k = x.ID
			}
			checked := sn.byKey(k) != nil || x.Key == "" && len(sn.byID(x.ID)) > 0
			if checked || text != "" && !strings.Contains(strings.ToLower(x.ID), strings.ToLower(text)) || byKey && k != key && x.ID != key {
				continue
			}
			pending++
			if total >= from && int64(len(rows)) < limit {
				row := sessionRow{ID: x.ID, Key: k, Records: x.Records, First: x.First, Last: x.Last, Lane: -1}
				row.Recording = x.Recording
				rows = append(rows, row)
			}
			total++
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"sessions": rows, "total": total, "all": len(sn.sessions), "from": from, "check_done": sn.done, "pending": pending})
}
