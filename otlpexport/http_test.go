package otlpexport

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/aaep-tools/aaepkit/protocol/check"
	"github.com/aaep-tools/aaepkit/protocol/models"
)

// receiver is an OTLP/HTTP receiver on 127.0.0.1 that decodes what it is
// sent with the official types and answers as told.
type receiver struct {
	mu      sync.Mutex
	reqs    []*coltracepb.ExportTraceServiceRequest
	headers []http.Header
	calls   int
	// answer returns the status to answer call n (from 1) with: 0 takes
	// the request, -1 says answer wrote the answer itself.
	answer func(n int, w http.ResponseWriter) int
	// maxSpans, when above 0, refuses a request of more spans with 413
	// (Content Too Large), as a receiver with a small body limit does.
	maxSpans int
	as400    bool // refuse with the Collector's 400, not 413
	refused  int
	bytes    int64 // of the requests taken, as sent
	errs     []string
}

func (rv *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	rv.calls++
	if r.URL.Path != TracesPath || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	if rv.answer != nil {
		// A code below 0: the answer is written already.
		if code := rv.answer(rv.calls, w); code > 0 {
			w.WriteHeader(code)
			return
		} else if code < 0 {
			return
		}
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		rv.errs = append(rv.errs, "content type "+ct)
	}
	if r.Header.Get("Content-Encoding") != "gzip" {
		rv.errs = append(rv.errs, "not gzip")
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		rv.errs = append(rv.errs, err.Error())
		return
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		rv.errs = append(rv.errs, err.Error())
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		rv.errs = append(rv.errs, err.Error())
		return
	}
	req := &coltracepb.ExportTraceServiceRequest{}
	if err := proto.Unmarshal(raw, req); err != nil {
		rv.errs = append(rv.errs, err.Error())
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if rv.maxSpans > 0 && spanCount(req) > rv.maxSpans {
		rv.refused++
		if rv.as400 {
			// As an OpenTelemetry Collector answers past its limit.
			b, _ := proto.Marshal(&status.Status{Code: 3, Message: "http: request body too large"})
			w.Header().Set("Content-Type", "application/x-protobuf")
			w.WriteHeader(http.StatusBadRequest)
			w.Write(b)
			return
		}
		http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
		return
	}
	rv.reqs = append(rv.reqs, req)
	rv.headers = append(rv.headers, r.Header.Clone())
	rv.bytes += int64(len(body))
	ans, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(ans)
}

func serve(t *testing.T, rv *receiver) string {
	t.Helper()
	srv := httptest.NewServer(rv)
	t.Cleanup(srv.Close)
	return srv.URL
}

// sendDemo exports the demo through a Client to url.
func sendDemo(t *testing.T, c *Client, batch int) (*Stats, error) {
	t.Helper()
	opts := Options{Check: check.Config{Models: models.All}, BatchSpans: batch}
	return Export(context.Background(), open(t, demo), opts, func(r *coltracepb.ExportTraceServiceRequest) error {
		return c.Send(context.Background(), r)
	})
}

// TestSendDecoded: what the client posts decodes with the official types
// into the very traces the export made, headers included.
func TestSendDecoded(t *testing.T) {
	rv := &receiver{}
	url, err := TracesURL(serve(t, rv))
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	if err := ParseHeader(h, "Authorization=Bearer abc=def"); err != nil {
		t.Fatal(err)
	}
	c := &Client{URL: url, Header: h}
	st, err := sendDemo(t, c, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(rv.errs) > 0 {
		t.Fatalf("receiver: %v", rv.errs)
	}
	if int64(len(rv.reqs)) != st.Requests || st.Requests < 2 {
		t.Fatalf("%d requests received, %d sent", len(rv.reqs), st.Requests)
	}
	for _, h := range rv.headers {
		if h.Get("Authorization") != "Bearer abc=def" {
			t.Fatalf("header Authorization %q", h.Get("Authorization"))
		}
	}
	want, _ := export(t, Options{BatchSpans: 10}, demo)
	got, exp := spans(rv.reqs), spans(want)
	if len(got) != len(exp) {
		t.Fatalf("%d spans received, %d exported", len(got), len(exp))
	}
	for i := range got {
		if !proto.Equal(got[i], exp[i]) {
			t.Fatalf("span %d received differs from the one exported", i)
		}
	}
}

// TestRetry: 429, 502, 503 and 504 are tried again (a Retry-After is
// honoured), until the receiver takes the request or the attempts run out.
func TestRetry(t *testing.T) {
	for _, code := range []int{429, 502, 503, 504} {
		rv := &receiver{answer: func(n int, w http.ResponseWriter) int {
			if n <= 2 {
				if code == 429 {
					w.Header().Set("Retry-After", "1")
				}
				return code
			}
			return 0
		}}
		url, _ := TracesURL(serve(t, rv))
		c := &Client{URL: url, Backoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond}
		if _, err := sendDemo(t, c, 0); err != nil {
			t.Fatalf("%d: %v", code, err)
		}
		if rv.calls != 3 || len(rv.reqs) != 1 {
			t.Errorf("%d: %d calls, %d requests taken; want 3 and 1", code, rv.calls, len(rv.reqs))
		}
	}
	rv := &receiver{answer: func(int, http.ResponseWriter) int { return 503 }}
	url, _ := TracesURL(serve(t, rv))
	c := &Client{URL: url, Attempts: 3, Backoff: time.Millisecond}
	_, err := sendDemo(t, c, 0)
	if err == nil || !strings.Contains(err.Error(), url) || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "3 attempts") {
		t.Errorf("always 503: %v", err)
	}
	if rv.calls != 3 {
		t.Errorf("always 503: %d calls, want 3", rv.calls)
	}
}

// TestWrongEndpoint: an endpoint that is not an OTLP receiver, or not
// there, gives an error naming it, without retrying what cannot change.
func TestWrongEndpoint(t *testing.T) {
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html>hello</html>")
	}))
	defer html.Close()
	bad := &receiver{answer: func(_ int, w http.ResponseWriter) int {
		w.Header().Set("Content-Type", "application/x-protobuf")
		b, _ := proto.Marshal(&status.Status{Code: 3, Message: "span is broken"})
		w.WriteHeader(400)
		w.Write(b)
		return -1
	}}
	badURL := serve(t, bad)
	// A port nothing listens on: listen, note it, close.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	rv := &receiver{}
	wrongPath := serve(t, rv) + "/somewhere/else/v1/trace"
	for _, tc := range []struct {
		name, endpoint, want string
		calls                *int
	}{
		{"html", html.URL, "not an OTLP response", nil},
		{"400 with status", badURL, "span is broken", &bad.calls},
		{"refused", closed, "cannot reach OTLP endpoint", nil},
		{"404", wrongPath, "is it an OTLP/HTTP receiver", &rv.calls},
	} {
		url, err := TracesURL(tc.endpoint)
		if err != nil {
			t.Fatal(err)
		}
		c := &Client{URL: url, Attempts: 2, Backoff: time.Millisecond}
		_, err = sendDemo(t, c, 0)
		if err == nil || !strings.Contains(err.Error(), url) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %s and saying %q", tc.name, err, url, tc.want)
		}
		if tc.calls != nil && *tc.calls != 1 {
			t.Errorf("%s: tried %d times, want once", tc.name, *tc.calls)
		}
	}
}

func TestTracesURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:4318":           "http://127.0.0.1:4318/v1/traces",
		"http://127.0.0.1:4318/":          "http://127.0.0.1:4318/v1/traces",
		"https://otel.example/otlp":       "https://otel.example/otlp/v1/traces",
		"http://127.0.0.1:4318/v1/traces": "http://127.0.0.1:4318/v1/traces",
	} {
		got, err := TracesURL(in)
		if err != nil || got != want {
			t.Errorf("TracesURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"127.0.0.1:4318", "grpc://x:4317", "http://", "::"} {
		if _, err := TracesURL(in); err == nil {
			t.Errorf("TracesURL(%q) accepted", in)
		}
	}
	for _, in := range []string{"novalue", "=v", "a b=c", "k=v\r\nX: y"} {
		if err := ParseHeader(http.Header{}, in); err == nil {
			t.Errorf("ParseHeader(%q) accepted", in)
		}
	}
}

// TestHalves: a request split in two holds every span once, in order,
// each under its own resource and scope, the first half the smaller, and
// leaves the request as it was.
func TestHalves(t *testing.T) {
	reqs, _ := export(t, Options{BatchSpans: 1 << 20}, demo)
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	whole := reqs[0]
	// A second resource, so that a cut can fall in either.
	var more []*tracepb.Span
	for _, s := range spans(reqs)[:5] {
		more = append(more, proto.Clone(s).(*tracepb.Span))
	}
	two := &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{whole.ResourceSpans[0], {
		Resource:   &resourcepb.Resource{Attributes: []*commonpb.KeyValue{kvStr("service.name", "other")}},
		ScopeSpans: []*tracepb.ScopeSpans{{Scope: whole.ResourceSpans[0].ScopeSpans[0].Scope, Spans: more}},
	}}}
	for name, req := range map[string]*coltracepb.ExportTraceServiceRequest{"one resource": whole, "two resources": two} {
		before := proto.Clone(req)
		all := spans([]*coltracepb.ExportTraceServiceRequest{req})
		owner := resourceOf(req)
		var parts []*coltracepb.ExportTraceServiceRequest
		queue := []*coltracepb.ExportTraceServiceRequest{req}
		for len(queue) > 0 { // halve down to requests of one span
			r := queue[0]
			queue = queue[1:]
			if spanCount(r) < 2 {
				parts = append(parts, r)
				continue
			}
			a, b := halves(r)
			if na, nb := spanCount(a), spanCount(b); na != spanCount(r)/2 || na+nb != spanCount(r) {
				t.Fatalf("%s: %d spans halved into %d and %d", name, spanCount(r), na, nb)
			}
			queue = append([]*coltracepb.ExportTraceServiceRequest{a, b}, queue...)
		}
		got := spans(parts)
		if len(got) != len(all) {
			t.Fatalf("%s: %d spans after halving, want %d", name, len(got), len(all))
		}
		for i := range got {
			if got[i] != all[i] {
				t.Fatalf("%s: span %d out of place", name, i)
			}
		}
		for _, p := range parts {
			for s, res := range resourceOf(p) {
				if owner[s] != res {
					t.Fatalf("%s: span %x moved to another resource", name, s.SpanId)
				}
			}
		}
		// Growing a half does not write over the other's spans.
		a, b := halves(req)
		first := spans([]*coltracepb.ExportTraceServiceRequest{b})[0]
		a.ResourceSpans[0].ScopeSpans[0].Spans = append(a.ResourceSpans[0].ScopeSpans[0].Spans, &tracepb.Span{Name: "extra"})
		if spans([]*coltracepb.ExportTraceServiceRequest{b})[0] != first || !proto.Equal(req, before) {
			t.Fatalf("%s: a half grown wrote over the request", name)
		}
	}
}

func resourceOf(req *coltracepb.ExportTraceServiceRequest) map[*tracepb.Span]*resourcepb.Resource {
	m := map[*tracepb.Span]*resourcepb.Resource{}
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				m[s] = rs.Resource
			}
		}
	}
	return m
}

// TestSendSplits: a request whose encoding is over MaxRequestBytes, or
// that the receiver refuses with 413, is sent in parts that deliver every
// span once; a 413 lowers the bound for what follows; a span the
// receiver refuses on its own is an error saying so.
func TestSendSplits(t *testing.T) {
	want := spans(mustExport(t, Options{BatchSpans: 1 << 20}))

	rv := &receiver{}
	url, _ := TracesURL(serve(t, rv))
	c := &Client{URL: url, MaxRequestBytes: 4 << 10}
	if _, err := sendDemo(t, c, 1<<20); err != nil {
		t.Fatal(err)
	}
	if len(rv.errs) > 0 || c.Split == 0 || len(rv.reqs) != 1+c.Split || c.TooLarge != 0 || c.Bytes != rv.bytes {
		t.Fatalf("over MaxRequestBytes: %d requests, %d split, %d refused as too large, %d bytes counted of %d taken, errors %v", len(rv.reqs), c.Split, c.TooLarge, c.Bytes, rv.bytes, rv.errs)
	}
	for i, r := range rv.reqs {
		if n, _ := MarshalProto(nil, r); len(n) > c.MaxRequestBytes && spanCount(r) > 1 {
			t.Errorf("request %d: %d bytes of %d spans, over the bound", i, len(n), spanCount(r))
		}
	}
	sameSpans(t, "over MaxRequestBytes", spans(rv.reqs), want)

	for _, as400 := range []bool{false, true} {
		name := "413"
		if as400 {
			name = "400 request body too large"
		}
		rv = &receiver{maxSpans: 5, as400: as400}
		url, _ = TracesURL(serve(t, rv))
		c = &Client{URL: url, Attempts: 2, Backoff: time.Millisecond}
		if _, err := sendDemo(t, c, 1<<20); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if rv.refused == 0 || c.TooLarge != rv.refused || c.MaxRequestBytes == 0 || c.MaxRequestBytes >= DefaultMaxRequestBytes || c.Bytes != rv.bytes {
			t.Fatalf("%s: %d refused, %d counted, bound %d, %d bytes counted of %d taken", name, rv.refused, c.TooLarge, c.MaxRequestBytes, c.Bytes, rv.bytes)
		}
		sameSpans(t, name, spans(rv.reqs), want)
	}

	// A receiver that refuses every request, one of a single span too.
	rv = &receiver{answer: func(int, http.ResponseWriter) int { return http.StatusRequestEntityTooLarge }}
	url, _ = TracesURL(serve(t, rv))
	c = &Client{URL: url, Attempts: 2, Backoff: time.Millisecond}
	_, err := sendDemo(t, c, 1<<20)
	if err == nil || !strings.Contains(err.Error(), "413") || !strings.Contains(err.Error(), "a request of one span") || !strings.Contains(err.Error(), url) {
		t.Errorf("a span too large: %v", err)
	}
}

func mustExport(t *testing.T, opts Options) []*coltracepb.ExportTraceServiceRequest {
	t.Helper()
	reqs, _ := export(t, opts, demo)
	return reqs
}

// sameSpans fails t unless got holds the spans of want, in order.
func sameSpans(t *testing.T, name string, got, want []*tracepb.Span) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d spans received, %d exported", name, len(got), len(want))
	}
	for i := range got {
		if !proto.Equal(got[i], want[i]) {
			t.Fatalf("%s: span %d received differs from the one exported", name, i)
		}
	}
}
