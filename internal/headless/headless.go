// Package headless starts a headless Chromium and drives it with chromedp
// (github.com/chromedp/chromedp, the Chrome DevTools Protocol library): the
// part of the browser tests that production code needs too (aaep-replay
// test --page opens web subscribers in it; the viewer's benchmarks drive
// the viewer with it). It does not import the testing package: the test
// helpers that fail or skip a test are internal/browsertest's, on top of it.
//
// The browser is the Debian package `chromium` (scripts/testdeps.sh installs
// it; AAEP_CHROMIUM names another binary). Nothing is downloaded at run time.
// Each Browser runs headless in its own fresh profile directory with the
// flags in Flags.
//
// Typical use:
//
//	b, err := headless.Launch(ctx, headless.Options{}) // Close it when done
//	p, err := b.OpenPage(ctx)                          // one tab
//	err = p.Goto(ctx, pageURL)                         // waits for the load event
//	err = p.Poll(ctx, 20*time.Millisecond, "window.done === true")
//	var got []string
//	err = p.Evaluate(ctx, "window.events", &got)
//	err = p.Run(ctx, chromedp.KeyEvent("n"))           // any chromedp action
package headless

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
)

// Flags are the Chromium switches every Browser is started with, beside a
// fresh --user-data-dir: headless, no sandbox (tests run as root in
// containers), no GPU, and nothing that talks to the network on its own.
var Flags = []string{
	"headless",
	"no-sandbox",
	"disable-gpu",
	"disable-background-networking",
	"disable-component-update",
	"disable-sync",
	"no-first-run",
	"no-default-browser-check",
	"disable-default-apps",
	"disable-extensions",
	"disable-dev-shm-usage",
	"disable-quic",
	"mute-audio",
}

// Options configure Launch. The zero value is ready to use.
type Options struct {
	// Path is the Chromium binary; empty means Find.
	Path string
	// Args are extra switches ("name" or "name=value", without dashes).
	Args []string
	// StartTimeout bounds the wait for the browser to start (default 30s).
	StartTimeout time.Duration
}

// ErrNoChromium is Find's error when no Chromium is there to launch.
var ErrNoChromium = errors.New("headless: no Chromium: $AAEP_CHROMIUM is not set and none of chromium, chromium-browser, google-chrome is on $PATH (install the Debian package chromium, or set AAEP_CHROMIUM to a Chromium binary)")

// Find returns the Chromium binary to use: $AAEP_CHROMIUM if set, else the
// first of chromium, chromium-browser, google-chrome on $PATH. Its error
// names what is missing: ErrNoChromium, or $AAEP_CHROMIUM's value when that
// is not a program.
func Find() (string, error) {
	if p := os.Getenv("AAEP_CHROMIUM"); p != "" {
		if _, err := exec.LookPath(p); err != nil {
			return "", fmt.Errorf("headless: $AAEP_CHROMIUM names %s, which is not a Chromium to run: %w", p, err)
		}
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", ErrNoChromium
}

// Browser is a running headless Chromium. Close stops it and removes its
// profile directory.
type Browser struct {
	ctx         context.Context // the chromedp context of the first tab
	cancel      context.CancelFunc
	allocCancel context.CancelFunc
	dir         string
	closeOnce   sync.Once
}

func allocatorOptions(path, dir string, extra []string) []chromedp.ExecAllocatorOption {
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(path), chromedp.UserDataDir(dir)}
	for _, f := range append(append([]string{}, Flags...), extra...) {
		name, value, ok := strings.Cut(f, "=")
		if ok {
			opts = append(opts, chromedp.Flag(name, value))
		} else {
			opts = append(opts, chromedp.Flag(name, true))
		}
	}
	return opts
}

// Launch starts Chromium. The context bounds only the start; the browser
// runs until Close.
func Launch(ctx context.Context, opts Options) (*Browser, error) {
	path := opts.Path
	if path == "" {
		var err error
		if path, err = Find(); err != nil {
			return nil, err
		}
	}
	if _, err := exec.LookPath(path); err != nil {
		return nil, fmt.Errorf("headless: %s: %w", path, err)
	}
	timeout := opts.StartTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	dir, err := os.MkdirTemp("", "aaep-chromium-*")
	if err != nil {
		return nil, fmt.Errorf("headless: profile directory: %w", err)
	}
	actx, acancel := chromedp.NewExecAllocator(context.Background(), allocatorOptions(path, dir, opts.Args)...)
	bctx, bcancel := chromedp.NewContext(actx)
	b := &Browser{ctx: bctx, cancel: bcancel, allocCancel: acancel, dir: dir}
	sctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := first(sctx, bctx); err != nil {
		b.Close()
		return nil, fmt.Errorf("headless: start %s: %w", path, err)
	}
	return b, nil
}

// Version asks the browser for its product name and version.
func (b *Browser) Version(ctx context.Context) (string, error) {
	c := chromedp.FromContext(b.ctx)
	if c == nil || c.Browser == nil || b.ctx.Err() != nil {
		return "", errors.New("headless: the browser is closed")
	}
	ctx, cancel := joined(b.ctx, ctx)
	defer cancel()
	v, err := chromedp.CallBrowser(ctx, browser.GetVersion, cdp.Empty{})
	if err != nil {
		return "", err
	}
	return v.Product, nil
}

// OpenPage opens a new tab on about:blank, collecting its console output.
func (b *Browser) OpenPage(ctx context.Context) (*Page, error) {
	tctx, cancel := chromedp.NewContext(b.ctx)
	p := &Page{ctx: tctx, cancel: cancel}
	if err := first(ctx, tctx); err != nil { // opens the tab
		cancel()
		return nil, err
	}
	messages := chromedp.Console(tctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			p.log(m)
		}
	}()
	return p, nil
}

// Close quits the browser (killing it if it does not quit) and removes its
// profile directory. It is safe to call more than once.
func (b *Browser) Close() error {
	b.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		_ = chromedp.Cancel(ctx)
		cancel()
		b.cancel()
		b.allocCancel() // kills the process and waits for it
		_ = os.RemoveAll(b.dir)
	})
	return nil
}

// first makes the first chromedp call on c, which starts the browser or
// opens the tab, living as long as c: ctx bounds the wait by watching it,
// not by a deadline on c.
func first(ctx, c context.Context) error {
	done := make(chan error, 1)
	go func() { done <- chromedp.Do(c) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("not ready in time: %w", context.Cause(ctx))
	}
}

// joined returns a context of the chromedp context base that also ends when
// ctx does.
func joined(base, ctx context.Context) (context.Context, context.CancelFunc) {
	c, cancel := context.WithCancelCause(base)
	stop := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	if dl, ok := ctx.Deadline(); ok {
		var tcancel context.CancelFunc
		c, tcancel = context.WithDeadline(c, dl)
		return c, func() { tcancel(); stop(); cancel(nil) }
	}
	return c, func() { stop(); cancel(nil) }
}

// Page is one tab.
type Page struct {
	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	logs   []string
}

func (p *Page) log(m chromedp.ConsoleMessage) {
	line := "console." + string(m.Type) + ": " + m.Text
	if m.IsException() {
		line = "exception: " + m.Text
	} else if m.Source != "" {
		line = "log." + string(m.Type) + " (" + m.Source + "): " + m.Text
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.logs) < 1000 {
		p.logs = append(p.logs, clip(line, 2000))
	}
}

// Logs returns what the page wrote to its console, exceptions that nothing
// caught and browser log entries, in order.
func (p *Page) Logs() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.logs...)
}

// Context is the tab's chromedp context, for chromedp.Run and friends
// (without a deadline: derive one for each call).
func (p *Page) Context() context.Context { return p.ctx }

// Run runs chromedp actions on the tab within ctx.
func (p *Page) Run(ctx context.Context, actions ...chromedp.Action[chromedp.Void]) error {
	c, cancel := joined(p.ctx, ctx)
	defer cancel()
	return chromedp.Do(c, actions...)
}

// Goto loads url and waits for its load event.
func (p *Page) Goto(ctx context.Context, url string) error {
	if err := p.Run(ctx, chromedp.Navigate(url)); err != nil {
		return fmt.Errorf("headless: navigate to %s: %w", url, err)
	}
	return nil
}

// JSError is an exception thrown by evaluated JavaScript.
type JSError struct {
	Text string
}

func (e *JSError) Error() string { return "headless: JavaScript: " + e.Text }

// Evaluate evaluates expr in the page, awaiting it when it is a promise, and
// decodes its JSON value into result (which may be nil).
func (p *Page) Evaluate(ctx context.Context, expr string, result any) error {
	c, cancel := joined(p.ctx, ctx)
	defer cancel()
	raw, err := chromedp.Run(c, chromedp.Evaluate[[]byte](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		var ex *chromedp.ExceptionError
		if errors.As(err, &ex) {
			text := ex.Text
			if ex.Exception != nil {
				text += " " + ex.Exception.Description
			}
			return &JSError{Text: text}
		}
		return fmt.Errorf("headless: evaluate %s: %w", clip(expr, 200), err)
	}
	if result == nil || raw == nil {
		return nil
	}
	if err := json.Unmarshal(raw, result); err != nil {
		return fmt.Errorf("headless: evaluate %s: %w", clip(expr, 200), err)
	}
	return nil
}

// Poll evaluates expr every interval until it is truthy or ctx ends.
func (p *Page) Poll(ctx context.Context, interval time.Duration, expr string) error {
	c, cancel := joined(p.ctx, ctx)
	defer cancel()
	_, err := chromedp.Run(c, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(interval), chromedp.WithPollingTimeout(0)))
	if err != nil {
		return fmt.Errorf("headless: waiting for %s: %w", clip(expr, 300), err)
	}
	return nil
}

// Close closes the tab.
func (p *Page) Close() { p.cancel() }

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
