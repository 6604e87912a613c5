package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/capfile/capfiletest"
	"github.com/aaep-tools/aaepkit/transport/transporttest"
)

// tsProducer behaves on the wire like the TypeScript reference producer of
// ecosystem.md: SSE at /events with data: lines only (no event: and no id:
// lines), no response headers until the first event, and on every new
// connection it re-sends its last (up to 1000) events before new ones. Each
// connection gets the next batch of events; every batch but the last is
// followed by closing the connection, so a recorder must reconnect.
type tsProducer struct {
	batches [][]string
	// gap, when set, is how long each connection waits after the events
	// it re-sends before its new ones.
	gap time.Duration

	mu    sync.Mutex
	sent  []string
	conns int
}

func (p *tsProducer) start(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(p.serve), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String() + "/events"
}

func (p *tsProducer) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/events" {
		http.NotFound(w, r)
		return
	}
	p.mu.Lock()
	batch := p.conns
	p.conns++
	resend := p.sent
	if len(resend) > 1000 {
		resend = resend[len(resend)-1000:]
	}
	var fresh []string
	if batch < len(p.batches) {
		fresh = p.batches[batch]
	}
	p.sent = append(p.sent, fresh...)
	p.mu.Unlock()

	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	// Like Node's buffered writeHead: the headers leave with the first event.
	for i, ev := range append(append([]string(nil), resend...), fresh...) {
		if i == len(resend) && p.gap > 0 {
			time.Sleep(p.gap)
		}
		fmt.Fprintf(w, "data: %s\n\n", ev)
		fl.Flush()
		time.Sleep(time.Millisecond)
	}
	if batch < len(p.batches)-1 {
		return // the connection ends: the recorder reconnects
	}
	<-r.Context().Done()
}

// tsSession is one clean session as the reference producer emits it, with
// summary_normal on its output.streaming chunks (§3.3.1).
func tsSession(id string, at time.Time) []string {
	n := 0
	ev := func(typ string, extra string) string {
		n++
		ts := at.Add(time.Duration(n) * 100 * time.Millisecond).UTC().Format("2006-01-02T15:04:05.000Z")
		urgency := "normal"
		return fmt.Sprintf(`{"@context":"https://aaep-protocol.org/context/v1","type":"aaep:agent.%s","event_id":"evt_%s%02d","session_id":"sess_%s","timestamp":"%s","producer":{"agent_id":"ts-minimal"},"urgency":"%s","localization_hints":{"primary_language":"en-US"}%s}`,
			typ, id, n, id, ts, urgency, extra)
	}
	return []string{
		ev("session.started", `,"summary_normal":"Starting."`),
		ev("state.changed", `,"from_state":"idle","to_state":"thinking","summary_normal":"Thinking."`),
		ev("state.changed", `,"from_state":"thinking","to_state":"calling_tool","summary_normal":"Looking it up."`),
		ev("tool.invoked", `,"tool":"lookup","tool_call_id":"call_`+id+`1","summary_normal":"Looking up the weather."`),
		ev("tool.completed", `,"tool":"lookup","tool_call_id":"call_`+id+`1","status":"success","summary_normal":"Found it."`),
		ev("state.changed", `,"from_state":"calling_tool","to_state":"writing_output","summary_normal":"Writing."`),
		ev("output.streaming", `,"output_id":"out_`+id+`","chunk":"Sunny, ","position":0,"complete":false,"coalesce_hint":"sentence","summary_normal":"Answering."`),
		ev("output.streaming", `,"output_id":"out_`+id+`","chunk":"22 degrees.","position":7,"complete":true,"coalesce_hint":"completion","summary_normal":"Answering."`),
		ev("state.changed", `,"from_state":"writing_output","to_state":"idle","summary_normal":"Done."`),
		ev("session.completed", `,"summary_normal":"Done."`),
	}
}

// tsConfirmSession is tsSession with the user asked to confirm the lookup
// first (12 events): a confirmation carries a reply token, which a
// redelivery repeats.
func tsConfirmSession(id string, at time.Time) []string {
	ev := tsSession(id, at)
	conf := strings.NewReplacer(`"type":"aaep:agent.state.changed"`, `"type":"aaep:agent.awaiting.confirmation"`, `"urgency":"normal"`, `"urgency":"critical"`,
		`"from_state":"thinking","to_state":"calling_tool","summary_normal":"Looking it up."`,
		`"action":"Look up the weather.","consequence":"A weather service is called.","reply_token":"rpl_`+id+`1","timeout_seconds":60,"default_decision":"reject","risk_level":"low","summary_normal":"May I look it up?"`).Replace(ev[2])
	enter := strings.Replace(ev[2], `"to_state":"calling_tool","summary_normal":"Looking it up."`, `"to_state":"awaiting_input","summary_normal":"Asking."`, 1)
	leave := strings.Replace(ev[2], `"from_state":"thinking"`, `"from_state":"awaiting_input"`, 1)
	// Distinct event ids for the inserted events.
	conf = strings.Replace(conf, `"event_id":"evt_`+id+`03"`, `"event_id":"evt_`+id+`c1"`, 1)
	enter = strings.Replace(enter, `"event_id":"evt_`+id+`03"`, `"event_id":"evt_`+id+`c0"`, 1)
	return append(append(ev[:2:2], enter, conf, leave), ev[3:]...)
}

// TestCheckRecordingOfReconnectingProducer records, with the real
// aaep-capture, a producer that behaves like the TypeScript reference: it
// drops the connection twice and re-sends everything it sent before on
// each new connection (§8.2.4 allows duplicate delivery). The stream is
// clean, so the check reports no MUST and no SHOULD: the re-sent events are
// counted once per reconnect (SEQ-EVENT-ID-REDELIVERED, INFO, with the
// count) and judged no further (no SEQ-SESSION-ID-REUSE, no
// SEQ-REPLY-TOKEN-UNIQUE for the re-sent confirmation, no finding twice),
// and summary_normal on output.streaming is allowed (§3.3.1).
func TestCheckRecordingOfReconnectingProducer(t *testing.T) {
	t.Parallel()
	at := time.Now().Add(-time.Minute)
	p := &tsProducer{batches: [][]string{
		tsSession("a", at),
		tsConfirmSession("b", at.Add(5*time.Second)),
		tsSession("c", at.Add(10*time.Second)),
	}}
	url := p.start(t)
	out := filepath.Join(t.TempDir(), "ts.aaep")
	// 10 + (10 + 12) + (22 + 10) events: three connections.
	runCapture(t, url, "-o", out, "--max-events", "64", "-q")
	_, recs := capfiletest.ReadAll(t, out)
	connects := 0
	for _, r := range recs {
		if r.Kind == capfile.KindConn && strings.Contains(string(r.Payload), `"connected"`) {
			connects++
		}
	}
	if connects != 3 {
		t.Fatalf("%d connections recorded, want 3", connects)
	}

	code, text, stderrText := replay(t, "check", out)
	if code != 0 || !strings.Contains(text, "PASS") {
		t.Errorf("check: exit %d, want 0 and PASS\n%s%s", code, text, stderrText)
	}
	code, js, _ := replay(t, "check", "--json", "--fail-on", "should", out)
	var doc struct {
		Counts   map[string]int
		Sessions []struct {
			Session  string
			Complete bool
			Findings []struct{ Rule, Level, Message string }
		}
		Streams []struct {
			Findings []struct{ Rule, Level, Message string }
		}
	}
	if err := json.Unmarshal(recordingJSON(t, js), &doc); err != nil {
		t.Fatal(err)
	}
	if code != 0 || doc.Counts["MUST"] != 0 || doc.Counts["SHOULD"] != 0 {
		t.Errorf("exit %d, %d MUST, %d SHOULD; want 0 0 0\n%s", code, doc.Counts["MUST"], doc.Counts["SHOULD"], js)
	}
	var redelivered []string
	sessions := 0
	for _, s := range doc.Sessions {
		if strings.HasPrefix(s.Session, "sess_") {
			sessions++
			if !s.Complete {
				t.Errorf("session %s incomplete", s.Session)
			}
		}
		for _, f := range s.Findings {
			if f.Rule == "SEQ-EVENT-ID-REDELIVERED" {
				redelivered = append(redelivered, f.Message)
			}
		}
	}
	// Without a recorded handshake the redeliveries are the stream's, no
	// session's.
	for _, st := range doc.Streams {
		for _, f := range st.Findings {
			if f.Rule == "SEQ-EVENT-ID-REDELIVERED" {
				redelivered = append(redelivered, f.Message)
			}
		}
	}
	if sessions != 3 || len(doc.Sessions) != 3 {
		t.Errorf("%d sessions (%d listed), want 3", sessions, len(doc.Sessions))
	}
	if len(redelivered) != 2 || !strings.Contains(redelivered[0], "reconnect 1") || !strings.Contains(redelivered[0], "10 events") ||
		!strings.Contains(redelivered[1], "reconnect 2") || !strings.Contains(redelivered[1], "22 events") {
		t.Errorf("redelivery findings %q; want one per reconnect, 10 then 22 events", redelivered)
	}
}

// runCapture runs the real aaep-capture with args until it stops by itself.
func runCapture(t *testing.T, args ...string) {
	t.Helper()
	cmd := exec.Command(captureBin.Path(t), args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("aaep-capture: %v\n%s", err, stderr.String())
		}
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("aaep-capture did not stop\n%s", stderr.String())
	}
}

// TestCheckRecordingCutOffByTheSubscriber records, with the real
// aaep-capture over WebSocket, a session that is still running when the
// recorder stops (--max-events) and sends subscription.close. Either side
// may close at any time (§5.8): the session is unfinished, not a
// SEQ-TERMINAL-PRESENT violation, in both profiles.
func TestCheckRecordingCutOffByTheSubscriber(t *testing.T) {
	t.Parallel()
	events := tsSession("d", time.Now().Add(-time.Minute))[:6]
	var msgs [][]byte
	for _, e := range events {
		msgs = append(msgs, []byte(e))
	}
	p := &transporttest.WSProducer{Frames: transporttest.Frames(msgs), Hold: true}
	out := filepath.Join(t.TempDir(), "cut.aaep")
	runCapture(t, p.Start(t), "-o", out, "--max-events", "6", "-q")
	_, recs := capfiletest.ReadAll(t, out)
	if sent := recs[len(recs)-2]; sent.Kind != capfile.KindSent || !strings.Contains(string(sent.Payload), "subscription.close") {
		t.Fatalf("the recorder did not close the subscription: %d %s", sent.Kind, sent.Payload)
	}
	for _, profile := range []string{"lenient", "strict"} {
		code, text, _ := replay(t, "check", "--profile", profile, out)
		if code != 0 || strings.Contains(text, "SEQ-TERMINAL-PRESENT") || !strings.Contains(text, "SEQ-SESSION-INCOMPLETE") || !strings.Contains(text, "unfinished") {
			t.Errorf("%s: exit %d; want 0, the session unfinished and no SEQ-TERMINAL-PRESENT\n%s", profile, code, text)
		}
	}
}

// TestCheckRecordingOfAFilteredSubscription records, with the real
// aaep-capture over WebSocket, a subscription whose accepted answer honors
// an event filter that excludes state changes and no reply support, so the
// producer withholds confirmations (§5.3.1.4, §5.3.1.7). The session it
// carries has no state changes and an irreversible tool without a
// confirmation: by agreement, not by fault. The check says once what the
// subscription withholds and reports no MUST or SHOULD about the absence.
func TestCheckRecordingOfAFilteredSubscription(t *testing.T) {
	t.Parallel()
	at := time.Now().Add(-time.Minute)
	var frames [][]byte
	frames = append(frames, []byte(`{"type":"subscription.accepted","subscription_id":"sub_filtered","aaep_version":"1.0.0","producer":{"agent_id":"ts-minimal"},"honored_capabilities":{"preferred_verbosity":"normal","supports_confirmation_reply":false,"event_filters":{"exclude":["aaep:agent.state.changed"]}}}`))
	for i, e := range tsSession("f", at) {
		if strings.Contains(e, "state.changed") {
			continue
		}
		if i == 3 { // the tool becomes irreversible: its confirmation is withheld
			e = strings.Replace(e, `"tool":"lookup"`, `"tool":"lookup","irreversible":true,"risk_level":"high"`, 1)
		}
		frames = append(frames, []byte(e))
	}
	p := &transporttest.WSProducer{Frames: transporttest.Frames(frames), NoHandshake: true, Hold: true}
	out := filepath.Join(t.TempDir(), "filtered.aaep")
	runCapture(t, p.Start(t), "-o", out, "--max-events", fmt.Sprint(len(frames)-1), "-q")
	for _, profile := range []string{"lenient", "strict"} {
		code, js, _ := replay(t, "check", "--json", "--fail-on", "should", "--profile", profile, out)
		var doc struct {
			Counts   map[string]int
			Sessions []struct {
				Findings []struct{ Rule, Level string }
			}
			// The handshake's findings are the stream's.
			Streams []struct {
				Findings []struct{ Rule, Level string }
			}
		}
		if err := json.Unmarshal(recordingJSON(t, js), &doc); err != nil {
			t.Fatal(err)
		}
		withheld := 0
		for _, s := range append(doc.Sessions, doc.Streams...) {
			for _, f := range s.Findings {
				if f.Rule == "NEG-TYPES-WITHHELD" {
					withheld++
				}
				if f.Level != "INFO" && !strings.HasPrefix(f.Rule, "ENV-LOCHINTS") {
					t.Errorf("%s: %s %s on a filtered subscription", profile, f.Level, f.Rule)
				}
			}
		}
		if withheld != 1 {
			t.Errorf("%s: NEG-TYPES-WITHHELD %d times, want once\n%s", profile, withheld, js)
		}
		if profile == "lenient" && code != 0 {
			t.Errorf("lenient: exit %d, want 0", code)
		}
	}
}
