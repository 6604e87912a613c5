package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/aaep-tools/aaepkit/capedit"
	"github.com/aaep-tools/aaepkit/internal/cli"
)

func init() { register(newMergeCmd) }

func newMergeCmd(a *app) *cobra.Command {
	var (
		out  string
		opts capedit.MergeOptions
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
subprotocol one id: use it to put back pieces cut from one capture.`,
		Example: `  aaep-replay merge left.aaep right.aaep -o both.aaep
  aaep-replay merge --join-sources head.aaep tail.aaep -o whole.aaep`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return cli.Usagef("merge needs an output file: -o OUT")
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
	return cmd
}
