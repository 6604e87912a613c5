package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/capfile/capfiletest"
	"github.com/aaep-tools/aaepkit/transport/transporttest"
)

// badAccepted is a subscription.accepted without its subscription_id
// (§5.4): a finding about the handshake.
const badAccepted = `{"type":"subscription.accepted","aaep_version":"1.0.0","producer":{"agent_id":"demo"},"honored_capabilities":{"preferred_verbosity":"normal"}}`

// handshakeCapture records, with the real aaep-capture over WebSocket, the
// demo's 8 sessions after a handshake whose accepted answer lacks its
// subscription_id. It returns the capture's path.
func handshakeCapture(t *testing.T) string {
	t.Helper()
	_, recs := capfiletest.ReadAll(t, filepath.Join("..", "..", "testdata", "demo.aaep"))
	frames := [][]byte{[]byte(badAccepted)}
	for _, r := range recs {
		if r.Kind == capfile.KindReceived {
			frames = append(frames, r.Payload)
		}
	}
	p := &transporttest.WSProducer{Frames: transporttest.Frames(frames), NoHandshake: true, Hold: true}
	out := filepath.Join(t.TempDir(), "handshake.aaep")
	runCapture(t, p.Start(t), "-o", out, "--max-events", fmt.Sprint(len(frames)-1), "-q")
	return out
}

// TestHandshakeIsNoSession: a recorded subscription handshake (its block
// "subscription-0") is about the stream, not a session: a WebSocket capture
// of a handshake and 8 sessions says 8 sessions in check's text, JSON and
// summary and in the viewer's /api/sessions and /api/capture, and the
// handshake's findings are the stream's, naming the subscription (before:
// 9 sessions, one of them the handshake).
func TestHandshakeIsNoSession(t *testing.T) {
	t.Parallel()
	capture := handshakeCapture(t)

	_, out, stderr := replay(t, "check", "--json", "--fail-on", "never", capture)
	var doc struct {
		Recordings []struct {
			Sessions []struct{ Session string }
			Streams  []struct {
				Stream   string
				Findings []struct{ Rule, Session, Message string }
			}
			SessionCount int `json:"session_count"`
		}
		Total struct {
			Sessions int `json:"session_count"`
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Recordings) != 1 {
		t.Fatalf("check --json: %v\n%s%s", err, out, stderr)
	}
	rec := doc.Recordings[0]
	for _, s := range rec.Sessions {
		if !strings.HasPrefix(s.Session, "sess_") {
			t.Errorf("sessions[] holds %q, which is no session", s.Session)
		}
	}
	if len(rec.Sessions) != 8 || rec.SessionCount != 8 || doc.Total.Sessions != 8 {
		t.Errorf("%d sessions listed, session_count %d, total %d; want 8", len(rec.Sessions), rec.SessionCount, doc.Total.Sessions)
	}
	handshake := 0
	for _, st := range rec.Streams {
		for _, f := range st.Findings {
			if f.Session == "subscription-0" && strings.Contains(f.Message, "subscription_id") {
				handshake++
			}
		}
	}
	if handshake == 0 {
		t.Errorf("streams[] holds no finding of subscription-0 about the missing subscription_id:\n%s", out)
	}

	_, text, _ := replay(t, "check", "--all", "--fail-on", "never", capture)
	h := strings.Index(text, "findings about the stream, not of any session:")
	if h < 0 || strings.Contains(text[:h], "subscription-0") || !strings.Contains(text[h:], "subscription-0: the source's subscription handshake") {
		t.Errorf("the handshake is listed among the sessions, or not under the stream's heading:\n%s", text)
	}
	if !strings.Contains(text, " 8 sessions;") {
		t.Errorf("the totals line does not say 8 sessions:\n%s", text)
	}
	_, sum, _ := replay(t, "check", "--summary", "--fail-on", "never", capture)
	if m := summaryCounts.FindStringSubmatch(sum); m == nil || m[4] != "8" || m[5] == "" || m[5] == "0" {
		t.Errorf("summary %q, want 'of 8 sessions' and findings about the stream:\n%s", m, sum)
	}
	if !strings.Contains(sum, "subscription-0 (the source's subscription handshake") {
		t.Errorf("the summary does not name the handshake among the stream's findings:\n%s", sum)
	}

	// check --state, going on part by part, lists no handshake among the
	// sessions of any run either.
	dir := t.TempDir()
	if code, _, e := replay(t, "split", "--records", "40", "-o", filepath.Join(dir, "r.aaep"), capture); code != 0 {
		t.Fatalf("split: exit %d: %s", code, e)
	}
	parts, _ := filepath.Glob(filepath.Join(dir, "r-*.aaep"))
	live := filepath.Join(t.TempDir(), "live")
	if err := os.Mkdir(live, 0o755); err != nil || len(parts) < 2 {
		t.Fatalf("%v; %d parts", err, len(parts))
	}
	state := filepath.Join(t.TempDir(), "state")
	for i, p := range parts {
		b, err := os.ReadFile(p)
		if err == nil {
			err = os.WriteFile(filepath.Join(live, filepath.Base(p)), b, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
		_, js, _ := replay(t, "check", "--state", state, "--json", "--fail-on", "never", filepath.Join(live, "r-*.aaep"))
		var run struct {
			Recordings []struct {
				Sessions []struct{ Session string }
				Streams  []struct {
					Findings []struct{ Session string }
				}
			}
		}
		if err := json.Unmarshal([]byte(js), &run); err != nil || len(run.Recordings) != 1 {
			t.Fatalf("check --state, part %d: %v\n%s", i+1, err, js)
		}
		for _, s := range run.Recordings[0].Sessions {
			if !strings.HasPrefix(s.Session, "sess_") {
				t.Errorf("check --state, part %d: sessions[] holds %q", i+1, s.Session)
			}
		}
		if i == 0 && (len(run.Recordings[0].Streams) == 0 || len(run.Recordings[0].Streams[0].Findings) == 0 ||
			run.Recordings[0].Streams[0].Findings[0].Session != "subscription-0") {
			t.Errorf("check --state, part 1: the handshake's findings are not the stream's:\n%s", js)
		}
	}

	// visualize draws the handshake's trace as it did, counted apart.
	_, dot, verr := replay(t, "visualize", "--format", "dot", "-o", "-", capture)
	if !strings.Contains(dot, "aaep subscription handshake subscription-0") || !strings.Contains(dot, "8 sessions · 1 block about the stream") ||
		!strings.Contains(verr, "drew 8 sessions and 1 block about the stream") {
		t.Errorf("visualize does not draw the handshake apart from 8 sessions:\n%s\n%.2000s", verr, dot)
	}

	// export: the handshake is no session's trace; its findings are on the
	// stream's.
	otlp := filepath.Join(t.TempDir(), "hs.otlp.jsonl")
	if code, _, e := replay(t, "export", "--format", "otlp-json", "-o", otlp, capture); code != 0 || !strings.Contains(e, "exported 8 sessions as 9 traces (1 of findings about the stream;") {
		t.Errorf("export: exit %d, %s", code, e)
	}

	// The viewer: /api/sessions and /api/capture count the 8 sessions.
	get := checkedView(t, capture)
	var page struct {
		Total    int `json:"total"`
		Sessions []struct {
			ID string `json:"id"`
		} `json:"sessions"`
	}
	get("/api/sessions?limit=500", &page)
	if page.Total != 8 || len(page.Sessions) != 8 {
		t.Errorf("/api/sessions: total %d, %d listed %+v; want 8", page.Total, len(page.Sessions), page.Sessions)
	}
	var c struct {
		Sessions []struct {
			ID string `json:"id"`
		} `json:"sessions"`
		Check struct {
			Sessions int `json:"sessions"`
		} `json:"check"`
	}
	get("/api/capture", &c)
	if len(c.Sessions) != 8 || c.Check.Sessions != 8 {
		t.Errorf("/api/capture: %d sessions, the check %d; want 8", len(c.Sessions), c.Check.Sessions)
	}
}
