package main

import (
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/otlpexport"
)

func TestExportOTLPUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--format", "zipkin"}, `--format "zipkin"`},
		{[]string{"--format", "otlp"}, "needs --otlp-endpoint"},
		{[]string{"--format", "otlp", "--otlp-endpoint", "localhost:4318"}, "want http://HOST:PORT"},
		{[]string{"--format", "otlp", "--otlp-endpoint", "http://127.0.0.1:4318", "-o", "x.json"}, "-o goes with --format otlp-json"},
		{[]string{"--format", "otlp", "--otlp-endpoint", "http://127.0.0.1:4318", "--otlp-header", "novalue"}, "--otlp-header"},
		{[]string{"--format", "otlp-json", "--otlp-endpoint", "http://127.0.0.1:4318"}, "go with --format otlp"},
		{[]string{"--format", "otlp-json", "--with-meta"}, "--with-meta and --sent go with --format jsonl"},
		{[]string{"--otlp-endpoint", "http://127.0.0.1:4318"}, "go with --format otlp or otlp-json"},
		{[]string{"--otlp-batch-spans", "100"}, "go with --format otlp or otlp-json"},
		{[]string{"--format", "otlp-json", "--otlp-batch-spans", "-1"}, `"-1" for "--otlp-batch-spans" flag: want 0 (the format's default) or a positive whole number`},
		{[]string{"--format", "otlp-json", "--disable", "NO-SUCH-RULE"}, "NO-SUCH-RULE"},
	} {
		code, _, stderr := replay(t, append(append([]string{"export"}, tc.args...), demoCapture)...)
		if code != cli.ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d saying %q", tc.args, code, stderr, cli.ExitUsage, tc.want)
		}
	}
}

// TestExportOTLPJSON: --format otlp-json -o F writes what the package
// exports, one request a line, readable with the official types.
func TestExportOTLPJSON(t *testing.T) {
	out := filepath.Join(t.TempDir(), "demo.otlp.jsonl")
	code, _, stderr := replay(t, "export", "--format", "otlp-json", "-o", out, demoCapture)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "exported 8 sessions as 8 traces") {
		t.Errorf("summary: %q", stderr)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var traces, findings int
	err = otlpexport.ReadJSON(f, func(r *coltracepb.ExportTraceServiceRequest) error {
		for _, rs := range r.ResourceSpans {
			for _, s := range rs.ScopeSpans[0].Spans {
				if len(s.ParentSpanId) == 0 {
					traces++
				}
				for _, ev := range s.Events {
					if ev.Name == "aaep.finding" {
						findings++
					}
				}
			}
		}
		return nil
	})
	if err != nil || traces != 8 || findings != 6 {
		t.Errorf("read back %d traces, %d findings (%v); want 8, 6", traces, findings, err)
	}
}

// TestExportOTLPSend: --format otlp posts to a receiver on 127.0.0.1 with
// the headers asked; a server that is no OTLP receiver is an error naming
// it (exit 1).
func TestExportOTLPSend(t *testing.T) {
	rv, url := startOTLPReceiver(t)
	code, _, stderr := replay(t, "export", "--format", "otlp", "--otlp-endpoint", url, "--otlp-header", "Authorization=Bearer t0k", demoCapture)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	reqs, auth, errs := rv.received()
	spans := 0
	for _, req := range reqs {
		for _, rs := range req.ResourceSpans {
			spans += len(rs.ScopeSpans[0].Spans)
		}
	}
	if spans != 24 || len(errs) > 0 || len(auth) == 0 || auth[len(auth)-1] != "Bearer t0k" {
		t.Errorf("received %d spans with Authorization %q (errors %q); want 24 and the header", spans, auth, errs)
	}
	// The demo's 24 spans go as one request by default, in requests of
	// about 5 (whole traces) with --otlp-batch-spans 5; the summary says
	// how many.
	if len(reqs) != 1 || !strings.Contains(stderr, url+"/v1/traces in 1 request, ") {
		t.Errorf("%d requests by default, want 1; summary %q", len(reqs), stderr)
	}
	code, _, stderr = replay(t, "export", "--format", "otlp", "--otlp-endpoint", url, "--otlp-batch-spans", "5", demoCapture)
	if code != 0 {
		t.Fatalf("--otlp-batch-spans 5: exit %d: %s", code, stderr)
	}
	all, _, _ := rv.received()
	n := len(all) - len(reqs)
	if n < 4 || n > 8 || !strings.Contains(stderr, fmt.Sprintf(" in %d requests, ", n)) {
		t.Errorf("--otlp-batch-spans 5: %d requests, want 4 to 8 for 24 spans in 8 traces, and the summary to say so: %q", n, stderr)
	}
	code, _, stderr = replay(t, "export", "--format", "otlp", "--otlp-endpoint", url+"/elsewhere", demoCapture)
	if code != cli.ExitFailure || !strings.Contains(stderr, url+"/elsewhere/v1/traces") || !strings.Contains(stderr, "404") {
		t.Errorf("wrong endpoint: exit %d, stderr %q", code, stderr)
	}
}

// TestExportOTLPBadInput: a torn capture exports what was read and exits
// 2 saying INCOMPLETE (0 with --allow-incomplete); a file that is no
// capture exits 2 naming it.
func TestExportOTLPBadInput(t *testing.T) {
	dir := t.TempDir()
	demo, err := os.ReadFile(demoCapture)
	if err != nil {
		t.Fatal(err)
	}
	torn := filepath.Join(dir, "torn.aaep")
	bad := filepath.Join(dir, "bad.aaep")
	os.WriteFile(torn, demo[:len(demo)/2], 0o644)
	os.WriteFile(bad, []byte("garbage\n"), 0o644)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{torn}, cli.ExitUsage, "INCOMPLETE: " + torn + ": the capture ends in a torn record"},
		{[]string{"--allow-incomplete", torn}, 0, "INCOMPLETE"},
		{[]string{bad}, cli.ExitUsage, bad + ": neither a capture file nor JSON lines"},
	} {
		out := filepath.Join(dir, "out.json")
		os.Remove(out)
		code, _, stderr := replay(t, append([]string{"export", "--format", "otlp-json", "-o", out}, tc.args...)...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d saying %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
}

// TestExportOTLPInvalidUTF8: a recording whose payloads hold bytes that
// are not UTF-8 (a session id, an agent id) exports all the same, in both
// encodings, those bytes written as U+FFFD: protojson refused the whole
// request, and a receiver refuses a protobuf message holding such a
// string (proto.Unmarshal here does).
func TestExportOTLPInvalidUTF8(t *testing.T) {
	dir := t.TempDir()
	in := invalidUTF8Recording(t, dir)
	out := filepath.Join(dir, "out.otlp.jsonl")
	code, _, stderr := replay(t, "export", "-q", "--format", "otlp-json", "-o", out, in)
	if code != 0 {
		t.Fatalf("otlp-json: exit %d: %s", code, stderr)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var fromJSON []string
	if err := otlpexport.ReadJSON(f, func(r *coltracepb.ExportTraceServiceRequest) error {
		fromJSON = append(fromJSON, agentAndSession(r)...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{"ag\uFFFDent", "sess_\uFFFD"}
	if strings.Join(fromJSON, "|") != strings.Join(want, "|") {
		t.Errorf("otlp-json: agent and session %q, want %q", fromJSON, want)
	}

	rv, url := startOTLPReceiver(t)
	code, _, stderr = replay(t, "export", "-q", "--format", "otlp", "--otlp-endpoint", url, in)
	reqs, _, errs := rv.received()
	if code != 0 || len(errs) > 0 {
		t.Fatalf("otlp: exit %d, receiver errors %q: %s", code, errs, stderr)
	}
	var fromProto []string
	for _, req := range reqs {
		fromProto = append(fromProto, agentAndSession(req)...)
	}
	if strings.Join(fromProto, "|") != strings.Join(want, "|") {
		t.Errorf("otlp: agent and session %q, want %q", fromProto, want)
	}
}

// otlpReceiver is an OTLP/HTTP receiver on 127.0.0.1 that decodes each
// request with the official types (which refuse a string that is not
// UTF-8), answering 400 with the decoder's error, and 404 off the traces
// path.
type otlpReceiver struct {
	mu sync.Mutex
	// maxSpans, when above 0, refuses a request of more spans with 413.
	maxSpans int
	reqs     []*coltracepb.ExportTraceServiceRequest
	auth     []string // each request's Authorization header
	errs     []string
}

func startOTLPReceiver(t *testing.T) (*otlpReceiver, string) {
	rv := &otlpReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != otlpexport.TracesPath {
			http.NotFound(w, r)
			return
		}
		rv.mu.Lock()
		defer rv.mu.Unlock()
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			rv.errs = append(rv.errs, err.Error())
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		raw, _ := io.ReadAll(zr)
		req := &coltracepb.ExportTraceServiceRequest{}
		if err := proto.Unmarshal(raw, req); err != nil {
			rv.errs = append(rv.errs, err.Error())
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if n := spanTotal(req); rv.maxSpans > 0 && n > rv.maxSpans {
			http.Error(w, fmt.Sprintf("%d spans: too large", n), http.StatusRequestEntityTooLarge)
			return
		}
		rv.reqs = append(rv.reqs, req)
		rv.auth = append(rv.auth, r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(srv.Close)
	return rv, srv.URL
}

// received returns what the receiver took and the errors it answered.
func (rv *otlpReceiver) received() (reqs []*coltracepb.ExportTraceServiceRequest, auth, errs []string) {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	return rv.reqs, rv.auth, rv.errs
}

// invalidUTF8Recording writes a JSON Lines recording to dir of one
// session start whose session_id (sess_\xff\xfe) and agent_id (ag\xffent)
// hold bytes that are not UTF-8, and returns its path.
func invalidUTF8Recording(t *testing.T, dir string) string {
	t.Helper()
	in := filepath.Join(dir, "bad-utf8.jsonl")
	line := "{\"@context\":\"https://aaep-protocol.org/context/v1\",\"type\":\"aaep:agent.session.started\",\"event_id\":\"evt_1\"," +
		"\"session_id\":\"sess_\xff\xfe\",\"timestamp\":\"2026-11-02T09:00:00.000Z\",\"producer\":{\"agent_id\":\"ag\xffent\",\"agent_version\":\"1\"}," +
		"\"aaep_version\":\"1.0.0\",\"sequence_number\":1,\"summary_normal\":\"Started.\"}\n"
	if err := os.WriteFile(in, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	return in
}

// agentAndSession returns gen_ai.agent.id and gen_ai.conversation.id of
// the root spans of r, in order.
func agentAndSession(r *coltracepb.ExportTraceServiceRequest) []string {
	var out []string
	for _, rs := range r.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				if len(s.ParentSpanId) != 0 {
					continue
				}
				var agent, conv string
				for _, kv := range s.Attributes {
					switch kv.Key {
					case "gen_ai.agent.id":
						agent = kv.Value.GetStringValue()
					case "gen_ai.conversation.id":
						conv = kv.Value.GetStringValue()
					}
				}
				out = append(out, agent, conv)
			}
		}
	}
	return out
}

func spanTotal(req *coltracepb.ExportTraceServiceRequest) int {
	n := 0
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			n += len(ss.Spans)
		}
	}
	return n
}

// TestExportOTLPTooLarge: a receiver that refuses large requests with 413
// gets them in halves, every span once; a warning names it and the flag
// that avoids it, and the summary counts the requests split.
func TestExportOTLPTooLarge(t *testing.T) {
	rv, url := startOTLPReceiver(t)
	rv.mu.Lock()
	rv.maxSpans = 7
	rv.mu.Unlock()
	code, _, stderr := replay(t, "export", "--format", "otlp", "--otlp-endpoint", url, demoCapture)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	reqs, _, errs := rv.received()
	total := 0
	for _, r := range reqs {
		if spanTotal(r) > 7 {
			t.Errorf("a request of %d spans was taken", spanTotal(r))
		}
		total += spanTotal(r)
	}
	if total != 24 || len(errs) > 0 {
		t.Errorf("received %d spans (errors %q), want the demo's 24", total, errs)
	}
	for _, want := range []string{"warning: " + url + "/v1/traces refused", "requests as too large and took them in halves", "--otlp-batch-spans (this export's: 8192)", fmt.Sprintf(" in %d requests, ", len(reqs)), "sent in halves)"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q does not say %q", stderr, want)
		}
	}
}
