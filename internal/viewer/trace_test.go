package viewer_test

import (
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/internal/sample"
	"github.com/aaep-tools/aaepkit/internal/viewer"
)

type stepsPage struct {
	Session  string `json:"session"`
	Protocol string `json:"protocol"`
	Steps    []struct {
		N      int64  `json:"n"`
		Index  int64  `json:"index"`
		From   string `json:"from"`
		To     string `json:"to"`
		Label  string `json:"label"`
		Kind   string `json:"kind"`
		Edge   string `json:"edge"`
		Worst  string `json:"worst"`
		Offset int64  `json:"offset_ns"`
	} `json:"steps"`
	From  int64 `json:"from"`
	Total int64 `json:"total"`
	Drawn bool  `json:"drawn"`
}

// TestTraceSteps: the steps of a session come out the same whether the
// capture's index locates the session's frames (records keyed by session)
// or the whole capture is read and filtered (records without a key), in
// pages that number them 1 to total, with the worst finding of each
// step's message and its drawn edge; index= finds the page of a message.
func TestTraceSteps(t *testing.T) {
	msgs := sample.Stream(sample.Options{Sessions: 8, Seed: 11, Violations: true})
	var events, unkeyed []sample.Msg
	for _, m := range msgs {
		if m.FromSubscriber {
			continue // a reply names no session: the unkeyed capture would give it to every session
		}
		events = append(events, m)
		m.Session = ""
		unkeyed = append(unkeyed, m)
	}
	dir := t.TempDir()
	keyedPath, unkeyedPath := filepath.Join(dir, "keyed.aaep"), filepath.Join(dir, "unkeyed.aaep")
	start := sample.Options{}.Start0()
	if err := sample.WriteCapture(keyedPath, events, start, "test"); err != nil {
		t.Fatal(err)
	}
	if err := sample.WriteCapture(unkeyedPath, unkeyed, start, "test"); err != nil {
		t.Fatal(err)
	}
	keyed, plain := apiServer(t, keyedPath), apiServer(t, unkeyedPath)

	sessions := map[string]int64{} // messages per session
	for _, m := range events {
		sessions[m.Session]++
	}
	worst := 0
	for id, n := range sessions {
		var total int64
		for from := int64(0); ; from += 3 {
			q := fmt.Sprintf("/api/trace/%s/steps?from=%d&limit=3", id, from)
			var page stepsPage
			body := getJSON(t, keyed.URL+q, 200, &page)
			if other := getJSON(t, plain.URL+q, 200, nil); other != body {
				t.Fatalf("%s: from the index\n%s\nread whole\n%s", q, body, other)
			}
			if page.Session != id || page.Protocol != "aaep" || !page.Drawn || page.From != from {
				t.Fatalf("%s: %s", q, body)
			}
			total = page.Total
			for i, st := range page.Steps {
				if st.N != from+int64(i)+1 || st.From == "" || st.To == "" || st.Label == "" || st.Kind == "" || st.Edge == "" {
					t.Fatalf("%s: step %d: %+v", q, i, st)
				}
				if st.Worst != "" {
					worst++
				}
			}
			if from+3 >= total {
				if want := min(total-from, 3); int64(len(page.Steps)) != max(want, 0) {
					t.Fatalf("%s: %d steps of %d", q, len(page.Steps), total)
				}
				break
			}
		}
		if total < n/2 {
			t.Errorf("session %s: %d steps for %d messages", id, total, n)
		}
		// The page of a message's first step holds it.
		var all stepsPage
		getJSON(t, keyed.URL+fmt.Sprintf("/api/trace/%s/steps?limit=1000", id), 200, &all)
		mid := all.Steps[len(all.Steps)/2]
		var page stepsPage
		getJSON(t, keyed.URL+fmt.Sprintf("/api/trace/%s/steps?index=%d&limit=4", id, mid.Index), 200, &page)
		found := false
		for _, st := range page.Steps {
			found = found || st.Index == mid.Index
		}
		if !found {
			t.Errorf("session %s: the page of message %d lacks it: %+v", id, mid.Index, page.Steps)
		}
	}
	if worst == 0 {
		t.Error("no step of the sessions that break the protocol names its worst finding")
	}
}

// TestTraceDuringCheck asks for a trace while the background check runs
// (which it holds meanwhile): the check still ends, with the verdicts a
// check left alone gives.
func TestTraceDuringCheck(t *testing.T) {
	msgs := sample.Stream(sample.Options{Sessions: 40, Seed: 5, Violations: true})
	path := filepath.Join(t.TempDir(), "c.aaep")
	if err := sample.WriteCapture(path, msgs, sample.Options{}.Start0(), "test"); err != nil {
		t.Fatal(err)
	}
	alone := apiServer(t, path)
	v, err := viewer.New(viewer.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(v)
	t.Cleanup(func() { ts.Close(); v.Close() })
	for _, id := range []string{msgs[0].Session, msgs[len(msgs)-1].Session} {
		var page stepsPage
		getJSON(t, ts.URL+"/api/trace/"+id+"/steps", 200, &page)
		if page.Total == 0 {
			t.Fatalf("session %s: no steps", id)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for !v.CheckDone() {
		if time.Now().After(deadline) {
			t.Fatal("the background check did not finish after the traces")
		}
		time.Sleep(5 * time.Millisecond)
	}
	q := "/api/sessions?limit=1000"
	if got, want := getJSON(t, ts.URL+q, 200, nil), getJSON(t, alone.URL+q, 200, nil); got != want {
		t.Fatalf("sessions after a trace during the check:\n%s\nleft alone:\n%s", got, want)
	}
}
