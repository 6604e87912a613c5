package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/progress"
	"github.com/aaep-tools/aaepkit/recording"
)

// inputsHelp is how verb help texts describe FILE arguments.
const inputsHelp = `FILE may be repeated and may be a glob (run-*.aaep), a directory (its .aaep,
.jsonl and .ndjson files) or - (standard input).`

// inputOptions says how a verb opens its inputs: standard input, object
// storage as the root's flags say, and for a verb that reads captures
// only, directories and prefixes searched for captures.
func (a *app) inputOptions(verb string) recording.Options {
	opts := recording.Options{Stdin: a.In, Storage: a.storage}
	if !readsJSONL[verb] {
		opts.Extensions = []string{".aaep"} // a directory gives its captures
	}
	return opts
}

// recordings opens a verb's FILE arguments as recordings; an argument that
// names nothing is a usage error (exit 2) saying which.
func (a *app) recordings(verb string, args []string) ([]*recording.Recording, error) {
	return a.recordingsWith(verb, args, a.inputOptions(verb))
}

// recordingsWith is recordings with the options given.
func (a *app) recordingsWith(verb string, args []string, opts recording.Options) ([]*recording.Recording, error) {
	recs, err := recording.Open(a.ctx, args, opts)
	var pe *recording.PartError
	switch {
	case errors.As(err, &pe):
		return nil, cli.Input(err) // it names the file
	case err != nil:
		return nil, cli.Input(fmt.Errorf("%s: %w", verb, err))
	}
	return recs, nil
}

// readsJSONL are the verbs that read JSON Lines as well as captures.
var readsJSONL = map[string]bool{"check": true, "visualize": true}

// meter starts the progress display of a verb that reads whole captures:
// on stderr, only when it is a terminal and -q was not given.
func (a *app) meter(verb string) *progress.Meter {
	return progress.New(cli.Raw(a.Err), verb, !a.quiet)
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

// replayed opens a replaying verb's FILE arguments as the one capture it
// replays: a recording's parts one after the other, several recordings
// interleaved in time order (recording.Join), read through a cursor over
// the parts, never merged into a file.
func (a *app) replayed(verb string, args []string) (*recording.Recording, []string, error) {
	recs, err := a.recordings(verb, args)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range recs {
		for _, p := range r.Parts {
			switch {
			case p.Name == "-":
				return nil, nil, cli.Usagef("%s replays a capture file; standard input cannot be replayed (it must be read more than once)", verb)
			case p.Streamed():
				return nil, nil, cli.Usagef("%s replays a capture file; %s is a stream (a FIFO or a device), which cannot be replayed (it must be read more than once)", verb, p.Name)
			case p.Format == recording.FormatJSONL:
				return nil, nil, cli.Usagef("%s: %s is a JSON Lines file, not a capture (aaep-replay import turns it into one)", verb, p.Name)
			}
		}
	}
	return recording.Join(recs), recording.Paths(recs), nil
}
