package main

import (
	"path/filepath"
	"testing"

	"github.com/aaep-tools/aaepkit/internal/sample"
)

// TestViewCaptureSessionsOfAReplay: /api/capture lists the sessions of a
// recording of a replay by subscriber, each with its key, as check and
// /api/sessions count them (issue 34: its index-based list gave each id
// once, 4 sessions where three subscribers hold 12).
func TestViewCaptureSessionsOfAReplay(t *testing.T) {
	t.Parallel() // its recordings in a directory of its own, served on loopback
	dir := t.TempDir()
	whole := filepath.Join(dir, "capture.aaep")
	producerCapture(t, whole, sample.Options{Sessions: 4, Seed: 17, Violations: true}, false)
	three := filepath.Join(dir, "three.aaep")
	recordReplay(t, whole, three, 3)
	get := checkedView(t, three)
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
	get("/api/capture", &c)
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
