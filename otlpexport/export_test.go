package otlpexport

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/aaep-tools/aaepkit/internal/golden"
	"github.com/aaep-tools/aaepkit/protocol/check"
	"github.com/aaep-tools/aaepkit/protocol/models"
	"github.com/aaep-tools/aaepkit/recording"
)

// demo is the bundled multi-session capture: 8 sessions, tool calls,
// confirmations, clarifications, streaming output and 6 MUST findings.
var demo = filepath.Join("..", "testdata", "demo.aaep")

func open(t testing.TB, names ...string) []*recording.Recording {
	t.Helper()
	recs, err := recording.Open(context.Background(), names, recording.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// export exports names and returns the requests emitted.
func export(t testing.TB, opts Options, names ...string) ([]*coltracepb.ExportTraceServiceRequest, *Stats) {
	t.Helper()
	if opts.Check.Models == nil {
		opts.Check = check.Config{Models: models.All}
	}
	var reqs []*coltracepb.ExportTraceServiceRequest
	st, err := Export(context.Background(), open(t, names...), opts, func(r *coltracepb.ExportTraceServiceRequest) error {
		reqs = append(reqs, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return reqs, st
}

// spans lists every span of reqs with its resource's service.name.
func spans(reqs []*coltracepb.ExportTraceServiceRequest) []*tracepb.Span {
	var out []*tracepb.Span
	for _, r := range reqs {
		for _, rs := range r.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				out = append(out, ss.Spans...)
			}
		}
	}
	return out
}

func attr(s *tracepb.Span, key string) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			v := kv.Value
			switch {
			case v.GetStringValue() != "":
				return v.GetStringValue()
			default:
				b, _ := json.Marshal(v.GetValue())
				return string(b)
			}
		}
	}
	return ""
}

func TestGoldenDemo(t *testing.T) {
	reqs, st := export(t, Options{Version: "test"}, demo)
	var buf bytes.Buffer
	for _, r := range reqs {
		b, err := MarshalJSON(r)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("\n")) {
			t.Fatal("a request spans several lines")
		}
		// The golden file is indented for a readable diff; the line
		// written is its compact form.
		if err := json.Indent(&buf, b, "", " "); err != nil {
			t.Fatal(err)
		}
		buf.WriteByte('\n')
	}
	golden.Check(t, filepath.Join("testdata", "demo.otlp.json"), buf.Bytes())
	if st.Traces != 8 || st.Findings != 6 || st.Messages != 108 {
		t.Errorf("stats %+v, want 8 traces, 6 findings, 108 messages", st)
	}
}

// TestMapping checks the shape of the demo's traces: one per session, a
// root invoke_agent span per trace whose children point at it, tool and
// wait spans, the findings on the spans they concern.
func TestMapping(t *testing.T) {
	reqs, st := export(t, Options{}, demo)
	all := spans(reqs)
	if int64(len(all)) != st.Spans {
		t.Fatalf("%d spans emitted, stats say %d", len(all), st.Spans)
	}
	roots := map[string]*tracepb.Span{}
	sessions := map[string]bool{}
	for _, s := range all {
		if len(s.ParentSpanId) == 0 {
			if roots[string(s.TraceId)] != nil {
				t.Fatalf("two roots in trace %x", s.TraceId)
			}
			roots[string(s.TraceId)] = s
			if s.Name != "invoke_agent travel-assistant" || attr(s, "gen_ai.operation.name") != "invoke_agent" || attr(s, "gen_ai.agent.id") != "travel-assistant" {
				t.Errorf("root %q attributes %v", s.Name, s.Attributes)
			}
			sessions[attr(s, "gen_ai.conversation.id")] = true
		}
	}
	if len(roots) != 8 || len(sessions) != 8 {
		t.Fatalf("%d roots for %d sessions, want 8 each", len(roots), len(sessions))
	}
	var tools, confirms, clarifies, findings int
	for _, s := range all {
		if len(s.TraceId) != 16 || len(s.SpanId) != 8 {
			t.Fatalf("span %q ids %x %x", s.Name, s.TraceId, s.SpanId)
		}
		if s.EndTimeUnixNano < s.StartTimeUnixNano || s.StartTimeUnixNano == 0 {
			t.Errorf("span %q times %d..%d", s.Name, s.StartTimeUnixNano, s.EndTimeUnixNano)
		}
		if len(s.ParentSpanId) > 0 {
			r := roots[string(s.TraceId)]
			if r == nil || !bytes.Equal(r.SpanId, s.ParentSpanId) {
				t.Errorf("span %q: parent %x is not its trace's root", s.Name, s.ParentSpanId)
			}
		}
		switch {
		case strings.HasPrefix(s.Name, "execute_tool "):
			tools++
			if attr(s, "gen_ai.tool.name") != strings.TrimPrefix(s.Name, "execute_tool ") || attr(s, "gen_ai.tool.call.id") == "" {
				t.Errorf("tool span %q attributes %v", s.Name, s.Attributes)
			}
		case s.Name == "await_confirmation":
			confirms++
			if d := attr(s, "aaep.confirmation.decision"); d != "accept" && d != "reject" {
				t.Errorf("confirmation without decision: %v", s.Attributes)
			}
		case s.Name == "await_clarification":
			clarifies++
		}
		for _, ev := range s.Events {
			if ev.Name != "aaep.finding" {
				continue
			}
			findings++
			rule := ev.Attributes[0].Value.GetStringValue()
			if rule == "EVT-URGENCY-CRITICAL" && s.Name != "await_confirmation" {
				t.Errorf("%s is about an awaiting.confirmation, found on %q", rule, s.Name)
			}
			if s.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR {
				t.Errorf("span %q has a producer MUST (%s) but status %v", s.Name, rule, s.Status)
			}
		}
	}
	// The demo: 10 invocations (two completions have none), 4
	// confirmations, 2 clarifications, 6 findings.
	if tools != 10 || confirms != 4 || clarifies != 2 || findings != 6 {
		t.Errorf("%d tool, %d confirmation, %d clarification spans, %d findings; want 10, 4, 2, 6", tools, confirms, clarifies, findings)
	}
}

// TestDeterministic: two exports of a recording are equal, ids included,
// and the ids of the traces differ from each other.
func TestDeterministic(t *testing.T) {
	a, _ := export(t, Options{}, demo)
	b, _ := export(t, Options{BatchSpans: 1}, demo)
	sa, sb := spans(a), spans(b)
	if len(sa) != len(sb) || len(sb) == 0 {
		t.Fatalf("%d and %d spans", len(sa), len(sb))
	}
	ids := map[string]bool{}
	for i := range sa {
		if !proto.Equal(sa[i], sb[i]) {
			t.Fatalf("span %d differs between two exports:\n%v\n%v", i, sa[i], sb[i])
		}
		k := string(sa[i].TraceId) + string(sa[i].SpanId)
		if ids[k] {
			t.Fatalf("span id %x used twice", sa[i].SpanId)
		}
		ids[k] = true
	}
	if len(b) < 8 {
		t.Errorf("BatchSpans 1 made %d requests, want one per trace at least", len(b))
	}
	// A copy under another name is the same recording: the same ids.
	data, err := os.ReadFile(demo)
	if err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(t.TempDir(), "renamed.aaep")
	if err := os.WriteFile(cp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	c, _ := export(t, Options{}, cp)
	for i, s := range spans(c) {
		if !bytes.Equal(s.TraceId, sa[i].TraceId) || !bytes.Equal(s.SpanId, sa[i].SpanId) {
			t.Fatalf("span %d of a renamed copy has other ids", i)
		}
	}
	// Another recording of the same sessions (the demo replayed and
	// recorded again) gets other trace ids.
	d, _ := export(t, Options{}, filepath.Join("..", "internal", "recdiff", "testdata", "v1.aaep"))
	for _, s := range spans(d) {
		for _, o := range sa {
			if bytes.Equal(s.TraceId, o.TraceId) {
				t.Fatalf("two recordings share trace id %x", s.TraceId)
			}
		}
	}
}

// TestPrivacy: by default no text of the recording and no reply token is
// exported; --include-text adds the text (never the tokens).
func TestPrivacy(t *testing.T) {
	for _, include := range []bool{false, true} {
		reqs, _ := export(t, Options{IncludeText: include}, demo)
		var buf bytes.Buffer
		for _, r := range reqs {
			b, _ := MarshalJSON(r)
			buf.Write(b)
		}
		out := buf.String()
		if strings.Contains(out, "rpl_") {
			t.Errorf("include-text %v: a reply token is exported", include)
		}
		for _, text := range []string{"Booking a return flight", "Your flight is booked", "Do you need a roll-in shower", "LIS to OSL"} {
			if strings.Contains(out, text) != include {
				t.Errorf("include-text %v: %q exported: %v", include, text, !include)
			}
		}
	}
}

func TestJSONRoundTrip(t *testing.T) {
	reqs, _ := export(t, Options{}, demo)
	for _, r := range reqs {
		b, err := MarshalJSON(r)
		if err != nil {
			t.Fatal(err)
		}
		var back coltracepb.ExportTraceServiceRequest
		if err := UnmarshalJSON(b, &back); err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(r, &back) {
			t.Fatal("OTLP JSON does not read back equal")
		}
		// Ids are hexadecimal, as OTLP JSON wants them.
		first := spans([]*coltracepb.ExportTraceServiceRequest{r})[0]
		if !bytes.Contains(b, []byte(`"traceId":"`+hex.EncodeToString(first.TraceId)+`"`)) {
			t.Fatalf("trace id %x not written in hexadecimal", first.TraceId)
		}
	}
	if err := UnmarshalJSON([]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"zz"}]}]}]}`), &coltracepb.ExportTraceServiceRequest{}); err == nil {
		t.Error("a trace id that is not hexadecimal was accepted")
	}
}

// TestReplayStreams: a recording of a replay gives a trace per
// subscription's copy of a session, named by its stream.
func TestReplayStreams(t *testing.T) {
	reqs, st := export(t, Options{}, filepath.Join("..", "internal", "recdiff", "testdata", "sub-good.aaep"))
	if st.Traces != 1 {
		t.Fatalf("%d traces, want 1", st.Traces)
	}
	root := spans(reqs)[0]
	if attr(root, "aaep.stream") == "" || attr(root, "gen_ai.conversation.id") != "sess_a1" {
		t.Errorf("root attributes %v", root.Attributes)
	}
}

// TestStreamFindings: a finding that concerns no session (a line that is
// not JSON) lands in a trace of its own, root "aaep.stream", with Error
// status for a producer's MUST; a session the recording cuts short ends
// at its last message, complete=false.
func TestStreamFindings(t *testing.T) {
	lines := `{"type":"aaep:agent.session.started","event_id":"evt_1","session_id":"sess_1","timestamp":"2026-11-02T09:00:00.000Z","producer":{"agent_id":"a1"},"aaep_version":"1.0.0","urgency":"normal","sequence_number":0,"summary_normal":"Hello"}
{"type":"aaep:agent.state.changed","event_id":"evt_2","session_id":"sess_1","timestamp":"2026-11-02T09:00:01.000Z","producer":{"agent_id":"a1"},"aaep_version":"1.0.0","urgency":"background","sequence_number":1,"from_state":"idle","to_state":"thinking"}
not json at all
`
	path := filepath.Join(t.TempDir(), "cut.jsonl")
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	reqs, st := export(t, Options{}, path)
	if st.Traces != 2 {
		t.Fatalf("%d traces, want the session's and the stream's", st.Traces)
	}
	var stream, session *tracepb.Span
	for _, s := range spans(reqs) {
		switch s.Name {
		case "aaep.stream":
			stream = s
		case "invoke_agent a1":
			session = s
		}
	}
	if stream == nil || session == nil {
		t.Fatalf("spans %v", spans(reqs))
	}
	if len(stream.Events) != 1 || stream.Events[0].Name != "aaep.finding" || stream.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("stream span: events %v, status %v", stream.Events, stream.Status)
	}
	if attr(session, "aaep.session.complete") != "{\"BoolValue\":false}" || session.EndTimeUnixNano <= session.StartTimeUnixNano {
		t.Errorf("cut session: complete %s, %d..%d", attr(session, "aaep.session.complete"), session.StartTimeUnixNano, session.EndTimeUnixNano)
	}
}
