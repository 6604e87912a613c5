package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/headless"
	"github.com/aaep-tools/aaepkit/internal/sample"
)

// WriteManySessions writes a capture of sessions × perSession messages:
// that many LongSessions played side by side (the sessions' events
// interleaved, each session 40 ms between events), every fifth session
// missing one event in its middle (a sequence gap that the checker finds
// when the session ends). It is the viewer's large input: many sessions,
// each long, findings scattered.
func WriteManySessions(path string, sessions, perSession int) error {
	w, err := capfile.Create(path, benchHeader(), &capfile.WriterOptions{FlushInterval: -1})
	if err != nil {
		return err
	}
	all := make([][]sample.Msg, sessions)
	for s := range all {
		msgs, err := LongSession(perSession, uint64(s)+1)
		if err != nil {
			w.Close()
			return err
		}
		if s%5 == 4 {
			msgs = slices.Delete(msgs, perSession/2, perSession/2+1)
		}
		all[s] = msgs
	}
	// Session s starts s ms after session 0; events go out in time order.
	next := make([]int, sessions)
	for {
		best, bestAt := -1, time.Duration(0)
		for s := range all {
			if next[s] < len(all[s]) {
				at := all[s][next[s]].Offset + time.Duration(s)*time.Millisecond
				if best < 0 || at < bestAt {
					best, bestAt = s, at
				}
			}
		}
		if best < 0 {
			break
		}
		m := all[best][next[best]]
		next[best]++
		all[best][next[best]-1] = sample.Msg{} // let it go
		kind := capfile.KindReceived
		if m.FromSubscriber {
			kind = capfile.KindSent
		}
		if err := w.Append(&capfile.Record{Kind: kind, Time: int64(bestAt), Session: m.Session, Payload: m.JSON}); err != nil {
			w.Close()
			return err
		}
	}
	return w.Close()
}

// pageMetrics reads what the page fetched: the largest answer of the data
// API (downloads the user asks for, the export and the drawing, are
// exempt), from the browser's own resource timing.
const largestAnswerJS = `(() => { let max = 0, url = "";
  for (const e of performance.getEntriesByType("resource")) {
    if (!e.name.includes("/api/") || e.name.includes("/api/export") || e.name.endsWith("/svg")) continue;
    const n = e.decodedBodySize || e.encodedBodySize || 0;
    if (n > max) { max = n; url = e.name; }
  }
  return {Bytes: max, URL: url}; })()`

// ViewBrowser drives `aaep-replay view` in headless Chromium (chromedp,
// internal/headless) as a user does, on a capture of sessions ×
// perSession messages and on one session of sessionEvents messages, and
// reports: first rows on screen after the page is opened, the whole check,
// selecting a session (its first rows on screen), a click on a message to
// its inspector, the largest answer of the page's data API, the view
// process's peak resident memory, and axe-core's violations on the long
// session selected. npmDir holds axe-core (scripts/testdeps.sh).
func ViewBrowser(ctx context.Context, e *Env, sessions, perSession, sessionEvents int, npmDir string) error {
	many := filepath.Join(e.Dir, fmt.Sprintf("view-%dx%d.aaep", sessions, perSession))
	e.logf("writing %d sessions of %d events", sessions, perSession)
	if err := WriteManySessions(many, sessions, perSession); err != nil {
		return err
	}
	long := filepath.Join(e.Dir, fmt.Sprintf("view-session-%d.aaep", sessionEvents))
	msgs, err := LongSession(sessionEvents, uint64(sessionEvents))
	if err != nil {
		return err
	}
	if err := sample.WriteCapture(long, msgs, captureStart, "benche2e"); err != nil {
		return err
	}
	axeSrc, err := os.ReadFile(filepath.Join(npmDir, "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		return fmt.Errorf("axe-core (run scripts/testdeps.sh): %w", err)
	}
	b, err := headless.Launch(ctx, headless.Options{})
	if err != nil {
		return err
	}
	defer b.Close()
	for run := 0; run < e.Runs; run++ {
		r, err := viewBrowserRun(ctx, e, b, many, "")
		if err != nil {
			return fmt.Errorf("%d×%d capture: %w", sessions, perSession, err)
		}
		e.Emit(Result{Name: fmt.Sprintf("ViewBrowser/events=%d", sessions*perSession), Metrics: r.metrics()})
		e.logf("view in Chromium, %d events, run %d: %s", sessions*perSession, run+1, r)
		r, err = viewBrowserRun(ctx, e, b, long, string(axeSrc))
		if err != nil {
			return fmt.Errorf("session of %d events: %w", sessionEvents, err)
		}
		e.Emit(Result{Name: fmt.Sprintf("ViewBrowser/session=%d", sessionEvents), Metrics: r.metrics()})
		e.logf("view in Chromium, one session of %d events, run %d: %s", sessionEvents, run+1, r)
	}
	return nil
}

type browserRun struct {
	firstRows, checked, selectSession, click time.Duration
	largest                                  int64
	largestURL                               string
	rssMiB                                   float64
	axeViolations                            int
	axeRan                                   bool
}

func (r browserRun) metrics() []Metric {
	m := []Metric{
		{ms(r.firstRows), "first-rows-ms"},
		{ms(r.checked), "checked-ms"},
		{ms(r.selectSession), "select-session-ms"},
		{ms(r.click), "click-inspector-ms"},
		{float64(r.largest) / 1024, "largest-answer-KiB"},
		{r.rssMiB, "view-peak-MiB"},
	}
	if r.axeRan {
		m = append(m, Metric{float64(r.axeViolations), "axe-violations"})
	}
	return m
}

func (r browserRun) String() string {
	s := fmt.Sprintf("first rows %v, checked %v, select session %v, click→inspector %v, largest answer %d B (%s), peak RSS %.0f MiB",
		r.firstRows.Round(time.Millisecond), r.checked.Round(time.Millisecond), r.selectSession.Round(time.Millisecond), r.click.Round(time.Millisecond), r.largest, r.largestURL, r.rssMiB)
	if r.axeRan {
		s += fmt.Sprintf(", axe-core violations %d", r.axeViolations)
	}
	return s
}

func viewBrowserRun(ctx context.Context, e *Env, b *headless.Browser, path, axeSrc string) (r browserRun, err error) {
	v, err := startView(ctx, e.ReplayBin, path)
	if err != nil {
		return r, err
	}
	defer v.stop()
	p, err := b.OpenPage(ctx)
	if err != nil {
		return r, err
	}
	defer p.Close()
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w\npage log:\n%s", err, strings.Join(p.Logs(), "\n"))
		}
	}()
	if err := p.Goto(ctx, "http://"+v.addr+"/"); err != nil {
		return r, err
	}
	// Times are taken in the page (performance.now, a MutationObserver),
	// not by polling over the DevTools connection.
	if err := p.Evaluate(ctx, untilJS, nil); err != nil {
		return r, err
	}
	var firstMs float64
	if err := p.Evaluate(ctx, `__until(() => performance.getEntriesByName("events-list-filled").length > 0).then(() => performance.getEntriesByName("events-list-filled")[0].startTime)`, &firstMs); err != nil {
		return r, err
	}
	r.firstRows = msDur(firstMs)
	var readyMs float64
	if err := p.Evaluate(ctx, `__until(() => document.body.dataset.ready === "true").then(() => performance.now())`, &readyMs); err != nil {
		return r, err
	}
	r.checked = msDur(readyMs)
	// Select sessions as a user does, from the list sorted by MUST (the one
	// that matters first): the median of five.
	var ids []string
	if err := p.Evaluate(ctx, `fetch("/api/sessions?sort=must&desc=1&limit=5").then(r => r.json()).then(j => j.sessions.map(s => s.id))`, &ids); err != nil {
		return r, err
	}
	if len(ids) == 0 {
		return r, errors.New("no session")
	}
	var sel []time.Duration
	for _, id := range ids {
		var d float64
		err := p.Evaluate(ctx, fmt.Sprintf(`(() => { const id = %q;
			const done = __until(() => { const r = document.querySelector("#events-list .vrow[data-row='0'][data-filled='1']");
				return r && r.textContent.includes(id) && document.getElementById("events-scope").textContent.startsWith("Session " + id + ":"); });
			window.aaepView.selectSession(id); return done; })()`, id), &d)
		if err != nil {
			return r, err
		}
		sel = append(sel, msDur(d))
	}
	r.selectSession = median(sel)
	// Click → inspector, on rows further and further down the list.
	var clicks []time.Duration
	for i := range 9 {
		var d float64
		err := p.Evaluate(ctx, fmt.Sprintf(`(() => { const rows = [...document.querySelectorAll("#events-list .vrow[data-filled='1']")]; const r = rows[%d %% rows.length];
			const h = document.getElementById("inspector-h"), want = "#" + r.dataset.index;
			const done = __until(() => h.textContent.endsWith(want)); r.click(); return done; })()`, i*3), &d)
		if err != nil {
			return r, err
		}
		clicks = append(clicks, msDur(d))
		// Scroll the list a page on, as a user reading it does.
		err = p.Evaluate(ctx, `(() => { const l = document.getElementById("events-list"); l.scrollTop += l.clientHeight;
			return __until(() => [...document.querySelectorAll("#events-list .vrow[data-filled='1']")].some(r => r.offsetTop >= l.scrollTop)); })()`, nil)
		if err != nil {
			return r, err
		}
	}
	r.click = median(clicks)
	if axeSrc != "" {
		var n int
		if err := p.Evaluate(ctx, axeSrc+`; axe.run(document).then(r => r.violations.length)`, &n); err != nil {
			return r, err
		}
		r.axeRan, r.axeViolations = true, n
	}
	var big struct {
		Bytes int64
		URL   string
	}
	if err := p.Evaluate(ctx, largestAnswerJS, &big); err != nil {
		return r, err
	}
	r.largest, r.largestURL = big.Bytes, big.URL
	r.rssMiB = peakRSS(v.cmd.Process.Pid)
	return r, nil
}

// untilJS defines __until(cond): a promise of the milliseconds until cond
// holds, checked on every change of the page.
const untilJS = `window.__until = (cond) => new Promise((res) => {
  const t0 = performance.now();
  const mo = new MutationObserver(() => { if (cond()) { mo.disconnect(); res(performance.now() - t0); } });
  if (cond()) { res(0); return; }
  mo.observe(document.body, {subtree: true, childList: true, characterData: true, attributes: true});
}); true`

func msDur(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// peakRSS reads a process's peak resident set (VmHWM) in MiB; 0 where
// /proc is not there.
func peakRSS(pid int) float64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			return kb / 1024
		}
	}
	return 0
}
