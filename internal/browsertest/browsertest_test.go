package browsertest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/internal/browsertest"
	"github.com/aaep-tools/aaepkit/internal/headless"
)

// TestBrowserRunsPageAcrossOrigins loads a page from one loopback server that
// fetches from another (a different origin), and checks what the browser
// itself reports: the page's script ran, the cross-origin fetch was allowed
// only where the server answered with CORS headers, and console output and
// exceptions reach the test.
func TestBrowserRunsPageAcrossOrigins(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/open" {
			w.Header().Set("Access-Control-Allow-Origin", "*")
		}
		fmt.Fprint(w, "hello from "+r.URL.Path)
	}))
	defer api.Close()
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><title>t</title><script>
window.api = %q;
console.log("page", "ready");
</script>`, api.URL)
	}))
	defer page.Close()

	b := browsertest.New(t)
	p := b.NewPage(t)
	p.Navigate(t, page.URL)

	var title string
	p.Eval(t, "document.title", &title)
	if title != "t" {
		t.Errorf("document.title = %q, want t", title)
	}
	var open string
	p.Eval(t, "fetch(window.api + '/open').then(r => r.text())", &open)
	if open != "hello from /open" {
		t.Errorf("cross-origin fetch with CORS header = %q", open)
	}
	var closed string
	p.Eval(t, "fetch(window.api + '/closed').then(r => 'allowed', e => 'blocked: ' + e.name)", &closed)
	if closed != "blocked: TypeError" {
		t.Errorf("cross-origin fetch without CORS header = %q, want blocked", closed)
	}

	p.Eval(t, "setTimeout(() => { window.later = 42 }, 50); 0", nil)
	p.WaitFor(t, 10*time.Second, "window.later === 42")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := p.Evaluate(ctx, "(() => { throw new Error('boom') })()", nil)
	var jsErr *headless.JSError
	if !errors.As(err, &jsErr) || !strings.Contains(jsErr.Text, "boom") {
		t.Errorf("thrown exception: err = %v, want a JSError mentioning boom", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(strings.Join(p.Logs(), "\n"), "console.log: page ready") {
		if time.Now().After(deadline) {
			t.Fatalf("console output not collected; logs: %q", p.Logs())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
