package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/cli"
	goldenfile "github.com/aaep-tools/aaepkit/internal/golden"
	"github.com/aaep-tools/aaepkit/internal/sample"
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/models"
)

// replay runs aaep-replay in-process with args and returns its exit code,
// standard output and standard error.
func replay(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, args)
	return code, out.String(), errb.String()
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name), []byte(got))
}

// The bundled demo capture holds two sessions that break the protocol.
const demoCapture = "../../testdata/demo.aaep"

func TestCheckDemoCaptureReport(t *testing.T) {
	code, out, stderr := replay(t, "check", demoCapture)
	if code != cli.ExitFailure {
		t.Fatalf("exit %d, want %d (MUST findings); stderr: %s", code, cli.ExitFailure, stderr)
	}
	for _, rule := range []string{"SEQ-STATE-CHAIN", "SEQ-TOOL-PAIR-PRECEDED", "EVT-URGENCY-CRITICAL"} {
		if !strings.Contains(out, rule) {
			t.Errorf("report does not name %s", rule)
		}
	}
	golden(t, "check/demo.txt", out)

	code, out, _ = replay(t, "check", "--json", demoCapture)
	if code != cli.ExitFailure {
		t.Fatalf("--json exit %d, want 1", code)
	}
	var doc struct {
		Messages int64
		Failed   bool
		Counts   map[string]int
		Sessions []struct {
			Protocol, Session string
			Complete          bool
			Findings          []struct {
				Rule, Level string
				Index       int64
			}
		}
	}
	if err := json.Unmarshal(recordingJSON(t, out), &doc); err != nil {
		t.Fatalf("--json output does not parse: %v", err)
	}
	if !doc.Failed || doc.Counts["MUST"] != 6 || len(doc.Sessions) != 8 || doc.Messages != 108 {
		t.Errorf("JSON report: failed=%v MUST=%d sessions=%d messages=%d, want true 6 8 108", doc.Failed, doc.Counts["MUST"], len(doc.Sessions), doc.Messages)
	}
	golden(t, "check/demo.json", out)
}

func TestCheckThresholds(t *testing.T) {
	clean := filepath.Join(t.TempDir(), "clean.jsonl")
	// One complete, valid AAEP session: only the stream's own lines.
	lines := []string{
		`{"@context":"https://aaep-protocol.org/context/v1","type":"aaep:agent.session.started","event_id":"evt_a1","session_id":"sess_c1","timestamp":"2026-11-02T09:00:00.000Z","producer":{"agent_id":"a"},"urgency":"normal","localization_hints":{"primary_language":"en-US"},"summary_normal":"Starting."}`,
		`{"@context":"https://aaep-protocol.org/context/v1","type":"aaep:agent.session.completed","event_id":"evt_a2","session_id":"sess_c1","timestamp":"2026-11-02T09:00:01.000Z","producer":{"agent_id":"a"},"urgency":"normal","localization_hints":{"primary_language":"en-US"},"summary_normal":"Done."}`,
	}
	if err := os.WriteFile(clean, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"clean JSONL passes", []string{"check", clean}, cli.ExitOK},
		{"demo fails at must", []string{"check", demoCapture}, cli.ExitFailure},
		{"never", []string{"check", "--fail-on", "never", demoCapture}, cli.ExitOK},
		{"bad level", []string{"check", "--fail-on", "sometimes", demoCapture}, cli.ExitUsage},
		{"bad protocol", []string{"check", "--protocol", "smtp", demoCapture}, cli.ExitUsage},
		{"bad profile", []string{"check", "--profile", "loose", demoCapture}, cli.ExitUsage},
		{"unknown rule", []string{"check", "--disable", "NOPE-1", demoCapture}, cli.ExitUsage},
		{"missing file", []string{"check", filepath.Join(t.TempDir(), "none.aaep")}, cli.ExitUsage},
		{"no file", []string{"check"}, cli.ExitUsage},
		{"disabling the broken rules passes", []string{"check", "--disable", "SEQ-STATE-CHAIN,SEQ-TOOL-PAIR-PRECEDED,EVT-URGENCY-CRITICAL", demoCapture}, cli.ExitOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := replay(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, out, stderr)
			}
			if code == cli.ExitUsage && !strings.HasPrefix(stderr, "aaep-replay: ") {
				t.Errorf("usage error without a message: %q", stderr)
			}
		})
	}
}

func TestCheckRulesList(t *testing.T) {
	code, out, _ := replay(t, "check", "--rules")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, id := range []string{"ENV-JSON-OBJECT", "SEQ-IRREV-NEEDS-ACCEPT", "STREAM-UNKNOWN-PROTOCOL", "ASP-", "KA-"} {
		if !strings.Contains(out, id) {
			t.Errorf("rule list lacks %s", id)
		}
	}
}

func TestCheckNotCaptureNorJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "photo.png")
	if err := os.WriteFile(path, []byte("\x89PNG\r\n\x1a\n\x00\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := replay(t, "check", path)
	if code != cli.ExitUsage || !strings.Contains(stderr, "photo.png") {
		t.Errorf("exit %d stderr %q, want 2 and a message naming the file", code, stderr)
	}
}

// TestCheckCorruptCapture: damage part-way through a capture still gives a
// complete report of what came before it, then exit status 2 with a message
// that names the file and the byte offset.
func TestCheckCorruptCapture(t *testing.T) {
	// Small frames, so that damage in one leaves the others readable.
	path := filepath.Join(t.TempDir(), "bad.aaep")
	w, err := capfile.Create(path, capfile.Header{Tool: "test"}, &capfile.WriterOptions{FrameSize: 2048})
	if err != nil {
		t.Fatal(err)
	}
	msgs := sample.Stream(sample.Options{Sessions: 8, Seed: 3})
	for _, m := range msgs {
		if err := w.Append(&capfile.Record{Kind: capfile.KindReceived, Time: int64(m.Offset), Session: m.Session, Payload: m.JSON}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)*2/3] ^= 0xff
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := replay(t, "check", "--json", path)
	if code != cli.ExitUsage {
		t.Fatalf("exit %d, want 2; stderr %s", code, stderr)
	}
	if !strings.Contains(stderr, "bad.aaep") || !strings.Contains(stderr, "byte") {
		t.Errorf("stderr %q does not name the file and offset", stderr)
	}
	var doc struct {
		Messages int
		Complete bool
		Verdict  string
	}
	if err := json.Unmarshal(recordingJSON(t, out), &doc); err != nil {
		t.Fatalf("report of the readable part is not complete JSON: %v\n%s", err, out)
	}
	if doc.Complete || doc.Verdict != "INCOMPLETE" {
		t.Errorf("report of a damaged capture: complete=%v verdict=%q, want false and INCOMPLETE", doc.Complete, doc.Verdict)
	}
	if doc.Messages == 0 || doc.Messages >= len(msgs) {
		t.Errorf("report covers %d messages, want the part before the damage (of %d)", doc.Messages, len(msgs))
	}
}

// readmeRuleCounts is the README's sentence that gives the rule counts.
var readmeRuleCounts = regexp.MustCompile(`\(\d+ AAEP rules, \d+ for npayload's ASP session protocol, \d+ for KAHN's agent transition and CI events, \d+ about the stream itself: \d+ in all, as ` + "`check --rules`" + ` counts them\)`)

// TestRuleCountsAreTrue: check --rules ends with the true counts of the
// rule tables, and the README says the same (go test -update rewrites the
// README's sentence from the tables).
func TestRuleCountsAreTrue(t *testing.T) {
	counts := map[string]int{}
	total := 0
	for _, c := range protocol.RuleCounts(models.All()) {
		counts[c.Protocol] = c.Rules
		total += c.Rules
	}
	code, out, _ := replay(t, "check", "--rules")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != total+2 {
		t.Fatalf("check --rules: exit %d, %d lines; want %d rules, a blank line and the counts", code, len(lines), total)
	}
	wantLine := fmt.Sprintf("%d rules: %d aaep, %d asp, %d kahn, %d kahn-ci, %d stream", total, counts["aaep"], counts["asp"], counts["kahn"], counts["kahn-ci"], counts["stream"])
	if !strings.HasPrefix(lines[len(lines)-1], wantLine) {
		t.Errorf("check --rules ends with %q, want it to start with %q", lines[len(lines)-1], wantLine)
	}
	want := fmt.Sprintf("(%d AAEP rules, %d for npayload's ASP session protocol, %d for KAHN's agent transition and CI events, %d about the stream itself: %d in all, as `check --rules` counts them)",
		counts["aaep"], counts["asp"], counts["kahn"]+counts["kahn-ci"], counts["stream"], total)
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	found := readmeRuleCounts.Find(readme)
	switch {
	case found == nil:
		t.Fatalf("README.md has no rule-count sentence like %q", want)
	case string(found) == want:
	case goldenfile.Updating():
		if err := os.WriteFile("../../README.md", readmeRuleCounts.ReplaceAll(readme, []byte(want)), 0o644); err != nil {
			t.Fatal(err)
		}
	default:
		t.Errorf("README.md says %s; the rule tables say %s (go test -update rewrites it)", found, want)
	}
}
