package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/internal/sample"
	"github.com/aaep-tools/aaepkit/internal/viewer"
	"github.com/aaep-tools/aaepkit/recording"
)

// TestViewCaptureSessionsOfAReplay: /api/capture lists the sessions of a
// recording of a replay by subscriber, each with its key, as check and
// /api/sessions count them (issue 34: its index-based list gave each id
// once, 4 sessions where three subscribers hold 12).
func TestViewCaptureSessionsOfAReplay(t *testing.T) {
	dir := t.TempDir()
	whole := filepath.Join(dir, "capture.aaep")
	producerCapture(t, whole, sample.Options{Sessions: 4, Seed: 17, Violations: true}, false)
	three := filepath.Join(dir, "three.aaep")
	recordReplay(t, whole, three, 3)
	recs, err := recording.Open(context.Background(), []string{three}, recording.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := viewer.New(viewer.Options{Recording: recording.Join(recs)})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	for deadline := time.Now().Add(30 * time.Second); !v.CheckDone(); {
		if time.Now().After(deadline) {
			t.Fatal("the viewer's check did not finish")
		}
		time.Sleep(10 * time.Millisecond)
	}
	ts := httptest.NewServer(v)
	defer ts.Close()
	resp, err := http.Get(ts.URL + "/api/capture")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var c struct {
		IndexSessions int `json:"index_sessions"`
		Sessions      []struct {
			ID  string `json:"id"`
			Key string `json:"key"`
		} `json:"sessions"`
		Check struct {
			Sessions int `json:"sessions"`
		} `json:"check"`
	}
	if err := json.Unmarshal(body, &c); err != nil {
		t.Fatalf("/api/capture: %v: %.300s", err, body)
	}
	if len(c.Sessions) != 12 || c.IndexSessions != 12 || c.Check.Sessions != 12 {
		t.Fatalf("/api/capture: %d sessions (index_sessions %d), the check %d; want 12 (3 subscribers × 4)", len(c.Sessions), c.IndexSessions, c.Check.Sessions)
	}
	keys := map[string]bool{}
	ids := map[string]int{}
	for _, s := range c.Sessions {
		if s.Key == "" || s.Key == s.ID || keys[s.Key] {
			t.Errorf("session %q: key %q, want one of its own naming its subscription", s.ID, s.Key)
		}
		keys[s.Key] = true
		ids[s.ID]++
	}
	for id, n := range ids {
		if n != 3 {
			t.Errorf("session %s listed %d times, want once per subscriber (3)", id, n)
		}
	}
}
