package viewer_test

import (
	"bytes"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/aaep-tools/aaepkit/internal/bench"
	"github.com/aaep-tools/aaepkit/internal/browsertest"
	"github.com/aaep-tools/aaepkit/internal/sample"
	"github.com/aaep-tools/aaepkit/internal/viewer"
	"github.com/aaep-tools/aaepkit/serve"
)

// cutCells lists what the page cuts that it must not: a number (class num)
// or a column header wider than its box or running past its row's edge, a
// level word cut, in the lists under sel.
const cutCells = `[...document.querySelectorAll("#sessions-sort button, .vrow > span.num, #events-list .vrow > span:last-child")].filter(e => e.getClientRects().length).filter(e => {
	const row = e.closest(".vrow, .cols").getBoundingClientRect(), r = e.getBoundingClientRect();
	return e.scrollWidth > e.clientWidth + 0.5 || r.right > row.right + 0.5; }).map(e => e.textContent + " (" + e.scrollWidth + "/" + e.clientWidth + " px)")`

// TestTruncationInBrowser: issue 40's item 4, truncation. Session ids
// that share a long start are cut in the middle, their differing ends
// shown and the whole id in the title; the Msgs column shows 100000 whole;
// no number, level word (SHOULD) or column header is cut, on a desktop
// and on a phone.
func TestTruncationInBrowser(t *testing.T) {
	long, err := bench.LongSession(100_000, 1)
	if err != nil {
		t.Fatal(err)
	}
	msgs := long
	const prefix = "sess_abc00000000000000000000000000000000"
	var ids []string
	for i := range 3 {
		short, err := bench.LongSession(bench.MinLongSession, uint64(i)+2)
		if err != nil {
			t.Fatal(err)
		}
		id := fmt.Sprintf("%s%04d", prefix, i+1)
		ids = append(ids, id)
		for _, m := range short {
			m.JSON = bytes.ReplaceAll(m.JSON, []byte(m.Session), []byte(id))
			m.Session = id
			m.Offset += time.Duration(i+1) * time.Second
			msgs = append(msgs, m)
		}
	}
	slices.SortStableFunc(msgs, func(a, b sample.Msg) int { return int(a.Offset - b.Offset) })
	path := filepath.Join(t.TempDir(), "wide.aaep")
	if err := sample.WriteCapture(path, msgs, time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC), "test"); err != nil {
		t.Fatal(err)
	}
	ts := startViewOf(t, serve.OpenFile(path), viewer.Options{Path: path})
	demoView := startView(t, demo, nil)
	b := browsertest.New(t)
	for _, vp := range []struct {
		name  string
		phone bool
	}{{"desktop", false}, {"phone", true}} {
		t.Run(vp.name, func(t *testing.T) {
			viewport := chromedp.EmulateViewport(1440, 900)
			if vp.phone {
				viewport = chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile)
			}
			p := b.NewPage(t)
			p.Do(t, viewport)
			p.Navigate(t, ts.URL+"/#sort=should:desc")
			p.WaitFor(t, 60*time.Second, `document.body.dataset.ready === "true" && document.querySelectorAll("#sessions-list .vrow[data-filled='1']").length === 4 && !document.getElementById("sessions-caption").textContent.includes("not checked")`)
			var rows []struct {
				Title, Tail, Shown string
				TailIn             bool
				Msgs               string
			}
			p.Eval(t, `[...document.querySelectorAll("#sessions-list .vrow[data-filled='1']")].map(r => { const id = r.querySelector(".c-id"), tail = id.querySelector(".mid-tail"), box = id.getBoundingClientRect();
				return {Title: id.title, Tail: tail ? tail.textContent : "", TailIn: !!tail && tail.getBoundingClientRect().right <= box.right + 0.5 && tail.getBoundingClientRect().width > 0,
					Shown: id.textContent, Msgs: r.querySelector(".c-messages").lastChild.textContent}; })`, &rows)
			seen := map[string]bool{}
			for _, r := range rows {
				if r.Title != r.Shown {
					t.Errorf("session %q: the title says %q", r.Shown, r.Title)
				}
				if strings.HasPrefix(r.Title, prefix) {
					if !r.TailIn || !strings.HasSuffix(r.Title, r.Tail) || !strings.Contains(r.Tail, r.Title[len(r.Title)-4:]) {
						t.Errorf("session %s: its differing end %q is not shown whole (shown: %v)", r.Title, r.Tail, r.TailIn)
					}
					seen[r.Title] = true
				} else if r.Msgs != "100000" && vp.name == "desktop" {
					t.Errorf("the long session's Msgs reads %q, want 100000", r.Msgs)
				}
			}
			if len(seen) != len(ids) {
				t.Errorf("sessions with the shared start listed: %v, want %v", seen, ids)
			}
			var cut []string
			p.Eval(t, cutCells, &cut)
			for _, c := range cut {
				t.Errorf("cut: %s", c)
			}
			axe(t, p, "truncation, "+vp.name)
			// The level words, in the demo's findings (MUST only: the
			// longest word, SHOULD, written into one of its cells, in
			// the cell's own style).
			d := b.NewPage(t)
			d.Do(t, viewport)
			d.Navigate(t, demoView.URL+"/#sort=should:desc&filter="+url.QueryEscape("level >= MUST"))
			d.WaitFor(t, 60*time.Second, `document.body.dataset.ready === "true" && document.getElementById("events-scope").textContent.includes("filter level") && document.querySelectorAll("#events-list .vrow[data-filled='1']").length > 0`)
			d.Eval(t, `(() => { const c = document.querySelector("#events-list .vrow[data-filled='1'] > span:last-child"); c.lastChild.textContent = "SHOULD"; return true; })()`, nil)
			var words []string
			d.Eval(t, `[...document.querySelectorAll("#events-list .vrow[data-filled='1'] > span:last-child")].map(e => e.lastChild.textContent)`, &words)
			if !slices.Contains(words, "SHOULD") {
				t.Errorf("the demo's findings column reads %q: no SHOULD to check", words)
			}
			d.Eval(t, cutCells, &cut)
			for _, c := range cut {
				t.Errorf("demo, cut: %s", c)
			}
		})
	}
}
