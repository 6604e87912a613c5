package viewer_test

import (
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/aaep-tools/aaepkit/internal/browsertest"
)

// currentRow returns the cells of the session rows the list marks as the
// selected session.
func currentRow(t *testing.T, p *browsertest.Page) [][]string {
	t.Helper()
	var rows [][]string
	p.Eval(t, `[...document.querySelectorAll("#sessions-list .vrow[aria-current='true']")].map(r => [...r.children].map(`+cellText+`))`, &rows)
	return rows
}

// TestSameSessionIDsInBrowser: two recordings holding the same session
// ids list 16 sessions; choosing b's copy of a session selects that one
// only, its messages are b's (the inspector names b), the trace says so,
// and the link the URL keeps reopens b's copy.
func TestSameSessionIDsInBrowser(t *testing.T) {
	dir, _, b := pairDir(t)
	want := verdicts(t, demo)
	id := ""
	for x, v := range want {
		if v[0] > 0 && (id == "" || x < id) {
			id = x // a session with MUST findings
		}
	}
	ts := startViewRecordings(t, dir)
	br := browsertest.New(t)
	p := br.NewPage(t)
	p.Do(t, chromedp.EmulateViewport(1440, 2400))
	p.Navigate(t, ts.URL+"/")
	p.WaitFor(t, 30*time.Second, `document.body.dataset.ready === "true"`)
	rows := filled(t, p, 2*len(want))
	pick, seen := -1, map[string]int{}
	for i, r := range rows {
		seen[r[1]]++
		if r[0] == id && r[1] == "b.aaep" {
			pick = i
		}
	}
	if pick < 0 || seen["a.aaep"] != len(want) || seen["b.aaep"] != len(want) {
		t.Fatalf("the list: %d sessions of a.aaep, %d of b.aaep, b's %s at row %d; want %d each", seen["a.aaep"], seen["b.aaep"], id, pick, len(want))
	}
	click(t, p, fmt.Sprintf("#sessions-list .vrow[data-row='%d']", pick))
	p.WaitFor(t, 30*time.Second, fmt.Sprintf(`document.getElementById("events-scope").textContent.startsWith(%q)`, "Session "+id+" of recording "+b+": "))
	if cur := currentRow(t, p); len(cur) != 1 || cur[0][0] != id || cur[0][1] != "b.aaep" {
		t.Errorf("the list marks %v as the session chosen, want b.aaep's %s only", cur, id)
	}
	p.WaitFor(t, 30*time.Second, fmt.Sprintf(`new URLSearchParams(location.hash.slice(1)).get("session") === %q`, b+"|"+id))
	p.WaitFor(t, 30*time.Second, fmt.Sprintf(`document.getElementById("trace-h").textContent === %q`, "Trace: "+id+" (b.aaep)"))
	click(t, p, "#events-list .vrow[data-row='0']")
	p.WaitFor(t, 30*time.Second, `document.getElementById("inspector-h").textContent.includes("#")`)
	var fields map[string]string
	p.Eval(t, `Object.fromEntries([...document.querySelectorAll("#insp-fields dt")].map(dt => [dt.textContent, dt.nextElementSibling.textContent]))`, &fields)
	if fields["Recording"] != b || fields["Session"] != id {
		t.Errorf("inspector: session %q of recording %q, want %s of %s", fields["Session"], fields["Recording"], id, b)
	}
	// Choosing a message keeps b's copy chosen.
	if cur := currentRow(t, p); len(cur) != 1 || cur[0][1] != "b.aaep" {
		t.Errorf("after choosing a message the list marks %v, want b.aaep's %s", cur, id)
	}

	// The link reopens b's copy.
	p.WaitFor(t, 30*time.Second, `new URLSearchParams(location.hash.slice(1)).has("event")`)
	var href string
	p.Eval(t, `location.href`, &href)
	p2 := br.NewPage(t)
	p2.Do(t, chromedp.EmulateViewport(1440, 2400))
	p2.Navigate(t, href)
	p2.WaitFor(t, 30*time.Second, `document.body.dataset.ready === "true"`)
	filled(t, p2, 2*len(want))
	p2.WaitFor(t, 30*time.Second, fmt.Sprintf(`document.getElementById("events-scope").textContent.startsWith(%q)`, "Session "+id+" of recording "+b+": "))
	if cur := currentRow(t, p2); len(cur) != 1 || cur[0][0] != id || cur[0][1] != "b.aaep" {
		t.Errorf("reopened at %s the list marks %v, want b.aaep's %s", href, cur, id)
	}
	p2.WaitFor(t, 30*time.Second, `document.getElementById("insp-fields").textContent.includes("Recording")`)
	p2.Eval(t, `Object.fromEntries([...document.querySelectorAll("#insp-fields dt")].map(dt => [dt.textContent, dt.nextElementSibling.textContent]))`, &fields)
	if fields["Recording"] != b {
		t.Errorf("reopened: the inspector names recording %q, want %s", fields["Recording"], b)
	}
	// An older link naming the session by its id alone opens one of its
	// copies, named with its recording.
	p3 := br.NewPage(t)
	p3.Do(t, chromedp.EmulateViewport(1440, 2400))
	p3.Navigate(t, ts.URL+"/#session="+url.QueryEscape(id))
	p3.WaitFor(t, 30*time.Second, `document.body.dataset.ready === "true"`)
	p3.WaitFor(t, 30*time.Second, fmt.Sprintf(`document.getElementById("events-scope").textContent.startsWith(%q)`, "Session "+id+" of recording "))
	filled(t, p3, 2*len(want))
	if cur := currentRow(t, p3); len(cur) != 1 || cur[0][0] != id {
		t.Errorf("opened by the id %s, the list marks %v", id, cur)
	}
	axe(t, p, "two recordings of the same session ids, b's copy chosen")
}
