package viewer_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/browsertest"
	"github.com/aaep-tools/aaepkit/internal/sample"
	"github.com/aaep-tools/aaepkit/internal/viewer"
	"github.com/aaep-tools/aaepkit/recording"
	"github.com/aaep-tools/aaepkit/recording/recordingtest"
	"github.com/aaep-tools/aaepkit/serve"
)

// fleet writes three hosts' recordings into one directory, small ones: host
// a rotated into two parts, hosts b and c one capture each (c with a
// broken session). It returns the directory and, by recording name as
// recording.Open names them, the session ids written into each.
func fleet(t *testing.T) (string, map[string][]string) {
	t.Helper()
	dir := t.TempDir()
	start := time.Date(2026, 11, 23, 20, 15, 0, 0, time.UTC)
	written := map[string][]string{} // first file's base name -> sessions
	add := func(file string, msgs []sample.Msg) {
		for _, m := range msgs {
			if m.Session != "" && !slices.Contains(written[file], m.Session) {
				written[file] = append(written[file], m.Session)
			}
		}
	}
	a := sample.Stream(sample.Options{Sessions: 3, Seed: 91, Start: start, Gap: 50 * time.Millisecond, Stagger: 100 * time.Millisecond})
	var recs []capfile.Record
	for _, m := range a {
		if !m.FromSubscriber {
			recs = append(recs, capfile.Record{Kind: capfile.KindReceived, Time: int64(m.Offset), Session: m.Session, Payload: m.JSON})
		}
	}
	parts := recordingtest.WriteRotated(t, dir, "agent-a-20261123T201500.000Z", start, recs, []int{len(recs) / 2})
	add(filepath.Base(parts[0]), a)
	for i, o := range []sample.Options{
		{Sessions: 2, Seed: 92, Start: start.Add(time.Second), Gap: 50 * time.Millisecond, Stagger: 100 * time.Millisecond},
		{Sessions: 2, Seed: 93, Start: start.Add(2 * time.Second), Gap: 50 * time.Millisecond, Stagger: 100 * time.Millisecond, Violations: true},
	} {
		name := fmt.Sprintf("agent-%c-20261123T201500.000Z.aaep", 'b'+i)
		msgs := sample.Stream(o)
		if err := sample.WriteCapture(filepath.Join(dir, name), msgs, o.Start, "aaep-capture/test"); err != nil {
			t.Fatal(err)
		}
		add(name, msgs)
	}
	rs, err := recording.Open(context.Background(), []string{dir}, recording.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 3 {
		t.Fatalf("%d recordings in %s, want 3", len(rs), dir)
	}
	out := map[string][]string{}
	for _, r := range rs {
		ids := written[filepath.Base(r.Parts[0].Name)]
		if len(ids) == 0 {
			t.Fatalf("recording %q (first part %s): wrote no sessions there", r.Name, r.Parts[0].Name)
		}
		out[r.Name] = ids
	}
	return dir, out
}

// startViewRecordings serves the recordings under dir as aaep-replay view
// of the directory does: joined, each judged on its own.
func startViewRecordings(t *testing.T, dir string) *httptest.Server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	rs, err := recording.Open(ctx, []string{dir}, recording.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec := recording.Join(rs)
	return startViewOf(t, func() (serve.Cursor, error) { return rec.Records(ctx) }, viewer.Options{Recording: rec, Context: ctx})
}

// filled waits until the sessions list draws n rows and returns them.
func filled(t *testing.T, p *browsertest.Page, n int) [][]string {
	t.Helper()
	p.WaitFor(t, 30*time.Second, fmt.Sprintf(`document.querySelectorAll("#sessions-list .vrow[data-filled='1']").length === %d`, n))
	return rowsOf(t, p, "sessions-list")
}

// TestViewRecordingsInBrowser: with several recordings the session list has
// a Recording column, sortable, and a filter by recording that the URL
// keeps; the messages' scope and the inspector name the recording.
func TestViewRecordingsInBrowser(t *testing.T) {
	dir, want := fleet(t)
	ts := startViewRecordings(t, dir)
	recOf := map[string]string{}
	all := 0
	var names []string
	for name, ids := range want {
		names = append(names, name)
		for _, id := range ids {
			recOf[id] = name
		}
		all += len(ids)
	}
	slices.Sort(names)
	// The column and the filter name each recording without the directory
	// all of them share, which the filter's note names once.
	label := func(name string) string { return strings.TrimPrefix(name, dir+string(filepath.Separator)) }
	b := browsertest.New(t)
	p := b.NewPage(t)
	// Tall enough that the session list draws every row (it draws only
	// the rows on screen).
	p.Do(t, chromedp.EmulateViewport(1440, 1400))
	p.Navigate(t, ts.URL+"/")
	p.WaitFor(t, 30*time.Second, `document.body.dataset.ready === "true"`)

	t.Run("column", func(t *testing.T) {
		rows := filled(t, p, all)
		for _, r := range rows {
			if len(r) != 9 {
				t.Fatalf("row %v: %d cells, want 9 (Recording second)", r, len(r))
			}
			if w, ok := recOf[r[0]]; !ok || r[1] != label(w) || r[1] == w {
				t.Errorf("session %s: recording %q on the page, written into %q", r[0], r[1], w)
			}
		}
		if got := text(t, p, `#sessions-sort button[data-key="recording"]`); got != "Recording" {
			t.Errorf("the column's header says %q", got)
		}
		axe(t, p, "several recordings")
	})

	t.Run("filter and URL", func(t *testing.T) {
		var opts []string
		p.Eval(t, `[...document.getElementById("rec-select").options].map(o => o.value + "|" + o.textContent)`, &opts)
		if len(opts) != len(want)+1 || !strings.HasPrefix(opts[0], "|All 3 recordings") {
			t.Fatalf("recording filter options %q: want All and the 3 recordings", opts)
		}
		for _, o := range opts[1:] {
			name, text, _ := strings.Cut(o, "|")
			if n := len(want[name]); !strings.HasPrefix(text, fmt.Sprintf("%s: %d sessions, ", label(name), n)) || !strings.Contains(text, " messages") {
				t.Errorf("option %q: want %s with its %d sessions and its messages", text, name, n)
			}
		}
		if note := text(t, p, "#rec-note"); note != "in "+dir+"/" {
			t.Errorf("the filter's note says %q, want the directory", note)
		}
		// The last of the list, chosen with the keyboard.
		pick, _, _ := strings.Cut(opts[len(opts)-1], "|")
		p.Eval(t, `document.getElementById("rec-select").focus(); true`, nil)
		for range len(opts) - 1 {
			p.Do(t, chromedp.KeyEvent(kb.ArrowDown))
		}
		p.WaitFor(t, 30*time.Second, fmt.Sprintf(`document.getElementById("rec-select").value === %q`, pick))
		p.WaitFor(t, 30*time.Second, fmt.Sprintf(`document.getElementById("sessions-caption").textContent.startsWith("%d of %d")`, len(want[pick]), all))
		rows := filled(t, p, len(want[pick]))
		for _, r := range rows {
			if r[1] != label(pick) || recOf[r[0]] != pick {
				t.Errorf("filtered to %s, the list shows %v", pick, r)
			}
		}
		p.WaitFor(t, 30*time.Second, fmt.Sprintf(`new URLSearchParams(location.hash.slice(1)).get("recording") === %q`, pick))
		// A link reopens it: a new page at the same address.
		var href string
		p.Eval(t, `location.href`, &href)
		p2 := b.NewPage(t)
		p2.Do(t, chromedp.EmulateViewport(1440, 1400))
		p2.Navigate(t, href)
		p2.WaitFor(t, 30*time.Second, `document.body.dataset.ready === "true"`)
		var v string
		p2.Eval(t, `document.getElementById("rec-select").value`, &v)
		if v != pick {
			t.Errorf("reopened at %s the filter says %q, want %q", href, v, pick)
		}
		rows = filled(t, p2, len(want[pick]))
		for _, r := range rows {
			if r[1] != label(pick) {
				t.Errorf("reopened filtered to %s, the list shows %v", pick, r)
			}
		}
		// The selected session's recording: in the messages' scope and the inspector.
		click(t, p2, "#sessions-list .vrow[data-row='0']")
		p2.WaitFor(t, 30*time.Second, fmt.Sprintf(`document.getElementById("events-scope").textContent.startsWith(%q)`, "Session "+rows[0][0]+" of recording "+pick+": "))
		click(t, p2, "#events-list .vrow[data-row='0']")
		p2.WaitFor(t, 30*time.Second, `document.getElementById("inspector-h").textContent.includes("#")`)
		var fields map[string]string
		p2.Eval(t, `Object.fromEntries([...document.querySelectorAll("#insp-fields dt")].map(dt => [dt.textContent, dt.nextElementSibling.textContent]))`, &fields)
		if fields["Recording"] != pick || fields["Session"] != rows[0][0] {
			t.Errorf("inspector: session %q of recording %q, want %s of %s", fields["Session"], fields["Recording"], rows[0][0], pick)
		}
		axe(t, p2, "several recordings, filtered, a message selected")
		// Back to all recordings.
		p.Eval(t, `(() => { const s = document.getElementById("rec-select"); s.value = ""; s.dispatchEvent(new Event("change")); return true; })()`, nil)
		filled(t, p, all)
		p.WaitFor(t, 30*time.Second, `!location.hash.includes("recording=")`)
	})

	t.Run("sort by recording", func(t *testing.T) {
		// With the keyboard, as the other headers.
		p.Eval(t, `document.querySelector('#sessions-sort button[data-key="recording"]').focus(); true`, nil)
		p.Do(t, chromedp.KeyEvent(kb.Enter))
		p.WaitFor(t, 30*time.Second, `new URLSearchParams(location.hash.slice(1)).get("sort") === "recording"`)
		p.WaitFor(t, 30*time.Second, `document.querySelector('#sessions-sort button[data-key="recording"]').getAttribute("aria-pressed") === "true"`)
		// Wait for the list drawn in the new order, as below: the URL and
		// the button change before the sorted answer arrives, and on a
		// loaded machine the rows read then were still the old order's.
		p.WaitFor(t, 30*time.Second, fmt.Sprintf(`(() => {
			const got = [...document.querySelectorAll("#sessions-list .vrow[data-filled='1']")].sort((a, b) => a.dataset.row - b.dataset.row).map(r => (r.querySelector(".c-recording") || {}).textContent);
			return got.length === %d && got[0] === "recording "+%q && got[got.length-1] === "recording "+%q && got.every((x, i) => i === 0 || got[i-1] <= x);
		})()`, all, label(names[0]), label(names[len(names)-1])))
		asc := filled(t, p, all)
		col := func(rows [][]string) []string {
			var out []string
			for _, r := range rows {
				out = append(out, r[1])
			}
			return out
		}
		if got := col(asc); !slices.IsSorted(got) || got[0] != label(names[0]) || got[len(got)-1] != label(names[len(names)-1]) {
			t.Errorf("sorted by recording: %q", got)
		}
		click(t, p, `#sessions-sort button[data-key="recording"]`)
		p.WaitFor(t, 30*time.Second, `new URLSearchParams(location.hash.slice(1)).get("sort") === "recording:desc"`)
		// Wait for the list drawn in the new order.
		p.WaitFor(t, 30*time.Second, fmt.Sprintf(`(document.querySelector("#sessions-list .vrow[data-row='0'][data-filled='1'] .c-recording") || {}).textContent === "recording "+%q`, label(names[len(names)-1])))
		desc := col(filled(t, p, all))
		if !slices.IsSortedFunc(desc, func(a, b string) int { return strings.Compare(b, a) }) || desc[0] != label(names[len(names)-1]) {
			t.Errorf("sorted by recording, descending: %q", desc)
		}
	})

	t.Run("phone", func(t *testing.T) {
		pick := names[0]
		p4 := b.NewPage(t)
		p4.Do(t, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile))
		p4.Navigate(t, ts.URL+"/#recording="+url.QueryEscape(pick))
		p4.WaitFor(t, 30*time.Second, `document.body.dataset.ready === "true"`)
		rows := filled(t, p4, len(want[pick]))
		var layout struct {
			Width, ScrollWidth  int
			RecRight, MustRight float64
			RecShown            bool
			Select              string
		}
		p4.Eval(t, `(() => { const r = document.querySelector("#sessions-list .vrow[data-row='0']"), rec = r.querySelector(".c-recording").getBoundingClientRect(), must = r.querySelector(".c-must").getBoundingClientRect();
			return {Width: window.innerWidth, ScrollWidth: document.documentElement.scrollWidth, RecRight: rec.right, MustRight: must.right, RecShown: rec.width > 0, Select: document.getElementById("rec-select").value}; })()`, &layout)
		if layout.ScrollWidth > layout.Width || !layout.RecShown || layout.MustRight > float64(layout.Width) || layout.Select != pick {
			t.Errorf("phone layout: page %d px wide in a %d px screen, Recording column shown %v, MUST ending at %v px, filter %q", layout.ScrollWidth, layout.Width, layout.RecShown, layout.MustRight, layout.Select)
		}
		if rows[0][1] != label(pick) {
			t.Errorf("phone, filtered to %s: the first row is %v", pick, rows[0])
		}
		axe(t, p4, "phone, several recordings")
	})
}
