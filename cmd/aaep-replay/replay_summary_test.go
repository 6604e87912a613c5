package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// recordReplayWith serves in with --record to out (and args, such as a
// speed) to n WebSocket subscribers at once, each reading its whole replay;
// with reply, each subscribes with reply support and answers every
// confirmation with reply(token, subscription id). It waits for the
// recording to be written.
func recordReplayWith(t *testing.T, in, out string, n int, args []string, reply func(token, subID string) string) {
	t.Helper()
	srv := startServe(t, append([]string{"serve", in, "--listen", "127.0.0.1:0", "--close-at-end", "--record", out}, args...)...)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := websocket.Dialer{Subprotocols: []string{"aaep.v1"}, HandshakeTimeout: 10 * time.Second}
			c, _, err := d.Dial("ws://"+srv.addr+"/aaep/v1/ws", nil)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			if reply != nil {
				req := `{"type":"subscription.request","aaep_version":"1.0.0","subscriber_id":"summary-test","capabilities":{"supports_confirmation_reply":true}}`
				if err := c.WriteMessage(websocket.TextMessage, []byte(req)); err != nil {
					errs <- err
					return
				}
			}
			c.SetReadDeadline(time.Now().Add(30 * time.Second))
			var subID string
			for {
				_, msg, err := c.ReadMessage()
				if err != nil {
					if !websocket.IsCloseError(err, 4000) {
						errs <- err
					}
					return
				}
				if reply == nil {
					continue
				}
				var m struct {
					Type           string `json:"type"`
					SubscriptionID string `json:"subscription_id"`
					ReplyToken     string `json:"reply_token"`
				}
				if err := json.Unmarshal(msg, &m); err != nil {
					errs <- err
					return
				}
				switch m.Type {
				case "subscription.accepted":
					subID = m.SubscriptionID
				case "aaep:agent.awaiting.confirmation":
					if err := c.WriteMessage(websocket.TextMessage, []byte(reply(m.ReplyToken, subID))); err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if code := srv.stop(t); code != 0 {
		t.Fatalf("serve exit %d: %s", code, srv.errb.String())
	}
}

var streamOfLine = regexp.MustCompile(`^\s+\[(sub_[^\]]+)\] aaep session (sess_\S+)`)

// TestReplaySummaryKeepsSubscribers: check --summary of a recording of a
// replay to three subscribers names each subscriber's copy of a session
// ([sub_…]), and a reply's finding (a confirmation.reply with a field its
// schema does not have) is filed under the session whose confirmation it
// answered, in the replying subscriber's stream, while that session runs:
// never under "subscription-N (after the session was summarised)".
func TestReplaySummaryKeepsSubscribers(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "three.aaep")
	// At --speed 3 a reply has half a second before the session it
	// answers ends, time enough under load (a later reply is rightly
	// filed under the subscription).
	recordReplayWith(t, demoCapture, rec, 3, []string{"--speed", "3"}, func(token, subID string) string {
		return `{"type":"confirmation.reply","reply_token":"` + token + `","decision":"accept","subscription_id":"` + subID +
			`","timestamp":"` + time.Now().UTC().Format("2006-01-02T15:04:05.000Z") + `","note":"not in the schema"}`
	})

	_, out, stderr := replay(t, "check", "--json", "--fail-on", "never", rec)
	var doc struct {
		Recordings []struct {
			Sessions []struct {
				Stream, Session string
				Messages        int
				Findings        []struct{ Rule, Stream, Session string }
			}
			Streams []struct {
				Stream   string
				Findings []struct{ Rule string }
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Recordings) != 1 {
		t.Fatalf("check --json: %v\n%s%s", err, out, stderr)
	}
	// Each subscriber answered each of the demo's confirmations.
	perStream := map[string]int{}
	for _, s := range doc.Recordings[0].Sessions {
		for _, f := range s.Findings {
			if f.Rule != "MSG-CONF-REPLY-SCHEMA" {
				continue
			}
			if !strings.HasPrefix(s.Session, "sess_") || s.Stream == "" || s.Messages == 0 {
				t.Errorf("the reply's finding is filed under %q of stream %q (%d messages), want the session of its confirmation in its subscriber's stream", s.Session, s.Stream, s.Messages)
			}
			perStream[s.Stream]++
		}
	}
	if len(perStream) != 3 {
		t.Errorf("reply findings per stream %v; want 3 subscribers' own", perStream)
	}
	want := -1
	for _, n := range perStream {
		if want < 0 {
			want = n
		}
		if n != want {
			t.Errorf("reply findings per stream %v; want as many for each subscriber", perStream)
			break
		}
	}
	// "streams" has an entry for each subscriber's stream.
	if st := doc.Recordings[0].Streams; len(st) != 3 || !strings.HasPrefix(st[0].Stream, "sub_") || perStream[st[0].Stream] == 0 {
		t.Errorf("streams %+v, want the 3 subscribers' (%v)", st, perStream)
	}
	for _, st := range doc.Recordings[0].Streams {
		for _, f := range st.Findings {
			if f.Rule == "MSG-CONF-REPLY-SCHEMA" {
				t.Errorf("a reply's finding is filed under the stream %q", st.Stream)
			}
		}
	}

	_, sum, _ := replay(t, "check", "--summary", "--fail-on", "never", rec)
	if strings.Contains(sum, "after the session was summarised") {
		t.Errorf("the summary files findings after their session:\n%s", sum)
	}
	worst := sum[strings.Index(sum, "worst sessions:"):strings.Index(sum, "first occurrence")]
	copies := map[string]map[string]bool{} // session -> its subscribers named
	for _, line := range strings.Split(worst, "\n") {
		if !strings.Contains(line, "aaep session") {
			continue
		}
		m := streamOfLine.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("worst sessions: %q does not name its subscriber's session", line)
			continue
		}
		if copies[m[2]] == nil {
			copies[m[2]] = map[string]bool{}
		}
		if copies[m[2]][m[1]] {
			t.Errorf("worst sessions list %s of %s twice:\n%s", m[2], m[1], worst)
		}
		copies[m[2]][m[1]] = true
	}
	three := 0
	for _, subs := range copies {
		if len(subs) == 3 {
			three++
		}
	}
	if three == 0 {
		t.Errorf("worst sessions name no session's three copies apart:\n%s", worst)
	}
}
