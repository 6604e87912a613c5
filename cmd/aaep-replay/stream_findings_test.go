package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/sample"
)

// reconnectCapture writes a capture of one SSE source that loses its
// connection halfway through sample sessions and, reconnected, gets the
// three events before the loss again (at-least-once redelivery, §8.2.4);
// no handshake is recorded. It returns the number of sessions.
func reconnectCapture(t *testing.T, path string) int {
	t.Helper()
	opts := sample.Options{Sessions: 5, Seed: 55}
	var events []capfile.Record
	sessions := map[string]bool{}
	for _, m := range sample.Stream(opts) {
		if m.FromSubscriber {
			continue
		}
		sessions[m.Session] = true
		events = append(events, capfile.Record{Kind: capfile.KindReceived, Time: int64(m.Offset), Session: m.Session, Payload: m.JSON})
	}
	half := len(events) / 2
	at := events[half-1].Time
	recs := []capfile.Record{{Kind: capfile.KindConn, Payload: []byte(`{"event":"connected"}`)}}
	recs = append(recs, events[:half]...)
	recs = append(recs,
		capfile.Record{Kind: capfile.KindConn, Time: at + 1, Payload: []byte(`{"event":"disconnected","error":"EOF"}`)},
		capfile.Record{Kind: capfile.KindConn, Time: at + 2, Payload: []byte(`{"event":"connected"}`)})
	for _, r := range events[half-3 : half] {
		r.Time = at + 3
		recs = append(recs, r)
	}
	recs = append(recs, events[half:]...)
	writeSSECapture(t, path, opts.Start0(), recs)
	return len(sessions)
}

// strayReplyCapture writes a capture of one SSE source, no handshake
// recorded, whose subscriber sends a confirmation.reply to a prompt no
// session issued, halfway through sample sessions. It returns the number
// of sessions.
func strayReplyCapture(t *testing.T, path string) int {
	t.Helper()
	opts := sample.Options{Sessions: 3, Seed: 56}
	recs := []capfile.Record{{Kind: capfile.KindConn, Payload: []byte(`{"event":"connected"}`)}}
	sessions := map[string]bool{}
	for i, m := range sample.Stream(opts) {
		if m.FromSubscriber {
			continue
		}
		sessions[m.Session] = true
		recs = append(recs, capfile.Record{Kind: capfile.KindReceived, Time: int64(m.Offset), Session: m.Session, Payload: m.JSON})
		if i == 10 {
			recs = append(recs, capfile.Record{Kind: capfile.KindSent, Time: int64(m.Offset) + 1, Payload: []byte(
				`{"type":"confirmation.reply","reply_token":"rpl_nothing","decision":"accept","subscription_id":"sub_x","timestamp":"2026-11-02T09:00:01.000Z"}`)})
		}
	}
	writeSSECapture(t, path, opts.Start0(), recs)
	return len(sessions)
}

var summaryCounts = regexp.MustCompile(`summary: (\d+) findings?(?:: (\d+))? in (\d+) of (\d+) sessions?(?:, (\d+) about the stream)?`)

// TestStreamFindingsAreNoSession: findings about a stream (a producer's
// redelivery after a reconnect without a recorded handshake, lines no
// protocol could take) are listed under the recording's "streams" in the
// JSON report and under a heading of their own in the text, and are no
// session: session_count and the text's "N findings in M of K sessions"
// count sessions only (before: a session "subscription-0" of 0 messages,
// "53 findings in 1 of 0 sessions").
func TestStreamFindingsAreNoSession(t *testing.T) {
	dir := t.TempDir()
	reconnect := filepath.Join(dir, "reconnect.aaep")
	nSess := reconnectCapture(t, reconnect)
	stray := filepath.Join(dir, "stray.aaep")
	nStray := strayReplyCapture(t, stray)
	garbage := filepath.Join(dir, "garbage.jsonl")
	var lines strings.Builder
	for i, m := range sample.Stream(sample.Options{Sessions: 1, Seed: 3}) {
		if !m.FromSubscriber {
			fmt.Fprintf(&lines, "%s\n", m.JSON)
		}
		if i%3 == 0 {
			fmt.Fprintf(&lines, "{\"hello\": %d}\nnot json %d\n", i, i)
		}
	}
	if err := os.WriteFile(garbage, []byte(lines.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name       string
		file       string
		sessions   int
		streamRule string // a rule every stream finding has
	}{
		{"redelivery after a reconnect", reconnect, nSess, "SEQ-EVENT-ID-REDELIVERED"},
		{"lines no protocol could take", garbage, 1, ""},
		{"a reply to no prompt, no handshake recorded", stray, nStray, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, out, stderr := replay(t, "check", "--json", "--fail-on", "never", tt.file)
			var doc struct {
				Schema     int `json:"schema_version"`
				Recordings []struct {
					Sessions []struct {
						Session  string
						Messages int
						Findings []json.RawMessage
					}
					Streams []struct {
						Stream   *string
						Findings []struct{ Rule, Protocol, Session string }
					}
					SessionCount int `json:"session_count"`
				}
				Total struct {
					Sessions int `json:"session_count"`
					Counts   map[string]int
				}
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Recordings) != 1 {
				t.Fatalf("check --json: %v\n%s%s", err, out, stderr)
			}
			rec := doc.Recordings[0]
			if doc.Schema != 3 {
				t.Errorf("schema_version %d, want 3", doc.Schema)
			}
			sessionFindings := 0
			for _, s := range rec.Sessions {
				sessionFindings += len(s.Findings)
				if !strings.HasPrefix(s.Session, "sess_") || s.Messages == 0 {
					t.Errorf("sessions[] holds %q of %d messages, which is no session", s.Session, s.Messages)
				}
			}
			if len(rec.Sessions) != tt.sessions || rec.SessionCount != tt.sessions || doc.Total.Sessions != tt.sessions {
				t.Errorf("%d sessions listed, session_count %d, total %d; want %d", len(rec.Sessions), rec.SessionCount, doc.Total.Sessions, tt.sessions)
			}
			if len(rec.Streams) != 1 || rec.Streams[0].Stream == nil || *rec.Streams[0].Stream != "" || len(rec.Streams[0].Findings) == 0 {
				t.Fatalf("streams %+v, want the one stream (\"\") with its findings\n%s", rec.Streams, out)
			}
			for _, f := range rec.Streams[0].Findings {
				if tt.streamRule != "" && f.Rule != tt.streamRule {
					t.Errorf("stream finding %+v, want %s", f, tt.streamRule)
				}
			}
			all := doc.Total.Counts["MUST"] + doc.Total.Counts["SHOULD"] + doc.Total.Counts["INFO"]
			streamN := len(rec.Streams[0].Findings)
			if sessionFindings+streamN != all {
				t.Errorf("%d findings in sessions and %d about the stream, counts say %d", sessionFindings, streamN, all)
			}

			// Text: the stream's findings under their own heading, after
			// the sessions; the summary counts sessions only.
			_, text, _ := replay(t, "check", "--all", "--fail-on", "never", tt.file)
			h := strings.Index(text, "findings about the stream, not of any session:")
			if h < 0 || strings.Contains(text[:h], tt.streamRule+" ") && tt.streamRule != "" {
				t.Errorf("the listing has no heading for the stream's findings, or lists them among the sessions:\n%s", text)
			}
			if strings.Contains(text, "subscription-0 (after the session was summarised)") || strings.Contains(text, "0 messages") {
				t.Errorf("the listing holds a session of no messages:\n%s", text)
			}
			sessWord := fmt.Sprintf(" %d sessions;", tt.sessions)
			if tt.sessions == 1 {
				sessWord = " 1 session;"
			}
			if !strings.Contains(text, fmt.Sprintf("; %d MUST", doc.Total.Counts["MUST"])) || !strings.Contains(text, sessWord) {
				t.Errorf("the totals line does not count %d sessions:\n%s", tt.sessions, text)
			}
			_, sum, _ := replay(t, "check", "--summary", "--fail-on", "never", tt.file)
			m := summaryCounts.FindStringSubmatch(sum)
			if m == nil {
				t.Fatalf("no summary line:\n%s", sum)
			}
			n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
			if n(1) != all || n(3) > n(4) || n(4) != tt.sessions || n(5) != streamN || n(2) != sessionFindings && m[2] != "" {
				t.Errorf("summary %q: want %d findings, %d in at most %d sessions, %d about the stream", m[0], all, sessionFindings, tt.sessions, streamN)
			}
			if !strings.Contains(sum, "findings about the stream, not of any session:") {
				t.Errorf("the summary does not show the stream's findings:\n%s", sum)
			}
		})
	}
}
