// Package webguard keeps web pages from driving a local server: the replay
// control API and the viewer's API, which a page the user happens to visit
// could otherwise call (a form's POST needs no preflight), or read through
// DNS rebinding (a name the page's owner controls, made to resolve to
// 127.0.0.1).
//
// A request passes when both hold:
//
//   - Its Host header names this server: an IP address (a page cannot
//     rebind one), localhost or a name under .localhost, this machine's
//     host name, or a host an allowed origin names. Any other name is one a
//     page chose (rebinding); the port is not compared, so that tunnels and
//     published container ports keep working.
//   - It comes from no other web page: its Origin, when it has one, is the
//     server's own (scheme http and the request's Host) or one of the
//     allowed origins; without an Origin, its Sec-Fetch-Site, when the
//     browser sends one, is same-origin or none (typed by the user). Clients
//     that are not browsers (curl, Go, Python) send neither and pass.
//
// Cross-origin access (CORS, Private Network Access) is another policy, for
// the endpoints a browser subscriber needs; see package serve.
package webguard

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
)

// ErrRefused marks a request refused by a Guard.
var ErrRefused = errors.New("refused")

// Guard checks requests (see the package documentation).
type Guard struct {
	origins map[string]bool // allowed origins, normalized
	hosts   map[string]bool // hosts of the allowed origins, and this machine's name
}

// NormalizeOrigin checks an origin (scheme://host[:port]) and returns it as
// browsers send it: lower-case scheme and host, no trailing slash.
func NormalizeOrigin(origin string) (string, error) {
	u, err := url.Parse(strings.TrimSuffix(origin, "/"))
	if err != nil || u.Scheme == "" || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil || u.Opaque != "" {
		return "", fmt.Errorf("origin %q: want scheme://host[:port], such as http://localhost:3000", origin)
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host), nil
}

// New returns a Guard that also lets pages of the given origins through
// (and requests whose Host names their hosts).
func New(allowOrigins []string) (*Guard, error) {
	g := &Guard{origins: map[string]bool{}, hosts: map[string]bool{}}
	for _, o := range allowOrigins {
		n, err := NormalizeOrigin(o)
		if err != nil {
			return nil, err
		}
		g.origins[n] = true
		u, _ := url.Parse(n)
		g.hosts[u.Hostname()] = true
	}
	if name, err := os.Hostname(); err == nil && name != "" {
		g.hosts[strings.ToLower(name)] = true
	}
	return g, nil
}

// Check returns an error wrapping ErrRefused when r must not be answered.
func (g *Guard) Check(r *http.Request) error {
	if err := g.CheckHost(r); err != nil {
		return err
	}
	origin := r.Header.Get("Origin")
	if origin != "" {
		if n, err := NormalizeOrigin(origin); err == nil && (n == "http://"+strings.ToLower(r.Host) || g.origins[n]) {
			return nil
		}
		return fmt.Errorf("%w: a page of %s may not use this API (only this server's own pages; --allow-origin %s lets it)", ErrRefused, origin, origin)
	}
	switch site := r.Header.Get("Sec-Fetch-Site"); site {
	case "", "same-origin", "none":
		return nil
	default:
		return fmt.Errorf("%w: a request from another site (Sec-Fetch-Site: %s) may not use this API", ErrRefused, site)
	}
}

// CheckHost returns an error wrapping ErrRefused when the Host header of r
// names something other than this server (Check's first half).
func (g *Guard) CheckHost(r *http.Request) error {
	hostport := r.Host
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	switch {
	case host == "":
		return fmt.Errorf("%w: no Host header", ErrRefused)
	case net.ParseIP(host) != nil, host == "localhost", strings.HasSuffix(host, ".localhost"), g.hosts[host]:
		return nil
	}
	return fmt.Errorf("%w: Host %q does not name this server (a name a web page may have pointed here: DNS rebinding); use its address, localhost, or an --allow-origin naming that host", ErrRefused, hostport)
}

// Refuse answers r with 403 and reports true when Check refuses it. A page
// of an allowed origin gets the CORS headers that let it read the answers
// (and a preflight is answered here, reporting true): the origins a user
// named are the only ones that may use the API across origins.
func (g *Guard) Refuse(w http.ResponseWriter, r *http.Request) bool {
	h := w.Header()
	h.Add("Vary", "Origin")
	if err := g.Check(r); err != nil {
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusForbidden)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
		return true
	}
	origin := r.Header.Get("Origin")
	if n, err := NormalizeOrigin(origin); err != nil || !g.origins[n] {
		return false
	}
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Allow-Credentials", "true")
	if r.Method != http.MethodOptions || r.Header.Get("Access-Control-Request-Method") == "" {
		return false
	}
	h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "Content-Type")
	h.Set("Access-Control-Max-Age", "600")
	if strings.EqualFold(r.Header.Get("Access-Control-Request-Private-Network"), "true") {
		h.Set("Access-Control-Allow-Private-Network", "true")
	}
	w.WriteHeader(http.StatusNoContent)
	return true
}
