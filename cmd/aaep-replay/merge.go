package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/capedit"
	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/recording"
)

// MergeOptions are what merge was asked: its inputs and flags.
type MergeOptions struct {
	*app

	Inputs []string
	Output string
	Merge  capedit.MergeOptions
	// TimeShifts are the --time-shift FILE=SHIFT flags as given; Shifts
	// holds them read.
	TimeShifts []string
	Shifts     []inputShift
	// Reading says how the end of reading a damaged or torn capture is judged.
	Reading capfile.ReadPolicy
}

// inputShift is one --time-shift FILE=SHIFT of merge.
type inputShift struct {
	flag  string // as given
	name  string // FILE
	shift capedit.TimeShift
}

// NewCmdMerge builds merge; runF, when given, runs instead of mergeRun
// (tests of the command line).
func NewCmdMerge(a *app, runF func(*MergeOptions) error) *cobra.Command {
	o := &MergeOptions{app: a}
	cmd := &cobra.Command{
		Use:   "merge A B ... -o OUT",
		Short: "Merge captures into one, ordered by receive time",
		Long: `merge writes the records of every input into one capture, ordered by their
absolute receive times (each capture's start plus the record's time). The
output starts at the earliest input's start.

Sources stay apart: the output's source table lists every input's sources,
renumbered where two inputs use the same id (the first input keeps its ids).
--join-sources instead gives sources with the same transport, endpoint and
subprotocol one id: use it to put back pieces cut from one capture. The
parts of a rotated recording (chained by their headers) are always that
recording's one stream, with its sources, as every reader reads them.

Inputs may be globs and directories (their captures, sorted by name).
--time-shift FILE=SHIFT (repeatable) moves one input's wall clock before the
merge, by a duration (+1.5s, -200ms) or to a start time: align captures of
two machines whose clocks differ.`,
		Example: `  aaep-replay merge left.aaep right.aaep -o both.aaep
  aaep-replay merge --join-sources head.aaep tail.aaep -o whole.aaep
  aaep-replay merge a.aaep b.aaep --time-shift b.aaep=-1.2s -o both.aaep`,
		Args: needFiles("merge", "the capture FILEs to merge", 1, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Output == "" {
				return cli.Usagef("merge needs an output file: -o OUT")
			}
			var err error
			if o.Shifts, err = readShifts(o.TimeShifts); err != nil {
				return err
			}
			o.Inputs = args
			if runF != nil {
				return runF(o)
			}
			return mergeRun(o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.Output, "output", "o", "", "capture file to write (required; - for standard output)")
	f.BoolVar(&o.Merge.Force, "force", false, "replace an original recording (a capture a recorder wrote) at the output; never an input")
	addReadingFlags(f, &o.Reading)
	f.BoolVar(&o.Merge.JoinSources, "join-sources", false, "give identical sources of different inputs one id")
	f.StringArrayVar(&o.TimeShifts, "time-shift", nil, "FILE=SHIFT: move that input's wall clock by a duration (+1.5s) or to a start time (repeatable)")
	return cmd
}

// mergeRun merges the inputs into the output.
func mergeRun(o *MergeOptions) error {
	a, out, opts := o.app, o.Output, o.Merge
	recs, err := a.recordings("merge", o.Inputs)
	if err != nil {
		return err
	}
	args := recording.Names(recs)
	for _, rec := range recs {
		for _, p := range rec.Parts {
			switch {
			case p.Name == "-":
				return cli.Usagef("merge cannot read standard input (it reads each input twice); name the files")
			case p.Streamed():
				// Read twice, a FIFO's second read found nothing: "a
				// JSON Lines file, not a capture".
				return cli.Usagef("merge cannot read %s, a FIFO or a device (it reads each input twice); save it to a file first", cli.Quote(p.Name))
			}
		}
	}
	if opts.TimeShifts, err = mergeShifts(args, o.Shifts); err != nil {
		return err
	}
	opts.Stdout = a.Out
	opts.Inputs = a.inputOptions("merge")
	opts.Progress = a.meter("merge")
	res, err := capedit.Merge(a.ctx, args, out, opts)
	opts.Progress.Stop()
	var ws []capedit.Warning
	if res != nil {
		ws = res.Warnings
	}
	return a.fileopsDone(o.Reading, ws, err, func() {
		fmt.Fprintf(a.summaryTo(out), "merged %d records from %d captures into %s\n", res.Written, len(args), outName(out))
	})
}

// readShifts reads the --time-shift FILE=SHIFT flags of merge.
func readShifts(flags []string) ([]inputShift, error) {
	var out []inputShift
	for _, fl := range flags {
		eq := strings.LastIndex(fl, "=")
		if eq <= 0 {
			return nil, cli.Usagef("--time-shift %q: say which input, as FILE=SHIFT (b.aaep=-1.2s)", fl)
		}
		ts, err := capedit.ParseTimeShift(fl[eq+1:])
		if err != nil {
			return nil, cli.Usagef("--time-shift: %w", err)
		}
		out = append(out, inputShift{flag: fl, name: fl[:eq], shift: ts})
	}
	return out, nil
}

// mergeShifts gives each of the inputs its shift.
func mergeShifts(inputs []string, shifts []inputShift) ([]capedit.TimeShift, error) {
	out := make([]capedit.TimeShift, len(inputs))
	for _, sh := range shifts {
		found := false
		for i, in := range inputs {
			if in == sh.name || filepath.Base(in) == sh.name || filepath.Clean(in) == filepath.Clean(sh.name) {
				out[i], found = sh.shift, true
			}
		}
		if !found {
			return nil, cli.Usagef("--time-shift %s: %s is not one of the inputs", sh.flag, sh.name)
		}
	}
	return out, nil
}
