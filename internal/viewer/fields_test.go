package viewer_test

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile/capfiletest"
	"github.com/aaep-tools/aaepkit/payload"
)

// TestRowsColumnsAndChecks: /api/rows gives each row its time since the
// row before in its list (delta_ns) and the payload fields asked as
// columns (col); /api/filter says whether an expression parses and where
// not; /api/fields names the filter's fields and the payloads'; time
// filters by seconds since the capture's start.
func TestRowsColumnsAndChecks(t *testing.T) {
	ts := apiServer(t, demo)
	_, recs := capfiletest.ReadAll(t, demo)
	var p struct {
		Rows []struct {
			Index int64          `json:"index"`
			Delta *time.Duration `json:"delta_ns"`
			Cols  []string       `json:"cols"`
		} `json:"rows"`
	}
	getJSON(t, ts.URL+"/api/rows?from=10&limit=5&col=type&col=producer.agent_id&col=no_such", 200, &p)
	if len(p.Rows) != 5 {
		t.Fatalf("%d rows", len(p.Rows))
	}
	for _, r := range p.Rows {
		want := time.Duration(recs[r.Index].Time - recs[r.Index-1].Time)
		if r.Delta == nil || *r.Delta != want {
			t.Errorf("record %d: delta %v, want %v", r.Index, r.Delta, want)
		}
		d := payload.Decode(recs[r.Index].Payload)
		typ, _ := d.Get("type").Str()
		agent := ""
		if pr := d.Get("producer"); pr != nil {
			agent, _ = pr.Get("agent_id").Str()
		}
		if !slices.Equal(r.Cols, []string{typ, agent, ""}) {
			t.Errorf("record %d: columns %q, want %q", r.Index, r.Cols, []string{typ, agent, ""})
		}
	}
	p.Rows = nil
	getJSON(t, ts.URL+"/api/rows?from=0&limit=1", 200, &p)
	if len(p.Rows) != 1 || p.Rows[0].Delta != nil {
		t.Errorf("the first row has a delta %v", *p.Rows[0].Delta)
	}
	getJSON(t, ts.URL+"/api/rows?col=a,b,c,d,e,f,g,h,i", 400, nil)
	var ck struct {
		OK    bool
		Error string
	}
	getJSON(t, ts.URL+"/api/filter?filter="+url.QueryEscape(`type == x && level >= MUST`), 200, &ck)
	if !ck.OK || ck.Error != "" {
		t.Errorf("a good filter checked: %+v", ck)
	}
	getJSON(t, ts.URL+"/api/filter?filter="+url.QueryEscape(`type ==`), 200, &ck)
	if ck.OK || !strings.Contains(ck.Error, "value is missing") || !strings.Contains(ck.Error, "character") {
		t.Errorf("a bad filter checked: %+v", ck)
	}
	var fs struct{ Builtin, Payload []string }
	getJSON(t, ts.URL+"/api/fields", 200, &fs)
	if !slices.Contains(fs.Builtin, "time") || !slices.Contains(fs.Payload, "session_id") || slices.Contains(fs.Payload, "type") {
		t.Errorf("fields: %+v", fs)
	}
	// time: seconds since the capture's start, as the list shows them.
	lo, hi := recs[20].Time, recs[40].Time
	var tr rowsPage
	getJSON(t, ts.URL+"/api/rows?limit=500&filter="+url.QueryEscape("time >= "+secs(lo)+" && time <= "+secs(hi)), 200, &tr)
	n := 0
	for _, r := range recs {
		if r.Time >= lo && r.Time <= hi {
			n++
		}
	}
	if int(tr.Total) != n || n < 21 {
		t.Errorf("time filter kept %d rows, want %d", tr.Total, n)
	}
}

// secs is ns in seconds, exactly (as the filter reads it back).
func secs(ns int64) string { return strconv.FormatFloat(float64(ns)/1e9, 'f', -1, 64) }
