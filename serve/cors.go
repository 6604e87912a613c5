package serve

import (
	"net/http"
	"strings"

	"github.com/aaep-tools/aaepkit/internal/webguard"
)

// corsPolicy answers browsers calling the subscriber endpoints from pages
// on other origins (a web subscriber served by its own dev server, say):
// CORS preflights (with Private Network Access) and
// Access-Control-Allow-Origin on the responses of the endpoints a browser
// subscriber needs (isSubscriberPath), and on no other. A replay server is a
// local test double, so by default any origin may subscribe;
// Options.CORSOrigins restricts that.
type corsPolicy struct {
	origins map[string]bool // nil: any origin
}

// corsAllowHeaders are the request headers a page may always send: the
// JSON body of a reply, credentials, and EventSource's resume header.
var corsAllowHeaders = []string{"Content-Type", "Authorization", "Last-Event-ID"}

const (
	corsAllowMethods = "GET, POST, OPTIONS"
	corsMaxAge       = "600"
)

// NormalizeOrigin checks an origin given for Options.CORSOrigins or
// Options.AllowOrigins and returns it as browsers send it (lower-case scheme
// and host, no trailing slash).
func NormalizeOrigin(origin string) (string, error) { return webguard.NormalizeOrigin(origin) }

func newCORSPolicy(origins []string) (corsPolicy, error) {
	if len(origins) == 0 {
		return corsPolicy{}, nil
	}
	p := corsPolicy{origins: make(map[string]bool, len(origins))}
	for _, o := range origins {
		if o == "*" {
			return corsPolicy{}, nil
		}
		n, err := NormalizeOrigin(o)
		if err != nil {
			return p, err
		}
		p.origins[n] = true
	}
	return p, nil
}

// allows reports whether a page on origin may call the server.
func (p corsPolicy) allows(origin string) bool {
	if p.origins == nil {
		return true
	}
	n, err := NormalizeOrigin(origin)
	return err == nil && p.origins[n]
}

// checkOrigin is the WebSocket upgrader's origin check: requests without an
// Origin (not from a browser) are always allowed.
func (p corsPolicy) checkOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	return origin == "" || p.allows(origin)
}

// handle sets the CORS response headers for r and answers it when it is a
// preflight; it reports whether the request has been answered.
func (p corsPolicy) handle(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	h := w.Header()
	allowed := origin != "" && p.allows(origin)
	switch {
	case allowed:
		// The origin itself rather than "*", so that credentialed requests
		// (EventSource withCredentials, fetch credentials: "include") work.
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Allow-Credentials", "true")
		h.Set("Access-Control-Expose-Headers", "Location")
		h.Add("Vary", "Origin")
	case origin == "" && p.origins == nil:
		h.Set("Access-Control-Allow-Origin", "*")
	case p.origins != nil:
		h.Add("Vary", "Origin")
	}
	if r.Method != http.MethodOptions || r.Header.Get("Access-Control-Request-Method") == "" {
		return false
	}
	// A preflight.
	if !allowed {
		writeJSON(w, http.StatusForbidden, errorBody("origin_not_allowed", "this origin is not in the server's --cors-origin list"))
		return true
	}
	h.Set("Access-Control-Allow-Methods", corsAllowMethods)
	h.Set("Access-Control-Allow-Headers", strings.Join(allowHeaders(r.Header.Get("Access-Control-Request-Headers")), ", "))
	h.Set("Access-Control-Max-Age", corsMaxAge)
	if strings.EqualFold(r.Header.Get("Access-Control-Request-Private-Network"), "true") {
		// Chromium's Private Network Access: a public page calling a
		// loopback server asks first.
		h.Set("Access-Control-Allow-Private-Network", "true")
	}
	w.WriteHeader(http.StatusNoContent)
	return true
}

// allowHeaders returns the headers a preflight allows: the standard ones
// and whatever else the page asked for (the server reads none of them, so
// none can do harm).
func allowHeaders(requested string) []string {
	out := append([]string(nil), corsAllowHeaders...)
	for _, f := range strings.Split(requested, ",") {
		f = strings.TrimSpace(f)
		if f == "" || !validToken(f) {
			continue
		}
		dup := false
		for _, o := range out {
			if strings.EqualFold(o, f) {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, f)
		}
	}
	return out
}

// validToken reports whether s is an HTTP token (a header name).
func validToken(s string) bool {
	for _, c := range []byte(s) {
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return s != ""
}
