package main

import (
	"fmt"
	"io"

	"github.com/aaep-tools/aaepkit/internal/capedit"
	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/outfile"
)

// fileopsWarn reports the torn inputs an edit worked around.
func fileopsWarn(w io.Writer, ws []capedit.Warning) {
	for _, x := range ws {
		fmt.Fprintf(w, "aaep-replay: warning: %s\n", x)
	}
}

// fileopsError gives an edit's error the exit code of a file error.
func fileopsError(err error) error { return cli.WithCode(cli.ExitUsage, err) }

// summaryTo is where an edit says what it wrote: standard output, unless the
// output itself went there ("-o -").
func (a *app) summaryTo(out string) io.Writer {
	if out == "-" {
		return a.Err
	}
	return a.Out
}

// outName names an output in messages.
func outName(out string) string {
	if out == "-" {
		return "standard output"
	}
	return out
}

// fileopsDone ends an edit: on success or after damage in an input (the
// output then holds every record read before it: outfile.IsPartial) the
// summary is printed, then the damage is reported (exit 2).
func fileopsDone(err error, summary func()) error {
	if err == nil || outfile.IsPartial(err) {
		summary()
	}
	return fileopsError(err)
}

// fileopsCount writes n with the singular or plural words that follow it.
func fileopsCount(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
