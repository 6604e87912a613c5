package viewer

import (
	"bufio"
	"container/list"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol"
)

// A messages list is rows over records: every record of the capture, or a
// session's messages (its replies included), narrowed by a filter
// expression and a full-text search. /api/rows answers any window of it by
// row number, so the page can draw only what is on screen and jump
// anywhere; /api/find says where the next finding is.

const (
	defaultRowLimit = 100
	maxRowLimit     = 500
	// filteredCached is how many filtered lists are kept.
	filteredCached = 8
	// maxFindScan bounds the rows /api/find looks at.
	maxFindScan = 2_000_000
	// maxCols bounds the payload fields a list shows as columns, and
	// maxColText each value's length.
	maxCols    = 8
	maxColText = 200
)

// rowList is the records a list shows, in order: lo..lo+n-1 when ids is nil.
type rowList struct {
	n, lo int64
	ids   []uint32
	// partial is set while the check has not read the whole capture (a
	// session's list and findings may still grow).
	partial bool
}

func (l *rowList) at(i int64) int64 {
	if l.ids == nil {
		return l.lo + i
	}
	return int64(l.ids[i])
}

type listKey struct{ session, filter, q string }

// listCache keeps the last filtered lists (built once, then paged).
type listCache struct {
	mu    sync.Mutex
	order *list.List // of listKey, most recent first
	m     map[listKey]*rowList
}

func newListCache() *listCache { return &listCache{order: list.New(), m: map[listKey]*rowList{}} }

func (c *listCache) get(k listKey) *rowList {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[k]
}

// clear forgets every list (the capture has grown, the findings changed).
func (c *listCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.order.Init()
	clear(c.m)
}

func (c *listCache) put(k listKey, l *rowList) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[k]; !ok {
		c.order.PushFront(k)
	}
	c.m[k] = l
	for c.order.Len() > filteredCached {
		e := c.order.Back()
		delete(c.m, e.Value.(listKey))
		c.order.Remove(e)
	}
}

// rowsFor returns the list a request asks for (session, filter, q).
func (s *Server) rowsFor(r *http.Request) (*rowList, error) {
	q := r.URL.Query()
	k := listKey{session: q.Get("session"), filter: q.Get("filter"), q: q.Get("q")}
	expr, err := parseFilterExpr(k.filter)
	if err != nil {
		return nil, err
	}
	sn := s.analysis().snap.Load()
	base := &rowList{n: s.index().Records, partial: !sn.done}
	if k.session != "" {
		v, err := sn.lookup(k.session)
		if err != nil {
			return nil, err
		}
		if v == nil {
			if _, ok := s.sessionIndex()[k.session]; !ok || sn.done {
				return nil, errNoSession(k.session, s.title())
			}
			v = &sessionView{}
		}
		base.ids, base.n = v.Records, int64(len(v.Records))
	}
	if expr == nil && k.q == "" {
		return base, nil
	}
	if l := s.lists.get(k); l != nil {
		return l, nil
	}
	return s.narrowShared(r.Context(), k, base, expr)
}

type sessionError string

func (e sessionError) Error() string { return string(e) }

func errNoSession(id, file string) error {
	return sessionError(fmt.Sprintf("no session %q in %s", id, file))
}

func (s *Server) filterRecord(idx int64, rec *capfile.Record, doc *payload.Doc) filterRecord {
	doc.Decode(rec.Payload)
	fr := filterRecord{index: idx, offset: rec.Offset(), kind: kindNames[rec.Kind], source: int(rec.Origin), session: doc.Routing.SessionKey(), doc: doc}
	if fr.session == "" {
		fr.session = rec.Session
	}
	fr.rules, fr.worst = s.analysis().rulesAt(idx)
	return fr
}

// eachRecord calls fn with rows [from, to) of l, their records and their
// recordings (recording.Reader.Recording), reading the capture forward and
// seeking only across gaps; fn returns false to stop.
func (s *Server) eachRecord(l *rowList, from, to int64, fn func(row, idx int64, rec *capfile.Record, ri int) bool) error {
	if from >= to {
		return nil
	}
	rd, err := s.reader()
	if err != nil {
		return err
	}
	defer s.release(rd)
	cur := int64(-3) // unknown: seek first
	frameEnd := int64(-1)
	for i := from; i < to; i++ {
		idx := l.at(i)
		// Within the frame being read, read on; to another frame, seek,
		// which decompresses that frame only.
		if cur < 0 || idx <= cur || idx >= frameEnd {
			frameEnd = s.frameEnd(idx)
			if err := rd.SeekRecord(idx); err != nil {
				return err
			}
		} else {
			for cur < idx-1 {
				if _, err := rd.Next(); err != nil {
					return err
				}
				cur++
			}
		}
		rec, err := rd.Next()
		if err != nil {
			if errors.Is(err, io.EOF) || capfile.IsTorn(err) {
				return nil
			}
			return err
		}
		cur = idx
		if !fn(i, idx, rec, rd.Recording()) {
			return nil
		}
	}
	return nil
}

// frameEnd returns the number of the first record after the frame that
// holds record idx.
func (s *Server) frameEnd(idx int64) int64 {
	fr := s.index().Frames
	k := sort.Search(len(fr), func(k int) bool { return fr[k].FirstRecord+fr[k].Records > idx })
	if k == len(fr) {
		return s.index().Records
	}
	return fr[k].FirstRecord + fr[k].Records
}

// serveRows answers rows [from, from+limit) of a list:
// /api/rows?session=S&filter=EXPR&q=TEXT&from=ROW&limit=N.
func (s *Server) serveRows(w http.ResponseWriter, r *http.Request) {
	from, err := intQuery(r, "from", 0)
	limit, err2 := intQuery(r, "limit", defaultRowLimit)
	if err = errors.Join(err, err2); err == nil {
		switch {
		case from < 0:
			err = errors.New("from: want 0 or more")
		case limit < 1 || limit > maxRowLimit:
			err = fmt.Errorf("limit: want 1 to %d", maxRowLimit)
		}
	}
	if err != nil {
		apiError(w, http.StatusBadRequest, "%v", err)
		return
	}
	l, err := s.rowsFor(r)
	if err != nil {
		s.listError(w, err)
		return
	}
	cols := splitList(r.URL.Query()["col"])
	if len(cols) > maxCols {
		apiError(w, http.StatusBadRequest, "col: at most %d columns", maxCols)
		return
	}
	rows := []eventRow{}
	to := min(from+limit, l.n)
	filt := rowFilter{}
	// The row before the first is read for its time: each row says how
	// long after the one before it came.
	prev := time.Duration(-1)
	err = s.eachRecord(l, max(0, from-1), to, func(i, idx int64, rec *capfile.Record, ri int) bool {
		at := rec.Offset()
		if i >= from {
			row, _ := s.row(rec, idx, ri, &filt)
			for _, c := range cols {
				row.Cols = append(row.Cols, fieldText(&filt.doc, c))
			}
			if i > 0 && prev >= 0 {
				d := at - prev
				row.Delta = &d
			}
			rows = append(rows, row)
		}
		prev = at
		return true
	})
	if err != nil {
		apiError(w, http.StatusInternalServerError, "%s: %v", s.title(), err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"rows": rows, "from": from, "total": l.n, "partial": l.partial})
}

func (s *Server) listError(w http.ResponseWriter, err error) {
	var se sessionError
	if errors.As(err, &se) {
		apiError(w, http.StatusNotFound, "%v", err)
		return
	}
	apiError(w, http.StatusBadRequest, "%v", err)
}

// serveFind answers where a record is in a list, or the next finding:
// /api/find?…list…&index=N gives the row of record N (or of the first
// record after it); &row=R&dir=1|-1&level=INFO|SHOULD|MUST gives the next
// (or previous) row after R whose record has a finding of that level or worse.
func (s *Server) serveFind(w http.ResponseWriter, r *http.Request) {
	l, err := s.rowsFor(r)
	if err != nil {
		s.listError(w, err)
		return
	}
	q := r.URL.Query()
	if v := q.Get("index"); v != "" {
		idx, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			apiError(w, http.StatusBadRequest, "index: not an integer: %q", v)
			return
		}
		row := searchRow(l, idx)
		writeJSON(w, http.StatusOK, map[string]any{"row": row, "exact": row < l.n && l.at(row) == idx, "total": l.n})
		return
	}
	row, err := intQuery(r, "row", -1)
	dir, err2 := intQuery(r, "dir", 1)
	if err = errors.Join(err, err2); err == nil && dir != 1 && dir != -1 {
		err = errors.New("dir: want 1 or -1")
	}
	min := protocol.Info
	if v := q.Get("level"); v != "" {
		n, ok := levelNames[v]
		if !ok || n == 0 {
			err = errors.Join(err, fmt.Errorf("level: want INFO, SHOULD or MUST, got %q", v))
		}
		min = protocol.Level(n)
	}
	if err != nil {
		apiError(w, http.StatusBadRequest, "%v", err)
		return
	}
	found := int64(-1)
	scanned := int64(0)
	for i := row + dir; i >= 0 && i < l.n && scanned < maxFindScan; i += dir {
		scanned++
		if w, _ := s.analysis().worstAt(l.at(i), nil); w >= min {
			found = i
			break
		}
	}
	ans := map[string]any{"row": found, "total": l.n}
	if found >= 0 {
		ans["index"] = l.at(found)
	}
	writeJSON(w, http.StatusOK, ans)
}

// searchRow returns the first row of l whose record is idx or later.
func searchRow(l *rowList, idx int64) int64 {
	lo, hi := int64(0), l.n
	for lo < hi {
		m := (lo + hi) / 2
		if l.at(m) < idx {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// serveExport writes the rows of a list (the filtered selection) as a
// download: format=jsonl, one payload a line as recorded (line breaks in a
// payload become spaces), or format=capture, a capture file of those
// records with the original header. Downloads are not bounded like the
// page's answers: the user asked for all of it.
func (s *Server) serveExport(w http.ResponseWriter, r *http.Request) {
	format := r.URL.Query().Get("format")
	if format != "jsonl" && format != "capture" {
		apiError(w, http.StatusBadRequest, "format: want jsonl or capture")
		return
	}
	l, err := s.rowsFor(r)
	if err != nil {
		s.listError(w, err)
		return
	}
	name := strings.TrimSuffix(s.title(), ".aaep") + "-selection"
	if format == "jsonl" {
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.Header().Set("Content-Disposition", `attachment; filename="`+name+`.jsonl"`)
		bw := bufio.NewWriterSize(w, 64<<10)
		_ = s.eachRecord(l, 0, l.n, func(_, _ int64, rec *capfile.Record, _ int) bool {
			if rec.Kind != capfile.KindReceived && rec.Kind != capfile.KindSent {
				return true
			}
			for _, c := range rec.Payload {
				if c == '\n' || c == '\r' {
					c = ' '
				}
				bw.WriteByte(c)
			}
			return bw.WriteByte('\n') == nil
		})
		_ = bw.Flush()
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`.aaep"`)
	cw, err := capfile.NewWriter(w, s.hdr, nil)
	if err != nil {
		apiError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	_ = s.eachRecord(l, 0, l.n, func(_, _ int64, rec *capfile.Record, _ int) bool {
		return cw.Append(rec) == nil
	})
	_ = cw.Close()
}

// fieldText is the value of the payload's field at a dotted path, as a
// column shows it: a string as is, anything else as its JSON, cut to
// maxColText bytes; "" when the payload has no such field.
func fieldText(doc *payload.Doc, path string) string {
	parts := strings.Split(path, ".")
	v := doc.Get(parts[0])
	for _, p := range parts[1:] {
		if v == nil {
			break
		}
		v = v.Get(p)
	}
	if v == nil {
		return ""
	}
	t, ok := v.Str()
	if !ok {
		t = string(v)
	}
	if len(t) > maxColText {
		t = strings.ToValidUTF8(t[:maxColText], "") + "…"
	}
	return t
}
