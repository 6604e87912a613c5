package render

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// MaxDOT bounds the DOT text Main accepts (64 MiB); visualize's drawings
// are far smaller, whatever the session's length.
const MaxDOT = 64 << 20

const usage = `usage: aaep-render < trace.dot > trace.svg

aaep-render lays out Graphviz DOT text read from standard input and writes
the SVG document to standard output. aaep-replay runs it to draw traces, so
that its other commands never load Graphviz.
`

// Main is the body of the aaep-render helper: DOT on stdin, SVG on stdout,
// errors on stderr. It returns the exit code: 0 done, 1 Graphviz failed, 2
// usage or input error.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return run(args, stdin, stdout, stderr, MaxDOT)
}

// Version is what --version prints; aaep-render's main sets it.
var Version = "0.1.0-dev"

// run is Main with the input limit as a parameter.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer, limit int) int {
	for _, a := range args {
		switch a {
		case "-h", "-help", "--help":
			fmt.Fprint(stdout, usage)
			return 0
		case "-v", "--version":
			fmt.Fprintf(stdout, "aaep-render version %s (Graphviz through go-graphviz)\n", Version)
			return 0
		default:
			fmt.Fprintf(stderr, "aaep-render: unexpected argument %q\n%s", a, usage)
			return 2
		}
	}
	dot, err := io.ReadAll(io.LimitReader(stdin, int64(limit)+1))
	if err != nil {
		fmt.Fprintf(stderr, "aaep-render: read dot: %v\n", err)
		return 2
	}
	if len(dot) > limit {
		fmt.Fprintf(stderr, "aaep-render: dot input larger than %d bytes\n", limit)
		return 2
	}
	if len(bytes.TrimSpace(dot)) == 0 {
		fmt.Fprintf(stderr, "aaep-render: no dot input on stdin\n")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	svg, err := SVG(ctx, dot)
	if err != nil {
		fmt.Fprintf(stderr, "aaep-render: %v\n", err)
		return 1
	}
	if _, err := stdout.Write(svg); err != nil {
		fmt.Fprintf(stderr, "aaep-render: write svg: %v\n", err)
		return 1
	}
	return 0
}
