package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/aaep-tools/aaepkit/internal/testdeps"
	"github.com/aaep-tools/aaepkit/otlpexport"
	"github.com/aaep-tools/aaepkit/protocol/check"
	"github.com/aaep-tools/aaepkit/protocol/models"
	"github.com/aaep-tools/aaepkit/recording"
)

// jaegerBinary is where scripts/testdeps.sh builds Jaeger (AAEP_JAEGER
// overrides it).
func jaegerBinary(t *testing.T) string {
	p := os.Getenv("AAEP_JAEGER")
	if p == "" {
		p = filepath.Join("..", "..", ".cache", "bin", "jaeger")
	}
	return testdeps.File(t, p, "jaeger (github.com/jaegertracing/jaeger/cmd/jaeger v1.76.0, built into .cache/bin by scripts/testdeps.sh; AAEP_JAEGER names another)")
}

// jaegerConfig runs Jaeger with memory storage, an OTLP/HTTP receiver and
// the query API, every port on 127.0.0.1, and nothing else listening.
const jaegerConfig = `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_storage:
    backends:
      mem:
        memory:
          max_traces: 10000
  jaeger_query:
    storage:
      traces: mem
    enable_tracing: false
    max_clock_skew_adjust: 0s
    http:
      endpoint: 127.0.0.1:%d
    grpc:
      endpoint: 127.0.0.1:%d
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
processors:
  batch:
    timeout: 50ms
exporters:
  jaeger_storage_exporter:
    trace_storage: mem
`

func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// startJaeger runs Jaeger on loopback ports and returns its OTLP/HTTP
// endpoint and query API base URL once both answer.
func startJaeger(t *testing.T, bin string) (otlp, query string) {
	t.Helper()
	return startJaegerLimited(t, bin, 0)
}

// startJaegerLimited is startJaeger with the OTLP/HTTP receiver's
// max_request_body_size set to maxBody bytes (0: its default, 20 MiB).
func startJaegerLimited(t *testing.T, bin string, maxBody int) (otlp, query string) {
	t.Helper()
	ports := freePorts(t, 3)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "jaeger.yaml")
	text := fmt.Sprintf(jaegerConfig, ports[0], ports[1], ports[2])
	if maxBody > 0 {
		at := fmt.Sprintf("        endpoint: 127.0.0.1:%d\n", ports[2])
		text = strings.Replace(text, at, at+fmt.Sprintf("        max_request_body_size: %d\n", maxBody), 1)
	}
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--config", cfg)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cancel()
		<-exited
	})
	query = fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	otlpAddr := fmt.Sprintf("127.0.0.1:%d", ports[2])
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("jaeger exited at start: %v\n%s", err, logs.String())
		default:
		}
		ok := false
		if resp, err := http.Get(query + "/api/services"); err == nil {
			resp.Body.Close()
			if c, err := net.DialTimeout("tcp", otlpAddr, time.Second); err == nil {
				c.Close()
				ok = resp.StatusCode == http.StatusOK
			}
		}
		if ok {
			return "http://" + otlpAddr, query
		}
		if time.Now().After(deadline) {
			t.Fatalf("jaeger did not answer in 60s:\n%s", logs.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// The query API's JSON (Jaeger's /api/traces).
type jTrace struct {
	TraceID   string              `json:"traceID"`
	Spans     []jSpan             `json:"spans"`
	Processes map[string]jProcess `json:"processes"`
}

type jSpan struct {
	TraceID       string `json:"traceID"`
	SpanID        string `json:"spanID"`
	OperationName string `json:"operationName"`
	References    []struct {
		RefType string `json:"refType"`
		TraceID string `json:"traceID"`
		SpanID  string `json:"spanID"`
	} `json:"references"`
	StartTime int64  `json:"startTime"`
	Duration  int64  `json:"duration"`
	Tags      []jKV  `json:"tags"`
	Logs      []jLog `json:"logs"`
	ProcessID string `json:"processID"`
}

type jKV struct {
	Key   string `json:"key"`
	Type  string `json:"type"`
	Value any    `json:"value"`
}

type jLog struct {
	Timestamp int64 `json:"timestamp"`
	Fields    []jKV `json:"fields"`
}

type jProcess struct {
	ServiceName string `json:"serviceName"`
	Tags        []jKV  `json:"tags"`
}

func jValue(kvs []jKV, key string) (string, bool) {
	for _, kv := range kvs {
		if kv.Key == key {
			return fmt.Sprint(kv.Value), true
		}
	}
	return "", false
}

// otlpValue is an attribute's value as the query API shows it.
func otlpValue(v *commonpb.AnyValue) string {
	switch x := v.Value.(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_BoolValue:
		return strconv.FormatBool(x.BoolValue)
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_DoubleValue:
		return fmt.Sprint(x.DoubleValue)
	}
	return "" // arrays are written as JSON text: not compared
}

// jaegerID is an id as the query API writes it: hex, a 128-bit trace id
// whose high half is zero written as its low half.
func jaegerID(id []byte) string {
	s := hex.EncodeToString(id)
	if len(id) == 16 && strings.HasPrefix(s, "0000000000000000") {
		return s[16:]
	}
	return s
}

// TestExportOTLPJaeger: the demo recording, a recording aaep-capture made
// of it replayed over WebSocket, and one aaep-capture makes of a producer
// that behaves like the TypeScript reference one (over SSE), exported with
// --format otlp to a real Jaeger, read back through its query API: a trace
// per session, every
// span with its name, parent, times to the microsecond and attributes,
// every event (the findings among them) on its span.
func TestExportOTLPJaeger(t *testing.T) {
	bin := jaegerBinary(t)
	otlp, query := startJaeger(t, bin)
	// A producer that behaves like the TypeScript reference one, recorded
	// live by aaep-capture over SSE (diff_producer_test.go).
	agent := recordAgent(t, t.TempDir(), "agent.aaep", []string{"What is my balance?", "Summarise my week."})
	inputs := []string{demoCapture, filepath.Join("..", "..", "internal", "recdiff", "testdata", "v1.aaep"), agent}
	code, _, stderr := replay(t, append([]string{"export", "--format", "otlp", "--otlp-endpoint", otlp}, inputs...)...)
	if code != 0 {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}

	// What was sent: the same export, in memory.
	recs, err := recording.Open(context.Background(), inputs, recording.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]*tracepb.Span{}
	service := map[string]string{} // span key -> its resource's service.name
	roots := map[string]int{}
	var first, last uint64
	_, err = otlpexport.Export(context.Background(), recs, otlpexport.Options{Check: check.Config{Models: models.All}}, func(r *coltracepb.ExportTraceServiceRequest) error {
		for _, rs := range r.ResourceSpans {
			svc := ""
			for _, kv := range rs.Resource.Attributes {
				if kv.Key == "service.name" {
					svc = kv.Value.GetStringValue()
				}
			}
			for _, s := range rs.ScopeSpans[0].Spans {
				want[jaegerID(s.TraceId)+"/"+jaegerID(s.SpanId)] = s
				service[jaegerID(s.TraceId)+"/"+jaegerID(s.SpanId)] = svc
				if first == 0 || s.StartTimeUnixNano < first {
					first = s.StartTimeUnixNano
				}
				last = max(last, s.EndTimeUnixNano)
				if len(s.ParentSpanId) == 0 {
					roots[jaegerID(s.TraceId)]++
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(roots) != 18 {
		t.Fatalf("the export made %d traces, want 18 (8 sessions in each recording of the demo, 2 of the agent)", len(roots))
	}

	// Jaeger stores what it receives a batch at a time: wait for all.
	var traces []jTrace
	deadline := time.Now().Add(30 * time.Second)
	for {
		// The recordings are older than the query's default lookback (an
		// hour): the window is given.
		traces = nil
		for _, svc := range []string{"travel-assistant", "ts-mock"} {
			traces = append(traces, getTraces(t, fmt.Sprintf("%s/api/traces?service=%s&limit=1000&start=%d&end=%d", query, svc, first/1000-1e6, last/1000+1e6))...)
		}
		n := 0
		for _, tr := range traces {
			n += len(tr.Spans)
		}
		if n == len(want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Jaeger holds %d spans in %d traces after 30s, want %d in %d", n, len(traces), len(want), len(roots))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(traces) != len(roots) {
		t.Fatalf("Jaeger holds %d traces, want %d", len(traces), len(roots))
	}
	sessions := map[string]bool{} // session id @ trace
	findings := 0
	for _, tr := range traces {
		if roots[tr.TraceID] != 1 {
			t.Errorf("trace %s: not one of the export's, or not one root", tr.TraceID)
		}
		for _, js := range tr.Spans {
			s := want[js.TraceID+"/"+js.SpanID]
			if s == nil {
				t.Errorf("span %s/%s %q was not exported", js.TraceID, js.SpanID, js.OperationName)
				continue
			}
			what := fmt.Sprintf("span %q (%s)", s.Name, js.SpanID)
			if js.OperationName != s.Name {
				t.Errorf("%s: operation %q", what, js.OperationName)
			}
			switch {
			case len(s.ParentSpanId) == 0 && len(js.References) != 0:
				t.Errorf("%s: a root with references %v", what, js.References)
			case len(s.ParentSpanId) > 0 && (len(js.References) != 1 || js.References[0].RefType != "CHILD_OF" || js.References[0].SpanID != jaegerID(s.ParentSpanId)):
				t.Errorf("%s: references %v, want CHILD_OF %x", what, js.References, s.ParentSpanId)
			}
			if js.StartTime != int64(s.StartTimeUnixNano/1000) || js.Duration != int64((s.EndTimeUnixNano-s.StartTimeUnixNano)/1000) {
				t.Errorf("%s: start %d µs, duration %d µs; want %d, %d", what, js.StartTime, js.Duration, s.StartTimeUnixNano/1000, (s.EndTimeUnixNano-s.StartTimeUnixNano)/1000)
			}
			for _, kv := range s.Attributes {
				wantV := otlpValue(kv.Value)
				if wantV == "" {
					continue
				}
				if got, ok := jValue(js.Tags, kv.Key); !ok || got != wantV {
					t.Errorf("%s: tag %s = %q (%v), want %q", what, kv.Key, got, ok, wantV)
				}
			}
			if len(s.ParentSpanId) == 0 {
				if id, _ := jValue(js.Tags, "gen_ai.conversation.id"); id != "" {
					sessions[id+"@"+tr.TraceID] = true
				}
			}
			if s.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
				if got, _ := jValue(js.Tags, "otel.status_code"); got != "ERROR" {
					t.Errorf("%s: otel.status_code %q, want ERROR", what, got)
				}
			}
			if p := tr.Processes[js.ProcessID]; p.ServiceName != service[js.TraceID+"/"+js.SpanID] {
				t.Errorf("%s: service %q, want %q", what, p.ServiceName, service[js.TraceID+"/"+js.SpanID])
			} else if name, _ := jValue(p.Tags, "aaep.recording.name"); name != "demo.aaep" && name != "v1.aaep" && name != "agent.aaep" {
				t.Errorf("%s: process tag aaep.recording.name %q", what, name)
			}
			// The query sorts a span's events by name: they are compared
			// as a set, each by its time, name and attributes.
			if len(js.Logs) != len(s.Events) {
				t.Errorf("%s: %d logs, want %d events", what, len(js.Logs), len(s.Events))
				continue
			}
			got := map[string]int{}
			for _, l := range js.Logs {
				got[logKey(l.Timestamp, l.Fields)]++
			}
			for _, ev := range s.Events {
				fields := []jKV{{Key: "event", Value: ev.Name}}
				for _, kv := range ev.Attributes {
					fields = append(fields, jKV{Key: kv.Key, Value: otlpValue(kv.Value)})
				}
				k := logKey(int64(ev.TimeUnixNano/1000), fields)
				if got[k] == 0 {
					t.Errorf("%s: no log %s", what, k)
					continue
				}
				got[k]--
				if ev.Name == "aaep.finding" {
					findings++
				}
			}
		}
	}
	t.Logf("Jaeger %s: %d traces, %d spans, %d findings read back", bin, len(traces), len(want), findings)
	if len(sessions) != 18 {
		t.Errorf("%d traces with a session root, want 18", len(sessions))
	}
	// The demo has 6 findings; v1.aaep (the demo replayed and recorded
	// live) at least as many.
	if findings < 12 {
		t.Errorf("%d findings read back, want at least 12", findings)
	}
}

// logKey is a log's time and fields, sorted, as one text.
func logKey(ts int64, fields []jKV) string {
	var parts []string
	for _, f := range fields {
		parts = append(parts, f.Key+"="+fmt.Sprint(f.Value))
	}
	slices.Sort(parts)
	return fmt.Sprintf("@%d{%s}", ts, strings.Join(parts, ", "))
}

func getTraces(t *testing.T, url string) []jTrace {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	var body struct {
		Data []jTrace `json:"data"`
	}
	dec := json.NewDecoder(resp.Body)
	dec.UseNumber() // tags' numbers as written, not as float64
	if err := dec.Decode(&body); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return body.Data
}

// TestExportOTLPJaegerInvalidUTF8: a session whose ids hold bytes that are
// not UTF-8, exported to a real Jaeger, reads back as U+FFFD where the
// bytes were: the root span invoke_agent ag\uFFFDent, its conversation id
// sess_\uFFFD. (Sent as they were, Jaeger named the span
// invalid-span-name and stored the two strings as base64.)
func TestExportOTLPJaegerInvalidUTF8(t *testing.T) {
	bin := jaegerBinary(t)
	otlp, query := startJaeger(t, bin)
	in := invalidUTF8Recording(t, t.TempDir())
	code, _, stderr := replay(t, "export", "-q", "--format", "otlp", "--otlp-endpoint", otlp, in)
	if code != 0 {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	// The session started 2026-11-02 09:00 UTC; a day either side.
	at := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	url := fmt.Sprintf("%s/api/traces?service=%s&limit=10&start=%d&end=%d", query, neturl.QueryEscape("ag\uFFFDent"),
		at.Add(-24*time.Hour).UnixMicro(), at.Add(24*time.Hour).UnixMicro())
	var traces []jTrace
	for end := time.Now().Add(30 * time.Second); len(traces) == 0 && time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		traces = getTraces(t, url)
	}
	if len(traces) != 1 {
		t.Fatalf("%d traces of service ag\uFFFDent, want 1", len(traces))
	}
	var roots []string
	for _, s := range traces[0].Spans {
		if len(s.References) == 0 {
			conv, _ := jValue(s.Tags, "gen_ai.conversation.id")
			roots = append(roots, s.OperationName+" / "+conv)
		}
	}
	if want := "invoke_agent ag\uFFFDent / sess_\uFFFD"; len(roots) != 1 || roots[0] != want {
		t.Errorf("root spans %q, want [%q]", roots, want)
	}
}

// TestExportOTLPJaegerBodyLimit: a real Jaeger whose receiver takes less
// than a request (max_request_body_size a third of the demo's one
// request) refuses it for its size (a 400, "request body too large"),
// and gets it in parts: every span of the demo reads back through the
// query API, and a warning says requests were refused.
func TestExportOTLPJaegerBodyLimit(t *testing.T) {
	bin := jaegerBinary(t)
	recs, err := recording.Open(context.Background(), []string{demoCapture}, recording.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var reqs []*coltracepb.ExportTraceServiceRequest
	if _, err := otlpexport.Export(context.Background(), recs, otlpexport.Options{Check: check.Config{Models: models.All}}, func(r *coltracepb.ExportTraceServiceRequest) error {
		reqs = append(reqs, r)
		return nil
	}); err != nil || len(reqs) != 1 {
		t.Fatalf("the demo exported as %d requests (%v), want 1", len(reqs), err)
	}
	whole, err := otlpexport.MarshalProto(nil, reqs[0])
	if err != nil {
		t.Fatal(err)
	}
	limit := len(whole) / 3
	want := map[string]bool{}
	var first, last uint64
	for _, s := range reqs[0].ResourceSpans[0].ScopeSpans[0].Spans {
		one, _ := otlpexport.MarshalProto(nil, &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
			Resource: reqs[0].ResourceSpans[0].Resource, ScopeSpans: []*tracepb.ScopeSpans{{Scope: reqs[0].ResourceSpans[0].ScopeSpans[0].Scope, Spans: []*tracepb.Span{s}}},
		}}})
		if len(one) >= limit {
			t.Fatalf("a span alone takes %d bytes, more than the limit of %d", len(one), limit)
		}
		want[jaegerID(s.TraceId)+"/"+jaegerID(s.SpanId)] = true
		if first == 0 || s.StartTimeUnixNano < first {
			first = s.StartTimeUnixNano
		}
		last = max(last, s.EndTimeUnixNano)
	}
	if len(reqs[0].ResourceSpans) != 1 || len(want) != 24 {
		t.Fatalf("the demo's request: %d resources, %d spans; want 1 and 24", len(reqs[0].ResourceSpans), len(want))
	}

	otlp, query := startJaegerLimited(t, bin, limit)
	code, _, stderr := replay(t, "export", "--format", "otlp", "--otlp-endpoint", otlp, demoCapture)
	if code != 0 {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "requests as too large and took them in halves") || !strings.Contains(stderr, "sent in halves)") {
		t.Errorf("no word of the refusals: %q", stderr)
	}
	got := map[string]bool{}
	for end := time.Now().Add(30 * time.Second); len(got) < len(want) && time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		clear(got)
		for _, tr := range getTraces(t, fmt.Sprintf("%s/api/traces?service=travel-assistant&limit=1000&start=%d&end=%d", query, first/1000-1e6, last/1000+1e6)) {
			for _, s := range tr.Spans {
				got[s.TraceID+"/"+s.SpanID] = true
			}
		}
	}
	if len(got) != len(want) {
		t.Fatalf("Jaeger holds %d spans of the demo, want %d", len(got), len(want))
	}
	for k := range want {
		if !got[k] {
			t.Errorf("span %s missing in Jaeger", k)
		}
	}
}
