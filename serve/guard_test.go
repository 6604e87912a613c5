package serve

import (
	"net/http"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/timing"
)

// TestOperatorEndpointsAnswerNoOtherPage: with --control, /control and
// /stats answer programs and the server's own origin, not a page of
// another origin (not even its preflight: no CORS, no Private Network
// Access there) unless AllowOrigins names it, and nothing under a Host a
// page chose (DNS rebinding); the subscriber endpoints keep their CORS and
// Private Network Access for any origin.
func TestOperatorEndpointsAnswerNoOtherPage(t *testing.T) {
	path := writeCapture(t, standardRecords())
	_, ts := startServer(t, Options{Open: OpenFile(path), Shared: true, Control: timing.NewController(nil, timing.Config{}, true),
		AllowOrigins: []string{"http://localhost:3000"}})
	host := strings.TrimPrefix(ts.URL, "http://")
	do := func(method, path string, hdr map[string]string, reqHost string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, ts.URL+path, nil)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		if reqHost != "" {
			req.Host = reqHost
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	evil := map[string]string{"Origin": "http://evil.example"}
	preflight := map[string]string{"Origin": "http://evil.example", "Access-Control-Request-Method": "POST", "Access-Control-Request-Private-Network": "true"}
	for _, c := range []struct {
		name, method, path string
		hdr                map[string]string
		host               string
		want               int
	}{
		{"a program", "GET", "/control", nil, "", 200},
		{"a program's step", "POST", "/control/pause", nil, "", 200},
		{"the server's own page", "POST", "/control/pause", map[string]string{"Origin": "http://" + host}, "", 200},
		{"an allowed origin", "POST", "/control/pause", map[string]string{"Origin": "http://localhost:3000"}, "", 200},
		{"another origin's step", "POST", "/control/step", evil, "", 403},
		{"another origin's read", "GET", "/control/log", evil, "", 403},
		{"another origin's stats", "GET", "/stats", evil, "", 403},
		{"another site's tag", "GET", "/stats", map[string]string{"Sec-Fetch-Site": "cross-site"}, "", 403},
		{"another origin's preflight", "OPTIONS", "/control/step", preflight, "", 403},
		{"rebinding", "POST", "/control/step", nil, "rebind.example:" + strings.Split(host, ":")[1], 403},
		{"rebinding, same origin", "GET", "/control", map[string]string{"Origin": "http://rebind.example"}, "rebind.example", 403},
		{"localhost", "GET", "/control", nil, "localhost:" + strings.Split(host, ":")[1], 200},
	} {
		resp := do(c.method, c.path, c.hdr, c.host)
		if resp.StatusCode != c.want {
			t.Errorf("%s: %s %s answered %d, want %d", c.name, c.method, c.path, resp.StatusCode, c.want)
		}
		if c.want == 403 && (resp.Header.Get("Access-Control-Allow-Origin") != "" || resp.Header.Get("Access-Control-Allow-Private-Network") != "") {
			t.Errorf("%s: CORS headers on a refusal: %v", c.name, resp.Header)
		}
	}
	var st ControlStatus
	controlGet(t, ts.URL+"/control", &st)
	if st.StepsPending != 0 || st.Released != 0 {
		t.Errorf("the replay moved: %+v", st)
	}
	// The subscriber endpoints: CORS and Private Network Access for any origin.
	for _, p := range []string{"/aaep/v1/events", "/aaep/v1/subscriptions", "/aaep/v1/replies", "/messages"} {
		resp := do("OPTIONS", p, preflight, "")
		if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != "http://evil.example" || resp.Header.Get("Access-Control-Allow-Private-Network") != "true" {
			t.Errorf("preflight of %s: %d %v", p, resp.StatusCode, resp.Header)
		}
	}
}
