package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"flag"
	"fmt"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/binarytest"
	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/sample"
	"github.com/aaep-tools/aaepkit/internal/testdeps"
	"github.com/aaep-tools/aaepkit/recording"
	"github.com/aaep-tools/aaepkit/visualize"
)

var visDrawings = flag.String("drawings", "", "copy the drawings made by the visualize tests to this directory")

// visStream is the sample stream the visualize tests draw: four
// interleaved AAEP sessions, one of which breaks rules.
func visStream() []sample.Msg {
	return sample.Stream(sample.Options{Sessions: 4, Seed: 7, Violations: true})
}

// visCapture writes the sample stream as a capture (with a connection
// record first) and returns its path.
func visCapture(t *testing.T, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	w, err := capfile.Create(path, capfile.Header{Tool: "visualize-test", Origins: []capfile.Origin{{ID: 0, Transport: "sse", Endpoint: "http://127.0.0.1:1/events"}}}, &capfile.WriterOptions{FlushInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(&capfile.Record{Kind: capfile.KindConn, Payload: []byte(`{"event":"connected"}`)}); err != nil {
		t.Fatal(err)
	}
	for _, m := range visStream() {
		kind := capfile.KindReceived
		if m.FromSubscriber {
			kind = capfile.KindSent
		}
		if err := w.Append(&capfile.Record{Kind: kind, Time: int64(m.Offset), Session: m.Session, Payload: m.JSON}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// visJSONL writes the sample stream as JSON lines and returns its path.
func visJSONL(t *testing.T, dir, name string) string {
	t.Helper()
	var b bytes.Buffer
	for _, m := range visStream() {
		b.Write(m.JSON)
		b.WriteByte('\n')
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// visSessions are the sample stream's session IDs, and the one that breaks rules.
func visSessions() (all []string, broken string) {
	seen := map[string]bool{}
	for i, m := range visStream() {
		_ = i
		if !seen[m.Session] {
			seen[m.Session] = true
			all = append(all, m.Session)
		}
	}
	// sample.Stream makes every fourth session (index 3) the broken one.
	return all, all[3]
}

func visRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func visKeep(t *testing.T, path string) {
	if *visDrawings == "" {
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(*visDrawings, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(*visDrawings, filepath.Base(path)), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestVisualizeDoesNotLinkGraphviz: go-graphviz compiles its WebAssembly
// Graphviz in a package init function, so aaep-replay must not link it, or
// every command (check, serve, ...) would pay that start-up. Drawing goes
// through the aaep-render helper instead.
func TestVisualizeDoesNotLinkGraphviz(t *testing.T) {
	goTool := binarytest.GoTool()
	out, err := exec.Command(goTool, "list", "-deps", "github.com/aaep-tools/aaepkit/cmd/aaep-replay").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "github.com/goccy/go-graphviz") || strings.Contains(string(out), "github.com/tetratelabs/wazero") {
		t.Errorf("aaep-replay links go-graphviz or wazero")
	}
	if !strings.Contains(string(out), "github.com/aaep-tools/aaepkit/visualize\n") {
		t.Errorf("aaep-replay does not link visualize: the check proves nothing")
	}
}

func TestVisualizeDOT(t *testing.T) {
	dir := t.TempDir()
	capture := visCapture(t, dir, "session.aaep")
	jsonl := visJSONL(t, dir, "session.jsonl")
	all, broken := visSessions()
	tests := []struct {
		name string
		args []string
		// out is the file to read ("" for stdout).
		out        string
		contains   []string
		lacks      []string
		stderrHave string
	}{
		{name: "default output beside the input", args: []string{"visualize", capture, "--format", "dot"}, out: capture + ".dot",
			contains: append([]string{"digraph aaep_trace", "subgraph cluster_0", "session.aaep", "<b>Legend</b>"}, all...), stderrHave: "drew 4 sessions"},
		{name: "format from the output extension", args: []string{"visualize", capture, "-o", filepath.Join(dir, "x.gv")}, out: filepath.Join(dir, "x.gv"),
			contains: []string{"digraph aaep_trace"}},
		{name: "one session", args: []string{"visualize", capture, "--session", broken, "-o", filepath.Join(dir, "one.dot")}, out: filepath.Join(dir, "one.dot"),
			contains: []string{"aaep session " + broken}, lacks: []string{"subgraph cluster_", all[0]}, stderrHave: "drew 1 session "},
		{name: "standard output", args: []string{"visualize", capture, "-o", "-", "--format", "dot"},
			contains: []string{"digraph aaep_trace"}, stderrHave: "to standard output"},
		{name: "json lines input", args: []string{"visualize", jsonl, "--format", "dot"}, out: jsonl + ".dot",
			contains: append([]string{"digraph aaep_trace", "session.jsonl"}, all...)},
		{name: "documented root form", args: []string{"--input", capture, "--visualize", "--output", filepath.Join(dir, "root.dot")}, out: filepath.Join(dir, "root.dot"),
			contains: []string{"digraph aaep_trace"}},
		{name: "session limit", args: []string{"visualize", capture, "--max-sessions", "2", "--format", "dot", "-o", "-"},
			contains: []string{"subgraph cluster_1", all[0], all[1]}, lacks: []string{"subgraph cluster_2", all[2], all[3]}, stderrHave: "2 sessions more left out"},
		{name: "forced protocol", args: []string{"visualize", capture, "--protocol", "aaep", "--profile", "strict", "--format", "dot", "-o", "-"},
			contains: []string{"digraph aaep_trace", broken}},
		{name: "broken session", args: []string{"visualize", capture, "--session", broken, "--format", "dot", "-o", "-"},
			contains: []string{"SEQ-STATE-CHAIN"}},
		{name: "a rule disabled", args: []string{"visualize", capture, "--session", broken, "--disable", "SEQ-STATE-CHAIN", "--format", "dot", "-o", "-"},
			contains: []string{broken}, lacks: []string{"SEQ-STATE-CHAIN"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := replay(t, tt.args...)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			got := stdout
			if tt.out != "" {
				got = visRead(t, tt.out)
				visKeep(t, tt.out)
			}
			for _, s := range tt.contains {
				if !strings.Contains(got, s) {
					t.Errorf("output lacks %q", s)
				}
			}
			for _, s := range tt.lacks {
				if strings.Contains(got, s) {
					t.Errorf("output has %q", s)
				}
			}
			if !strings.Contains(stderr, tt.stderrHave) {
				t.Errorf("stderr %q lacks %q", stderr, tt.stderrHave)
			}
		})
	}
	t.Run("three protocols drawn alike", func(t *testing.T) {
		// One file mixing the AAEP sample with the ASP and KAHN fixtures of
		// their models.
		var mixed bytes.Buffer
		for _, f := range []string{jsonl, "../../protocol/asp/testdata/negotiation.jsonl", "../../protocol/kahn/testdata/coder.jsonl"} {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			mixed.Write(b)
		}
		path := filepath.Join(dir, "mixed.jsonl")
		if err := os.WriteFile(path, mixed.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := replay(t, "visualize", path, "--format", "dot", "-o", "-")
		if code != 0 {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		for _, p := range []string{"aaep", "asp", "kahn"} {
			n := strings.Count(stdout, `graph [label="`+p+` session `)
			if n == 0 {
				t.Errorf("no %s session drawn", p)
			}
		}
		// Every protocol's drawing has its start marker and numbered steps.
		if strings.Count(stdout, "start [shape=point") < 6 || !strings.Contains(stdout, "1. ") {
			t.Errorf("sessions drawn without start or numbered steps")
		}
	})
	t.Run("violations are red", func(t *testing.T) {
		code, stdout, stderr := replay(t, "visualize", capture, "--session", broken, "--format", "dot", "-o", "-")
		if code != 0 {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		var red int
		for _, l := range strings.Split(stdout, "\n") {
			if strings.Contains(l, `color="#dc2626"`) && !strings.Contains(l, "Legend") {
				red++
			}
		}
		if red == 0 {
			t.Errorf("the broken session's drawing has nothing red:\n%s", stdout)
		}
	})
	t.Run("deterministic", func(t *testing.T) {
		_, a, _ := replay(t, "visualize", capture, "--format", "dot", "-o", "-")
		_, b, _ := replay(t, "visualize", capture, "--format", "dot", "-o", "-")
		if a != b || a == "" {
			t.Errorf("two runs drew different DOT")
		}
	})
}

func TestVisualizeErrors(t *testing.T) {
	t.Parallel() // in a directory of its own; nothing it runs draws (no helper)
	dir := t.TempDir()
	capture := visCapture(t, dir, "session.aaep")
	garbage := filepath.Join(dir, "garbage.bin")
	if err := os.WriteFile(garbage, []byte("\x00\x01\x02\x03binary"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	long := filepath.Join(dir, "long.jsonl")
	if err := os.WriteFile(long, append(append([]byte(`{"x":"`), bytes.Repeat([]byte("x"), recording.MaxLine)...), '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown format", []string{"visualize", capture, "--format", "pdf"}, 2, `unknown format "pdf"`},
		{"format and output disagree", []string{"visualize", capture, "--format", "svg", "-o", "x.png"}, 2, "does not match the --output file"},
		{"unknown session", []string{"visualize", capture, "--session", "sess_nope", "--format", "dot", "-o", "-"}, 2, `no session "sess_nope"`},
		{"negative session limit", []string{"visualize", capture, "--max-sessions", "-1"}, 2, `invalid argument "-1" for "--max-sessions" flag: want 0 (no limit) or a positive whole number`},
		{"unknown protocol", []string{"visualize", capture, "--protocol", "nope", "--format", "dot"}, 2, `unknown protocol "nope"`},
		{"unknown profile", []string{"visualize", capture, "--profile", "loose", "--format", "dot"}, 2, `unknown profile "loose"`},
		{"unknown rule disabled", []string{"visualize", capture, "--disable", "NOPE-1", "--format", "dot"}, 2, `--disable: cannot disable unknown rule "NOPE-1"`},
		{"missing file", []string{"visualize", filepath.Join(dir, "missing.aaep"), "--format", "dot"}, 2, "no such file"},
		{"not a capture nor json lines", []string{"visualize", garbage, "--format", "dot"}, 2, "neither a capture file nor JSON lines"},
		{"empty file", []string{"visualize", empty, "--format", "dot"}, 2, "empty file"},
		{"line too long", []string{"visualize", long, "--format", "dot"}, 2, "line 1 is longer than"},
		{"no input", []string{"visualize"}, 2, "visualize needs a capture"},
		{"output directory missing", []string{"visualize", capture, "--format", "dot", "-o", filepath.Join(dir, "no", "such", "dir.dot")}, 2, "no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := replay(t, tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, tt.code, tt.want)
			}
		})
	}
}

// TestVisualizeTornCapture draws a capture whose writer did not finish: up
// to its last intact record, with a warning. A capture cut inside its first
// frame, of which no record can be read, is not drawn (exit 2).
func TestVisualizeTornCapture(t *testing.T) {
	dir := t.TempDir()
	src, _ := fileopsCapture(t, dir, "src.aaep") // several frames
	torn, _, _ := fileopsDamaged(t, src)
	code, stdout, stderr := replay(t, "visualize", torn, "--format", "dot", "-o", "-")
	if code != 0 || !strings.Contains(stderr, "warning") || !strings.Contains(stderr, "bytes unreadable") || !strings.Contains(stdout, "digraph aaep_trace") {
		t.Errorf("exit %d, stderr %q; want 0, a warning and a drawing", code, stderr)
	}
	capture := visCapture(t, dir, "session.aaep") // one frame
	b, err := os.ReadFile(capture)
	if err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(dir, "short.aaep")
	if err := os.WriteFile(short, b[:len(b)*2/3], 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = replay(t, "visualize", short, "--format", "dot", "-o", "-")
	if code != 2 || !strings.Contains(stderr, "no record could be read") || len(stdout) != 0 {
		t.Errorf("cut inside its only frame: exit %d, stderr %q, %d bytes drawn; want 2 and nothing drawn", code, stderr, len(stdout))
	}
}

// renderBin is the aaep-render helper, built once per test run.
var renderBin = binarytest.New("github.com/aaep-tools/aaepkit/cmd/aaep-render", visualize.HelperName)

// visHelper points AAEP_RENDER at the aaep-render helper.
func visHelper(t *testing.T) {
	t.Helper()
	t.Setenv(visualize.HelperEnv, renderBin.Path(t))
}

// visCheckSVG parses an SVG file as XML and returns its text.
func visCheckSVG(t *testing.T, path string) string {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(visRead(t, path)))
	var text strings.Builder
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s is not XML: %v", path, err)
		}
		if c, ok := tok.(xml.CharData); ok {
			text.Write(c)
		}
	}
	return text.String()
}

func TestVisualizeSVGAndPNG(t *testing.T) {
	visHelper(t)
	dir := t.TempDir()
	capture := visCapture(t, dir, "session.aaep")
	all, _ := visSessions()
	t.Run("default svg beside the input", func(t *testing.T) {
		code, _, stderr := replay(t, "visualize", capture)
		if code != 0 {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		text := visCheckSVG(t, capture+".svg")
		visKeep(t, capture+".svg")
		for _, s := range append([]string{"Legend"}, all...) {
			if !strings.Contains(text, s) {
				t.Errorf("svg lacks %q", s)
			}
		}
	})
	t.Run("documented form --input --visualize", func(t *testing.T) {
		other := filepath.Join(dir, "other.aaep")
		if err := os.Link(capture, other); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := replay(t, "--input", other, "--visualize")
		if code != 0 {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		visCheckSVG(t, other+".svg")
	})
	t.Run("documented form with --output", func(t *testing.T) {
		out := filepath.Join(dir, "trace.svg")
		code, _, stderr := replay(t, "--input", capture, "--visualize", "--output", out)
		if code != 0 {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		visCheckSVG(t, out)
	})
	t.Run("png", func(t *testing.T) {
		testdeps.Command(t, "rsvg-convert", "librsvg2-bin")
		out := filepath.Join(dir, "trace.png")
		code, _, stderr := replay(t, "visualize", capture, "-o", out)
		if code != 0 {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		visKeep(t, out)
		f, err := os.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		img, err := png.Decode(f)
		if err != nil {
			t.Fatalf("not a PNG: %v", err)
		}
		if b := img.Bounds(); b.Dx() < 400 || b.Dy() < 300 {
			t.Errorf("PNG is %dx%d, too small for four sessions", b.Dx(), b.Dy())
		}
	})
	t.Run("helper missing", func(t *testing.T) {
		t.Setenv(visualize.HelperEnv, filepath.Join(dir, "no-helper"))
		out := filepath.Join(dir, "none.svg")
		code, _, stderr := replay(t, "visualize", capture, "-o", out)
		if code != 2 || !strings.Contains(stderr, "aaep-render") {
			t.Errorf("exit %d, stderr %q; want 2 and a word on the helper", code, stderr)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("a failed run left %s", out)
		}
	})
}

// visLongSession writes one AAEP session of n events as JSON lines: a loop
// of state changes, tool calls and streamed output, as a long agent run
// emits them.
func visLongSession(t testing.TB, path string, n int) {
	t.Helper()
	var b bytes.Buffer
	seq := 0
	at := int64(0)
	emit := func(typ, urgency, fields string) {
		ts := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC).Add(time.Duration(at) * time.Millisecond).Format("2006-01-02T15:04:05.000Z")
		fmt.Fprintf(&b, `{"@context":"https://aaep-protocol.org/context/v1","type":"aaep:agent.%s","event_id":"evt_%032x","session_id":"sess_long0001","timestamp":%q,"producer":{"agent_id":"bench-agent","agent_version":"1.0.0"},"urgency":%q,"sequence_number":%d%s}`+"\n",
			typ, seq+1, ts, urgency, seq, fields)
		seq++
		at += 40
	}
	state := func(from, to string) {
		emit("state.changed", "background", fmt.Sprintf(`,"from_state":%q,"to_state":%q,"summary_normal":"%s to %s"`, from, to, from, to))
	}
	tools := []string{"web_search", "read_file", "run_sql", "fetch_url"}
	emit("session.started", "normal", `,"summary_normal":"A long run.","requested_by":"user:bench"`)
	state("idle", "thinking")
	for round := 0; seq+10 <= n-1; round++ {
		tool := tools[round%len(tools)]
		id := fmt.Sprintf("call_%012x", round)
		state("thinking", "calling_tool")
		emit("tool.invoked", "normal", fmt.Sprintf(`,"tool":%q,"tool_call_id":%q,"summary_normal":"Calling %s","args_summary":"x","risk_level":"low"`, tool, id, tool))
		emit("tool.completed", "normal", fmt.Sprintf(`,"tool":%q,"tool_call_id":%q,"status":"success","duration_ms":40,"summary_normal":"done"`, tool, id))
		state("calling_tool", "writing_output")
		out := fmt.Sprintf("out_%010x", round)
		for k := 0; k < 4; k++ {
			emit("output.streaming", "normal", fmt.Sprintf(`,"output_id":%q,"chunk":"words ","position":%d,"complete":%t,"content_type":"text/plain"`, out, 6*k, k == 3))
		}
		state("writing_output", "thinking")
	}
	for seq < n-1 {
		emit("progress.updated", "background", `,"progress":{"percent":99},"summary_normal":"Almost done."`)
	}
	emit("session.completed", "normal", `,"summary_normal":"Done."`)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkVisualize measures aaep-replay visualize end to end on one
// session: read and check the JSON lines, collect the trace, write DOT,
// render SVG with the aaep-render helper (process start included), write
// the file.
func BenchmarkVisualize(b *testing.B) {
	goTool := binarytest.GoTool()
	dir := b.TempDir()
	helper := filepath.Join(dir, visualize.HelperName)
	if out, err := exec.Command(goTool, "build", "-o", helper, "github.com/aaep-tools/aaepkit/cmd/aaep-render").CombinedOutput(); err != nil {
		b.Fatalf("build aaep-render: %v\n%s", err, out)
	}
	b.Setenv(visualize.HelperEnv, helper)
	for _, n := range []int{100, 1_000, 10_000} {
		in := filepath.Join(dir, fmt.Sprintf("long%d.jsonl", n))
		visLongSession(b, in, n)
		out := in + ".svg"
		runOnce := func() {
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), cli.Streams{In: strings.NewReader(""), Out: &stdout, Err: &stderr}, []string{"visualize", in, "-o", out}); code != 0 {
				b.Fatalf("exit %d: %s", code, stderr.String())
			}
		}
		runOnce() // warm the helper's compilation cache
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			for b.Loop() {
				runOnce()
			}
		})
	}
}

// TestVisualizeLongSession draws a 10,000-event session: repeated
// transitions merge, so the drawing stays about as small as a short one's.
func TestVisualizeLongSession(t *testing.T) {
	t.Parallel() // in a directory of its own; DOT only (no helper)
	dir := t.TempDir()
	small, long := filepath.Join(dir, "small.jsonl"), filepath.Join(dir, "long.jsonl")
	visLongSession(t, small, 100)
	visLongSession(t, long, 10_000)
	sizes := map[string]int{}
	for _, in := range []string{small, long} {
		code, _, stderr := replay(t, "visualize", in, "--format", "dot")
		if code != 0 {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		dot := visRead(t, in+".dot")
		visKeep(t, in+".dot")
		sizes[in] = len(dot)
		if in == long && !strings.Contains(dot, "10,000 messages") {
			t.Errorf("long drawing does not say it has 10,000 messages")
		}
	}
	if sizes[long] > 2*sizes[small] {
		t.Errorf("DOT of 10,000 events is %d bytes, of 100 events %d: repeated transitions are not merged", sizes[long], sizes[small])
	}
}
