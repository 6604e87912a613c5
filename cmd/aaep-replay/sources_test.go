package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
)

// sourcesCapture writes a capture recorded from origins, as aaep-capture
// writes one: a connection event and a session of two events per origin.
func sourcesCapture(t *testing.T, name string, origins []capfile.Origin) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	w, err := capfile.Create(path, capfile.Header{Start: time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC), Tool: "aaep-capture/test", Origins: origins}, &capfile.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	at := int64(0)
	for _, o := range origins {
		sess := "sess_" + o.Transport
		recs := []capfile.Record{
			{Kind: capfile.KindConn, Origin: o.ID, Payload: []byte(`{"event":"connected"}`)},
			{Kind: capfile.KindReceived, Origin: o.ID, Session: sess, Payload: []byte(`{"type":"aaep:agent.session.started","event_id":"evt_` + o.Transport + `1","session_id":"` + sess + `","producer":{"agent_id":"a"},"timestamp":"2026-11-02T09:00:00Z","sequence_number":0,"aaep_version":"1.0.0","urgency":"normal"}`)},
			{Kind: capfile.KindReceived, Origin: o.ID, Session: sess, Payload: []byte(`{"type":"aaep:agent.session.completed","event_id":"evt_` + o.Transport + `2","session_id":"` + sess + `","producer":{"agent_id":"a"},"timestamp":"2026-11-02T09:00:00Z","sequence_number":1,"aaep_version":"1.0.0","urgency":"normal"}`)},
		}
		for i := range recs {
			at += int64(time.Millisecond)
			recs[i].Time = at
			if err := w.Append(&recs[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReadersNameTheTransport: check (text and JSON), show and visualize
// name the transport and endpoint a capture was recorded from, a gRPC
// producer's as every other's (issue 36: captures from gRPC read like
// every other).
func TestReadersNameTheTransport(t *testing.T) {
	for _, tc := range []struct {
		name    string
		origins []capfile.Origin
		line    string // what the text outputs say after "sources: "
	}{
		{"grpc", []capfile.Origin{{ID: 0, Transport: "grpc", Endpoint: "grpc://127.0.0.1:50051"}},
			"#0 grpc grpc://127.0.0.1:50051"},
		{"grpcs", []capfile.Origin{{ID: 0, Transport: "grpc", Endpoint: "grpcs://agent.example:443"}},
			"#0 grpc grpcs://agent.example:443"},
		{"websocket", []capfile.Origin{{ID: 0, Transport: "websocket", Endpoint: "ws://127.0.0.1:8765/aaep/v1/ws", Subprotocol: "aaep.v1"}},
			"#0 websocket ws://127.0.0.1:8765/aaep/v1/ws (aaep.v1)"},
		{"grpc and sse", []capfile.Origin{{ID: 0, Transport: "grpc", Endpoint: "grpc://127.0.0.1:50051"}, {ID: 1, Transport: "sse", Endpoint: "http://127.0.0.1:8765/events"}},
			"#0 grpc grpc://127.0.0.1:50051; #1 sse http://127.0.0.1:8765/events"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := sourcesCapture(t, "run.aaep", tc.origins)
			code, out, stderr := replay(t, "check", "--fail-on", "never", in)
			if code != 0 || !strings.Contains(out, "\nsources: "+tc.line+"\n") {
				t.Errorf("check: exit %d, want a line %q:\n%s%s", code, "sources: "+tc.line, out, stderr)
			}
			code, out, stderr = replay(t, "check", "--fail-on", "never", "--json", in)
			if code != 0 {
				t.Fatalf("check --json: exit %d: %s", code, stderr)
			}
			var rep struct {
				Sources []capfile.Origin `json:"sources"`
			}
			if err := json.Unmarshal(recordingJSON(t, out), &rep); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(rep.Sources, tc.origins) {
				t.Errorf("check --json: sources %+v, want %+v", rep.Sources, tc.origins)
			}
			code, out, stderr = replay(t, "show", in)
			if code != 0 || !strings.Contains(stderr, "aaep-replay: reading "+in+": sources: "+tc.line+"\n") || strings.Contains(out, "sources:") {
				t.Errorf("show: exit %d, want the sources on stderr only:\nstdout %s\nstderr %s", code, out, stderr)
			}
			if _, _, stderr = replay(t, "show", "-q", in); strings.Contains(stderr, "sources:") {
				t.Errorf("show -q: %s", stderr)
			}
			dot := filepath.Join(t.TempDir(), "trace.dot")
			if code, _, stderr = replay(t, "visualize", in, "-o", dot); code != 0 {
				t.Fatalf("visualize: exit %d: %s", code, stderr)
			}
			b, err := os.ReadFile(dot)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), "sources: "+tc.line) {
				t.Errorf("visualize: the drawing's heading does not name %q:\n%.600s", tc.line, b)
			}
		})
	}
	// A JSON Lines file names no endpoint: its one source is its format.
	in := filepath.Join(t.TempDir(), "x.jsonl")
	if err := os.WriteFile(in, []byte(`{"type":"aaep:agent.session.started","event_id":"e1","session_id":"s1","producer":{"agent_id":"a"}}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, out, _ := replay(t, "check", in); !strings.Contains(out, "\nsources: #0 jsonl\n") {
		t.Errorf("check of JSON Lines:\n%s", out)
	}
}
