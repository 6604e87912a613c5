package webguard

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	g, err := New([]string{"HTTP://Dev.Example:3000/"})
	if err != nil {
		t.Fatal(err)
	}
	name, _ := os.Hostname()
	for _, c := range []struct {
		name, host, origin, site string
		ok                       bool
	}{
		{"curl", "127.0.0.1:8765", "", "", true},
		{"localhost", "localhost:8765", "", "", true},
		{"a .localhost name", "view.localhost:8765", "", "", true},
		{"IPv6", "[::1]:8765", "", "", true},
		{"another port (a tunnel)", "127.0.0.1:9000", "", "", true},
		{"this machine's name", strings.ToUpper(name) + ":8765", "", "", name != ""},
		{"the page itself", "127.0.0.1:8765", "http://127.0.0.1:8765", "same-origin", true},
		{"the page itself, GET", "127.0.0.1:8765", "", "same-origin", true},
		{"typed by the user", "127.0.0.1:8765", "", "none", true},
		{"an allowed origin", "127.0.0.1:8765", "http://dev.example:3000", "cross-site", true},
		{"an allowed origin's host", "dev.example:8765", "", "", true},
		{"another page's POST", "127.0.0.1:8765", "http://localhost:5173", "same-site", false},
		{"another port of the same host", "127.0.0.1:8765", "http://127.0.0.1:3000", "same-site", false},
		{"a sandboxed page", "127.0.0.1:8765", "null", "cross-site", false},
		{"an image or script tag", "127.0.0.1:8765", "", "cross-site", false},
		{"a same-site tag", "127.0.0.1:8765", "", "same-site", false},
		{"DNS rebinding", "rebind.example:8765", "", "same-origin", false},
		{"DNS rebinding, POST", "rebind.example:8765", "http://rebind.example:8765", "same-origin", false},
		{"no Host", "", "", "", false},
	} {
		r := httptest.NewRequest(http.MethodPost, "/control/step", nil)
		r.Host = c.host
		if c.origin != "" {
			r.Header.Set("Origin", c.origin)
		}
		if c.site != "" {
			r.Header.Set("Sec-Fetch-Site", c.site)
		}
		err := g.Check(r)
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrRefused)) {
			t.Errorf("%s: Check = %v, want ok %v", c.name, err, c.ok)
		}
	}
}

// TestRefuse: a refusal is 403 with a JSON error; an allowed origin gets
// the CORS headers and its preflight answered; the server's own pages and
// other clients get no CORS headers at all.
func TestRefuse(t *testing.T) {
	g, err := New([]string{"http://dev.example:3000"})
	if err != nil {
		t.Fatal(err)
	}
	do := func(method, origin string, hdr map[string]string) (*httptest.ResponseRecorder, bool) {
		r := httptest.NewRequest(method, "http://127.0.0.1:8765/control/step", nil)
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		for k, v := range hdr {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		return w, g.Refuse(w, r)
	}
	w, done := do(http.MethodPost, "http://evil.example", nil)
	if !done || w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), `"error"`) || w.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("another origin: %v %d %q %v", done, w.Code, w.Body.String(), w.Header())
	}
	w, done = do(http.MethodOptions, "http://evil.example", map[string]string{"Access-Control-Request-Method": "POST", "Access-Control-Request-Private-Network": "true"})
	if !done || w.Code != http.StatusForbidden || w.Header().Get("Access-Control-Allow-Private-Network") != "" {
		t.Errorf("another origin's preflight: %v %d %v", done, w.Code, w.Header())
	}
	w, done = do(http.MethodPost, "http://dev.example:3000", nil)
	if done || w.Header().Get("Access-Control-Allow-Origin") != "http://dev.example:3000" {
		t.Errorf("allowed origin: %v %v", done, w.Header())
	}
	w, done = do(http.MethodOptions, "http://dev.example:3000", map[string]string{"Access-Control-Request-Method": "POST", "Access-Control-Request-Private-Network": "true"})
	if !done || w.Code != http.StatusNoContent || w.Header().Get("Access-Control-Allow-Private-Network") != "true" {
		t.Errorf("allowed origin's preflight: %v %d %v", done, w.Code, w.Header())
	}
	w, done = do(http.MethodPost, "http://127.0.0.1:8765", nil)
	if done || w.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("own page: %v %v", done, w.Header())
	}
	if _, err := New([]string{"dev.example:3000"}); err == nil {
		t.Error("an origin without a scheme was accepted")
	}
}
