package viewer_test

import (
	"context"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/internal/viewer"
	"github.com/aaep-tools/aaepkit/recording"
)

// pairDir copies the demo capture twice into a directory, a.aaep and
// b.aaep: two recordings holding the same session ids, as a capture and
// the recording of its replay do.
func pairDir(t *testing.T) (dir, a, b string) {
	t.Helper()
	dir = t.TempDir()
	src, err := os.ReadFile(demo)
	if err != nil {
		t.Fatal(err)
	}
	a, b = filepath.Join(dir, "a.aaep"), filepath.Join(dir, "b.aaep")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, a, b
}

// apiServerOf serves the recordings names hold, joined as view joins
// them, and waits for the background check.
func apiServerOf(t *testing.T, names ...string) *httptest.Server {
	t.Helper()
	rs, err := recording.Open(context.Background(), names, recording.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := viewer.New(viewer.Options{Recording: recording.Join(rs)})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); !v.CheckDone(); {
		if time.Now().After(deadline) {
			t.Fatal("the background check did not finish")
		}
		time.Sleep(5 * time.Millisecond)
	}
	ts := httptest.NewServer(v)
	t.Cleanup(func() { ts.Close(); v.Close() })
	return ts
}

type keyedSession struct {
	ID        string `json:"id"`
	Key       string `json:"key"`
	Stream    string `json:"stream"`
	Recording string `json:"recording"`
	Messages  int64  `json:"messages"`
	Verdict   struct {
		Must, Should, Info int64
	} `json:"verdict"`
}

type keyedRows struct {
	Rows []struct {
		Index      int64  `json:"index"`
		Session    string `json:"session"`
		SessionKey string `json:"session_key"`
	} `json:"rows"`
	Total int64 `json:"total"`
}

// TestSameSessionIDsInTwoRecordings: two recordings holding the same
// session ids are two sets of sessions, each judged on its own: 16
// sessions, 8 of each recording, each with its own recording's messages
// and the findings the check of that recording alone makes; a session is
// named by its key (its recording and its id) in every answer, and an id
// that names two sessions is refused, naming their keys.
func TestSameSessionIDsInTwoRecordings(t *testing.T) {
	dir, a, b := pairDir(t)
	want := verdicts(t, demo) // by id, the demo capture checked alone
	one := apiServer(t, demo)
	var single struct {
		Sessions []keyedSession `json:"sessions"`
	}
	getJSON(t, one.URL+"/api/sessions?limit=1000", 200, &single)
	var oneCap struct {
		IndexSessions int `json:"index_sessions"`
		Check         struct {
			Messages int64 `json:"messages"`
		} `json:"check"`
	}
	getJSON(t, one.URL+"/api/capture", 200, &oneCap)
	msgs := map[string]int64{}
	for _, s := range single.Sessions {
		msgs[s.ID] = s.Messages
		if s.Key != s.ID || s.Stream != "" {
			t.Errorf("one recording: session %q has key %q, stream %q; want its id, no stream", s.ID, s.Key, s.Stream)
		}
	}
	if len(want) != 8 || len(msgs) != len(want) {
		t.Fatalf("the demo capture: the check finds %d sessions, the viewer lists %d; want 8", len(want), len(msgs))
	}
	var sum [3]int64
	for _, v := range want {
		for l := range v {
			sum[l] += v[l]
		}
	}
	if sum[0] == 0 {
		t.Fatal("the demo capture has no MUST finding: the test would not tell the recordings' findings apart")
	}

	ts := apiServerOf(t, filepath.Join(dir, "*.aaep"))
	var c struct {
		IndexSessions int              `json:"index_sessions"`
		Findings      map[string]int64 `json:"findings"`
		Recordings    []struct {
			Name     string           `json:"name"`
			Findings map[string]int64 `json:"findings"`
			Sessions int              `json:"sessions"`
			Messages int64            `json:"messages"`
		} `json:"recordings"`
		Sessions []struct {
			ID        string `json:"id"`
			Key       string `json:"key"`
			Recording string `json:"recording"`
		} `json:"sessions"`
	}
	getJSON(t, ts.URL+"/api/capture", 200, &c)
	if len(c.Recordings) != 2 || c.Recordings[0].Name != a || c.Recordings[1].Name != b {
		t.Fatalf("/api/capture's recordings: %+v, want %s and %s", c.Recordings, a, b)
	}
	for _, r := range c.Recordings {
		got := [3]int64{r.Findings["must"], r.Findings["should"], r.Findings["info"]}
		if r.Sessions != len(want) || got != sum || r.Messages != oneCap.Check.Messages {
			t.Errorf("%s: %d sessions, findings %v, %d messages; the check of it alone: %d sessions, findings %v, %d messages",
				r.Name, r.Sessions, got, r.Messages, len(want), sum, oneCap.Check.Messages)
		}
	}
	if got := [3]int64{c.Findings["must"], c.Findings["should"], c.Findings["info"]}; got != [3]int64{2 * sum[0], 2 * sum[1], 2 * sum[2]} {
		t.Errorf("/api/capture's findings %v, want twice %v", got, sum)
	}
	// The index lists each recording's sessions apart, each with its key.
	indexKeys := map[string]bool{}
	for _, s := range c.Sessions {
		if s.Key != s.Recording+"|"+s.ID || (s.Recording != a && s.Recording != b) {
			t.Errorf("/api/capture's session %+v: want the key of its recording", s)
		}
		indexKeys[s.Key] = true
	}
	if c.IndexSessions != len(c.Sessions) || len(indexKeys) != len(c.Sessions) || c.IndexSessions != 2*oneCap.IndexSessions || oneCap.IndexSessions == 0 {
		t.Errorf("/api/capture: index_sessions %d, %d listed, %d keys; want each recording's %d", c.IndexSessions, len(c.Sessions), len(indexKeys), oneCap.IndexSessions)
	}

	var all struct {
		Sessions []keyedSession `json:"sessions"`
		Total    int            `json:"total"`
	}
	getJSON(t, ts.URL+"/api/sessions?limit=1000", 200, &all)
	if all.Total != 2*len(want) || len(all.Sessions) != all.Total {
		t.Fatalf("/api/sessions: %d of %d sessions, want %d", len(all.Sessions), all.Total, 2*len(want))
	}
	byKey := map[string]keyedSession{}
	ids := map[string][]string{} // recording -> its sessions' ids
	for _, s := range all.Sessions {
		if _, dup := byKey[s.Key]; dup {
			t.Errorf("key %q listed twice", s.Key)
		}
		byKey[s.Key] = s
		ids[s.Recording] = append(ids[s.Recording], s.ID)
		w := want[s.ID]
		if got := [3]int64{s.Verdict.Must, s.Verdict.Should, s.Verdict.Info}; got != w || s.Messages != msgs[s.ID] {
			t.Errorf("%s: verdict %v, %d messages; the check of its recording alone: %v, %d messages", s.Key, got, s.Messages, w, msgs[s.ID])
		}
		if s.Key != s.Recording+"|"+s.ID || s.Stream != s.Recording {
			t.Errorf("session %s of %s: key %q, stream %q", s.ID, s.Recording, s.Key, s.Stream)
		}
	}
	wantIDs := slices.Sorted(func(yield func(string) bool) {
		for id := range want {
			if !yield(id) {
				return
			}
		}
	})
	for _, r := range []string{a, b} {
		got := slices.Sorted(slices.Values(ids[r]))
		if !slices.Equal(got, wantIDs) {
			t.Errorf("%s: sessions %v, want %v", r, got, wantIDs)
		}
		var page struct {
			Total int `json:"total"`
		}
		getJSON(t, ts.URL+"/api/sessions?recording="+url.QueryEscape(r), 200, &page)
		if page.Total != len(want) {
			t.Errorf("/api/sessions?recording=%s: %d sessions, want %d", r, page.Total, len(want))
		}
	}

	// Each session's messages are its recording's only.
	rowsOf := map[string][]int64{}
	for key, s := range byKey {
		var rows keyedRows
		getJSON(t, ts.URL+"/api/rows?limit=500&session="+url.QueryEscape(key), 200, &rows)
		if rows.Total != s.Messages || int64(len(rows.Rows)) != s.Messages {
			t.Errorf("%s: %d rows of %d, want its %d messages", key, len(rows.Rows), rows.Total, s.Messages)
		}
		for _, r := range rows.Rows {
			var d struct {
				Recording  string `json:"recording"`
				SessionKey string `json:"session_key"`
			}
			getJSON(t, ts.URL+"/api/event/"+itoa(r.Index), 200, &d)
			if d.Recording != s.Recording || r.Session != "" && r.SessionKey != key || d.SessionKey != r.SessionKey {
				t.Errorf("%s: row of record %d is of recording %q, session key %q (event: %q)", key, r.Index, d.Recording, r.SessionKey, d.SessionKey)
			}
			rowsOf[key] = append(rowsOf[key], r.Index)
		}
	}
	id := wantIDs[0]
	for _, x := range wantIDs {
		if want[x][0] > 0 {
			id = x // a session with MUST findings
		}
	}
	ka, kb := a+"|"+id, b+"|"+id
	if len(rowsOf[ka]) == 0 || len(rowsOf[ka]) != len(rowsOf[kb]) || slices.ContainsFunc(rowsOf[kb], func(i int64) bool { return slices.Contains(rowsOf[ka], i) }) {
		t.Errorf("%s: a's copy's records %v, b's %v: want as many, none shared", id, rowsOf[ka], rowsOf[kb])
	}

	// An id of two sessions is refused, naming both; a key answers one.
	var e struct {
		Error string `json:"error"`
	}
	for _, path := range []string{"/api/rows?session=" + id, "/api/trace/" + id + "/steps", "/api/timeline?lanes=" + id} {
		getJSON(t, ts.URL+path, 400, &e)
		if !strings.Contains(e.Error, `"`+ka+`"`) || !strings.Contains(e.Error, `"`+kb+`"`) {
			t.Errorf("%s: %q, want both sessions' keys named", path, e.Error)
		}
	}
	var sel struct {
		Sessions []keyedSession `json:"sessions"`
		Total    int            `json:"total"`
	}
	getJSON(t, ts.URL+"/api/sessions?key="+url.QueryEscape(kb), 200, &sel)
	if sel.Total != 1 || sel.Sessions[0].Key != kb || sel.Sessions[0].Recording != b {
		t.Errorf("/api/sessions?key=%s: %+v", kb, sel)
	}
	getJSON(t, ts.URL+"/api/sessions?key="+url.QueryEscape(id), 200, &sel)
	if sel.Total != 2 {
		t.Errorf("/api/sessions?key=%s (an id): %d sessions, want its 2", id, sel.Total)
	}

	// The trace of b's copy is drawn from b's messages.
	var steps struct {
		Session string `json:"session"`
		Key     string `json:"key"`
		Steps   []struct {
			Index int64 `json:"index"`
		} `json:"steps"`
		Total int64 `json:"total"`
	}
	getJSON(t, ts.URL+"/api/trace/"+url.PathEscape(kb)+"/steps?limit=1000", 200, &steps)
	if steps.Session != id || steps.Key != kb || steps.Total == 0 {
		t.Fatalf("trace of %s: session %q, key %q, %d steps", kb, steps.Session, steps.Key, steps.Total)
	}
	for _, st := range steps.Steps {
		if st.Index >= 0 && !slices.Contains(rowsOf[kb], st.Index) {
			t.Errorf("trace of %s: a step of record %d, not one of its messages", kb, st.Index)
		}
	}
	var stepsA struct {
		Total int64 `json:"total"`
	}
	getJSON(t, ts.URL+"/api/trace/"+url.PathEscape(ka)+"/steps?limit=1", 200, &stepsA)
	if stepsA.Total != steps.Total {
		t.Errorf("trace of %s: %d steps, of %s: %d; want as many (the same traffic)", ka, stepsA.Total, kb, steps.Total)
	}

	// The timeline draws the two copies on lanes of their own.
	var tl struct {
		Lanes []struct {
			ID        string `json:"id"`
			Key       string `json:"key"`
			Recording string `json:"recording"`
			Count     int64  `json:"count"`
		} `json:"lanes"`
		Events [][5]int64 `json:"events"`
		Detail string     `json:"detail"`
	}
	getJSON(t, ts.URL+"/api/timeline?px=200&lanes="+url.QueryEscape(ka+","+kb), 200, &tl)
	if len(tl.Lanes) != 2 || tl.Lanes[0].Key != ka || tl.Lanes[1].Key != kb || tl.Lanes[1].ID != id || tl.Lanes[1].Recording != b || tl.Detail != "events" {
		t.Fatalf("timeline lanes %+v (%s)", tl.Lanes, tl.Detail)
	}
	perLane := [2][]int64{}
	for _, ev := range tl.Events {
		perLane[ev[2]] = append(perLane[ev[2]], ev[0])
	}
	for i, k := range []string{ka, kb} {
		slices.Sort(perLane[i])
		if tl.Lanes[i].Count != byKey[k].Messages || !slices.Equal(perLane[i], rowsOf[k]) {
			t.Errorf("timeline lane of %s: %d messages, events %v; want its %d, %v", k, tl.Lanes[i].Count, perLane[i], byKey[k].Messages, rowsOf[k])
		}
	}

	// /api/events?session=KEY keeps that recording's messages of the id.
	var ev struct {
		Events []struct {
			Index      int64  `json:"index"`
			SessionKey string `json:"session_key"`
		} `json:"events"`
	}
	getJSON(t, ts.URL+"/api/events?limit=2000&session="+url.QueryEscape(kb), 200, &ev)
	if len(ev.Events) == 0 {
		t.Errorf("/api/events?session=%s: none", kb)
	}
	for _, e := range ev.Events {
		if e.SessionKey != kb || !slices.Contains(rowsOf[kb], e.Index) {
			t.Errorf("/api/events?session=%s: record %d of session %q", kb, e.Index, e.SessionKey)
		}
	}
}
