package viewer

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/show"
	"github.com/aaep-tools/aaepkit/msgfilter"
	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/recording"
)

// eventRow is one message in a page of events.
type eventRow struct {
	Index   int64         `json:"index"`
	Offset  time.Duration `json:"offset_ns"`
	Kind    string        `json:"kind"` // recv, sent, conn, mark
	Source  int           `json:"source"`
	Session string        `json:"session,omitempty"`
	// SessionKey is the session's key (see sessionRow.Key) when it is not
	// its id alone: several recordings or subscriptions viewed.
	SessionKey string `json:"session_key,omitempty"`
	Type       string `json:"type,omitempty"`
	Urgency    string `json:"urgency,omitempty"`
	Summary    string `json:"summary"`
	// Worst is the worst level of the message's findings ("" when none).
	Worst string `json:"worst,omitempty"`
	// Delta is the time since the row before it in its list (/api/rows;
	// none for the first row).
	Delta *time.Duration `json:"delta_ns,omitempty"`
	// Cols are the values of the payload fields asked for as columns
	// (/api/rows?col=…), "" where the payload has none.
	Cols []string `json:"cols,omitempty"`
}

var kindNames = map[capfile.Kind]string{capfile.KindReceived: "recv", capfile.KindSent: "sent", capfile.KindConn: "conn", capfile.KindMarker: "mark"}

// rowFilter selects rows for /api/events.
type rowFilter struct {
	match    msgfilter.Filter
	sources  map[int]bool
	rules    []string
	messages bool        // messages only
	doc      payload.Doc // decodes each record
	// only keeps, of the sessions asked by key, a message of one of those
	// ids only when its session is one of those keys.
	only map[string]map[string]bool
	keys keyer
}

func (s *Server) parseFilter(r *http.Request) (rowFilter, error) {
	q := r.URL.Query()
	f := rowFilter{match: msgfilter.Filter{Types: splitList(q["type"]), Urgencies: splitList(q["urgency"])}, rules: splitList(q["rule"])}
	sn := s.analysis().snap.Load()
	for _, v := range splitList(q["session"]) {
		// A session's key stands for its id, in its stream only; an id
		// alone keeps every message of that id.
		if x := sn.byKey(v); x != nil && x.Stream != "" {
			if f.only == nil {
				f.only = map[string]map[string]bool{}
			}
			if f.only[x.ID] == nil {
				f.only[x.ID] = map[string]bool{}
			}
			f.only[x.ID][x.Key] = true
			v = x.ID
		}
		f.match.Sessions = append(f.match.Sessions, v)
	}
	for _, v := range splitList(q["source"]) {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return f, errors.New("source: want a source number, got " + strconv.Quote(v))
		}
		if f.sources == nil {
			f.sources = map[int]bool{}
		}
		f.sources[n] = true
	}
	f.messages = q.Get("messages") == "1" || !f.match.Empty() || len(f.rules) > 0
	return f, nil
}

// serveEvents answers a page of rows from record `from` on.
func (s *Server) serveEvents(w http.ResponseWriter, r *http.Request) {
	from, err := intQuery(r, "from", 0)
	if err == nil && from < 0 {
		err = errors.New("from: want 0 or more")
	}
	limit, err2 := intQuery(r, "limit", defaultLimit)
	if err == nil {
		err = err2
	}
	if err == nil && (limit < 1 || limit > maxLimit) {
		err = errors.New("limit: want 1 to " + strconv.Itoa(maxLimit))
	}
	filt, err3 := s.parseFilter(r)
	if err == nil {
		err = err3
	}
	if err != nil {
		apiError(w, http.StatusBadRequest, "%v", err)
		return
	}
	rows := []eventRow{}
	next := int64(-1)
	if from < s.index().Records {
		rd, ok := s.openAt(w, func(rd *recording.Reader) error { return rd.SeekRecord(from) })
		if !ok {
			return
		}
		defer s.release(rd)
		scanned := 0
		for int64(len(rows)) < limit {
			rec, err := rd.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) && !capfile.IsTorn(err) {
					apiError(w, http.StatusInternalServerError, "%s: %v", s.title(), err)
					return
				}
				break
			}
			idx := rd.Index()
			if scanned++; scanned > maxScan {
				next = idx
				break
			}
			if row, ok := s.row(rec, idx, rd.Recording(), &filt); ok {
				rows = append(rows, row)
			}
		}
		if next < 0 && int64(len(rows)) == limit {
			next = rows[len(rows)-1].Index + 1
		}
	}
	if next >= s.index().Records {
		next = -1
	}
	writeJSON(w, http.StatusOK, map[string]any{"events": rows, "next": next, "total": s.index().Records})
}

// row makes the row of record idx of recording ri, or reports that the
// filter drops it.
func (s *Server) row(rec *capfile.Record, idx int64, ri int, filt *rowFilter) (eventRow, bool) {
	isMsg := rec.Kind == capfile.KindReceived || rec.Kind == capfile.KindSent
	if !isMsg && filt.messages {
		return eventRow{}, false
	}
	if filt.sources != nil && !filt.sources[int(rec.Origin)] {
		return eventRow{}, false
	}
	row := eventRow{Index: idx, Offset: rec.Offset(), Kind: kindNames[rec.Kind], Source: int(rec.Origin), Session: rec.Session}
	filt.doc.Decode(rec.Payload)
	f := &filt.doc.Routing
	if isMsg {
		if !filt.match.Match(f) {
			return eventRow{}, false
		}
		if k := f.SessionKey(); k != "" {
			row.Session = k
		}
		row.Type, row.Urgency = f.TypeName(), f.Urgency
	}
	if row.Session != "" {
		filt.keys.s = s
		if k := filt.keys.key(ri, rec, row.Session); k != row.Session {
			row.SessionKey = k
		}
		if keys := filt.only[row.Session]; keys != nil && !keys[row.SessionKey] {
			return eventRow{}, false
		}
	}
	row.Summary = show.Summary(&filt.doc)
	worst, hasRule := s.analysis().worstAt(idx, filt.rules)
	if len(filt.rules) > 0 && !hasRule {
		return eventRow{}, false
	}
	if worst != 0 {
		row.Worst = worst.String()
	}
	return row, true
}
