package subtest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/internal/browsertest"
)

// webSubscriber is a web subscriber page: it subscribes by POST (Appendix
// B.1.2), reads the stream with EventSource, shows each confirmation as a
// dialog with Accept and Reject buttons, removes it when the producer
// withdraws it or the session ends, and replies by fetch(). Its script
// plays the user: it presses the button the scenario's decisions name,
// after their delay, if the dialog is still there. (flags: ?stale keeps
// withdrawn dialogs.)
const webSubscriber = `<!doctype html><meta charset="utf-8"><title>AAEP web subscriber</title>
<main><h1>Agent</h1><ul id="log" aria-live="polite"></ul><div id="prompts"></div></main>
<script>
const q = new URLSearchParams(location.search);
const base = q.get("base"), stale = q.has("stale");
const decisions = JSON.parse(q.get("decisions") || "[]");
let subscriptionID = "";
window.replies = [];
function say(text) { const li = document.createElement("li"); li.textContent = text; document.getElementById("log").append(li); }
async function reply(token, decision) {
  const r = await fetch(base + "/aaep/v1/replies", {method: "POST", headers: {"Content-Type": "application/json"},
    body: JSON.stringify({type: "confirmation.reply", reply_token: token, decision: decision,
                          subscription_id: subscriptionID, timestamp: new Date().toISOString()})});
  window.replies.push({token: token, decision: decision, status: r.status});
}
function prompt(ev) {
  const d = document.createElement("div");
  d.setAttribute("role", "alertdialog"); d.dataset.token = ev.reply_token; d.dataset.session = ev.session_id;
  d.innerHTML = "<p></p><button data-decision='accept'>Accept</button><button data-decision='reject'>Reject</button>";
  d.querySelector("p").textContent = ev.summary_normal;
  for (const b of d.querySelectorAll("button")) {
    b.onclick = () => { d.remove(); reply(ev.reply_token, b.dataset.decision); };
  }
  document.getElementById("prompts").append(d);
  // The scripted user.
  const plan = decisions.find((x) => x.token === ev.reply_token);
  if (plan && plan.decision) {
    setTimeout(() => {
      const b = document.querySelector("[data-token='" + ev.reply_token + "'] button[data-decision='" + plan.decision + "']");
      if (b) b.click();
    }, (plan.delay_ns || 0) / 1e6);
  }
}
function withdraw(session) {
  if (stale) return;
  for (const d of document.querySelectorAll("[role=alertdialog]")) { if (d.dataset.session === session) d.remove(); }
}
(async () => {
  const r = await fetch(base + "/aaep/v1/subscriptions", {method: "POST", headers: {"Content-Type": "application/json"},
    body: JSON.stringify({type: "subscription.request", aaep_version: "1.0.0", subscriber_id: "web-test",
                          capabilities: {supports_confirmation_reply: true, supported_conformance_levels: [1, 2]}})});
  subscriptionID = (await r.json()).subscription_id;
  const es = new EventSource(base + "/aaep/v1/events?subscription_id=" + subscriptionID);
  es.addEventListener("aaep.event", (e) => {
    const ev = JSON.parse(e.data);
    say(ev.summary_normal || ev.type);
    if (ev.type.endsWith("awaiting.confirmation")) prompt(ev);
    if ((ev.type.endsWith("state.changed") && ev.from_state === "awaiting_input") || /session\.(completed|errored|cancelled)$/.test(ev.type)) withdraw(ev.session_id);
  });
})();
</script>`

// TestBrowserSubscriber plays two scenarios to the web subscriber page in
// headless Chromium, from another origin: it passes the confirmation the
// user rejects, and the withdrawn confirmation; the page that keeps
// withdrawn dialogs fails the latter.
func TestBrowserSubscriber(t *testing.T) {
	t.Parallel()
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, webSubscriber)
	}))
	t.Cleanup(page.Close)
	_, port, _ := net.SplitHostPort(page.Listener.Addr().String())
	b := browsertest.New(t)
	for _, tc := range []struct {
		scenario, flags string
		pass            bool
	}{
		{"confirmation-default-reject", "", true},
		{"confirmation-withdrawn", "", true},
		{"confirmation-withdrawn", "&stale", false},
	} {
		t.Run(tc.scenario+tc.flags, func(t *testing.T) {
			t.Parallel()
			sc := builtinT(t, tc.scenario)
			p := b.NewPage(t)
			loaded := make(chan error, 1)
			o := Options{Listen: "127.0.0.1:0"}
			// The page's time bound starts with the run (Announce), not
			// before it waits for its turn (main_test.go).
			cancel := context.CancelFunc(func() {})
			defer func() { cancel() }()
			o.Announce = func(_ *Scenario, base string) {
				var ctx context.Context
				ctx, cancel = context.WithTimeout(context.Background(), runTimeout)
				u := fmt.Sprintf("http://localhost:%s/?base=%s&decisions=%s%s", port, url.QueryEscape(base), url.QueryEscape(decisionsJSON(sc.Decisions)), tc.flags)
				go func() { loaded <- p.Goto(ctx, u) }()
			}
			res, _ := run(t, sc, o)
			if err := <-loaded; err != nil {
				t.Fatal(err)
			}
			if res.Passed() != tc.pass {
				t.Errorf("passed=%v, want %v: %+v %s\npage log: %s", res.Passed(), tc.pass, res.Outcomes, ruleIDs(res), strings.Join(p.Logs(), "\n"))
			}
			if tc.scenario == "confirmation-default-reject" {
				var replies []struct {
					Decision string `json:"decision"`
					Status   int    `json:"status"`
				}
				p.Eval(t, "window.replies", &replies)
				if len(replies) != 1 || replies[0].Decision != "reject" || replies[0].Status != http.StatusNoContent {
					t.Errorf("the page's replies %+v, want one reject answered 204", replies)
				}
			}
		})
	}
}
