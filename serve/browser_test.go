package serve

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/browsertest"
	"github.com/aaep-tools/aaepkit/timing"
)

// browserPage is a web subscriber as the reference React one is written:
// EventSource.onmessage (unnamed events) on one replay, recreated on any
// error (so it never sends Last-Event-ID), and replies by fetch() POSTing
// JSON to /messages, from its own origin. A second EventSource listens for
// named aaep.event events with addEventListener, as Appendix B.1.7 shows.
const browserPage = `<!doctype html><meta charset="utf-8"><title>subscriber</title><script>
const unnamedURL = %q, namedURL = %q;
window.msgs = []; window.named = []; window.namedOnMessage = 0;
window.opens = 0; window.errors = 0; window.replies = [];
async function reply(token, decision) {
  const r = await fetch(unnamedURL + "/messages", {
    method: "POST",
    headers: {"Content-Type": "application/json"},
    body: JSON.stringify({type: "confirmation.reply", reply_token: token, decision: decision,
                          timestamp: new Date().toISOString()}),
  });
  window.replies.push({token: token, status: r.status});
}
function connect() {
  const es = new EventSource(unnamedURL + "/events");
  es.onopen = () => { window.opens++; };
  es.onerror = () => { window.errors++; es.close(); setTimeout(connect, 100); };
  es.onmessage = (e) => {
    const ev = JSON.parse(e.data);
    window.msgs.push(ev.event_id);
    if (ev.type.endsWith("agent.awaiting.confirmation")) {
      reply(ev.reply_token, "accept").then(() => reply("rpl_not_issued", "accept"));
    }
  };
}
connect();
const named = new EventSource(namedURL + "/events");
named.addEventListener("aaep.event", (e) => { window.named.push(JSON.parse(e.data).event_id); });
named.onmessage = () => { window.namedOnMessage++; };
</script>`

// TestBrowserSubscriber runs the subscriber page above in headless
// Chromium, served from an origin other than the replays': every event
// arrives on both EventSources, the confirmation reply crosses origins
// (preflight included) and is accepted while a reply to a token never
// issued is refused, and when the replays end nothing loops or repeats.
func TestBrowserSubscriber(t *testing.T) {
	recs := standardRecords()
	// The same events recorded from an SSE producer that names nothing
	// (the TypeScript reference producer), and from a WebSocket.
	unnamedCap := writeCaptureFrom(t, capfile.Origin{ID: 0, Transport: "sse", Endpoint: "http://127.0.0.1:9/events"}, recs)
	namedCap := writeCapture(t, recs)
	var seen notices
	opts := Options{Timing: timing.Config{Speed: 20}, Keepalive: MinKeepalive, Notify: seen.add}
	opts.Open = OpenFile(unnamedCap)
	unnamed, uts := startServer(t, opts)
	opts.Open, opts.Notify = OpenFile(namedCap), nil
	named, nts := startServer(t, opts)

	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, browserPage, uts.URL, nts.URL)
	}))
	defer page.Close()

	b := browsertest.New(t)
	p := b.NewPage(t)
	// localhost vs 127.0.0.1, other ports: a different origin.
	_, port, _ := net.SplitHostPort(page.Listener.Addr().String())
	p.Navigate(t, "http://localhost:"+port+"/")

	want := 0
	var wantIDs []string
	for _, r := range recs {
		if r.kind == capfile.KindReceived {
			want++
			wantIDs = append(wantIDs, fmt.Sprintf("evt_%04d", want))
		}
	}
	p.WaitFor(t, testTimeout, fmt.Sprintf("window.msgs.length >= %d && window.named.length >= %d && window.replies.length >= 2", want, want))
	waitComplete(t, unnamed)
	waitComplete(t, named)
	// Both replays have ended; give a looping client the time to show.
	time.Sleep(time.Second)

	var got struct {
		Msgs           []string `json:"msgs"`
		Named          []string `json:"named"`
		NamedOnMessage int      `json:"namedOnMessage"`
		Opens          int      `json:"opens"`
		Errors         int      `json:"errors"`
		Replies        []struct {
			Token  string `json:"token"`
			Status int    `json:"status"`
		} `json:"replies"`
	}
	p.Eval(t, `({msgs: window.msgs, named: window.named, namedOnMessage: window.namedOnMessage,
		opens: window.opens, errors: window.errors, replies: window.replies})`, &got)
	if fmt.Sprint(got.Msgs) != fmt.Sprint(wantIDs) {
		t.Errorf("onmessage saw %v, want %v", got.Msgs, wantIDs)
	}
	if fmt.Sprint(got.Named) != fmt.Sprint(wantIDs) || got.NamedOnMessage != 0 {
		t.Errorf("addEventListener saw %v (onmessage %d), want %v (0)", got.Named, got.NamedOnMessage, wantIDs)
	}
	if got.Opens != 1 || got.Errors != 0 {
		t.Errorf("the page's EventSource opened %d times with %d errors; want one open, no error (no loop at the end)", got.Opens, got.Errors)
	}
	if len(got.Replies) != 2 || got.Replies[0].Status != http.StatusNoContent || got.Replies[1].Status != http.StatusBadRequest {
		t.Errorf("replies %+v: want 204 for rpl_conf1, then 400 for a token never issued", got.Replies)
	}
	var verdicts []string
	for _, n := range seen.kind(NoticeReply) {
		verdicts = append(verdicts, n.Token+" "+n.Verdict)
	}
	if fmt.Sprint(verdicts) != "[rpl_conf1 accepted rpl_not_issued ignored]" {
		t.Errorf("server saw replies %v", verdicts)
	}
	for _, s := range []*Server{unnamed, named} {
		if st := s.Stats(); st.Total != 1 || st.Active != 1 || st.Complete != 1 {
			t.Errorf("server stats: %d subscriptions, %d active, %d complete; want 1, 1, 1", st.Total, st.Active, st.Complete)
		}
	}
}

// waitComplete waits until a server's subscribers have all received the
// whole replay.
func waitComplete(t *testing.T, s *Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	for {
		st := s.Stats()
		if st.Active > 0 && st.Complete == st.Active {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("replay not complete: %d subscriptions, %d active, %d complete", st.Total, st.Active, st.Complete)
		case <-time.After(10 * time.Millisecond):
		}
	}
}
