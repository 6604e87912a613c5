package viewer_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/capfile/capfiletest"
	"github.com/aaep-tools/aaepkit/internal/viewer"
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/models"
)

const goldenV1 = "../../capfile/testdata/golden-v1.aaep"

// apiServer serves the viewer of path (without a replay) and waits for its
// background check.
func apiServer(t *testing.T, path string) *httptest.Server {
	t.Helper()
	v, err := viewer.New(viewer.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !v.CheckDone() {
		if time.Now().After(deadline) {
			t.Fatal("the background check did not finish")
		}
		time.Sleep(5 * time.Millisecond)
	}
	ts := httptest.NewServer(v)
	t.Cleanup(func() { ts.Close(); v.Close() })
	return ts
}

func getJSON(t *testing.T, url string, wantCode int, out any) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != wantCode {
		t.Fatalf("GET %s: %d %s, want %d", url, resp.StatusCode, b, wantCode)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("GET %s: Content-Type %q", url, ct)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
	}
	return string(b)
}

type eventsPage struct {
	Events []struct {
		Index   int64  `json:"index"`
		Kind    string `json:"kind"`
		Source  int    `json:"source"`
		Session string `json:"session"`
		Type    string `json:"type"`
		Worst   string `json:"worst"`
	} `json:"events"`
	Next int64 `json:"next"`
}

func TestEventsPagesAndFilters(t *testing.T) {
	ts := apiServer(t, goldenV1)
	_, recs := capfiletest.ReadAll(t, goldenV1)
	// Paging through everything gives every record once, in order.
	var seen []int64
	for from := int64(0); from >= 0; {
		var p eventsPage
		getJSON(t, ts.URL+"/api/events?limit=50&from="+itoa(from), 200, &p)
		for _, e := range p.Events {
			seen = append(seen, e.Index)
		}
		from = p.Next
	}
	if len(seen) != len(recs) {
		t.Fatalf("paging gave %d records, the capture has %d", len(seen), len(recs))
	}
	for i, idx := range seen {
		if idx != int64(i) {
			t.Fatalf("record %d came as #%d", i, idx)
		}
	}
	cases := []struct {
		query string
		check func(e eventsPage) bool
	}{
		{"source=1", func(p eventsPage) bool {
			for _, e := range p.Events {
				if e.Source != 1 {
					return false
				}
			}
			return len(p.Events) > 0
		}},
		{"session=sess_2c91a7b4d23f1eb2", func(p eventsPage) bool {
			for _, e := range p.Events {
				if e.Session != "sess_2c91a7b4d23f1eb2" || e.Kind == "conn" {
					return false
				}
			}
			return len(p.Events) > 0
		}},
		{"type=tool.invoked,state.changed", func(p eventsPage) bool {
			for _, e := range p.Events {
				if !strings.HasSuffix(e.Type, "tool.invoked") && !strings.HasSuffix(e.Type, "state.changed") {
					return false
				}
			}
			return len(p.Events) > 0
		}},
		{"rule=SEQ-START-FIRST", func(p eventsPage) bool {
			for _, e := range p.Events {
				if e.Worst != "MUST" {
					return false
				}
			}
			return len(p.Events) == 4 // the first message of each of the four sessions that start mid-way
		}},
		{"rule=NO-SUCH-RULE", func(p eventsPage) bool { return len(p.Events) == 0 && p.Next == -1 }},
	}
	for _, c := range cases {
		var p eventsPage
		getJSON(t, ts.URL+"/api/events?limit=2000&"+c.query, 200, &p)
		if !c.check(p) {
			t.Errorf("/api/events?%s gave %+v", c.query, p)
		}
	}
}

func TestEventDetail(t *testing.T) {
	ts := apiServer(t, goldenV1)
	_, recs := capfiletest.ReadAll(t, goldenV1)
	var d struct {
		Raw, RawBase64, Pretty, Direction string
		Attrs                             map[string]string
		SourceInfo                        struct{ Transport string } `json:"source_info"`
		Flags                             []string
		Findings                          []struct {
			Rule    string `json:"rule"`
			RuleDoc struct {
				Summary string `json:"summary"`
			} `json:"rule_doc"`
		}
	}
	getJSON(t, ts.URL+"/api/event/1", 200, &d)
	if d.Raw != string(recs[1].Payload) {
		t.Errorf("raw payload differs from the record")
	}
	if d.Attrs["id"] != "1" || d.Attrs["event"] != "aaep" || d.SourceInfo.Transport != "sse" {
		t.Errorf("SSE attributes %v, source %+v", d.Attrs, d.SourceInfo)
	}
	if !strings.Contains(d.Pretty, "\n  \"type\": ") {
		t.Errorf("pretty %q", d.Pretty)
	}
	if len(d.Findings) == 0 || d.Findings[0].RuleDoc.Summary == "" {
		t.Errorf("findings %+v: want rules with their docs", d.Findings)
	}
	// A payload that is not UTF-8 comes as base64 too, and is not pretty-printed.
	invalid := 0
	for i, r := range recs {
		if utf8.Valid(r.Payload) {
			continue
		}
		invalid++
		var b struct {
			RawBase64 string `json:"raw_base64"`
			Pretty    string `json:"pretty"`
			Flags     []string
		}
		getJSON(t, ts.URL+"/api/event/"+itoa(int64(i)), 200, &b)
		if b.RawBase64 == "" || b.Pretty != "" || !strings.Contains(strings.Join(b.Flags, ","), "UTF-8") {
			t.Errorf("record %d (invalid UTF-8): %+v", i, b)
		}
	}
	if invalid != 1 {
		t.Errorf("golden-v1 has %d records of invalid UTF-8, want 1", invalid)
	}
}

func TestAPIErrors(t *testing.T) {
	ts := apiServer(t, goldenV1)
	for _, c := range []struct {
		path string
		code int
		want string
	}{
		{"/api/event/307", 404, "no record 307"},
		{"/api/event/-1", 404, "no record"},
		{"/api/event/x", 404, "no record"},
		{"/api/events?from=-3", 400, "from"},
		{"/api/events?limit=0", 400, "limit"},
		{"/api/events?limit=abc", 400, "limit"},
		{"/api/events?source=two", 400, "source"},
		{"/api/timeline?from_ns=5&to_ns=1", 400, "before"},
		{"/api/timeline?px=0", 400, "px"},
		{"/api/rows?limit=5000", 400, "limit"},
		{"/api/rows?filter=type%20%3D%3D", 400, "value is missing"},
		{"/api/rows?session=sess_nope", 404, "no session"},
		{"/api/find?dir=2", 400, "dir"},
		{"/api/sessions?sort=colour", 400, "sort"},
		{"/api/sessions?limit=100000", 400, "limit"},
		{"/api/export?format=zip", 400, "format"},
		{"/api/trace/sess_nope/steps", 404, "no session"},
		{"/api/trace/sess_nope/svg", 404, "no session"},
	} {
		body := getJSON(t, ts.URL+c.path, c.code, nil)
		if !strings.Contains(body, c.want) || !strings.Contains(body, `"error"`) {
			t.Errorf("GET %s: %s, want an error saying %q", c.path, body, c.want)
		}
	}
}

type timeline struct {
	Lanes []struct {
		ID    string     `json:"id"`
		Cells [][3]int64 `json:"cells"`
		Count int64      `json:"count"`
	} `json:"lanes"`
	Overview [][3]int64 `json:"overview"`
	All      [][3]int64 `json:"all"`
	Events   [][5]int64 `json:"events"`
	Spans    [][7]int64 `json:"spans"`
	Count    int64      `json:"count"`
	Detail   string     `json:"detail"`
	Sessions int        `json:"sessions"`
}

func sumCells(cells [][3]int64) (n int64) {
	for _, c := range cells {
		n += c[1]
	}
	return n
}

type sessionsPage struct {
	Sessions []struct {
		ID       string `json:"id"`
		Messages int64  `json:"messages"`
		Verdict  struct{ Must, Should, Info int64 }
	} `json:"sessions"`
	Total int64 `json:"total"`
}

// TestTimelineEventsAndDensity: a window with few messages lists them one
// by one in their session's lane, with the spans of tool calls and waits;
// one with more than Options.TimelineScan is drawn from the check's
// buckets; both count every message once.
func TestTimelineEventsAndDensity(t *testing.T) {
	ts := apiServer(t, demo)
	var ss sessionsPage
	getJSON(t, ts.URL+"/api/sessions", 200, &ss)
	var tl timeline
	getJSON(t, ts.URL+"/api/timeline?px=500", 200, &tl)
	if tl.Detail != "events" || len(tl.Lanes) != 8 || tl.Sessions != 8 {
		t.Fatalf("whole timeline: detail %q, %d lanes of %d sessions; want events in 8 lanes", tl.Detail, len(tl.Lanes), tl.Sessions)
	}
	var messages int64
	for i, l := range tl.Lanes {
		if l.ID != ss.Sessions[i].ID || l.Count != ss.Sessions[i].Messages {
			t.Errorf("lane %d: %s with %d messages; the sessions list says %s with %d", i, l.ID, l.Count, ss.Sessions[i].ID, ss.Sessions[i].Messages)
		}
		messages += l.Count
	}
	if int64(len(tl.Events)) != messages || sumCells(tl.All) != messages || sumCells(tl.Overview) != messages || tl.Count != messages {
		t.Errorf("%d events, %d in the window's columns, %d in the overview, count %d; want %d messages each", len(tl.Events), sumCells(tl.All), sumCells(tl.Overview), tl.Count, messages)
	}
	bad := 0
	for _, e := range tl.Events {
		if e[4] >= 2 {
			bad++
		}
	}
	if bad == 0 {
		t.Error("no event on the timeline is marked with a violation")
	}
	tools, waits := 0, 0
	for _, sp := range tl.Spans {
		if sp[2] < sp[1] || sp[5] >= 0 && sp[5] <= sp[4] {
			t.Errorf("span %v ends before it starts", sp)
		}
		if sp[3] == 0 {
			tools++
		} else {
			waits++
		}
	}
	if tools == 0 || waits == 0 {
		t.Errorf("%d tool call spans and %d waits; the demo has both", tools, waits)
	}
	// Two lanes asked for, and the buckets instead of the records.
	v, err := viewer.New(viewer.Options{Path: demo, TimelineScan: 10})
	if err != nil {
		t.Fatal(err)
	}
	for !v.CheckDone() {
		time.Sleep(5 * time.Millisecond)
	}
	ts2 := httptest.NewServer(v)
	defer func() { ts2.Close(); v.Close() }()
	var agg timeline
	getJSON(t, ts2.URL+"/api/timeline?px=300&lanes="+ss.Sessions[0].ID+","+ss.Sessions[3].ID, 200, &agg)
	if agg.Detail != "buckets" || len(agg.Events) != 0 || len(agg.Lanes) != 2 {
		t.Fatalf("aggregated: detail %q, %d events, %d lanes", agg.Detail, len(agg.Events), len(agg.Lanes))
	}
	if sumCells(agg.Overview) != messages || agg.Lanes[1].Count < ss.Sessions[3].Messages {
		t.Errorf("aggregated: overview %d (want %d), lane %s %d (want at least %d)", sumCells(agg.Overview), messages, agg.Lanes[1].ID, agg.Lanes[1].Count, ss.Sessions[3].Messages)
	}
	worst := int64(0)
	for _, c := range agg.Lanes[1].Cells {
		worst = max(worst, c[2])
	}
	if ss.Sessions[3].Verdict.Must > 0 && worst != 3 {
		t.Errorf("lane %s has MUST findings; its worst cell is %d", agg.Lanes[1].ID, worst)
	}
}

type rowsPage struct {
	Rows []struct {
		Index   int64  `json:"index"`
		Session string `json:"session"`
		Type    string `json:"type"`
		Kind    string `json:"kind"`
		Worst   string `json:"worst"`
	} `json:"rows"`
	Total int64 `json:"total"`
}

// TestRowsSessionsFilterFind: a session's rows are its messages, replies
// included; a filter expression keeps what the legacy filters and the
// findings say; /api/find goes from finding to finding.
func TestRowsSessionsFilterFind(t *testing.T) {
	ts := apiServer(t, demo)
	var all eventsPage
	getJSON(t, ts.URL+"/api/events?limit=2000", 200, &all)
	var ss sessionsPage
	getJSON(t, ts.URL+"/api/sessions", 200, &ss)
	replies := 0
	for _, s := range ss.Sessions {
		var p rowsPage
		getJSON(t, ts.URL+"/api/rows?limit=500&session="+s.ID, 200, &p)
		if p.Total != s.Messages || int64(len(p.Rows)) != p.Total {
			t.Errorf("session %s: %d rows (total %d), %d messages", s.ID, len(p.Rows), p.Total, s.Messages)
		}
		for i, r := range p.Rows {
			if r.Session != s.ID {
				t.Errorf("session %s lists record %d of session %q", s.ID, r.Index, r.Session)
			}
			if i > 0 && r.Index <= p.Rows[i-1].Index {
				t.Errorf("session %s: rows out of order at %d", s.ID, r.Index)
			}
			if r.Kind == "sent" {
				replies++
			}
		}
	}
	if replies == 0 {
		t.Error("no session lists a subscriber's reply")
	}
	// Paging: any window of the whole list is the records in order.
	var page rowsPage
	getJSON(t, ts.URL+"/api/rows?from=50&limit=7", 200, &page)
	if page.Total != int64(len(all.Events)) || len(page.Rows) != 7 || page.Rows[0].Index != 50 || page.Rows[6].Index != 56 {
		t.Errorf("rows 50+7 of %d: %+v", page.Total, page.Rows)
	}
	// A filter expression, against the legacy filters' rows.
	want := map[int64]bool{}
	for _, e := range all.Events {
		if strings.HasSuffix(e.Type, "state.changed") && e.Worst == "MUST" {
			want[e.Index] = true
		}
	}
	var f rowsPage
	getJSON(t, ts.URL+"/api/rows?limit=500&filter="+url.QueryEscape(`type == "state.changed" && level >= MUST`), 200, &f)
	if len(want) == 0 || int(f.Total) != len(want) {
		t.Errorf("filter kept %d rows, want %d", f.Total, len(want))
	}
	for _, r := range f.Rows {
		if !want[r.Index] {
			t.Errorf("filter kept record %d (%s, %s)", r.Index, r.Type, r.Worst)
		}
	}
	// Full-text search.
	var q rowsPage
	getJSON(t, ts.URL+"/api/rows?limit=500&q=SEARCH_FLIGHTS", 200, &q)
	if q.Total == 0 {
		t.Error("searching payloads for search_flights (any case) found nothing")
	}
	// Next and previous finding.
	var flagged []int64
	for _, e := range all.Events {
		if e.Worst != "" {
			flagged = append(flagged, e.Index)
		}
	}
	row := int64(-1)
	for i, want := range flagged {
		var fd struct{ Row, Index int64 }
		getJSON(t, ts.URL+"/api/find?dir=1&row="+itoa(row), 200, &fd)
		if fd.Index != want {
			t.Fatalf("finding %d: /api/find gives record %d, want %d", i, fd.Index, want)
		}
		row = fd.Row
	}
	var end struct{ Row int64 }
	getJSON(t, ts.URL+"/api/find?dir=1&row="+itoa(row), 200, &end)
	var back struct{ Index int64 }
	getJSON(t, ts.URL+"/api/find?dir=-1&row="+itoa(row), 200, &back)
	if end.Row != -1 || len(flagged) > 1 && back.Index != flagged[len(flagged)-2] {
		t.Errorf("after the last finding: next row %d (want -1), previous record %d (want %d)", end.Row, back.Index, flagged[len(flagged)-2])
	}
}

// TestSessionsSortAndPage: sessions sort by any column and page, and
// "only with findings" keeps the sessions with findings.
func TestSessionsSortAndPage(t *testing.T) {
	ts := apiServer(t, demo)
	var byMust sessionsPage
	getJSON(t, ts.URL+"/api/sessions?sort=must&desc=1", 200, &byMust)
	for i := 1; i < len(byMust.Sessions); i++ {
		if byMust.Sessions[i].Verdict.Must > byMust.Sessions[i-1].Verdict.Must {
			t.Errorf("sort=must&desc=1: %v before %v", byMust.Sessions[i-1], byMust.Sessions[i])
		}
	}
	var failing sessionsPage
	getJSON(t, ts.URL+"/api/sessions?findings=must&sort=id", 200, &failing)
	if failing.Total != 2 || len(failing.Sessions) != 2 || failing.Sessions[0].ID > failing.Sessions[1].ID {
		t.Errorf("findings=must: %+v; want the demo's 2 broken sessions by id", failing)
	}
	var p1, p2 sessionsPage
	getJSON(t, ts.URL+"/api/sessions?sort=messages&limit=3", 200, &p1)
	getJSON(t, ts.URL+"/api/sessions?sort=messages&limit=3&from=3", 200, &p2)
	if p1.Total != 8 || len(p1.Sessions) != 3 || len(p2.Sessions) != 3 || p2.Sessions[0].Messages < p1.Sessions[2].Messages {
		t.Errorf("pages of 3 by messages: %+v then %+v", p1, p2)
	}
}

// TestExport: the filtered selection as JSON Lines and as a capture.
func TestExport(t *testing.T) {
	ts := apiServer(t, demo)
	_, recs := capfiletest.ReadAll(t, demo)
	resp, err := http.Get(ts.URL + "/api/export?format=jsonl&filter=" + url.QueryEscape("rule == SEQ-STATE-CHAIN && session == sess_eb1273ca151c1c3d"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != string(recs[33].Payload)+"\n" {
		t.Errorf("export jsonl: %d %q, want record 33", resp.StatusCode, b)
	}
	resp, err = http.Get(ts.URL + "/api/export?format=capture&session=sess_eb1273ca151c1c3d")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "sel.aaep")
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, got := capfiletest.ReadAll(t, path)
	if len(got) != 9 || string(got[0].Payload) != string(recs[23].Payload) {
		t.Errorf("export capture of the session: %d records", len(got))
	}
}

// TestTornCapture: a capture whose recorder died has no index; the viewer
// rebuilds it and shows every intact record.
func TestTornCapture(t *testing.T) {
	b, err := os.ReadFile(goldenV1)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "torn.aaep")
	if err := os.WriteFile(path, b[:len(b)*2/3], 0o644); err != nil {
		t.Fatal(err)
	}
	ts := apiServer(t, path)
	var c struct {
		Records int64 `json:"records"`
		Rebuilt bool  `json:"index_rebuilt"`
	}
	getJSON(t, ts.URL+"/api/capture", 200, &c)
	if !c.Rebuilt || c.Records == 0 || c.Records >= 307 {
		t.Errorf("torn capture: %+v; want a rebuilt index of fewer than 307 records", c)
	}
	var p eventsPage
	getJSON(t, ts.URL+"/api/events?limit=2000", 200, &p)
	if int64(len(p.Events)) != c.Records {
		t.Errorf("%d rows for %d records", len(p.Events), c.Records)
	}
	// Not a capture at all: a clear error from New.
	junk := filepath.Join(t.TempDir(), "junk.aaep")
	os.WriteFile(junk, []byte("hello, not a capture"), 0o644)
	if _, err := viewer.New(viewer.Options{Path: junk}); err == nil || !strings.Contains(err.Error(), "junk.aaep") {
		t.Errorf("New(junk) = %v, want an error naming the file", err)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestRuleSpecs: /api/rules and a finding's rule_doc say where each rule is
// stated with the rule's declared Spec, not sections picked out of its
// summary.
func TestRuleSpecs(t *testing.T) {
	ts := apiServer(t, goldenV1)
	declared := map[string]protocol.ListedRule{}
	for _, r := range protocol.ListRules(models.All()) {
		declared[r.ID] = r
	}
	var rules struct {
		Rules []struct{ ID, Summary, Protocol, Spec string }
	}
	getJSON(t, ts.URL+"/api/rules", 200, &rules)
	if len(rules.Rules) != len(declared) {
		t.Errorf("/api/rules lists %d rules, %d are declared", len(rules.Rules), len(declared))
	}
	for _, r := range rules.Rules {
		want, ok := declared[r.ID]
		switch {
		case !ok:
			t.Errorf("/api/rules lists %s, which no model declares", r.ID)
		case r.Spec == "" || r.Spec != want.Spec || r.Summary != want.Summary || r.Protocol != want.Protocol:
			t.Errorf("/api/rules: %s has spec %q, summary %q, protocol %s; declared %q, %q, %s", r.ID, r.Spec, r.Summary, r.Protocol, want.Spec, want.Summary, want.Protocol)
		}
	}
	// Rules whose summary names no section at all still say where they are stated.
	for _, id := range []string{"SEQ-STATE-CHAIN", "STREAM-NOT-JSON", "ASP-S01", "KA-S02"} {
		if strings.Contains(declared[id].Summary, "§") || declared[id].Spec == "" {
			t.Fatalf("%s: pick a rule whose summary cites no section and whose Spec is set", id)
		}
	}
	checked := 0
	for i := 0; i < 60 && checked < 10; i++ {
		var d struct {
			Findings []struct {
				Rule    string `json:"rule"`
				RuleDoc struct {
					ID, Spec string
				} `json:"rule_doc"`
			}
		}
		getJSON(t, ts.URL+"/api/event/"+strconv.Itoa(i), 200, &d)
		for _, f := range d.Findings {
			checked++
			if f.RuleDoc.ID != f.Rule || f.RuleDoc.Spec != declared[f.Rule].Spec {
				t.Errorf("event %d: finding %s has rule_doc %+v, want spec %q", i, f.Rule, f.RuleDoc, declared[f.Rule].Spec)
			}
		}
	}
	if checked == 0 {
		t.Error("no finding in the first 60 events of the golden capture to check")
	}
}

// TestFollowGrowingCapture: view --follow on a capture still being
// written shows the records appended to it, and checks them.
func TestFollowGrowingCapture(t *testing.T) {
	hdr, recs := capfiletest.ReadAll(t, demo)
	path := filepath.Join(t.TempDir(), "live.aaep")
	w, err := capfile.Create(path, hdr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	appendRecs := func(from, to int) {
		for i := from; i < to; i++ {
			if err := w.Append(&recs[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	appendRecs(0, 30)
	v, err := viewer.New(viewer.Options{Path: path, Follow: true, FollowPoll: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(v)
	defer func() { ts.Close(); v.Close() }()
	type capture struct {
		Records int64 `json:"records"`
		Follow  bool  `json:"follow"`
		Check   struct {
			Done     bool  `json:"done"`
			Messages int64 `json:"messages"`
		} `json:"check"`
		Findings map[string]int64 `json:"findings"`
	}
	wait := func(what string, ok func(c capture) bool) capture {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			var c capture
			getJSON(t, ts.URL+"/api/capture", 200, &c)
			if ok(c) {
				return c
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: still %+v", what, c)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	// Followed, the check takes each record as it arrives and goes on as
	// long as the recording: it is done when the recorder closes the
	// capture.
	c := wait("the first 30 records checked", func(c capture) bool { return c.Records == 30 && c.Check.Messages == 30 })
	if !c.Follow || c.Check.Done {
		t.Errorf("/api/capture while following: %+v, want followed, the check going on", c)
	}
	appendRecs(30, len(recs))
	wait("every record checked", func(c capture) bool {
		return c.Records == int64(len(recs)) && c.Check.Messages == int64(len(recs))
	})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	c = wait("the check done once the recorder closed the capture", func(c capture) bool {
		return c.Records == int64(len(recs)) && c.Check.Done && c.Check.Messages == int64(len(recs))
	})
	want := verdicts(t, demo)
	var must int64
	for _, v := range want {
		must += v[0]
	}
	if c.Findings["must"] != must {
		t.Errorf("after growing: %d MUST findings, the whole demo has %d", c.Findings["must"], must)
	}
	var p rowsPage
	getJSON(t, ts.URL+"/api/rows?from=100&limit=50", 200, &p)
	if p.Total != int64(len(recs)) || len(p.Rows) != len(recs)-100 || p.Rows[0].Index != 100 {
		t.Errorf("rows after growing: total %d, %d rows from %d", p.Total, len(p.Rows), p.Rows[0].Index)
	}
}

// TestWaitTimesOut: a wait for a reply whose timeout_seconds pass before the
// reply comes ends, on the timeline, when it timed out.
func TestWaitTimesOut(t *testing.T) {
	hdr, recs := capfiletest.ReadAll(t, demo)
	path := filepath.Join(t.TempDir(), "timeout.aaep")
	w, err := capfile.Create(path, hdr, nil)
	if err != nil {
		t.Fatal(err)
	}
	changed := int64(-1)
	for i := range recs {
		rec := recs[i]
		if changed < 0 && strings.Contains(string(rec.Payload), `"timeout_seconds":300`) {
			rec.Payload = []byte(strings.Replace(string(rec.Payload), `"timeout_seconds":300`, `"timeout_seconds":0.1`, 1))
			changed = int64(i)
		}
		if err := w.Append(&rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if changed < 0 {
		t.Fatal("the demo has no wait with timeout_seconds 300")
	}
	ts := apiServer(t, path)
	var ss sessionsPage
	getJSON(t, ts.URL+"/api/sessions?limit=20", 200, &ss)
	var ids []string
	for _, s := range ss.Sessions {
		ids = append(ids, s.ID)
	}
	var tl timeline
	getJSON(t, ts.URL+"/api/timeline?px=500&lanes="+strings.Join(ids, ","), 200, &tl)
	found := false
	for _, sp := range tl.Spans {
		if sp[4] != changed {
			continue
		}
		found = true
		if sp[3] != 1 || sp[5] != -2 || sp[2]-sp[1] != int64(100*time.Millisecond) {
			t.Errorf("the wait of record %d: span %v, want a wait that timed out 100 ms after it", changed, sp)
		}
	}
	if !found {
		t.Errorf("no span for the wait of record %d in %v", changed, tl.Spans)
	}
	for _, sp := range tl.Spans {
		if sp[3] == 1 && sp[4] != changed && sp[5] == -2 {
			t.Errorf("span %v timed out; only record %d's wait had a short timeout", sp, changed)
		}
	}
}
