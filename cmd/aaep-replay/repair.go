package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/outfile"
	"github.com/aaep-tools/aaepkit/objstore"
)

// RepairOptions are what repair was asked: its input and output.
type RepairOptions struct {
	*app

	Input  string
	Output string
	// Force replaces an original recording named by Output.
	Force bool
}

// NewCmdRepair builds repair; runF, when given, runs instead of repairRun
// (tests of the command line).
func NewCmdRepair(a *app, runF func(*RepairOptions) error) *cobra.Command {
	o := &RepairOptions{app: a}
	cmd := &cobra.Command{
		Use:   "repair FILE -o OUT",
		Short: "Copy every intact record of a damaged or torn capture into a clean one",
		Long: `repair writes a new, cleanly closed capture holding every intact record of
FILE, with a fresh index, and reports what it kept and which byte ranges it
dropped. FILE is only read: it is never modified, renamed or deleted. OUT
appears only when complete.`,
		Example: `  aaep-replay repair crashed.aaep -o fixed.aaep`,
		Args:    needFiles("repair", "the damaged or torn capture FILE to repair", 1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Output == "" {
				return cli.Usagef("repair needs an output file: -o OUT")
			}
			o.Input = args[0]
			if objstore.IsURL(o.Input) {
				return cli.Usagef("repair %s: repair reads a local capture file or - (standard input), scanning its bytes for intact frames; an object is read through its index, which a damaged capture may not have: copy the object to a file (aws s3 cp, mc cp), then repair the file", o.Input)
			}
			if runF != nil {
				return runF(o)
			}
			return repairRun(o)
		},
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "capture file to write (required; - for standard output)")
	cmd.Flags().BoolVar(&o.Force, "force", false, "replace an original recording (a capture a recorder wrote) at the output; never an input")
	return cmd
}

// repairRun copies the input's intact records into the output.
func repairRun(o *RepairOptions) error {
	a, in, out := o.app, o.Input, o.Output
	in, name, done, err := a.spoolInput("repair", in, "stdin.aaep")
	if err != nil {
		return err
	}
	defer done()
	inputs := []string{in}
	if o.Input != "-" && in != o.Input {
		inputs = append(inputs, o.Input) // a FIFO read into in
	}
	f, err := outfile.Open(out, outfile.Options{Inputs: inputs, Stdout: a.Out, Binary: true, Force: o.Force})
	if err != nil {
		return err
	}
	defer f.Abort()
	meter := a.meter("repair")
	rep, err := capfile.RepairToWith(in, f, capfile.RepairOptions{
		Progress: func(t int64) { meter.Record(time.Duration(t)) },
		Total:    meter.AddTotal,
	})
	meter.Stop()
	if err != nil {
		return fileopsError(renamed(err, in, name))
	}
	if rep.Kept == 0 {
		// Nothing to save: no empty "repaired" capture, and no success
		// status.
		fmt.Fprintln(a.Err, strings.ReplaceAll(fmt.Sprint(rep), in, name))
		return cli.Usagef("%s: no intact record found; nothing written", name)
	}
	if err := f.Commit(); err != nil {
		return err
	}
	fmt.Fprintf(a.summaryTo(out), "%s\nwrote %s (%d bytes)\n", strings.ReplaceAll(fmt.Sprint(rep), in, name), outName(out), rep.Bytes)
	return nil
}
