package viewer_test

import (
	"net/url"
	"slices"
	"testing"
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
