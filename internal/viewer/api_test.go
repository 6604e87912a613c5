package viewer_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

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
		{"/api/timeline?max=0", 400, "max"},
		{"/api/trace/sess_nope/steps", 404, "no session"},
		{"/api/trace/sess_nope/svg", 404, "no session"},
	} {
		body := getJSON(t, ts.URL+c.path, c.code, nil)
		if !strings.Contains(body, c.want) || !strings.Contains(body, `"error"`) {
			t.Errorf("GET %s: %s, want an error saying %q", c.path, body, c.want)
		}
	}
}

func TestTimelineEventsAndDensity(t *testing.T) {
	ts := apiServer(t, goldenV1)
	var tl struct {
		Lanes   []string   `json:"lanes"`
		Events  [][5]int64 `json:"events"`
		Buckets [][4]int64 `json:"buckets"`
		Count   int64      `json:"count"`
	}
	getJSON(t, ts.URL+"/api/timeline", 200, &tl)
	if tl.Count != 307 || len(tl.Events) != 307 || len(tl.Buckets) != 0 {
		t.Fatalf("whole timeline: %d counted, %d events, %d buckets; want 307 events one by one", tl.Count, len(tl.Events), len(tl.Buckets))
	}
	if len(tl.Lanes) != 8 || tl.Lanes[7] != "" {
		t.Errorf("lanes %q: want the 7 sessions and the lane for records without one", tl.Lanes)
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
	tl.Events, tl.Buckets = nil, nil
	getJSON(t, ts.URL+"/api/timeline?max=10&buckets=50", 200, &tl)
	var sum int64
	for _, b := range tl.Buckets {
		sum += b[2]
		if b[1] < 0 || b[1] >= 50 {
			t.Errorf("bucket %v out of range", b)
		}
	}
	if len(tl.Events) != 0 || sum != 307 {
		t.Errorf("density: %d events, bucket counts sum to %d; want 0 and 307", len(tl.Events), sum)
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
