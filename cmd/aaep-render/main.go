// Command aaep-render lays out Graphviz DOT text (stdin) into SVG (stdout).
// aaep-replay runs it to draw traces; it is a separate program because
// go-graphviz compiles its WebAssembly Graphviz when a program starts, a cost
// aaep-replay's other commands should not pay. Install it next to
// aaep-replay or in PATH (or name it in AAEP_RENDER). Its temporary files
// (the compiled Graphviz) go to a private directory of the user's, never to
// the shared temp directory (package rendertmp/setenv).
package main

import (
	"fmt"
	"os"

	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/rendertmp/setenv" // first: TMPDIR before go-graphviz's init
	"github.com/aaep-tools/aaepkit/visualize/render"
)

// version is set at build time with -ldflags "-X main.version=..." (make
// build); go install and go build get the same form from the commit they
// build (cli.Version).
var version string

func init() { version = cli.Version(version) }

func main() {
	if setenv.Err != nil {
		// Graphviz started without a cache; nothing is drawn over a
		// directory that is not the user's alone.
		fmt.Fprintf(os.Stderr, "aaep-render: %v\n", setenv.Err)
		os.Exit(2)
	}
	render.Version = version
	os.Exit(render.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
