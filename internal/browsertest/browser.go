// Package browsertest starts a headless Chromium and drives it over the Chrome
// DevTools Protocol (CDP), so that tests can check what a real browser does
// with our servers: EventSource framing and reconnects, CORS preflights,
// fetch() replies, pages of the viewer.
//
// The browser is the Debian package `chromium` (scripts/testdeps.sh installs
// it; AAEP_CHROMIUM names another binary). Nothing is downloaded at run time.
// Each Browser runs in its own fresh profile directory with the flags the
// team's guide requires, and the CDP client is a small one of our own over
// gorilla/websocket.
//
// Typical use in a test:
//
//	b := browsertest.New(t)                 // closed by t.Cleanup
//	p := b.NewPage(t)                       // one tab
//	p.Navigate(t, pageURL)                  // waits for the load event
//	p.WaitFor(t, 10*time.Second, "window.done === true")
//	var got []string
//	p.Eval(t, "window.events", &got)
//
// Every method has a context-taking variant returning an error (Launch,
// Browser.OpenPage, Page.Goto, Page.Evaluate, Page.Poll) for use outside
// tests or where failure is expected.
package browsertest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Flags are the Chromium flags every Browser is started with (beside a fresh
// --user-data-dir and the DevTools port): headless, no sandbox (tests run as
// root in containers), and nothing that talks to the network on its own.
var Flags = []string{
	"--headless",
	"--no-sandbox",
	"--disable-gpu",
	"--disable-quic",
	"--no-first-run",
	"--disable-background-networking",
	"--disable-component-update",
	"--disable-sync",
	"--disable-dev-shm-usage",
	"--disable-default-apps",
	"--disable-extensions",
	"--mute-audio",
	"--no-default-browser-check",
}

// Options configure Launch. The zero value is ready to use.
type Options struct {
	// Path is the Chromium binary; empty means Find.
	Path string
	// Args are extra command-line flags, after Flags.
	Args []string
	// StartTimeout bounds the wait for the DevTools endpoint (default 30s).
	StartTimeout time.Duration
}

// Find returns the Chromium binary to use: $AAEP_CHROMIUM if set, else the
// first of chromium, chromium-browser, google-chrome on $PATH.
func Find() (string, error) {
	if p := os.Getenv("AAEP_CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("browsertest: no chromium on $PATH (run scripts/testdeps.sh, or set AAEP_CHROMIUM)")
}

// Browser is a running headless Chromium with a DevTools connection.
// Close stops it and removes its profile directory.
type Browser struct {
	cmd     *exec.Cmd
	dir     string
	conn    *conn
	waited  chan struct{} // closed when the process has exited
	stderr  *tail
	closeMu sync.Mutex
	closed  bool
}

// Launch starts Chromium and connects to its DevTools endpoint. The context
// bounds only the start; the browser runs until Close.
func Launch(ctx context.Context, opts Options) (*Browser, error) {
	path := opts.Path
	if path == "" {
		var err error
		if path, err = Find(); err != nil {
			return nil, err
		}
	}
	timeout := opts.StartTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	dir, err := os.MkdirTemp("", "aaep-chromium-*")
	if err != nil {
		return nil, fmt.Errorf("browsertest: profile directory: %w", err)
	}
	args := append(append([]string{}, Flags...), opts.Args...)
	args = append(args,
		"--user-data-dir="+dir,
		"--remote-debugging-address=127.0.0.1",
		"--remote-debugging-port=0",
		"about:blank",
	)
	cmd := exec.Command(path, args...)
	setProcessGroup(cmd)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("browsertest: %w", err)
	}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("browsertest: start %s: %w", path, err)
	}
	b := &Browser{cmd: cmd, dir: dir, waited: make(chan struct{}), stderr: &tail{max: 64 << 10}}

	// Chromium prints "DevTools listening on ws://..." on stderr once the
	// endpoint is up; everything else it prints is kept for error messages.
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if u, ok := strings.CutPrefix(line, "DevTools listening on "); ok {
				select {
				case found <- strings.TrimSpace(u):
				default:
				}
				continue
			}
			b.stderr.add(line)
		}
		_, _ = io.Copy(io.Discard, pipe)
	}()
	go func() {
		_ = cmd.Wait()
		close(b.waited)
	}()

	sctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var wsURL string
	select {
	case wsURL = <-found:
	case <-b.waited:
		b.cleanup()
		return nil, fmt.Errorf("browsertest: %s exited before its DevTools endpoint was up; its stderr:\n%s", path, b.stderr.String())
	case <-sctx.Done():
		b.kill()
		return nil, fmt.Errorf("browsertest: no DevTools endpoint from %s within %v: %w; its stderr:\n%s", path, timeout, context.Cause(sctx), b.stderr.String())
	}
	c, err := dial(sctx, wsURL)
	if err != nil {
		b.kill()
		return nil, fmt.Errorf("browsertest: connect to DevTools at %s: %w", wsURL, err)
	}
	b.conn = c
	return b, nil
}

// Call sends a browser-level DevTools command (for example
// "Target.getTargets") and decodes its result into result (which may be nil).
func (b *Browser) Call(ctx context.Context, method string, params, result any) error {
	return b.conn.call(ctx, "", method, params, result)
}

// OpenPage opens a new tab on about:blank, with the Page and Runtime domains
// enabled and console output collected.
func (b *Browser) OpenPage(ctx context.Context) (*Page, error) {
	var created struct {
		TargetID string `json:"targetId"`
	}
	if err := b.Call(ctx, "Target.createTarget", map[string]any{"url": "about:blank"}, &created); err != nil {
		return nil, err
	}
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.Call(ctx, "Target.attachToTarget", map[string]any{"targetId": created.TargetID, "flatten": true}, &attached); err != nil {
		return nil, err
	}
	p := &Page{b: b, target: created.TargetID, session: attached.SessionID}
	b.conn.addSession(p.session, p.event)
	for _, m := range []string{"Page.enable", "Runtime.enable", "Log.enable"} {
		if err := p.Call(ctx, m, nil, nil); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Stderr returns the last lines Chromium printed on stderr, for diagnostics.
func (b *Browser) Stderr() string { return b.stderr.String() }

// Close asks the browser to quit, kills it (with its child processes) if it
// has not within a few seconds, and removes its profile directory. It is safe
// to call more than once.
func (b *Browser) Close() error {
	b.closeMu.Lock()
	defer b.closeMu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	if b.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = b.conn.call(ctx, "", "Browser.close", nil, nil)
		cancel()
		b.conn.close()
	}
	select {
	case <-b.waited:
	case <-time.After(5 * time.Second):
	}
	b.kill()
	return nil
}

// kill stops the whole process group, waits for the main process and removes
// the profile directory.
func (b *Browser) kill() {
	killProcess(b.cmd)
	select {
	case <-b.waited:
	case <-time.After(10 * time.Second):
	}
	b.cleanup()
}

func (b *Browser) cleanup() {
	killProcess(b.cmd) // renderers and helpers share the group
	_ = os.RemoveAll(b.dir)
}

// tail keeps the last max bytes of lines written to it.
type tail struct {
	mu    sync.Mutex
	max   int
	lines []string
	size  int
}

func (t *tail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	t.size += len(line) + 1
	for t.size > t.max && len(t.lines) > 1 {
		t.size -= len(t.lines[0]) + 1
		t.lines = t.lines[1:]
	}
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, "\n")
}

// eventMsg is a DevTools event delivered to a page.
type eventMsg struct {
	Method string
	Params json.RawMessage
}
