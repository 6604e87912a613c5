package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/capedit"
	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/outfile"
	"github.com/aaep-tools/aaepkit/objstore"
)

// ImportOptions are what import was asked: its input and flags.
type ImportOptions struct {
	*app

	Input  string
	Output string
	Import capedit.ImportOptions
}

// NewCmdImport builds import; runF, when given, runs instead of importRun
// (tests of the command line).
func NewCmdImport(a *app, runF func(*ImportOptions) error) *cobra.Command {
	o := &ImportOptions{app: a}
	cmd := &cobra.Command{
		Use:   "import FILE.jsonl -o FILE.aaep",
		Short: "Turn JSON Lines (one message per line) into a capture",
		Long: `import reads JSON Lines, one message per line as the reference Python
aaep-capture writes them, and writes a capture. Receive times come from each
message's "timestamp" (AAEP) or "ts" (KAHN) field, relative to the first one
(the capture's start); they are flagged as such and never go backwards (an
earlier timestamp takes the previous message's time, and is counted). A line
that is not valid JSON or UTF-8 is kept as a flagged record with its line
number in the attribute "line"; blank lines are skipped.

A file written by export --with-meta is recognised by its first line and
turned back into the capture it came from, record for record.`,
		Example: `  aaep-replay import session.jsonl -o session.aaep`,
		Args:    needFiles("import", "the JSON Lines FILE to import", 1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Output == "" {
				return cli.Usagef("import needs an output file: -o FILE.aaep")
			}
			o.Input = args[0]
			if objstore.IsURL(o.Input) {
				return cli.Usagef("import %s: import reads a local JSON Lines file or - (standard input): copy the object to a file, or pipe it in (aws s3 cp %s - | aaep-replay import - -o FILE.aaep)", o.Input, o.Input)
			}
			if runF != nil {
				return runF(o)
			}
			return importRun(o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.Output, "output", "o", "", "capture file to write (required; - for standard output)")
	f.BoolVar(&o.Import.Force, "force", false, "replace an original recording (a capture a recorder wrote) at the output; never an input")
	f.BoolVar(&o.Import.Plain, "plain", false, "read every line as a message, even if the file looks like a --with-meta export")
	return cmd
}

// importRun writes the JSON Lines input as a capture.
func importRun(o *ImportOptions) error {
	a, out, opts := o.app, o.Output, o.Import
	opts.Tool = capfile.ToolReplay + "/" + version
	opts.Stdout = a.Out
	opts.Progress = a.meter("import")
	in, name, done, err := a.spoolInput("import", o.Input, "stdin.jsonl")
	if err != nil {
		return err
	}
	defer done()
	st, err := capedit.Import(a.ctx, in, out, opts)
	if in != o.Input {
		err = renamed(err, in, name)
	}
	opts.Progress.Stop()
	if err != nil && !outfile.IsPartial(err) {
		return fileopsError(err)
	}
	form := "plain JSON Lines"
	if st.WithMeta {
		form = "a --with-meta export"
	}
	fmt.Fprintf(a.summaryTo(out), "imported %s from %s of %s into %s\n", fileopsCount(st.Records, "record", "records"), fileopsCount(st.Lines, "line", "lines"), form, outName(out))
	if st.Invalid > 0 {
		fmt.Fprintf(a.Err, "aaep-replay: warning: %s not valid JSON or UTF-8; kept as flagged records with their line numbers\n", fileopsCount(st.Invalid, "line is", "lines are"))
	}
	if st.Backwards > 0 {
		fmt.Fprintf(a.Err, "aaep-replay: warning: %s went backwards; those messages took the previous message's time\n", fileopsCount(st.Backwards, "timestamp", "timestamps"))
	}
	if !st.WithMeta && st.Untimed > 0 {
		fmt.Fprintf(a.Err, "aaep-replay: warning: %s no readable timestamp; they took the previous message's time\n", fileopsCount(st.Untimed, "message has", "messages have"))
	}
	return fileopsError(err)
}
