package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/recording"
)

// cleanSession is one complete, valid AAEP session.
var cleanSession = []string{
	`{"@context":"https://aaep-protocol.org/context/v1","type":"aaep:agent.session.started","event_id":"evt_a1","session_id":"sess_c1","timestamp":"2026-11-02T09:00:00.000Z","producer":{"agent_id":"a"},"urgency":"normal","localization_hints":{"primary_language":"en-US"},"summary_normal":"Starting."}`,
	`{"@context":"https://aaep-protocol.org/context/v1","type":"aaep:agent.session.completed","event_id":"evt_a2","session_id":"sess_c1","timestamp":"2026-11-02T09:00:01.000Z","producer":{"agent_id":"a"},"urgency":"normal","localization_hints":{"primary_language":"en-US"},"summary_normal":"Done."}`,
}

// writeCleanCapture writes cleanSession as a capture, n copies of it under
// fresh ids, and returns the file's path.
func writeCleanCapture(t *testing.T, dir string, n int) string {
	t.Helper()
	path := filepath.Join(dir, "clean.aaep")
	w, err := capfile.Create(path, capfile.Header{Tool: "test", Start: time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)}, &capfile.WriterOptions{FrameSize: 512})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		for j, line := range cleanSession {
			line = strings.NewReplacer("sess_c1", "sess_c"+strconv.Itoa(i), "evt_a", "evt_"+strconv.Itoa(i)+"x").Replace(line)
			if err := w.Append(&capfile.Record{Kind: capfile.KindReceived, Time: int64(time.Duration(i*2+j) * time.Second), Payload: []byte(line)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

type checkDoc struct {
	Messages   int64
	Failed     bool
	Complete   bool
	Incomplete []string
	Verdict    string
	FailOn     string `json:"fail_on"`
}

func parseCheckJSON(t *testing.T, out string) checkDoc {
	t.Helper()
	var doc checkDoc
	if err := json.Unmarshal(recordingJSON(t, out), &doc); err != nil {
		t.Fatalf("JSON report does not parse: %v\n%s", err, out)
	}
	return doc
}

// TestCheckIncompleteInput: a report never says PASS about input it could
// not read. A torn copy of a clean capture, an empty input and a line over
// the size limit each give the verdict INCOMPLETE with the reason, "complete":
// false in JSON, and exit status 2; --allow-incomplete exits by the findings
// of what was read and still says INCOMPLETE.
func TestCheckIncompleteInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clean := writeCleanCapture(t, dir, 20)
	code, out, stderr := replay(t, "check", clean)
	if code != cli.ExitOK || !strings.Contains(out, "PASS") || strings.Contains(out, "INCOMPLETE") {
		t.Fatalf("the clean capture: exit %d, want 0 and PASS\n%s%s", code, out, stderr)
	}
	data, err := os.ReadFile(clean)
	if err != nil {
		t.Fatal(err)
	}
	torn := filepath.Join(dir, "torn.aaep")
	if err := os.WriteFile(torn, data[:len(data)*2/3], 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	headerOnly := filepath.Join(dir, "header-only.aaep")
	w, err := capfile.Create(headerOnly, capfile.Header{Tool: "test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	long := filepath.Join(dir, "long.jsonl")
	var b bytes.Buffer
	b.WriteString(cleanSession[0] + "\n")
	b.WriteString(`{"pad":"` + strings.Repeat("x", recording.MaxLine) + `"}` + "\n")
	b.WriteString(cleanSession[1] + "\n")
	if err := os.WriteFile(long, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, reason string
		messages           int64
	}{
		{"truncated copy of a clean capture", torn, "torn record", -1},
		{"empty input", empty, "empty", 0},
		{"capture without messages", headerOnly, "no messages", 0},
		{"line over the size limit", long, "line 2 is longer than", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := replay(t, "check", tt.path)
			if code != cli.ExitUsage {
				t.Errorf("exit %d, want 2\n%s%s", code, out, stderr)
			}
			if strings.Contains(out, "PASS") || !strings.Contains(out, "INCOMPLETE") || !strings.Contains(out, tt.reason) {
				t.Errorf("text report does not say INCOMPLETE with %q (or says PASS):\n%s", tt.reason, out)
			}
			if !strings.Contains(stderr, "INCOMPLETE") {
				t.Errorf("stderr %q does not say INCOMPLETE", stderr)
			}
			code, out, _ = replay(t, "check", "--json", tt.path)
			doc := parseCheckJSON(t, out)
			if code != cli.ExitUsage || doc.Complete || doc.Verdict != "INCOMPLETE" || len(doc.Incomplete) == 0 || !strings.Contains(strings.Join(doc.Incomplete, " "), tt.reason) {
				t.Errorf("JSON: exit %d complete=%v verdict=%q reasons=%q; want 2, false, INCOMPLETE, %q", code, doc.Complete, doc.Verdict, doc.Incomplete, tt.reason)
			}
			if tt.messages >= 0 && doc.Messages != tt.messages {
				t.Errorf("JSON: %d messages read, want %d", doc.Messages, tt.messages)
			}
			if tt.messages < 0 && (doc.Messages == 0 || doc.Messages >= 40) {
				t.Errorf("JSON: %d messages read, want the part before the tear (of 40)", doc.Messages)
			}
			// What was read is clean: --allow-incomplete exits 0, and
			// the verdict still says INCOMPLETE, never PASS.
			code, out, _ = replay(t, "check", "--allow-incomplete", tt.path)
			if code != cli.ExitOK || strings.Contains(out, "PASS") || !strings.Contains(out, "INCOMPLETE") {
				t.Errorf("--allow-incomplete: exit %d, want 0 and INCOMPLETE without PASS\n%s", code, out)
			}
		})
	}

	// --allow-incomplete on a torn capture with a MUST finding in what was
	// read: exit 1, verdict INCOMPLETE, FAIL.
	broken := filepath.Join(dir, "broken.jsonl")
	if err := os.WriteFile(broken, []byte(cleanSession[1]+"\n"+`{"pad":"`+strings.Repeat("x", recording.MaxLine)+`"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ = replay(t, "check", "--allow-incomplete", broken)
	if code != cli.ExitFailure || !strings.Contains(out, "INCOMPLETE, FAIL") {
		t.Errorf("--allow-incomplete with a MUST in what was read: exit %d, want 1 and INCOMPLETE, FAIL\n%s", code, out)
	}
}

// TestCheckFailOnNever: --fail-on never exits 0 and never prints FAIL, in
// text and JSON.
func TestCheckFailOnNever(t *testing.T) {
	code, out, _ := replay(t, "check", "--fail-on", "never", demoCapture)
	if code != cli.ExitOK || strings.Contains(out, "FAIL") || !strings.Contains(out, "NOT GATED") {
		t.Errorf("exit %d; want 0, NOT GATED and no FAIL:\n%s", code, out)
	}
	code, out, _ = replay(t, "check", "--json", "--fail-on", "never", demoCapture)
	doc := parseCheckJSON(t, out)
	if code != cli.ExitOK || doc.Failed || doc.Verdict != "NOT GATED" || doc.FailOn != "never" || !doc.Complete {
		t.Errorf("JSON: exit %d failed=%v verdict=%q fail_on=%q complete=%v", code, doc.Failed, doc.Verdict, doc.FailOn, doc.Complete)
	}
}

// TestCheckMalformedFiles: files as editors and tools write them. A BOM
// before the first event (Windows editors) is ENV-UTF8 on that message and
// nothing else: the session still starts with it. A file holding one JSON
// array of events says so. An event nested 20000 levels deep is "nested
// too deeply" (ENV-SIZE), not "not a JSON object".
func TestCheckMalformedFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bom := write("bom.jsonl", []byte("\xef\xbb\xbf"+strings.Join(cleanSession, "\n")+"\n"))
	array := write("array.json", []byte("["+strings.Join(cleanSession, ",")+"]\n"))
	deepEvent := strings.Replace(cleanSession[0], `"summary_normal"`, `"extensions":{"x":`+strings.Repeat("[", 20000)+strings.Repeat("]", 20000)+`},"summary_normal"`, 1)
	deep := write("deep.jsonl", []byte(deepEvent+"\n"+cleanSession[1]+"\n"))
	for _, tc := range []struct {
		path    string
		want    []string
		notWant []string
	}{
		{bom, []string{"ENV-UTF8", "byte-order mark", "1 MUST"}, []string{"SEQ-START-FIRST", "STREAM-NOT-JSON"}},
		{array, []string{"STREAM-NOT-JSON", "JSON array", "one event per line"}, []string{"not a JSON object"}},
		{deep, []string{"ENV-SIZE", "nested too deeply", "ended in completed"}, []string{"not a JSON object", "ENV-JSON-OBJECT", "STREAM-NOT-JSON"}},
	} {
		_, out, _ := replay(t, "check", tc.path)
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: report lacks %q\n%s", filepath.Base(tc.path), w, out)
			}
		}
		for _, w := range tc.notWant {
			if strings.Contains(out, w) {
				t.Errorf("%s: report says %q\n%s", filepath.Base(tc.path), w, out)
			}
		}
	}
}
