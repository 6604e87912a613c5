package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/aaep-tools/aaepkit/capedit"
	"github.com/aaep-tools/aaepkit/inputs"
	"github.com/aaep-tools/aaepkit/internal/cli"
)

func newMergeCmd(a *app) *cobra.Command {
	var (
		out    string
		opts   capedit.MergeOptions
		shifts []string
	)
	cmd := &cobra.Command{
		Use:   "merge A B ... -o OUT",
		Short: "Merge captures into one, ordered by receive time",
		Long: `merge writes the records of every input into one capture, ordered by their
absolute receive times (each capture's start plus the record's time). The
output starts at the earliest input's start.

Sources stay apart: the output's source table lists every input's sources,
renumbered where two inputs use the same id (the first input keeps its ids).
--join-sources instead gives sources with the same transport, endpoint and
subprotocol one id: use it to put back pieces cut from one capture.

Inputs may be globs and directories (their captures, sorted by name).
--time-shift FILE=SHIFT (repeatable) moves one input's wall clock before the
merge, by a duration (+1.5s, -200ms) or to a start time: align captures of
two machines whose clocks differ.`,
		Example: `  aaep-replay merge left.aaep right.aaep -o both.aaep
  aaep-replay merge --join-sources head.aaep tail.aaep -o whole.aaep
  aaep-replay merge a.aaep b.aaep --time-shift b.aaep=-1.2s -o both.aaep`,
		Args: needFiles("merge", "the capture FILEs to merge", 1, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return cli.Usagef("merge needs an output file: -o OUT")
			}
			srcs, err := a.sources("merge", args)
			if err != nil {
				return err
			}
			args = inputs.Names(srcs)
			for _, in := range args {
				if in == "-" {
					return cli.Usagef("merge cannot read standard input (it reads each input twice); name the files")
				}
			}
			if opts.TimeShifts, err = mergeShifts(args, shifts); err != nil {
				return err
			}
			opts.Stdout = a.Out
			opts.Progress = a.meter("merge")
			res, err := capedit.Merge(a.ctx, args, out, opts)
			opts.Progress.Stop()
			if res != nil {
				fileopsWarn(a.Err, res.Warnings)
			}
			return fileopsDone(err, func() {
				fmt.Fprintf(a.summaryTo(out), "merged %d records from %d captures into %s\n", res.Written, len(args), outName(out))
			})
		},
	}
	f := cmd.Flags()
	f.StringVarP(&out, "output", "o", "", "capture file to write (required; - for standard output)")
	f.BoolVar(&opts.JoinSources, "join-sources", false, "give identical sources of different inputs one id")
	f.StringArrayVar(&shifts, "time-shift", nil, "FILE=SHIFT: move that input's wall clock by a duration (+1.5s) or to a start time (repeatable)")
	return cmd
}

// mergeShifts reads the --time-shift FILE=SHIFT flags of merge into one
// shift per input.
func mergeShifts(inputs, flags []string) ([]capedit.TimeShift, error) {
	out := make([]capedit.TimeShift, len(inputs))
	for _, fl := range flags {
		eq := strings.LastIndex(fl, "=")
		if eq <= 0 {
			return nil, cli.Usagef("--time-shift %q: say which input, as FILE=SHIFT (b.aaep=-1.2s)", fl)
		}
		name, val := fl[:eq], fl[eq+1:]
		ts, err := capedit.ParseTimeShift(val)
		if err != nil {
			return nil, cli.Usagef("--time-shift: %v", err)
		}
		found := false
		for i, in := range inputs {
			if in == name || filepath.Base(in) == name || filepath.Clean(in) == filepath.Clean(name) {
				out[i], found = ts, true
			}
		}
		if !found {
			return nil, cli.Usagef("--time-shift %s: %s is not one of the inputs", fl, name)
		}
	}
	return out, nil
}
