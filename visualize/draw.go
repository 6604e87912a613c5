package visualize

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Format is an output format of a drawing.
type Format string

// Output formats.
const (
	FormatSVG Format = "svg"
	FormatPNG Format = "png"
	FormatDOT Format = "dot"
)

// ParseFormat parses "svg", "png" or "dot" (any case).
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(s)); f {
	case FormatSVG, FormatPNG, FormatDOT:
		return f, nil
	}
	return "", fmt.Errorf("unknown format %q (want svg, png or dot)", s)
}

// FormatOf returns the format a file name's extension names (".svg",
// ".png", ".dot" or ".gv"), and false for any other name.
func FormatOf(path string) (Format, bool) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".svg":
		return FormatSVG, true
	case ".png":
		return FormatPNG, true
	case ".dot", ".gv":
		return FormatDOT, true
	}
	return "", false
}

// HelperName is the program that turns DOT into SVG (see package render).
const HelperName = "aaep-render"

// HelperEnv names the environment variable that, when set, is the path of
// the helper, overriding the search.
const HelperEnv = "AAEP_RENDER"

// ErrNoHelper means the aaep-render helper could not be found.
var ErrNoHelper = errors.New("visualize: the " + HelperName + " helper was not found")

// FindHelper returns the path of the aaep-render helper: $AAEP_RENDER when
// set, else aaep-render in the directory of the running program, else
// aaep-render in PATH.
func FindHelper() (string, error) {
	if p := os.Getenv(HelperEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%w: %s=%s: %v", ErrNoHelper, HelperEnv, p, err)
		}
		return p, nil
	}
	var looked []string
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), HelperName)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
		looked = append(looked, "next to "+exe)
	}
	if p, err := exec.LookPath(HelperName); err == nil {
		return p, nil
	}
	looked = append(looked, "in PATH")
	return "", fmt.Errorf("%w (looked %s; install it with "+
		"`go install github.com/aaep-tools/aaepkit/cmd/aaep-render@latest`, "+
		"set %s to its path, or draw with --format dot)", ErrNoHelper, strings.Join(looked, " and "), HelperEnv)
}

// Renderer turns DOT into SVG by running the aaep-render helper, so that
// the program using it never loads Graphviz itself.
type Renderer struct {
	// Path is the helper's path; empty means FindHelper.
	Path string
}

// SVG returns the SVG drawing of dot. The helper is killed when ctx ends.
func (r *Renderer) SVG(ctx context.Context, dot []byte) ([]byte, error) {
	path := r.Path
	if path == "" {
		p, err := FindHelper()
		if err != nil {
			return nil, err
		}
		path = p
	}
	tmp, err := HelperTempDir()
	if err != nil {
		return nil, fmt.Errorf("render svg with %s: %w", path, err)
	}
	cmd := exec.CommandContext(ctx, path)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	cmd.Stdin = bytes.NewReader(dot)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("render svg: %w", context.Cause(ctx))
		}
		return nil, fmt.Errorf("render svg with %s: %s", path, helperError(errOut.String(), err))
	}
	svg := out.Bytes()
	// The WebAssembly Graphviz may print to standard output before the
	// document; keep the document only.
	if i := bytes.Index(svg, []byte("<?xml")); i > 0 {
		svg = svg[i:]
	}
	if !bytes.Contains(svg, []byte("<svg")) || !bytes.Contains(svg, []byte("</svg>")) {
		return nil, fmt.Errorf("render svg with %s: output is not an SVG document (%d bytes)", path, len(out.Bytes()))
	}
	return svg, nil
}

// helperError is what the helper's failure says: its standard error; of a
// Go panic (a helper that crashed), the panic's line without the goroutine
// trace.
func helperError(stderr string, err error) string {
	msg := strings.TrimSpace(stderr)
	if i := strings.Index(msg, "panic: "); i >= 0 {
		line, _, _ := strings.Cut(msg[i:], "\n")
		return "the helper crashed: " + strings.TrimSpace(line)
	}
	if msg == "" {
		return err.Error()
	}
	return msg
}

// RasterizerName is the program RasterizePNG runs.
const RasterizerName = "rsvg-convert"

// ErrNoRasterizer means rsvg-convert is not installed.
var ErrNoRasterizer = errors.New("visualize: PNG output needs " + RasterizerName +
	", which is not installed (Debian/Ubuntu: apt-get install librsvg2-bin; macOS: brew install librsvg); " +
	"or draw with --format svg")

// pngSignature starts every PNG file.
var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// maxPNGSide keeps the raster under cairo's surface limit (32767 pixels a side).
const maxPNGSide = 32000

// PNGScale is the size of PNG drawings in pixels per SVG point: 1.5, so
// that the 9-point edge labels stay legible.
const PNGScale = 1.5

// RasterizePNG turns an SVG document into a PNG image with rsvg-convert
// (go-graphviz's own PNG renderer draws broken edges). The scale is
// PNGScale, less for drawings that would exceed cairo's size limit.
func RasterizePNG(ctx context.Context, svg []byte) ([]byte, error) {
	path, err := exec.LookPath(RasterizerName)
	if err != nil {
		return nil, ErrNoRasterizer
	}
	scale := PNGScale
	if w, h, ok := svgSize(svg); ok {
		if side := max(w, h); side*scale > maxPNGSide {
			scale = maxPNGSide / side
		}
	}
	// rsvg-convert draws a point as 96/72 pixels at zoom 1.
	zoom := scale * 72 / 96
	cmd := exec.CommandContext(ctx, path, "--format=png", "--zoom="+strconv.FormatFloat(zoom, 'f', 4, 64))
	cmd.Stdin = bytes.NewReader(svg)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("rasterise png: %w", context.Cause(ctx))
		}
		msg := strings.TrimSpace(errOut.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("rasterise png with %s: %s", path, msg)
	}
	if !bytes.HasPrefix(out.Bytes(), pngSignature) {
		return nil, fmt.Errorf("rasterise png with %s: output is not a PNG image", path)
	}
	return out.Bytes(), nil
}

var svgSizeRE = regexp.MustCompile(`<svg[^>]*?\swidth="([0-9.]+)pt"[^>]*?\sheight="([0-9.]+)pt"`)

// svgSize reads the width and height (in points) of a Graphviz SVG.
func svgSize(svg []byte) (w, h float64, ok bool) {
	head := svg[:min(len(svg), 4096)]
	m := svgSizeRE.FindSubmatch(head)
	if m == nil {
		return 0, 0, false
	}
	w, err1 := strconv.ParseFloat(string(m[1]), 64)
	h, err2 := strconv.ParseFloat(string(m[2]), 64)
	return w, h, err1 == nil && err2 == nil
}

// Draw renders dot in format f: the DOT text itself, an SVG document made
// by r, or a PNG image rasterised from that SVG.
func Draw(ctx context.Context, dot []byte, f Format, r *Renderer) ([]byte, error) {
	switch f {
	case FormatDOT:
		return dot, nil
	case FormatSVG, FormatPNG:
		if r == nil {
			r = &Renderer{}
		}
		svg, err := r.SVG(ctx, dot)
		if err != nil || f == FormatSVG {
			return svg, err
		}
		return RasterizePNG(ctx, svg)
	}
	return nil, fmt.Errorf("unknown format %q (want svg, png or dot)", f)
}
