package main

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/internal/cli"
)

func TestViewCommand(t *testing.T) {
	dir := t.TempDir()
	src, recs := fileopsCapture(t, dir, "src.aaep")
	s := startServe(t, "view", src, "--listen", "127.0.0.1:0")
	if !strings.Contains(s.errb.String(), "viewing "+src+" at http://"+s.addr+"/") {
		t.Errorf("stderr %q does not say where the page is", s.errb.String())
	}
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get("http://" + s.addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/"); code != 200 || !strings.Contains(body, `<main id="panes">`) || !strings.Contains(body, "/assets/app.js") {
		t.Errorf("GET /: %d %.200s", code, body)
	}
	code, body := get("/api/capture")
	var c struct{ Records int64 }
	if code != 200 || json.Unmarshal([]byte(body), &c) != nil || c.Records != int64(len(recs)) {
		t.Errorf("GET /api/capture: %d %.300s; want %d records", code, body, len(recs))
	}
	// The replay's endpoints share the port; view starts paused.
	code, body = get("/control")
	if code != 200 || !strings.Contains(body, `"state":"waiting"`) {
		t.Errorf("GET /control: %d %.300s", code, body)
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Errorf("GET /healthz: %d", code)
	}
	if code := s.stop(t); code != 0 {
		t.Errorf("view exited %d after Ctrl-C", code)
	}

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no file", []string{"view"}, "view needs the capture FILE"},
		{"missing file", []string{"view", filepath.Join(dir, "nope.aaep"), "--listen", "127.0.0.1:0"}, "no such file"},
		{"bad profile", []string{"view", src, "--profile", "loose"}, "--profile"},
		{"bad protocol", []string{"view", src, "--protocol", "smtp"}, "--protocol"},
		{"paused without shared", []string{"view", src, "--shared=false", "--paused"}, "--paused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := replay(t, tc.args...)
			if code != cli.ExitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tc.want)
			}
		})
	}
}
