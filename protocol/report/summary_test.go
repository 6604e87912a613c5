package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/protocol"
)

// TestSummaryNamesTheStream: in a recording of a replay every subscriber
// has its own copy of a session; the summary's worst sessions and first
// occurrences name each one's stream, as the listing does ("[sub_…] aaep
// session sess_…"), so that the copies can be told apart (issue 34: the
// summary listed one session id three times, each without its subscriber).
func TestSummaryNamesTheStream(t *testing.T) {
	r := New("rec.aaep")
	r.View = ViewSummary
	for _, stream := range []string{"sub_one", "sub_two"} {
		r.AddFinding(protocol.Finding{Stream: stream, Protocol: "aaep", Session: "sess_x", RuleID: "SEQ-STATE-CHAIN", Level: protocol.Must, Index: 3, Message: "broken chain"})
		r.AddSession(protocol.SessionSummary{Stream: stream, Protocol: "aaep", Session: "sess_x", Messages: 8, State: "completed", Complete: true})
	}
	var b bytes.Buffer
	if err := r.WriteText(&b, protocol.Must); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	worst := out[strings.Index(out, "worst sessions:"):strings.Index(out, "first occurrence")]
	for _, stream := range []string{"sub_one", "sub_two"} {
		if !strings.Contains(worst, "["+stream+"] aaep session sess_x") {
			t.Errorf("worst sessions do not name [%s]:\n%s", stream, worst)
		}
	}
	first := out[strings.Index(out, "first occurrence"):]
	if !strings.Contains(first, "[sub_one] aaep session sess_x") {
		t.Errorf("first occurrence does not name its stream:\n%s", first)
	}
}

// TestStreamBlocksAreNoSession: blocks of findings about a stream (lines no
// protocol could take, a protocol's messages outside any session, a
// source's connection without a recorded handshake, a source's recorded
// subscription handshake) are listed after the sessions under their own
// heading and in the JSON's "streams", and never counted as sessions
// (issue 34: "150 findings in 55 of 54 sessions"; a WebSocket capture's
// handshake made 8 sessions 9); a clean handshake is not listed.
func TestStreamBlocksAreNoSession(t *testing.T) {
	fill := func(r *Report) {
		r.AddFinding(protocol.Finding{Protocol: "aaep", Session: "sess_a", RuleID: "SEQ-STATE-CHAIN", Level: protocol.Must, Index: 3})
		r.AddSession(protocol.SessionSummary{Protocol: "aaep", Session: "sess_a", Messages: 8, State: "completed", Complete: true})
		r.AddSession(protocol.SessionSummary{Protocol: "aaep", Session: "sess_b", Messages: 4, State: "completed", Complete: true})
		r.AddFinding(protocol.Finding{Protocol: protocol.StreamProtocol, RuleID: "STREAM-UNKNOWN-PROTOCOL", Level: protocol.Should, Index: 1})
		r.AddFinding(protocol.Finding{Protocol: "aaep", RuleID: "ENV-JSON-OBJECT", Level: protocol.Must, Index: 2})
		r.AddFinding(protocol.Finding{Protocol: "aaep", Session: "subscription-0", RuleID: "SEQ-EVENT-ID-REDELIVERED", Level: protocol.Info, Index: 9})
		r.AddSession(protocol.SessionSummary{Protocol: "aaep", Session: "subscription-0", State: protocol.StateNoHandshake, Complete: true})
		r.AddFinding(protocol.Finding{Protocol: "aaep", Session: "subscription-1", RuleID: "MSG-ACC-SCHEMA", Level: protocol.Must, Index: 11})
		r.AddSession(protocol.SessionSummary{Protocol: "aaep", Session: "subscription-1", Messages: 3, State: "active", Handshake: true})
		r.AddSession(protocol.SessionSummary{Protocol: "aaep", Session: "subscription-2", Messages: 2, State: "closed", Complete: true, Handshake: true})
	}
	for _, tt := range []struct {
		name string
		view View
		json bool
		want []string
	}{
		{"listing", ViewAll, false, []string{"\nfindings about the stream, not of any session:\n", "stream (messages no protocol could take)",
			"aaep (messages outside any session)", "aaep subscription-0: findings about the source's connection", "aaep subscription-1: the source's subscription handshake, 3 messages",
			"2 sessions; 3 MUST, 1 SHOULD, 1 INFO"}},
		{"summary", ViewSummary, false, []string{"summary: 5 findings: 1 in 1 of 2 sessions, 4 about the stream",
			"stream (messages no protocol could take)", "0 MUST, 1 SHOULD, 0 INFO\n", "2 sessions; 3 MUST",
			"aaep subscription-1 (the source's subscription handshake, ended in active)  1 MUST", "aaep subscription-1 (subscription handshake)"}},
		{"json", ViewAll, true, []string{`"session_count": 2`, `"streams": [
        {
          "stream": "",
          "findings": [`, `"rule": "SEQ-EVENT-ID-REDELIVERED"`, `"session": "subscription-1"`}},
	} {
		for _, streamed := range []bool{false, true} {
			t.Run(fmt.Sprint(tt.name, " streamed=", streamed), func(t *testing.T) {
				r := New("rec.aaep")
				r.View = tt.view
				var b bytes.Buffer
				if streamed {
					r.Stream(&b, tt.json, protocol.Must)
				}
				fill(r)
				var err error
				switch {
				case streamed:
					err = r.Close()
				case tt.json:
					err = r.WriteJSON(&b, protocol.Must)
				default:
					err = r.WriteText(&b, protocol.Must)
				}
				if err != nil {
					t.Fatal(err)
				}
				out := b.String()
				for _, w := range tt.want {
					if !strings.Contains(out, w) {
						t.Errorf("report lacks %q:\n%s", w, out)
					}
				}
				if strings.Contains(out, "subscription-2") {
					t.Errorf("the clean handshake is listed:\n%s", out)
				}
				if h := strings.Index(out, "findings about the stream"); !tt.json && tt.view == ViewAll && (h < 0 || strings.Index(out, "sess_b") > h) {
					t.Errorf("the stream's findings are not after the sessions:\n%s", out)
				}
				if tt.json {
					sessions := out[strings.Index(out, `"sessions"`):strings.Index(out, `"streams"`)]
					if strings.Contains(sessions, "subscription-") || strings.Contains(sessions, "STREAM-UNKNOWN-PROTOCOL") || strings.Contains(sessions, "ENV-JSON-OBJECT") {
						t.Errorf("sessions hold the stream's findings:\n%s", sessions)
					}
				}
			})
		}
	}
}

// TestLateFindingsCountNoSessionTwice: findings for a session after it was
// summarised (a streaming report has written it already) are listed under
// the session's name but do not count it again: "1 session", never "2 of 1".
func TestLateFindingsCountNoSessionTwice(t *testing.T) {
	for _, view := range []View{ViewAll, ViewSummary} {
		r := New("rec.aaep")
		r.View = view
		var b bytes.Buffer
		r.Stream(&b, false, protocol.Must)
		r.AddFinding(protocol.Finding{Protocol: "aaep", Session: "sess_a", RuleID: "SEQ-STATE-CHAIN", Level: protocol.Must, Index: 3})
		r.AddSession(protocol.SessionSummary{Protocol: "aaep", Session: "sess_a", Messages: 8, State: "completed", Complete: true})
		r.AddFinding(protocol.Finding{Protocol: "aaep", Session: "sess_a", RuleID: "SEQ-TERMINAL-LAST", Level: protocol.Must, Index: 12})
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		want := "rec.aaep: 0 messages, 1 session; 2 MUST"
		if view == ViewSummary {
			want = "summary: 2 findings in 1 of 1 session"
		} else if !strings.Contains(out, "aaep session sess_a (after the session was summarised)") {
			t.Errorf("the late finding is not listed under its session:\n%s", out)
		}
		if !strings.Contains(out, want) || strings.Contains(out, "2 sessions") {
			t.Errorf("view %d: report lacks %q:\n%s", view, want, out)
		}
	}
}
