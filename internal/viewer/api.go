package viewer

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/show"
	"github.com/aaep-tools/aaepkit/msgfilter"
	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/models"
	"github.com/aaep-tools/aaepkit/recording"
)

// Page sizes: every answer of the page's API is bounded.
const (
	defaultLimit        = 200
	maxLimit            = 2000
	defaultSessionLimit = 200
	maxSessionLimit     = 1000
	// maxIndexSessions bounds the sessions /api/capture lists.
	maxIndexSessions = 100
	// maxScan bounds the records one events page reads while looking for
	// matches, so that a rare filter answers quickly (Next says where to go on).
	maxScan = 200000
)

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func apiError(w http.ResponseWriter, code int, format string, args ...any) {
	msg := format
	if len(args) > 0 {
		msg = sprintf(format, args...)
	}
	writeJSON(w, code, map[string]string{"error": msg})
}

// ruleDoc is a rule as the page shows it.
type ruleDoc struct {
	ID       string         `json:"id"`
	Level    protocol.Level `json:"level"`
	Summary  string         `json:"summary"`
	Protocol string         `json:"protocol"`
	// Spec says where the rule is stated: the rule's declared
	// protocol.Rule.Spec, as `aaep-replay check --rules` prints it.
	Spec string `json:"spec"`
}

func ruleDocs() map[string]ruleDoc {
	docs := map[string]ruleDoc{}
	for _, r := range protocol.StreamRules() {
		docs[r.ID] = ruleDoc{ID: r.ID, Level: r.Level, Summary: r.Summary, Protocol: protocol.StreamProtocol, Spec: r.Spec}
	}
	for _, m := range models.All() {
		for _, r := range m.Rules() {
			docs[r.ID] = ruleDoc{ID: r.ID, Level: r.Level, Summary: r.Summary, Protocol: m.Name(), Spec: r.Spec}
		}
	}
	return docs
}

func knownProtocol(name string) (string, bool) {
	for _, n := range models.Names() {
		if n == name {
			return n, true
		}
	}
	return "", false
}

type captureInfo struct {
	File    string         `json:"file"`
	Header  capfile.Header `json:"header"`
	Records int64          `json:"records"`
	First   time.Duration  `json:"first_ns"`
	Last    time.Duration  `json:"last_ns"`
	Rebuilt bool           `json:"index_rebuilt"`
	// Follow is set when the capture is followed as it grows (view --follow).
	Follow   bool           `json:"follow,omitempty"`
	Sessions []indexSession `json:"sessions"`
	// SessionsCut is set when Sessions lists only the first
	// maxIndexSessions (/api/sessions pages through all of them).
	SessionsCut bool             `json:"sessions_cut,omitempty"`
	IndexCount  int              `json:"index_sessions"`
	Check       checkProgress    `json:"check"`
	Counts      map[string]int64 `json:"findings"`
	// Recordings are, when several recordings are viewed, each one's name,
	// findings (each judged on its own, as check judges it), sessions and
	// messages, the first maxIndexSessions of them (RecordingsCut is then
	// set; RecordingsTotal counts them all); /api/sessions?recording=NAME
	// lists one's sessions.
	Recordings      []recordingCounts `json:"recordings,omitempty"`
	RecordingsCut   bool              `json:"recordings_cut,omitempty"`
	RecordingsTotal int               `json:"recordings_total,omitempty"`
}

type indexSession struct {
	ID string `json:"id"`
	// Key is the session's key (sessionRow.Key) and Recording its
	// recording when several recordings are viewed (no key for a recording
	// of a replay: its index does not tell the subscriptions apart).
	Key       string        `json:"key,omitempty"`
	Recording string        `json:"recording,omitempty"`
	Records   int64         `json:"records"`
	First     time.Duration `json:"first_ns"`
	Last      time.Duration `json:"last_ns"`
}

type checkProgress struct {
	Done    bool   `json:"done"`
	Read    int64  `json:"read"`
	Error   string `json:"error,omitempty"`
	Dropped int64  `json:"findings_not_kept,omitempty"`
	// Truncated is set when the capture has more sessions than the check
	// describes one by one (see maxSessions).
	Truncated bool  `json:"sessions_truncated,omitempty"`
	Messages  int64 `json:"messages"`
	Sessions  int   `json:"sessions"`
}

// indexSessions are the sessions of the index, each recording's apart.
func (s *Server) indexSessions() []indexSession { return s.cur.Load().sessions }

func (s *Server) serveCapture(w http.ResponseWriter, r *http.Request) {
	info := captureInfo{
		File: s.title(), Header: s.hdr, Records: s.index().Records, Rebuilt: s.index().Rebuilt,
		First: time.Duration(s.index().FirstTime()), Last: time.Duration(s.index().LastTime()),
		Sessions: s.indexSessions(), IndexCount: len(s.indexSessions()), Follow: s.opts.Follow,
	}
	sn := s.analysis().snap.Load()
	info.Check = checkProgress{Done: sn.done, Read: sn.read, Error: sn.err, Dropped: sn.dropped, Truncated: sn.truncated, Messages: sn.stats.Messages, Sessions: len(sn.sessions)}
	info.Counts = map[string]int64{"must": sn.counts.Must, "should": sn.counts.Should, "info": sn.counts.Info}
	info.Recordings = sn.recordings
	if info.Recordings == nil {
		// Before the check's first snapshot: the names, nothing counted yet.
		for _, r := range s.rec.Joined() {
			info.Recordings = append(info.Recordings, recordingCounts{Name: r.Name})
		}
	}
	info.RecordingsTotal = len(info.Recordings)
	if len(info.Recordings) > maxIndexSessions {
		info.Recordings, info.RecordingsCut = info.Recordings[:maxIndexSessions], true
	}
	if len(info.Sessions) > maxIndexSessions {
		info.Sessions = info.Sessions[:maxIndexSessions]
		info.SessionsCut = true
	}
	writeJSON(w, http.StatusOK, info)
}

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
	"messages": func(a, b *sessionView) int { return cmpInt(a.Facts.Messages, b.Facts.Messages) },
	"first":    func(a, b *sessionView) int { return cmpInt(int64(a.Facts.First), int64(b.Facts.First)) },
	"last":     func(a, b *sessionView) int { return cmpInt(int64(a.Facts.Last), int64(b.Facts.Last)) },
	"span": func(a, b *sessionView) int {
		return cmpInt(int64(a.Facts.Last-a.Facts.First), int64(b.Facts.Last-b.Facts.First))
	},
	"must":   func(a, b *sessionView) int { return cmpInt(a.Facts.Verdict.Must, b.Facts.Verdict.Must) },
	"should": func(a, b *sessionView) int { return cmpInt(a.Facts.Verdict.Should, b.Facts.Verdict.Should) },
	"info":   func(a, b *sessionView) int { return cmpInt(a.Facts.Verdict.Info, b.Facts.Verdict.Info) },
	"recording": func(a, b *sessionView) int {
		return strings.Compare(a.Facts.Recording, b.Facts.Recording)
	},
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
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
	if byKey && sn.byKey[key] == nil && len(sn.byID[key]) == 0 && sn.done {
		apiError(w, http.StatusNotFound, "%v", errNoSession(key, s.title()))
		return
	}
	keep := func(v *sessionView) bool {
		if byRec && v.Facts.Recording != recName {
			return false
		}
		if byKey && v.Key != key && (sn.byKey[key] != nil || v.ID != key) {
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
			rows = append(rows, s.sessionRow(v, sn.done))
		}
		total++
	}
	// Sessions the index keys that the check has not reached yet, after
	// the others, while it runs.
	pending := 0
	if !sn.done && with == "" && !byRec {
		for _, x := range s.indexSessions() {
			k := x.Key
			if k == "" {
				k = x.ID
			}
			checked := sn.byKey[k] != nil || x.Key == "" && len(sn.byID[x.ID]) > 0
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

func splitList(q []string) []string {
	var out []string
	for _, v := range q {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

func (s *Server) parseFilter(r *http.Request) (rowFilter, error) {
	q := r.URL.Query()
	f := rowFilter{match: msgfilter.Filter{Types: splitList(q["type"]), Urgencies: splitList(q["urgency"])}, rules: splitList(q["rule"])}
	sn := s.analysis().snap.Load()
	for _, v := range splitList(q["session"]) {
		// A session's key stands for its id, in its stream only; an id
		// alone keeps every message of that id.
		if x := sn.byKey[v]; x != nil && x.Stream != "" {
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

func intQuery(r *http.Request, name string, def int64) (int64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, errors.New(name + ": not an integer: " + strconv.Quote(v))
	}
	return n, nil
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

// eventDetail is everything the inspector shows about one record.
type eventDetail struct {
	eventRow
	Received  time.Time         `json:"received"`
	Direction string            `json:"direction"`
	SourceOf  *capfile.Origin   `json:"source_info,omitempty"`
	Attrs     map[string]string `json:"attrs"`
	Flags     []string          `json:"flags"`
	// Raw is the payload as recorded (RawBase64 when it is not UTF-8).
	Raw       string    `json:"raw"`
	RawBase64 string    `json:"raw_base64,omitempty"`
	Bytes     int       `json:"bytes"`
	Pretty    string    `json:"pretty,omitempty"`
	Findings  []finding `json:"findings"`
	Checked   bool      `json:"checked"`
	// Recording names the record's recording when several are viewed.
	Recording string `json:"recording,omitempty"`
}

type finding struct {
	protocol.Finding
	Rule ruleDoc `json:"rule_doc"`
}

var flagNames = []struct {
	f    capfile.Flags
	name string
}{{capfile.FlagInvalidJSON, "invalid JSON"}, {capfile.FlagInvalidUTF8, "invalid UTF-8"}, {capfile.FlagRedacted, "redacted"}, {capfile.FlagNoRecvTime, "time from the payload's timestamp"}}

func (s *Server) serveEvent(w http.ResponseWriter, r *http.Request) {
	idx, err := strconv.ParseInt(r.PathValue("index"), 10, 64)
	if err != nil || idx < 0 || idx >= s.index().Records {
		apiError(w, http.StatusNotFound, "no record %s (the capture has %d)", r.PathValue("index"), s.index().Records)
		return
	}
	rd, ok := s.openAt(w, func(rd *recording.Reader) error { return rd.SeekRecord(idx) })
	if !ok {
		return
	}
	defer s.release(rd)
	rec, err := rd.Next()
	if err != nil {
		apiError(w, http.StatusInternalServerError, "%s: record %d: %v", s.title(), idx, err)
		return
	}
	row, _ := s.row(rec, idx, rd.Recording(), &rowFilter{})
	d := eventDetail{eventRow: row, Received: s.hdr.Start.Add(rec.Offset()), Attrs: map[string]string{}, Flags: []string{}, Bytes: len(rec.Payload), Findings: []finding{}}
	switch rec.Kind {
	case capfile.KindReceived:
		d.Direction = "received by the recorder (producer → subscriber)"
	case capfile.KindSent:
		d.Direction = "sent by the recorder's side (subscriber → producer)"
	case capfile.KindConn:
		d.Direction = "connection event"
	default:
		d.Direction = "annotation"
	}
	for i := range s.hdr.Origins {
		if int(s.hdr.Origins[i].ID) == int(rec.Origin) {
			src := s.hdr.Origins[i]
			d.SourceOf = &src
		}
	}
	for _, a := range rec.Attrs {
		d.Attrs[a.Key] = a.Value
	}
	for _, fl := range flagNames {
		if rec.Flags&fl.f != 0 {
			d.Flags = append(d.Flags, fl.name)
		}
	}
	if utf8.Valid(rec.Payload) {
		d.Raw = string(rec.Payload)
	} else {
		d.RawBase64 = base64.StdEncoding.EncodeToString(rec.Payload)
		d.Raw = strings.ToValidUTF8(string(rec.Payload), "\uFFFD")
	}
	var pretty bytes.Buffer
	if json.Valid(rec.Payload) && json.Indent(&pretty, rec.Payload, "", "  ") == nil {
		d.Pretty = pretty.String()
	}
	for _, f := range s.analysis().findingsAt(idx) {
		d.Findings = append(d.Findings, finding{Finding: f, Rule: s.rules[f.RuleID]})
	}
	d.Checked = s.analysis().snap.Load().done
	if j := s.rec.Joined(); rd.Recording() < len(j) {
		d.Recording = j[rd.Recording()].Name
	}
	writeJSON(w, http.StatusOK, d)
}

// readers keeps a few open readers of the capture (its index read once),
// so that a request seeks one instead of opening the file again.
const pooledReaders = 4

// reader returns an open reader of the capture (positioned anywhere).
func (s *Server) reader() (*recording.Reader, error) {
	if s.readers == nil {
		return s.rec.Records(s.ctx)
	}
	select {
	case rd := <-s.readers:
		return rd, nil
	default:
		return s.rec.Records(s.ctx)
	}
}

// release gives a reader back to the pool (or closes it when the pool is full).
func (s *Server) release(rd *recording.Reader) {
	if s.readers == nil {
		rd.Close()
		return
	}
	select {
	case s.readers <- rd:
	default:
		rd.Close()
	}
}

// openAt opens the capture and positions it with seek; on failure it
// answers the request with the error and reports false.
func (s *Server) openAt(w http.ResponseWriter, seek func(*recording.Reader) error) (*recording.Reader, bool) {
	rd, err := s.reader()
	if err != nil {
		apiError(w, http.StatusInternalServerError, "%v", err)
		return nil, false
	}
	if err := seek(rd); err != nil {
		s.release(rd)
		apiError(w, http.StatusInternalServerError, "%s: %v", s.title(), err)
		return nil, false
	}
	return rd, true
}

func (s *Server) serveRules(w http.ResponseWriter, r *http.Request) {
	rules := make([]ruleDoc, 0, len(s.rules))
	for _, m := range append([]string{protocol.StreamProtocol}, models.Names()...) {
		for _, rd := range s.rules {
			if rd.Protocol == m {
				rules = append(rules, rd)
			}
		}
	}
	sortRules(rules)
	writeJSON(w, http.StatusOK, map[string]any{"rules": rules})
}
