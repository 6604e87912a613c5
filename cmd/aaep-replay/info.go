package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/capedit"
	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/numflag"
	"github.com/aaep-tools/aaepkit/recording"
	"github.com/aaep-tools/aaepkit/timing"
)

// InfoOptions are what info was asked: its inputs and flags.
type InfoOptions struct {
	*app

	Inputs  []string
	JSON    bool
	Speed   float64
	MaxIdle time.Duration
	Gap     time.Duration
	// IndexOnly summarises captures with an intact index from their
	// header and index alone (--index-only).
	IndexOnly bool
	// Reading says how the end of reading a damaged or torn capture is judged.
	Reading capfile.ReadPolicy
}

// NewCmdInfo builds info; runF, when given, runs instead of infoRun (tests
// of the command line).
func NewCmdInfo(a *app, runF func(*InfoOptions) error) *cobra.Command {
	o := &InfoOptions{app: a}
	cmd := &cobra.Command{
		Use:   "info FILE...",
		Short: "Summarise captures: times, records, types, sessions, sources, gaps, sizes",
		Long: `info reads a capture and prints its format version, start time and duration,
records by kind, messages by type, sessions, sources, reconnects and gaps,
invalid messages, compressed and uncompressed sizes, whether it was closed
cleanly, and how long a replay would take at --speed.

A torn capture (its recorder did not finish) is summarised up to its last
intact record, with a warning. A damaged one is summarised up to the damage
and the command exits with status 2.

` + inputsHelp + ` (A directory gives its .aaep files.) Each capture gets its own block, in
the order given (globs and directories sorted by name), followed by a total
over all of them (--json: {"files": [...], "total": {...}}).`,
		Example: `  aaep-replay info session.aaep
  aaep-replay info captures/
  aaep-replay info run-*.aaep --json
  aaep-replay info --speed 4 --max-idle 2s session.aaep
  aaep-replay info --json session.aaep`,
		Args: needFiles("info", "a capture FILE (several, a glob, a directory, or - for standard input)", 1, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Inputs = args
			if runF != nil {
				return runF(o)
			}
			return infoRun(o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.JSON, "json", false, "print the summary as JSON")
	numflag.Float(f, &o.Speed, "speed", 1, numflag.Between(timing.MinSpeed, timing.MaxSpeed), "replay speed for the replay time estimate")
	numflag.Duration(f, &o.MaxIdle, "max-idle", 0, numflag.NonNegative("no cap"), "cap on each wait between events for the replay time estimate (0: no cap)")
	numflag.Duration(f, &o.Gap, "gap", capedit.DefaultGap, numflag.Positive(), "shortest silence between received messages reported as a gap")
	f.BoolVar(&o.IndexOnly, "index-only", false, "summarise from each capture's header and index alone (records, sessions, times, sizes): an s3:// object is not downloaded; a capture without an intact index is still read whole")
	addReadingFlags(f, &o.Reading)
	return cmd
}

// infoRun summarises each input, then all of them.
func infoRun(o *InfoOptions) error {
	a := o.app
	recs, err := a.recordings("info", o.Inputs)
	if err != nil {
		return err
	}
	var parts []*recording.Part // info summarises each file
	for _, r := range recs {
		parts = append(parts, r.Parts...)
	}
	meter := a.meter("info")
	defer meter.Stop()
	var (
		sums     []*capedit.Summary
		idxs     []*indexInfo
		firstErr error
	)
	for i, part := range parts {
		meter.File(part.Name)
		if o.IndexOnly {
			in, ok, err := indexPart(o, part)
			if err == nil && ok {
				idxs = append(idxs, in)
				if !o.JSON {
					if i > 0 {
						fmt.Fprintln(a.Out)
					}
					if werr := in.writeText(a.Out); werr != nil {
						return cli.Output(werr)
					}
				}
				continue
			}
		}
		s, err := capedit.InfoPart(a.ctx, part, capedit.InfoOptions{Speed: o.Speed, MaxIdle: o.MaxIdle, Gap: o.Gap, Input: capedit.Input{Progress: meter}})
		var ws []capedit.Warning
		if s != nil && s.Torn != nil {
			ws = append(ws, *s.Torn)
		}
		if fail, _ := judgeReadsTo(a.Err, meter, o.Reading, ws, err); fail != nil {
			if firstErr == nil {
				firstErr = fail
			}
			if len(parts) > 1 {
				meter.Printf(a.Err, "aaep-replay: %v\n", fail)
			}
		}
		if s == nil {
			continue
		}
		sums = append(sums, s)
		if o.IndexOnly {
			idxs = append(idxs, indexInfoFull(s))
		}
		if o.JSON {
			continue
		}
		if i > 0 {
			fmt.Fprintln(a.Out)
		}
		if o.IndexOnly {
			if werr := idxs[len(idxs)-1].writeText(a.Out); werr != nil {
				return cli.Output(werr)
			}
			continue
		}
		if werr := s.WriteText(a.Out); werr != nil {
			return cli.Output(werr)
		}
	}
	meter.Stop()
	var werr error
	switch {
	case o.IndexOnly && o.JSON && len(parts) == 1 && len(idxs) == 1:
		werr = writeJSON(a.Out, idxs[0])
	case o.IndexOnly && o.JSON:
		werr = writeJSON(a.Out, struct {
			Files []*indexInfo `json:"files"`
		}{idxs})
	case o.IndexOnly:
		// No total: each capture's block says what it holds.
	case o.JSON && len(parts) == 1 && len(sums) == 1:
		werr = writeJSON(a.Out, sums[0])
	case o.JSON:
		werr = writeJSON(a.Out, struct {
			Files []*capedit.Summary `json:"files"`
			Total *capedit.Total     `json:"total"`
		}{sums, capedit.Sum(sums)})
	case len(parts) > 1 && len(sums) > 0:
		fmt.Fprintln(a.Out)
		werr = capedit.Sum(sums).WriteText(a.Out)
	}
	if werr != nil {
		return cli.Output(werr)
	}
	if firstErr != nil {
		if len(parts) > 1 {
			return cli.Silent(cli.KindInput)
		}
		return cli.Input(firstErr)
	}
	return nil
}
