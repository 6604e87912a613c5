// Package browsertest is the test side of internal/headless: a headless
// Chromium driven with chromedp, so that tests can check what a real browser
// does with our servers (EventSource framing and reconnects, CORS
// preflights, fetch() replies, the viewer's page, its keys and its
// accessibility), with helpers that fail the test on error and a missing
// Chromium reported through internal/testdeps.
//
// Typical use in a test:
//
//	b := browsertest.New(t)                 // closed by t.Cleanup
//	p := b.NewPage(t)                       // one tab
//	p.Navigate(t, pageURL)                  // waits for the load event
//	p.WaitFor(t, 10*time.Second, "window.done === true")
//	var got []string
//	p.Eval(t, "window.events", &got)
//	p.Do(t, chromedp.KeyEvent("n"))         // any chromedp action
//
// A Browser and a Page are headless's, so that the context-taking methods
// returning an error (Page.Goto, Page.Evaluate, Page.Poll, Page.Run) are
// there too, where failure is expected. Production code uses internal/headless
// itself: this package imports testing.
package browsertest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/aaep-tools/aaepkit/internal/headless"
	"github.com/aaep-tools/aaepkit/internal/testdeps"
)

// Browser is a running headless Chromium with test helpers.
type Browser struct{ *headless.Browser }

// Page is one tab with test helpers.
type Page struct{ *headless.Page }

// Options configure the browser NewWith starts.
type Options = headless.Options

// New launches a browser for a test and closes it in t.Cleanup. A browser
// that cannot start fails the test (never skips it): scripts/testdeps.sh
// installs chromium.
func New(t testing.TB) *Browser {
	t.Helper()
	return NewWith(t, Options{})
}

// NewWith is New with Launch's options (extra switches, say).
func NewWith(t testing.TB, opts Options) *Browser {
	t.Helper()
	if _, err := headless.Find(); err != nil {
		testdeps.Missing(t, "chromium (Debian package chromium, or $AAEP_CHROMIUM)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := headless.Launch(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return &Browser{b}
}

// NewPage opens a tab for a test; it is closed with the browser.
func (b *Browser) NewPage(t testing.TB) *Page {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := b.OpenPage(ctx)
	if err != nil {
		t.Fatalf("open page: %v", err)
	}
	return &Page{p}
}

// Navigate loads url within 30 s or fails the test.
func (p *Page) Navigate(t testing.TB, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.Goto(ctx, url); err != nil {
		t.Fatalf("%v\npage log:\n%s", err, p.logText())
	}
}

// Eval evaluates expr (awaiting a promise) into result, or fails the test.
func (p *Page) Eval(t testing.TB, expr string, result any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.Evaluate(ctx, expr, result); err != nil {
		t.Fatalf("%v\npage log:\n%s", err, p.logText())
	}
}

// Do runs chromedp actions (keys, clicks, viewport changes) within 30 s or
// fails the test.
func (p *Page) Do(t testing.TB, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.Run(ctx, actions...); err != nil {
		t.Fatalf("%v\npage log:\n%s", err, p.logText())
	}
}

// WaitFor polls expr until it is truthy, failing the test (with the page's
// log) if that takes longer than timeout.
func (p *Page) WaitFor(t testing.TB, timeout time.Duration, expr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := p.Poll(ctx, 20*time.Millisecond, expr); err != nil {
		t.Fatalf("%v\npage log:\n%s", err, p.logText())
	}
}

func (p *Page) logText() string {
	logs := p.Logs()
	if len(logs) == 0 {
		return "(empty)"
	}
	return strings.Join(logs, "\n")
}
