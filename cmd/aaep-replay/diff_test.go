package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/objstore/s3test"
)

// The real recordings internal/recdiff/testdata/record.sh makes.
const (
	diffV1      = "../../internal/recdiff/testdata/v1.aaep"
	diffV1Again = "../../internal/recdiff/testdata/v1-again.aaep"
	diffV2      = "../../internal/recdiff/testdata/v2.aaep"
)

func Test_NewCmdDiff(t *testing.T) {
	defaults := func(a *app) DiffOptions {
		return DiffOptions{app: a, A: "a.aaep", B: "b.aaep", Color: "auto", Check: checkFlags{Profile: "lenient"}, TimeToleranceArg: "20%", TimeTolerance: 0.2, TimeFloor: 250 * time.Millisecond}
	}
	cases := []cmdCase[DiffOptions]{
		{name: "defaults", argv: "diff a.aaep b.aaep"},
		{name: "json", argv: "diff --json a.aaep b.aaep", want: func(o *DiffOptions) { o.JSON = true }},
		{name: "stat", argv: "diff --stat a.aaep b.aaep", want: func(o *DiffOptions) { o.Stat = true }},
		{name: "color", argv: "diff --color always a.aaep b.aaep", want: func(o *DiffOptions) { o.Color = "always" }},
		{name: "match", argv: "diff --match request_text a.aaep b.aaep", want: func(o *DiffOptions) { o.Match = "request_text" }},
		{name: "ignore and keep", argv: "diff --ignore summary_normal --ignore producer.agent_version --keep timestamp a.aaep b.aaep", want: func(o *DiffOptions) {
			o.Ignore, o.Keep = []string{"summary_normal", "producer.agent_version"}, []string{"timestamp"}
		}},
		{name: "tolerance", argv: "diff --time-tolerance 50% a.aaep b.aaep", want: func(o *DiffOptions) { o.TimeToleranceArg, o.TimeTolerance = "50%", 0.5 }},
		{name: "tolerance off", argv: "diff --time-tolerance off a.aaep b.aaep", want: func(o *DiffOptions) { o.TimeToleranceArg, o.TimeTolerance = "off", -1 }},
		{name: "floor", argv: "diff --time-floor 0 a.aaep b.aaep", want: func(o *DiffOptions) { o.TimeFloor = 0 }},
		{name: "checker's flags", argv: "diff --protocol aaep --profile strict --disable SEQ-SEQNO-INCREMENT a.aaep b.aaep", want: func(o *DiffOptions) {
			o.Check = checkFlags{Protocol: "aaep", Profile: "strict", Disable: []string{"SEQ-SEQNO-INCREMENT"}}
		}},

		{name: "one recording", argv: "diff a.aaep", err: "diff needs two recordings, A and B (each a capture, a quoted glob, a directory or an s3:// prefix) (see aaep-replay diff --help)"},
		{name: "three recordings", argv: "diff a.aaep b.aaep c.aaep", err: `diff takes two recordings, A and B (each a capture, a quoted glob, a directory or an s3:// prefix), got 3 arguments: ["a.aaep" "b.aaep" "c.aaep"]`},
		{name: "bad tolerance", argv: "diff --time-tolerance much a.aaep b.aaep", err: `--time-tolerance: "much" is not a percentage (20%) or off`},
		{name: "bad color", argv: "diff --color pink a.aaep b.aaep", err: `--color: "pink" is not auto, always or never`},
		{name: "bad match", argv: "diff --match a.b a.aaep b.aaep", err: `--match: "a.b" is not id, order, start or a member name`},
		{name: "bad ignore", argv: "diff --ignore a..b a.aaep b.aaep", err: `--ignore: "a..b" is not a path (names separated by dots, e.g. producer.agent_id)`},
		{name: "bad profile", argv: "diff --profile loose a.aaep b.aaep", err: `--profile: unknown profile "loose" (want strict or lenient)`},
	}
	testNewCmd(t, NewCmdDiff, defaults, cases)
}

// Exit status as diff(1): 0 same, 1 different, 2 trouble.
func TestDiffExitStatus(t *testing.T) {
	dir := t.TempDir()
	torn := filepath.Join(dir, "torn.aaep")
	data, err := os.ReadFile(diffV1)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(torn, data[:len(data)*2/3], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string // the last line
		stderr string
	}{
		{"same", []string{diffV1, diffV1Again}, cli.ExitOK, "same: 8 sessions: 8 same, 0 different, 0 only in a, 0 only in b; messages of no session: same", ""},
		{"different", []string{diffV1, diffV2}, cli.ExitFailure, "different: 8 sessions: 7 same, 1 different, 0 only in a, 0 only in b; messages of no session: same", ""},
		{"missing", []string{diffV1, filepath.Join(dir, "nothing.aaep")}, cli.ExitUsage, "", "nothing.aaep"},
		{"torn", []string{diffV1, torn}, cli.ExitUsage, "", "INCOMPLETE"},
	} {
		code, out, stderr := replay(t, append([]string{"diff"}, tc.args...)...)
		lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
		if code != tc.code || (tc.stdout != "" && lines[len(lines)-1] != tc.stdout) || !strings.Contains(stderr, tc.stderr) {
			t.Errorf("%s: exit %d, want %d\nstdout: %s\nstderr: %s", tc.name, code, tc.code, out, stderr)
		}
	}
}

// A recording against its own export --with-meta | import round trip is
// the same.
func TestDiffRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, rec := range []string{diffV1, "../../internal/recdiff/testdata/sub-good.aaep", demoCapture} {
		meta := filepath.Join(dir, "meta.jsonl")
		back := filepath.Join(dir, "back.aaep")
		os.Remove(back)
		if code, _, stderr := replay(t, "export", "--with-meta", "-o", meta, rec); code != 0 {
			t.Fatalf("export: %d %s", code, stderr)
		}
		if code, _, stderr := replay(t, "import", "-q", meta, "-o", back); code != 0 {
			t.Fatalf("import: %d %s", code, stderr)
		}
		code, out, stderr := replay(t, "diff", "--time-floor", "0", rec, back)
		if code != 0 || !strings.HasPrefix(out, "same: ") {
			t.Errorf("%s against its round trip: exit %d\n%s%s", rec, code, out, stderr)
		}
	}
}

// --json is one document with a schema version; --stat one line per
// session that differs; colour only when asked (standard output is not a
// terminal here).
func TestDiffForms(t *testing.T) {
	code, out, _ := replay(t, "diff", "--json", diffV1, diffV2)
	var doc struct {
		SchemaVersion int  `json:"schema_version"`
		Same          bool `json:"same"`
		Sessions      []struct {
			Status    string
			ToolCalls []struct {
				Op string
				A  struct{ Name string }
			} `json:"tool_calls"`
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var tools []string
	for _, s := range doc.Sessions {
		for _, c := range s.ToolCalls {
			tools = append(tools, c.Op+c.A.Name)
		}
	}
	if code != 1 || doc.SchemaVersion != 1 || doc.Same || len(doc.Sessions) != 9 || strings.Join(tools, ",") != "-search_flights" {
		t.Errorf("--json: exit %d, schema %d, same %v, %d sessions, tool calls %v", code, doc.SchemaVersion, doc.Same, len(doc.Sessions), tools)
	}
	_, out, _ = replay(t, "diff", "--stat", diffV1, diffV2)
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[0], "M sess_d0fd4a2cb8d12071 ") {
		t.Errorf("--stat:\n%s", out)
	}
	_, out, _ = replay(t, "diff", diffV1, diffV2)
	if strings.Contains(out, "\x1b[") {
		t.Error("colour without a terminal")
	}
	_, out, _ = replay(t, "diff", "--color", "always", diffV1, diffV2)
	if !strings.Contains(out, "\x1b[31m-tool.invoked search_flights\x1b[0m") {
		t.Errorf("--color always: no red removal:\n%q", out)
	}
}

// On a terminal the text is coloured, unless NO_COLOR is set.
func TestDiffColourOnATerminal(t *testing.T) {
	for _, noColor := range []string{"", "1"} {
		t.Setenv("NO_COLOR", noColor)
		master, tty, err := pty.Open()
		if err != nil {
			t.Fatalf("open pty: %v", err)
		}
		var term bytes.Buffer
		read := make(chan struct{})
		go func() {
			defer close(read)
			io.Copy(&term, master)
		}()
		var errb bytes.Buffer
		code := run(context.Background(), cli.Streams{In: strings.NewReader(""), Out: tty, Err: &errb}, []string{"diff", diffV1, diffV2})
		tty.Close()
		<-read
		master.Close()
		coloured := strings.Contains(term.String(), "\x1b[31m-tool.invoked search_flights\x1b[0m")
		if code != 1 || coloured != (noColor == "") || !strings.Contains(term.String(), "tool.invoked search_flights") {
			t.Errorf("NO_COLOR=%q: exit %d, coloured %v:\n%q%s", noColor, code, coloured, term.String(), errb.String())
		}
	}
}

// Either side may be an s3:// object or prefix (a local S3 server here).
func TestDiffS3(t *testing.T) {
	srv := s3test.Start(t, "runs")
	srv.SetEnv(t)
	for key, file := range map[string]string{"v1/run.aaep": diffV1, "v2/run.aaep": diffV2} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Put("runs", key, data); err != nil {
			t.Fatal(err)
		}
	}
	if code, out, stderr := replay(t, "diff", "s3://runs/v1/", diffV1Again); code != 0 || !strings.HasPrefix(out, "same: 8 sessions") {
		t.Errorf("prefix against a file: exit %d\n%s%s", code, out, stderr)
	}
	code, out, stderr := replay(t, "diff", "--stat", "s3://runs/v1/run.aaep", "s3://runs/v2/")
	if code != 1 || !strings.HasPrefix(out, "M sess_d0fd4a2cb8d12071 ") {
		t.Errorf("object against a prefix: exit %d\n%s%s", code, out, stderr)
	}
	if code, _, stderr := replay(t, "diff", "s3://runs/v1/", "s3://runs/none/"); code != 2 || !strings.Contains(stderr, "s3://runs/none/") {
		t.Errorf("an empty prefix: exit %d, %s", code, stderr)
	}
}
