package visualize_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/internal/binarytest"
	"github.com/aaep-tools/aaepkit/internal/testdeps"
	"github.com/aaep-tools/aaepkit/visualize"
	"github.com/aaep-tools/aaepkit/visualize/internal/fixture"
)

var drawings = flag.String("drawings", "", "write the drawings made by the tests to this directory, to look at them")

func TestParseFormat(t *testing.T) {
	tests := []struct {
		in      string
		want    visualize.Format
		wantErr bool
	}{
		{"svg", visualize.FormatSVG, false},
		{"PNG", visualize.FormatPNG, false},
		{"dot", visualize.FormatDOT, false},
		{"gv", "", true},
		{"", "", true},
		{"pdf", "", true},
	}
	for _, tt := range tests {
		got, err := visualize.ParseFormat(tt.in)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("ParseFormat(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestFormatOf(t *testing.T) {
	tests := []struct {
		path string
		want visualize.Format
		ok   bool
	}{
		{"trace.svg", visualize.FormatSVG, true},
		{"dir.v2/Trace.PNG", visualize.FormatPNG, true},
		{"a.dot", visualize.FormatDOT, true},
		{"a.gv", visualize.FormatDOT, true},
		{"session.aaep", "", false},
		{"trace", "", false},
		{"-", "", false},
	}
	for _, tt := range tests {
		got, ok := visualize.FormatOf(tt.path)
		if got != tt.want || ok != tt.ok {
			t.Errorf("FormatOf(%q) = %q, %v; want %q, %v", tt.path, got, ok, tt.want, tt.ok)
		}
	}
}

// buildHelper builds the aaep-render helper into dir and returns its path.
func buildHelper(t testing.TB, dir string) string {
	t.Helper()
	goTool := binarytest.GoTool()
	path := filepath.Join(dir, visualize.HelperName)
	cmd := exec.Command(goTool, "build", "-o", path, "github.com/aaep-tools/aaepkit/cmd/aaep-render")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", visualize.HelperName, err, out)
	}
	return path
}

func buildHelperB(b *testing.B) string { return buildHelper(b, b.TempDir()) }

func writeArtifact(t *testing.T, name string, data []byte) {
	if *drawings == "" {
		return
	}
	if err := os.MkdirAll(*drawings, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(*drawings, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDrawThroughHelper draws the fixture sessions as SVG with the real
// helper process and as PNG with rsvg-convert, and checks both outputs.
func TestDrawThroughHelper(t *testing.T) {
	testdeps.Command(t, "rsvg-convert", "librsvg2-bin")
	helper := buildHelper(t, t.TempDir())
	r := &visualize.Renderer{Path: helper}
	ctx := context.Background()
	tests := []struct {
		name string
		dot  string
	}{
		{"sessions", dotOf(t, fixture.Sessions(), visualize.CollectorOptions{}, visualize.DOTOptions{Title: "fixture.aaep", Machines: fixture.Machines()})},
		{"long", dotOf(t, fixture.Long("sess_long", 10_000), visualize.CollectorOptions{}, visualize.DOTOptions{Title: "long.aaep", Machines: fixture.Machines()})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svg, err := r.SVG(ctx, []byte(tt.dot))
			if err != nil {
				t.Fatal(err)
			}
			writeArtifact(t, tt.name+".svg", svg)
			texts, err := fixture.SVGTexts(svg)
			if err != nil {
				t.Fatal(err)
			}
			if tt.name == "sessions" {
				for _, v := range fixture.Violations {
					found := fixture.FindText(texts, v)
					if len(found) == 0 || found[0].Fill != fixture.Red {
						t.Errorf("violation %q: %v, want a red text", v, found)
					}
				}
			}

			png1, err := visualize.Draw(ctx, []byte(tt.dot), visualize.FormatPNG, r)
			if err != nil {
				t.Fatal(err)
			}
			writeArtifact(t, tt.name+".png", png1)
			img, err := png.Decode(bytes.NewReader(png1))
			if err != nil {
				t.Fatalf("not a PNG: %v", err)
			}
			checkRaster(t, img, svg)
		})
	}
}

// checkRaster checks that img is the SVG's drawing at PNGScale: its size
// matches the SVG's, it is mostly white, and it holds the violation red.
func checkRaster(t *testing.T, img image.Image, svg []byte) {
	t.Helper()
	b := img.Bounds()
	w, h := svgPoints(t, svg)
	wantW, wantH := int(w*visualize.PNGScale+0.5), int(h*visualize.PNGScale+0.5)
	if abs(b.Dx()-wantW) > 2 || abs(b.Dy()-wantH) > 2 {
		t.Errorf("PNG is %dx%d, want about %dx%d (SVG %gx%gpt at %g pixels a point)", b.Dx(), b.Dy(), wantW, wantH, w, h, visualize.PNGScale)
	}
	var white, red, total int
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			r, g, bl = r>>8, g>>8, bl>>8
			total++
			switch {
			case r > 245 && g > 245 && bl > 245:
				white++
			case r > 190 && g < 70 && bl < 70: // #dc2626 and its anti-aliased edges
				red++
			}
		}
	}
	if white < total/2 {
		t.Errorf("only %d of %d sampled pixels are white: the background is not drawn", white, total)
	}
	if red == 0 {
		t.Errorf("no red pixel: the violations are not drawn")
	}
}

func svgPoints(t *testing.T, svg []byte) (w, h float64) {
	t.Helper()
	head := string(svg[:min(len(svg), 2048)])
	var ws, hs string
	for _, f := range strings.Fields(head) {
		if strings.HasPrefix(f, `width="`) && ws == "" {
			ws = strings.TrimSuffix(strings.TrimPrefix(f, `width="`), `pt"`)
		}
		if strings.HasPrefix(f, `height="`) && hs == "" {
			hs = strings.TrimSuffix(strings.TrimPrefix(f, `height="`), `pt"`)
		}
	}
	if _, err := fmt.Sscan(ws, &w); err != nil {
		t.Fatalf("svg width %q: %v", ws, err)
	}
	if _, err := fmt.Sscan(hs, &h); err != nil {
		t.Fatalf("svg height %q: %v", hs, err)
	}
	return w, h
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func TestFindHelper(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "my-render")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Run("environment variable", func(t *testing.T) {
		t.Setenv(visualize.HelperEnv, fake)
		if got, err := visualize.FindHelper(); err != nil || got != fake {
			t.Errorf("FindHelper() = %q, %v; want %q", got, err, fake)
		}
	})
	t.Run("environment variable naming a missing file", func(t *testing.T) {
		t.Setenv(visualize.HelperEnv, filepath.Join(dir, "missing"))
		if _, err := visualize.FindHelper(); !errors.Is(err, visualize.ErrNoHelper) {
			t.Errorf("FindHelper() error %v, want ErrNoHelper", err)
		}
	})
	t.Run("PATH", func(t *testing.T) {
		t.Setenv(visualize.HelperEnv, "")
		bin := t.TempDir()
		p := filepath.Join(bin, visualize.HelperName)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv("PATH", bin)
		if got, err := visualize.FindHelper(); err != nil || got != p {
			t.Errorf("FindHelper() = %q, %v; want %q", got, err, p)
		}
	})
	t.Run("nowhere", func(t *testing.T) {
		t.Setenv(visualize.HelperEnv, "")
		t.Setenv("PATH", t.TempDir())
		_, err := visualize.FindHelper()
		if !errors.Is(err, visualize.ErrNoHelper) || !strings.Contains(err.Error(), "--format dot") {
			t.Errorf("FindHelper() error %v, want ErrNoHelper saying how to install it or avoid it", err)
		}
	})
}

func TestRendererErrors(t *testing.T) {
	dir := t.TempDir()
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, path, want string
	}{
		{"helper fails", script("fails", "echo 'aaep-render: parse dot: syntax error' >&2; exit 1"), "parse dot: syntax error"},
		{"helper writes no svg", script("junk", "echo hello"), "not an SVG document"},
		{"helper missing", filepath.Join(dir, "missing"), "missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &visualize.Renderer{Path: tt.path}
			_, err := r.SVG(context.Background(), []byte("digraph {}"))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("SVG error %v, want one containing %q", err, tt.want)
			}
		})
	}
	t.Run("output before the document is dropped", func(t *testing.T) {
		r := &visualize.Renderer{Path: script("noisy", `printf 'warning\n<?xml version="1.0"?>\n<svg></svg>\n'`)}
		svg, err := r.SVG(context.Background(), []byte("digraph {}"))
		if err != nil || !bytes.HasPrefix(svg, []byte("<?xml")) {
			t.Errorf("SVG = %q, %v; want the document only", svg, err)
		}
	})
}

func TestRasterizePNGErrors(t *testing.T) {
	t.Run("not svg", func(t *testing.T) {
		_, err := visualize.RasterizePNG(context.Background(), []byte("not svg"))
		if err == nil || !strings.Contains(err.Error(), "rsvg-convert") {
			t.Errorf("error %v, want rsvg-convert's complaint", err)
		}
	})
	t.Run("rsvg-convert missing", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		_, err := visualize.RasterizePNG(context.Background(), []byte("<svg/>"))
		if !errors.Is(err, visualize.ErrNoRasterizer) || !strings.Contains(err.Error(), "librsvg2-bin") {
			t.Errorf("error %v, want ErrNoRasterizer naming the package", err)
		}
	})
}

// TestNoGraphvizInVisualize: visualize must not link go-graphviz (whose
// package init compiles WebAssembly), so that programs that only collect
// traces or write DOT never pay for it. The render package must link it
// (so that this check can fail).
func TestNoGraphvizInVisualize(t *testing.T) {
	goTool := binarytest.GoTool()
	deps := func(pkg string) string {
		out, err := exec.Command(goTool, "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		return string(out)
	}
	const gv = "github.com/goccy/go-graphviz"
	if d := deps("github.com/aaep-tools/aaepkit/visualize"); strings.Contains(d, gv) {
		t.Errorf("visualize depends on %s", gv)
	}
	if d := deps("github.com/aaep-tools/aaepkit/visualize/render"); !strings.Contains(d, gv) {
		t.Errorf("render does not depend on %s; the check above proves nothing", gv)
	}
}
