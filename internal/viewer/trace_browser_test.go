package viewer_test

import (
	"image"
	"image/png"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cdpinput "github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/aaep-tools/aaepkit/internal/golden"
)

// TestTracePaneInBrowser: issue 40's item 3. The legend is the page's
// (readable text), not the drawing's; the drawing fits its box, zooms
// with the buttons, the keys + − 0 and the wheel (at the pointer), and
// moves with a drag; it opens alone (with its legend) and downloads; the
// steps list shows at least eight rows at 1440×900.
func TestTracePaneInBrowser(t *testing.T) {
	rend := renderHelper(t)
	ts := startView(t, demo, rend)
	b, p := readyPage(t, ts.URL)
	p.Eval(t, `window.aaepView.selectSession("sess_eb1273ca151c1c3d")`, nil)
	p.WaitFor(t, 30*time.Second, `document.querySelector("#trace-svg svg g.edge") && document.getElementById("tr-zoom").textContent !== ""`)
	type geom struct {
		BoxW, BoxH, SvgW, SvgH, Left, Top float64
		Zoom                              string
	}
	get := func() geom {
		var g geom
		p.Eval(t, `(() => { const b = document.getElementById("trace-svg"), s = b.querySelector("svg").getBoundingClientRect();
			return {BoxW: b.clientWidth, BoxH: b.clientHeight, SvgW: s.width, SvgH: s.height, Left: b.scrollLeft, Top: b.scrollTop, Zoom: document.getElementById("tr-zoom").textContent}; })()`, &g)
		return g
	}
	var inSVG bool
	p.Eval(t, `document.querySelector("#trace-svg svg").textContent.includes("Legend")`, &inSVG)
	if inSVG {
		t.Error("the page's drawing still holds its legend")
	}
	var legend struct {
		Items int
		Font  float64
	}
	p.Eval(t, `(() => { const d = document.getElementById("trace-legend"); d.open = true; const li = d.querySelectorAll("li");
		return {Items: li.length, Font: parseFloat(getComputedStyle(li[0]).fontSize)}; })()`, &legend)
	if legend.Items < 12 || legend.Font < 11 {
		t.Errorf("the page's legend: %d items, text %v px", legend.Items, legend.Font)
	}
	axe(t, p, "trace pane, legend open")
	p.Eval(t, `(() => { document.getElementById("trace-legend").open = false; return true; })()`, nil)
	p.WaitFor(t, 5*time.Second, `(() => { const b = document.getElementById("trace-svg"), s = b.querySelector("svg").getBoundingClientRect(); return Math.abs(s.width - b.clientWidth) < 3 || Math.abs(s.height - b.clientHeight) < 3; })()`)
	fit := get()
	if fit.SvgW > fit.BoxW+1 || fit.SvgH > fit.BoxH+1 || (fit.SvgW < fit.BoxW-3 && fit.SvgH < fit.BoxH-3) {
		t.Errorf("fitted: the drawing is %v×%v in a box of %v×%v", fit.SvgW, fit.SvgH, fit.BoxW, fit.BoxH)
	}
	var rowsShown int
	p.Eval(t, `Math.floor(document.getElementById("trace-steps").clientHeight / ROW)`, &rowsShown)
	if rowsShown < 8 || fit.BoxH < 120 {
		t.Errorf("at 1440×900 the steps list shows %d rows, the drawing's box is %v px high", rowsShown, fit.BoxH)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1.5 }
	click(t, p, "#tr-in")
	if g := get(); !near(g.SvgW, fit.SvgW*1.25) {
		t.Errorf("Zoom in: %v px wide, want %v", g.SvgW, fit.SvgW*1.25)
	}
	key := func(k string) {
		t.Helper()
		p.Eval(t, `(() => { document.getElementById("trace-svg").focus(); return true; })()`, nil)
		p.Do(t, chromedp.KeyEvent(k))
	}
	key("+")
	if g := get(); !near(g.SvgW, fit.SvgW*1.25*1.25) {
		t.Errorf("+: %v px wide, want %v", g.SvgW, fit.SvgW*1.25*1.25)
	}
	key("-")
	if g := get(); !near(g.SvgW, fit.SvgW*1.25) {
		t.Errorf("−: %v px wide, want %v", g.SvgW, fit.SvgW*1.25)
	}
	key("0")
	if g := get(); !near(g.SvgW, fit.SvgW) || g.Zoom != fit.Zoom {
		t.Errorf("0: %v px wide (%s), want the fitted %v (%s)", g.SvgW, g.Zoom, fit.SvgW, fit.Zoom)
	}
	// The wheel zooms at the pointer: the drawing's point under it stays
	// (along the side that fills the box: the other may be centred).
	var box struct{ X, Y float64 }
	p.Eval(t, `(() => { const r = document.getElementById("trace-svg").getBoundingClientRect(); return {X: r.left, Y: r.top}; })()`, &box)
	wide := fit.SvgW >= fit.BoxW-3
	px, py := box.X+fit.SvgW*0.6, box.Y+fit.SvgH*0.5
	if !wide {
		px, py = box.X+fit.SvgW*0.5, box.Y+fit.SvgH*0.6
	}
	p.Do(t, chromedp.MouseEvent(cdpinput.DispatchMouseEventTypeMouseWheel, px, py, func(pa *cdpinput.DispatchMouseEventParams) {
		pa.DeltaX, pa.DeltaY = 0.1, -300 // both are required, and zero is left out
	}))
	var zoomed geom
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if zoomed = get(); zoomed.SvgW > fit.SvgW*1.2 {
			break
		}
	}
	r := zoomed.SvgW / fit.SvgW
	if r < 1.2 {
		t.Fatalf("the wheel did not zoom in: %v px wide from %v", zoomed.SvgW, fit.SvgW)
	}
	at, scrolled := fit.SvgW*0.6, zoomed.Left
	if !wide {
		at, scrolled = fit.SvgH*0.6, zoomed.Top
	}
	if want := at*r - at; !near(scrolled, want) {
		t.Errorf("zoomed ×%.2f at the pointer: scrolled to %v, want %v (the point under the pointer kept)", r, scrolled, want)
	}
	// A drag moves the drawing: towards its start, which is scrolled out
	// of the box now.
	d := math.Round(min(40, scrolled/2))
	dx, dy := -d, 0.0
	if !wide {
		dx, dy = 0, -d
	}
	p.Do(t, chromedp.MouseEvent(cdpinput.DispatchMouseEventTypeMousePressed, px, py, chromedp.ButtonLeft),
		chromedp.MouseEvent(cdpinput.DispatchMouseEventTypeMouseMoved, px-dx/3, py-dy/3, chromedp.ButtonLeft),

		chromedp.MouseEvent(cdpinput.DispatchMouseEventTypeMouseMoved, px-dx, py-dy, chromedp.ButtonLeft),
		chromedp.MouseEvent(cdpinput.DispatchMouseEventTypeMouseReleased, px-dx, py-dy, chromedp.ButtonLeft))
	if g := get(); !near(g.Left, zoomed.Left+dx) || !near(g.Top, zoomed.Top+dy) {
		t.Errorf("dragged by (%v, %v) px: scrolled from (%v, %v) to (%v, %v)", -dx, -dy, zoomed.Left, zoomed.Top, g.Left, g.Top)
	}
	click(t, p, "#tr-fit")
	if g := get(); !near(g.SvgW, fit.SvgW) || g.Left != 0 || g.Top != 0 {
		t.Errorf("Fit: %v px wide scrolled to (%v, %v), want %v at 0", g.SvgW, g.Left, g.Top, fit.SvgW)
	}
	axe(t, p, "trace pane, zoomed and fitted")
	// Alone in a tab, with its legend; and as a download.
	var links struct{ Open, Target, Download, Name string }
	p.Eval(t, `(() => { const o = document.getElementById("tr-open"), d = document.getElementById("tr-download");
		return {Open: o.href, Target: o.target, Download: d.href, Name: d.getAttribute("download")}; })()`, &links)
	if links.Target != "_blank" || links.Name != "trace-sess_eb1273ca151c1c3d.svg" {
		t.Errorf("links: %+v", links)
	}
	tab := b.NewPage(t)
	tab.Navigate(t, links.Open)
	var alone struct {
		Root   string
		Legend bool
	}
	tab.Eval(t, `({Root: document.documentElement.nodeName, Legend: document.documentElement.textContent.includes("Legend")})`, &alone)
	if alone.Root != "svg" || !alone.Legend {
		t.Errorf("the drawing opened alone: root %q, legend %v", alone.Root, alone.Legend)
	}
	resp, err := http.Get(links.Download)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if cd := resp.Header.Get("Content-Disposition"); !strings.Contains(cd, "attachment") || !strings.Contains(cd, `trace-sess_eb1273ca151c1c3d.svg`) ||
		resp.Header.Get("Content-Type") != "image/svg+xml" || !strings.Contains(string(body), "<svg") {
		t.Errorf("download: %s, %q, %q, %d bytes", resp.Status, cd, resp.Header.Get("Content-Type"), len(body))
	}
	if golden.Updating() {
		// The README's picture of the pane (go test ./internal/viewer -run
		// TestTracePaneInBrowser -update): a step selected, zoomed in to it.
		p.Do(t, chromedp.EmulateViewport(1440, 1000))
		p.Eval(t, `(() => { document.documentElement.style.setProperty("--side-w", "40%"); return true; })()`, nil)
		p.Eval(t, `window.aaepView.selectEvent(46)`, nil)
		p.WaitFor(t, 30*time.Second, `document.querySelector("#trace-svg g.edge.selected-edge") && document.getElementById("inspector-h").textContent.includes("#46")`)
		p.Eval(t, `(() => { drawingZoom.by(1.1 / drawingZoom.scale); const e = document.querySelector("#trace-svg g.edge.selected-edge").getBoundingClientRect(), b = document.getElementById("trace-svg");
			const r = b.getBoundingClientRect(); b.scrollTop += e.top - r.top - b.clientHeight / 2 + e.height / 2; b.scrollLeft += e.left - r.left - b.clientWidth / 2 + e.width / 2;
			document.activeElement.blur(); return true; })()`, nil)
		// The whole viewport, cropped to the pane (a screenshot of an
		// element resizes the viewport, which scrolls the drawing back).
		var rect struct{ X, Y, W, H float64 }
		p.Eval(t, `(() => { const r = document.getElementById("trace").getBoundingClientRect(); return {X: r.left, Y: r.top, W: r.width, H: r.height}; })()`, &rect)
		shot := filepath.Join(t.TempDir(), "page.png")
		screenshot(t, p, shot, "")
		cropPNG(t, shot, filepath.Join("..", "..", "docs", "viewer-trace.png"), image.Rect(int(rect.X), int(rect.Y), int(rect.X+rect.W), int(rect.Y+rect.H)))
	}
}

// cropPNG writes the part r of the PNG at src to dst.
func cropPNG(t *testing.T, src, dst string, r image.Rectangle) {
	t.Helper()
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	sub, ok := img.(interface {
		SubImage(image.Rectangle) image.Image
	})
	if !ok {
		t.Fatalf("%s: %T cannot be cropped", src, img)
	}
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if err := png.Encode(out, sub.SubImage(r.Intersect(img.Bounds()))); err != nil {
		out.Close()
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
