package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/aaep-tools/aaepkit/capedit"
	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/cli"
)

func init() { register(newRepairCmd) }

func newRepairCmd(a *app) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "repair FILE -o OUT",
		Short: "Copy every intact record of a damaged or torn capture into a clean one",
		Long: `repair writes a new, cleanly closed capture holding every intact record of
FILE, with a fresh index, and reports what it kept and which byte ranges it
dropped. FILE is only read: it is never modified, renamed or deleted. OUT
appears only when complete.`,
		Example: `  aaep-replay repair crashed.aaep -o fixed.aaep`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return cli.Usagef("repair needs an output file: -o OUT")
			}
			if err := capedit.CheckOutput(out, args[0]); err != nil {
				return fileopsError(err)
			}
			rep, err := capfile.Repair(args[0], out)
			if err != nil {
				return fileopsError(err)
			}
			fmt.Fprintf(a.Out, "%s\nwrote %s (%d bytes)\n", rep, out, rep.Bytes)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "capture file to write (required)")
	return cmd
}
