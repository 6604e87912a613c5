package main

import (
	"fmt"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/capedit"
	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/timing"
)

// CutOptions are what cut was asked: its input and flags.
type CutOptions struct {
	*app

	Inputs []string
	Output string
	// From and Until are the range as given; Cut holds them parsed.
	From  string
	Until string
	Cut   capedit.CutOptions
	// Reading says how the end of reading a damaged or torn capture is judged.
	Reading capfile.ReadPolicy
}

// NewCmdCut builds cut; runF, when given, runs instead of cutRun (tests of
// the command line).
func NewCmdCut(a *app, runF func(*CutOptions) error) *cobra.Command {
	o := &CutOptions{app: a}
	cmd := &cobra.Command{
		Use:   "cut FILE... [--from POS] [--until POS] -o OUT",
		Short: "Write the part of a capture between two times or record numbers",
		Long: `cut writes the records from --from to --until (both included) into a new
capture. A position is read as serve reads it: a time since the capture's
start (1m30s, 250ms, or a clock time 1:30 or 01:02:03.5) or a record number
(#120 or 120; the first record is #0, and every record kind counts).
"--until #99" and "--from #100" split a capture without losing a record, and
merge --join-sources puts the pieces back together.

The cut's start moves to --from (or to its first record when --from is a
record number), so its records keep their absolute times and a replay of the
cut starts at once. Only the frames that hold the range are decompressed.`,
		Example: `  aaep-replay cut session.aaep --from 1m30s --until 2m -o part.aaep
  aaep-replay cut session.aaep --from '#120' -o tail.aaep`,
		Args: needFiles("cut", "the capture FILE to cut", 1, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Output == "" {
				return cli.Usagef("cut needs an output file: -o OUT")
			}
			if slices.Contains(args, "-") {
				return cli.Usagef("cut needs a seekable capture (it seeks through the index to --from); standard input is a stream: save it to a file first, or keep sessions or types with filter, which reads -")
			}
			for _, arg := range args {
				if st, err := os.Stat(arg); err == nil && !st.Mode().IsRegular() && !st.IsDir() {
					// Opened twice, a FIFO's second open waited for a
					// writer that had gone.
					return cli.Usagef("cut needs a seekable capture (it seeks through the index to --from); %s is a FIFO or a device: save it to a file first, or keep sessions or types with filter, which reads it", cli.Quote(arg))
				}
			}
			for _, p := range []struct {
				flag, val string
				dst       *timing.Position
			}{{"--from", o.From, &o.Cut.From}, {"--until", o.Until, &o.Cut.To}} {
				pos, err := timing.ParsePosition(p.val)
				if err != nil {
					return cli.Usagef("%s: %w", p.flag, err)
				}
				*p.dst = pos
			}
			o.Inputs = args
			if runF != nil {
				return runF(o)
			}
			return cutRun(o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.Output, "output", "o", "", "capture file to write (required; - for standard output)")
	f.BoolVar(&o.Cut.Force, "force", false, "replace an original recording (a capture a recorder wrote) at the output; never an input")
	addReadingFlags(f, &o.Reading)
	f.StringVar(&o.From, "from", "", "first position kept: a time offset (1m30s, 1:30) or a record number (#120)")
	f.StringVar(&o.Until, "until", "", "last position kept (inclusive): a time offset or a record number")
	addTimeShift(f, &o.Cut.TimeShift)
	return cmd
}

// cutRun writes the range into the output.
func cutRun(o *CutOptions) error {
	a, out, opts := o.app, o.Output, o.Cut
	opts.Stdout = a.Out
	opts.Inputs = a.inputOptions("cut")
	opts.Progress = a.meter("cut")
	res, err := capedit.Cut(a.ctx, o.Inputs, out, opts)
	opts.Progress.Stop()
	var ws []capedit.Warning
	if res != nil {
		ws = res.Warnings
	}
	return a.fileopsDone(o.Reading, ws, err, func() {
		fmt.Fprintf(a.summaryTo(out), "wrote %d records to %s\n", res.Written, outName(out))
	})
}
