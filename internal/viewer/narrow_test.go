package viewer_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/internal/bench"
	"github.com/aaep-tools/aaepkit/internal/viewer"
)

// TestIndexedFilters: filters the indexes answer (index ranges, session
// == X, both, within a session's list, with a text) keep exactly the rows
// that reading every record keeps (the same filter behind an || that the
// indexes cannot answer).
func TestIndexedFilters(t *testing.T) {
	ts := apiServer(t, demo)
	var ss sessionsPage
	getJSON(t, ts.URL+"/api/sessions", 200, &ss)
	if len(ss.Sessions) < 2 {
		t.Fatalf("the demo has %d sessions", len(ss.Sessions))
	}
	s0, s1 := ss.Sessions[0].ID, ss.Sessions[1].ID
	rows := func(q url.Values) []int64 {
		q.Set("limit", "500")
		var p rowsPage
		getJSON(t, ts.URL+"/api/rows?"+q.Encode(), 200, &p)
		if int64(len(p.Rows)) != p.Total {
			t.Fatalf("%v: %d rows of %d", q, len(p.Rows), p.Total)
		}
		var out []int64
		for _, r := range p.Rows {
			out = append(out, r.Index)
		}
		return out
	}
	for _, c := range []struct{ list, filter, q string }{
		{"", "index > 10", ""},
		{"", "index >= 10 && index < 40", ""},
		{"", "index == 7", ""},
		{"", "index == 7.5", ""},
		{"", "index < 0", ""},
		{"", "index <= 12.5 && index > -3", ""},
		{"", "index > 1e30", ""},
		{"", "session == " + s0, ""},
		{"", "session == " + s1 + " && index > 20", ""},
		{"", "index > 20 && session == " + s1 + " && direction == recv", ""},
		{"", "session == nosuch", ""},
		{"", "index > 30", "session"},
		{s0, "index > 20", ""},
		{s0, "index < 25 && session == " + s0, ""},
	} {
		q := url.Values{"filter": {c.filter}}
		if c.list != "" {
			q.Set("session", c.list)
		}
		if c.q != "" {
			q.Set("q", c.q)
		}
		got := rows(q)
		q.Set("filter", "("+c.filter+") || missing_field == x")
		want := rows(q)
		if !slices.Equal(got, want) {
			t.Errorf("list %q, filter %q, text %q: %v, reading every record keeps %v", c.list, c.filter, c.q, got, want)
		}
		if c.filter == "index > 10" && (len(got) == 0 || got[0] != 11) {
			t.Errorf("index > 10 starts at %v", got)
		}
		if c.filter == "session == "+s0 && len(got) == 0 {
			t.Errorf("session == %s keeps nothing", s0)
		}
	}
}

// TestSearchProgressAndCancel: a whole-capture text search reports how far
// it has read (/api/progress) and stops when its request goes away: it is
// not running any more; asked again, it runs to its end.
func TestSearchProgressAndCancel(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bulk.aaep")
	const n = 60_000
	if err := bench.WriteBulkCapture(path, n, 3); err != nil {
		t.Fatal(err)
	}
	v, err := viewer.New(viewer.Options{Path: path}) // the check still runs: no matter
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(v)
	t.Cleanup(func() { ts.Close(); v.Close() })
	const q = "q=no-such-text-anywhere"
	type progress struct {
		Running, Ready bool
		Read, Total    int64
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+"/api/rows?"+q, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	var p progress
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		getJSON(t, ts.URL+"/api/progress?"+q, 200, &p)
		if p.Running && p.Read > 0 || time.Now().After(end) {
			break
		}
	}
	if !p.Running || p.Total != n || p.Read <= 0 || p.Read >= p.Total {
		t.Fatalf("while searching, /api/progress says %+v", p)
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the search answered before it was cancelled")
	}
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		getJSON(t, ts.URL+"/api/progress?"+q, 200, &p)
		if !p.Running || time.Now().After(end) {
			break
		}
	}
	if p.Running || p.Ready {
		t.Errorf("after cancelling, /api/progress says %+v", p)
	}
	var rp rowsPage
	getJSON(t, ts.URL+"/api/rows?"+q, 200, &rp)
	getJSON(t, ts.URL+"/api/progress?"+q, 200, &p)
	if rp.Total != 0 || p.Running {
		t.Errorf("searched to the end: %d rows, progress %+v", rp.Total, p)
	}
}
