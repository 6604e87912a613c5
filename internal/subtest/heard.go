package subtest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"
)

// AnnouncementsFD is the descriptor an exec'd subscriber writes its
// announcements to under --announcements (named in its environment as
// AAEP_TEST_ANNOUNCEMENTS_FD).
const AnnouncementsFD = 3

// maxHeard bounds the announcements kept of one run (a subscriber that
// writes without end is not kept without end).
const maxHeard = 100000

// heardPipe reads a native subscriber's announcements: one JSON object a
// line, {"text": ..., "urgency": "assertive"|"polite", "modality":
// "speech"|"braille"|...}, each timed as it arrives.
type heardPipe struct {
	start time.Time
	r     *os.File
	done  chan struct{}

	mu  sync.Mutex
	obs observation
}

// newHeardPipe makes the pipe; the caller gives w to the subscriber (as
// descriptor 3) and closes its own copy once the subscriber has it.
func newHeardPipe(start time.Time) (*heardPipe, *os.File, error) {
	if runtime.GOOS == "windows" {
		return nil, nil, errors.New("--announcements: a subscriber's descriptor 3 is not available on Windows")
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("--announcements: %w", err)
	}
	h := &heardPipe{start: start, r: r, done: make(chan struct{}), obs: observation{From: "announcements", List: []Announcement{}}}
	go h.read()
	return h, w, nil
}

func (h *heardPipe) read() {
	defer close(h.done)
	sc := bufio.NewScanner(h.r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		at := time.Since(h.start)
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		a, problem := parseAnnouncement(sc.Bytes())
		h.mu.Lock()
		switch {
		case problem != "":
			h.problem(fmt.Sprintf("line %d: %s", line, problem))
		case len(h.obs.List) < maxHeard:
			a.Offset = at
			h.obs.List = append(h.obs.List, a)
		}
		h.mu.Unlock()
	}
	if err := sc.Err(); err != nil && !errors.Is(err, os.ErrClosed) {
		h.mu.Lock()
		h.problem(fmt.Sprintf("after line %d: %v; the rest was not read", line, err))
		h.mu.Unlock()
		_, _ = io.Copy(io.Discard, h.r) // the subscriber is never blocked on a full pipe
	}
}

// problem notes a line that is not an announcement (the first 20).
func (h *heardPipe) problem(s string) {
	if len(h.obs.Problems) < 20 {
		h.obs.Problems = append(h.obs.Problems, s)
	}
}

// parseAnnouncement reads one line; problem says why it is not an
// announcement.
func parseAnnouncement(b []byte) (a Announcement, problem string) {
	var v struct {
		Text     *string `json:"text"`
		Urgency  string  `json:"urgency"`
		Modality string  `json:"modality"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return a, fmt.Sprintf("not a JSON object (%v): %s", err, clipText(string(b), 80))
	}
	if v.Text == nil {
		return a, "no text: " + clipText(string(b), 80)
	}
	a.Text, a.Urgency, a.Modality = *v.Text, v.Urgency, v.Modality
	if a.Modality == "" {
		a.Modality = "speech"
	}
	if a.Politeness = politenessOf(v.Urgency); a.Politeness == "" {
		if v.Urgency != "" {
			return a, fmt.Sprintf("urgency %q: want assertive or polite (or the event's critical, normal, background)", v.Urgency)
		}
		a.Politeness = Polite // an announcement that does not say waits its turn
	}
	return a, ""
}

// observed waits (at most wait) for the subscriber to be done writing, and
// returns what it announced.
func (h *heardPipe) observed(wait time.Duration) *observation {
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-h.done:
	case <-t.C:
		// A descendant still holds the descriptor: take what came.
	}
	_ = h.r.Close()
	h.mu.Lock()
	defer h.mu.Unlock()
	obs := h.obs
	obs.List = append([]Announcement{}, h.obs.List...)
	return &obs
}
