// Package render turns Graphviz DOT text into SVG with go-graphviz (a
// WebAssembly build of Graphviz run by wazero).
//
// Importing this package is not free: go-graphviz compiles its WebAssembly
// module in a package init function (about 0.5 s and 50 MB the first time on
// a machine, then about 20 ms and 20 MB from its compilation cache under the
// temporary directory, which visualize.Renderer makes a private directory of
// the user's). That is why package visualize does not import it and
// renders through the aaep-render helper process, whose main is Main.
//
// Graphviz's WebAssembly instance is not safe for concurrent use: every call
// goes through one package-level lock, and the Graphviz context is created
// lazily, on the first call to SVG.
package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/goccy/go-graphviz"
)

var (
	mu sync.Mutex
	gv *graphviz.Graphviz
)

// Initialized reports whether the Graphviz context has been created (by a
// call to SVG).
func Initialized() bool {
	mu.Lock()
	defer mu.Unlock()
	return gv != nil
}

// SVG lays out dot with Graphviz's dot layout and returns the SVG document.
// Calls are serialised by one package-level lock.
func SVG(ctx context.Context, dot []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	mu.Lock()
	defer mu.Unlock()
	if gv == nil {
		g, err := graphviz.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("start graphviz: %w", err)
		}
		gv = g
	}
	graph, err := graphviz.ParseBytes(dot)
	if err != nil {
		return nil, fmt.Errorf("parse dot: %w", err)
	}
	if graph == nil {
		return nil, errors.New("parse dot: no graph in input")
	}
	defer graph.Close()
	var buf bytes.Buffer
	if err := gv.Render(ctx, graph, graphviz.SVG, &buf); err != nil {
		return nil, fmt.Errorf("render svg: %w", err)
	}
	if buf.Len() == 0 {
		return nil, errors.New("render svg: graphviz produced no output")
	}
	return widenFonts(buf.Bytes()), nil
}

// widenFonts gives the SVG's font families fallbacks. Graphviz sizes text
// with the metrics of the one family named in the DOT (Verdana, wide, so
// text fits in most fonts); the fallbacks are fonts of similar width for
// systems without it (DejaVu Sans on most Linux systems, where rsvg-convert
// rasterises PNGs).
func widenFonts(svg []byte) []byte {
	return bytes.ReplaceAll(svg, []byte(`font-family="Verdana"`), []byte(`font-family="Verdana,DejaVu Sans,sans-serif"`))
}
