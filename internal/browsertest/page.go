package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Page is one browser tab, attached as a flattened DevTools session.
type Page struct {
	b       *Browser
	target  string
	session string

	mu   sync.Mutex
	logs []string
	subs map[string][]chan json.RawMessage
}

// Call sends a DevTools command to this page's session (for example
// "Page.captureScreenshot") and decodes its result into result (may be nil).
func (p *Page) Call(ctx context.Context, method string, params, result any) error {
	return p.b.conn.call(ctx, p.session, method, params, result)
}

// Subscribe delivers the parameters of every later DevTools event named
// method (for example "Network.responseReceived"; enable its domain first)
// until cancel is called. Events that find the buffer of 256 full are dropped.
func (p *Page) Subscribe(method string) (events <-chan json.RawMessage, cancel func()) {
	ch := make(chan json.RawMessage, 256)
	p.mu.Lock()
	if p.subs == nil {
		p.subs = make(map[string][]chan json.RawMessage)
	}
	p.subs[method] = append(p.subs[method], ch)
	p.mu.Unlock()
	return ch, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		list := p.subs[method]
		for i, c := range list {
			if c == ch {
				p.subs[method] = append(list[:i:i], list[i+1:]...)
				break
			}
		}
	}
}

// event is called by the connection's read loop for this session's events.
func (p *Page) event(e eventMsg) {
	if line := logLine(e); line != "" {
		p.mu.Lock()
		p.logs = append(p.logs, line)
		p.mu.Unlock()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, ch := range p.subs[e.Method] {
		select {
		case ch <- e.Params:
		default:
		}
	}
}

// Logs returns what the page printed so far: console calls, uncaught
// exceptions and browser log entries (CORS and network errors appear there),
// one line each.
func (p *Page) Logs() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.logs...)
}

// Goto navigates to url and waits for the page's load event.
func (p *Page) Goto(ctx context.Context, url string) error {
	loaded, cancel := p.Subscribe("Page.loadEventFired")
	defer cancel()
	var nav struct {
		ErrorText string `json:"errorText"`
	}
	if err := p.Call(ctx, "Page.navigate", map[string]any{"url": url}, &nav); err != nil {
		return err
	}
	if nav.ErrorText != "" {
		return fmt.Errorf("browsertest: navigate to %s: %s", url, nav.ErrorText)
	}
	select {
	case <-loaded:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("browsertest: waiting for %s to load: %w", url, context.Cause(ctx))
	}
}

// JSError is a JavaScript exception thrown by an evaluated expression.
type JSError struct {
	Expr string
	Text string
}

func (e *JSError) Error() string {
	return fmt.Sprintf("browsertest: evaluating %q: %s", clip(e.Expr, 80), e.Text)
}

// Evaluate runs a JavaScript expression in the page, awaits it if it is a
// promise, and decodes its JSON value into result (which may be nil). A
// thrown exception is returned as a *JSError.
func (p *Page) Evaluate(ctx context.Context, expr string, result any) error {
	var r struct {
		Result struct {
			Type  string          `json:"type"`
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception *struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	params := map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}
	if err := p.Call(ctx, "Runtime.evaluate", params, &r); err != nil {
		return err
	}
	if d := r.ExceptionDetails; d != nil {
		text := d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			text = d.Exception.Description
		}
		return &JSError{Expr: expr, Text: text}
	}
	if result == nil || len(r.Result.Value) == 0 {
		return nil
	}
	if err := json.Unmarshal(r.Result.Value, result); err != nil {
		return fmt.Errorf("browsertest: evaluating %q: decode %s: %w", clip(expr, 80), clip(string(r.Result.Value), 200), err)
	}
	return nil
}

// Poll evaluates expr every interval until it is truthy, an evaluation
// fails, or ctx ends.
func (p *Page) Poll(ctx context.Context, interval time.Duration, expr string) error {
	if interval <= 0 {
		interval = 20 * time.Millisecond
	}
	for {
		var ok bool
		if err := p.Evaluate(ctx, "!!("+expr+")", &ok); err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("browsertest: waiting for %q: %w", clip(expr, 80), context.Cause(ctx))
		case <-time.After(interval):
		}
	}
}

// Close closes the tab.
func (p *Page) Close(ctx context.Context) error {
	err := p.b.Call(ctx, "Target.closeTarget", map[string]any{"targetId": p.target}, nil)
	p.b.conn.removeSession(p.session)
	return err
}

// logLine turns console, exception and log events into one readable line.
func logLine(e eventMsg) string {
	switch e.Method {
	case "Runtime.consoleAPICalled":
		var v struct {
			Type string `json:"type"`
			Args []struct {
				Value       json.RawMessage `json:"value"`
				Description string          `json:"description"`
			} `json:"args"`
		}
		if json.Unmarshal(e.Params, &v) != nil {
			return ""
		}
		parts := make([]string, 0, len(v.Args))
		for _, a := range v.Args {
			var s string
			if json.Unmarshal(a.Value, &s) == nil {
				parts = append(parts, s)
			} else if len(a.Value) > 0 {
				parts = append(parts, string(a.Value))
			} else {
				parts = append(parts, a.Description)
			}
		}
		return "console." + v.Type + ": " + strings.Join(parts, " ")
	case "Runtime.exceptionThrown":
		var v struct {
			Details struct {
				Text      string `json:"text"`
				Exception *struct {
					Description string `json:"description"`
				} `json:"exception"`
			} `json:"exceptionDetails"`
		}
		if json.Unmarshal(e.Params, &v) != nil {
			return ""
		}
		if v.Details.Exception != nil {
			return "exception: " + v.Details.Exception.Description
		}
		return "exception: " + v.Details.Text
	case "Log.entryAdded":
		var v struct {
			Entry struct {
				Level string `json:"level"`
				Text  string `json:"text"`
				URL   string `json:"url"`
			} `json:"entry"`
		}
		if json.Unmarshal(e.Params, &v) != nil {
			return ""
		}
		return "log." + v.Entry.Level + ": " + v.Entry.Text + " " + v.Entry.URL
	}
	return ""
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
