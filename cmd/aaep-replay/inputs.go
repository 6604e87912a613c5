package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/aaep-tools/aaepkit/inputs"
	"github.com/aaep-tools/aaepkit/internal/capedit"
	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/progress"
)

// inputsHelp is how verb help texts describe FILE arguments.
const inputsHelp = `FILE may be repeated and may be a glob (run-*.aaep), a directory (its .aaep,
.jsonl and .ndjson files) or - (standard input).`

// sources expands a verb's FILE arguments; an argument that names nothing
// is a usage error (exit 2) saying which.
func (a *app) sources(verb string, args []string) ([]inputs.Source, error) {
	opts := inputs.Options{Stdin: a.In}
	if !readsJSONL[verb] {
		opts.Extensions = []string{".aaep"} // a directory gives its captures
	}
	srcs, err := inputs.Expand(a.ctx, args, opts)
	if err != nil {
		return nil, cli.WithCode(cli.ExitUsage, fmt.Errorf("%s: %w", verb, err))
	}
	return srcs, nil
}

// readsJSONL are the verbs that read JSON Lines as well as captures.
var readsJSONL = map[string]bool{"check": true, "visualize": true}

// meter starts the progress display of a verb that reads whole captures:
// on stderr, only when it is a terminal and -q was not given.
func (a *app) meter(verb string) *progress.Meter {
	return progress.New(a.Err, verb, !a.quiet)
}

// screenLines is the height of the terminal standard output is, or 0 when
// it is not one.
func (a *app) screenLines() int {
	f, ok := a.Out.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return 0
	}
	_, h, err := term.GetSize(int(f.Fd()))
	if err != nil || h <= 4 {
		return 0
	}
	return h - 3 // room for the verdict and the prompt
}

// needFiles requires between lo and hi FILE arguments (hi < 0: no limit),
// and says which verb needs what when they are missing.
func needFiles(verb, what string, lo, hi int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch {
		case len(args) < lo:
			return cli.Usagef("%s needs %s (see aaep-replay %s --help)", verb, what, verb)
		case hi >= 0 && len(args) > hi:
			return cli.Usagef("%s takes %s, got %d arguments: %q", verb, what, len(args), args)
		}
		return nil
	}
}

// oneCapture turns a replaying verb's FILE arguments into the one capture
// it replays: the input itself when there is one (a file, or an object
// store URL the verb opens itself), or several inputs (a rotated set, a
// glob, a directory) merged in time order into a temporary capture that
// done removes.
func (a *app) oneCapture(verb string, args []string) (path string, done func(), err error) {
	srcs, err := a.sources(verb, args)
	if err != nil {
		return "", nil, err
	}
	if len(srcs) == 1 {
		if srcs[0].Name() == "-" {
			return "", nil, cli.Usagef("%s replays a capture file; standard input cannot be replayed (it must be read more than once)", verb)
		}
		return srcs[0].Name(), func() {}, nil
	}
	tmp, err := os.CreateTemp("", "aaep-"+verb+"-*.aaep")
	if err != nil {
		return "", nil, cli.WithCode(cli.ExitUsage, err)
	}
	tmp.Close()
	done = func() { os.Remove(tmp.Name()) }
	meter := a.meter(verb)
	res, err := capedit.Merge(a.ctx, inputs.Names(srcs), tmp.Name(), capedit.MergeOptions{JoinSources: true, Progress: meter})
	meter.Stop()
	if res != nil {
		for _, w := range res.Warnings {
			fmt.Fprintf(a.Err, "aaep-replay: warning: %s\n", w) // a torn part: what is replayed stops at it
		}
	}
	if err != nil {
		done()
		return "", nil, cli.WithCode(cli.ExitUsage, fmt.Errorf("%s: reading %d captures as one: %w", verb, len(srcs), err))
	}
	return tmp.Name(), done, nil
}
