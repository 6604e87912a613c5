package render_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aaep-tools/aaepkit/visualize"
	"github.com/aaep-tools/aaepkit/visualize/internal/fixture"
	"github.com/aaep-tools/aaepkit/visualize/render"
)

// golden reads one of visualize's golden DOT files.
func golden(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", name+".dot"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSVGOfGoldenDrawings(t *testing.T) {
	tests := []struct {
		name string
		// red texts the drawing must show; plain texts it must show as written.
		red, plain []string
	}{
		{name: "sessions", red: fixture.Violations, plain: []string{"Legend", "aaep session sess_clean", "output.streaming out_1", "×13, first #9 +4.500s"}},
		{name: "broken", red: []string{"SEQ-TOOL-PAIR", "SEQ-LIFECYCLE-TERMINAL: no terminal event"}, plain: []string{"aaep session sess_broken"}},
		{name: "long", red: []string{"SEQ-STREAM-POSITION: position decreased"}, plain: []string{"10,000 messages", "tool.invoked web_search ×250, first #2 +0.040s"}},
		{name: "empty", plain: []string{"no session steps or findings"}},
		{name: "nostep", red: []string{"ENV-EVENT-ID: no event_id (message 1)", "SEQ-LIFECYCLE-START: never started", "STREAM-NOT-JSON: not JSON (message 0)"},
			plain: []string{"stream findings · (no session id)"}},
		// Input text appears as written: entities, markup and DOT escapes
		// from the input are not interpreted.
		{name: "hostile", red: []string{`R"1: q"uote \back\slash new line \N \G \l &nbsp; &amp`, "R<2>: <&>", "R&3"},
			plain: []string{"&loop; x", "2. <loop> q", "aaep session q\"uote \\\u2060back\\\u2060slash new line \\\u2060N \\\u2060G \\\u2060l &nbsp; &amp; <b>tag</b>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svg, err := render.SVG(context.Background(), golden(t, tt.name))
			if err != nil {
				t.Fatal(err)
			}
			texts, err := fixture.SVGTexts(svg)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tt.red {
				found := fixture.FindText(texts, s)
				if len(found) == 0 {
					t.Errorf("no text shows %q", s)
					continue
				}
				for _, f := range found {
					if f.Fill != fixture.Red {
						t.Errorf("text %q is %s, want red %s", f.Content, f.Fill, fixture.Red)
					}
				}
			}
			for _, s := range tt.plain {
				if len(fixture.FindText(texts, s)) == 0 {
					t.Errorf("no text shows %q", s)
				}
			}
			if !bytes.Contains(svg, []byte(`font-family="Verdana,DejaVu Sans,sans-serif"`)) {
				t.Errorf("svg lacks the font fallbacks")
			}
		})
	}
}

func TestSVGErrors(t *testing.T) {
	tests := []struct {
		name string
		dot  string
		ctx  func() context.Context
		want string
	}{
		{name: "syntax error", dot: "digraph { a -> ; }", want: "parse dot"},
		{name: "not dot", dot: "hello", want: "parse dot"},
		{name: "cancelled", dot: "digraph { a -> b }", ctx: func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}, want: "context canceled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if tt.ctx != nil {
				ctx = tt.ctx()
			}
			svg, err := render.SVG(ctx, []byte(tt.dot))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("SVG = %d bytes, %v; want an error containing %q", len(svg), err, tt.want)
			}
		})
	}
	// The instance still works after errors.
	if _, err := render.SVG(context.Background(), []byte("digraph { a -> b }")); err != nil {
		t.Errorf("SVG after errors: %v", err)
	}
}

// TestSVGConcurrent renders from several goroutines at once: the package
// lock serialises them (go test -race checks it) and every result is the
// same document.
func TestSVGConcurrent(t *testing.T) {
	dot := golden(t, "broken")
	const n = 4
	out := make([][]byte, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i], errs[i] = render.SVG(context.Background(), dot)
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("goroutine %d: %v", i, errs[i])
		}
		if !bytes.Equal(out[i], out[0]) {
			t.Errorf("goroutine %d drew a different SVG", i)
		}
	}
}

// TestLazyInit runs a fresh process: the Graphviz context does not exist
// until the first SVG call.
func TestLazyInit(t *testing.T) {
	if os.Getenv("RENDER_LAZY_CHILD") == "1" {
		if render.Initialized() {
			t.Fatal("graphviz context created before the first SVG call")
		}
		if _, err := render.SVG(context.Background(), []byte("digraph { a -> b }")); err != nil {
			t.Fatal(err)
		}
		if !render.Initialized() {
			t.Fatal("graphviz context not created by SVG")
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestLazyInit$", "-test.v")
	cmd.Env = append(os.Environ(), "RENDER_LAZY_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("--- PASS: TestLazyInit")) {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

func TestMain_(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		stdin    string
		code     int
		stdout   string
		stderr   string
		validSVG bool
	}{
		{name: "renders", stdin: "digraph { a -> b [label=\"x\"] }", code: 0, validSVG: true},
		{name: "help", args: []string{"--help"}, code: 0, stdout: "usage: aaep-render"},
		{name: "unexpected argument", args: []string{"x.dot"}, code: 2, stderr: `unexpected argument "x.dot"`},
		{name: "empty input", stdin: " \n", code: 2, stderr: "no dot input"},
		{name: "bad dot", stdin: "digraph {", code: 1, stderr: "aaep-render: parse dot"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := render.Main(tt.args, strings.NewReader(tt.stdin), &out, &errOut)
			if code != tt.code {
				t.Fatalf("Main = %d, want %d (stderr %q)", code, tt.code, errOut.String())
			}
			if !strings.Contains(out.String(), tt.stdout) || !strings.Contains(errOut.String(), tt.stderr) {
				t.Errorf("stdout %q, stderr %q; want them to contain %q and %q", trim(out.String()), errOut.String(), tt.stdout, tt.stderr)
			}
			if tt.validSVG {
				if _, err := fixture.SVGTexts(out.Bytes()); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

func trim(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// dotOfLong is the DOT of one session of n events, as aaep-replay draws it.
func dotOfLong(n int) []byte {
	c := visualize.NewCollector(visualize.CollectorOptions{})
	sink := c.Sink()
	fixture.LongFunc("sess_long", n, func(e fixture.Event) { fixture.Feed([]fixture.Event{e}, sink) })
	return visualize.DOT(c.Traces(), visualize.DOTOptions{Title: "long.aaep", Machines: fixture.Machines()})
}

// BenchmarkSVG measures Graphviz layout and SVG output of one session's
// trace (the DOT is made once, outside the timing; see visualize's
// BenchmarkDOT for that part).
func BenchmarkSVG(b *testing.B) {
	for _, n := range []int{100, 1_000, 10_000} {
		dot := dotOfLong(n)
		b.Run(fmtEvents(n), func(b *testing.B) {
			// Warm: the first call creates the Graphviz context.
			if _, err := render.SVG(context.Background(), dot); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := render.SVG(context.Background(), dot); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func fmtEvents(n int) string { return fmt.Sprintf("events=%d", n) }
