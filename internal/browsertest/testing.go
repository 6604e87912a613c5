package browsertest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/aaep-tools/aaepkit/internal/testdeps"
)

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
	if _, err := Find(); err != nil {
		testdeps.Missing(t, "chromium (Debian package chromium, or $AAEP_CHROMIUM)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := Launch(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
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
	return p
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
