package main

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/numflag"
	"github.com/aaep-tools/aaepkit/internal/outfile"
	"github.com/aaep-tools/aaepkit/objstore"
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/check"
	"github.com/aaep-tools/aaepkit/protocol/models"
	"github.com/aaep-tools/aaepkit/protocol/report"
	"github.com/aaep-tools/aaepkit/recording"
)

// CheckOptions are what check was asked: its inputs and flags.
type CheckOptions struct {
	*app

	Inputs []string
	// Rules lists the rules instead of checking anything.
	Rules  bool
	JSON   bool
	FailOn string
	// Threshold is FailOn parsed: the lowest level that fails the check.
	Threshold protocol.Level
	// Check are the checker's flags: --protocol, --profile, --disable.
	Check       checkFlags
	MaxFindings int
	Summary     bool
	All         bool
	// AllowIncomplete exits by the findings of what was read when part of
	// the input could not be read (the report still says INCOMPLETE).
	AllowIncomplete bool
	// Since checks only the recordings with a part modified at or after
	// it (--since, RFC 3339 or a duration before now); zero: all.
	Since    time.Time
	SinceArg string
	// State is --state: a file of the parts checked before; only parts
	// new or changed since are checked, and the file is updated after a
	// run that read all it was given.
	State string
	// Shard is --shard I/N: only the recordings of shard I are judged
	// (ShardArg parsed; N 0: every recording).
	Shard    shard
	ShardArg string
	// MergeReports merges the JSON reports named (the inputs) into one.
	MergeReports bool
	// S3Concurrency bounds the objects fetched at once (--s3-concurrency).
	S3Concurrency int
}

// NewCmdCheck builds check; runF, when given, runs instead of checkRun
// (tests of the command line).
func NewCmdCheck(a *app, runF func(*CheckOptions) error) *cobra.Command {
	opts := &CheckOptions{app: a}
	cmd := &cobra.Command{
		Use:   "check FILE...",
		Short: "Check every session of captures (or JSONL files) against its protocol",
		Long: `check reads recordings (captures or JSONL files) once and applies every
rule of the AAEP, ASP and KAHN protocol models to each session, then prints a
report grouped by recording and session: rule ID, level, message index, time
offset and what went wrong.

` + inputsHelp + ` The parts of a rotated
recording (found by the part number and previous part each part's header
names, wherever they sort) are checked as one recording: offsets count from
its start and #N is the record number over all its parts. A part whose
previous part was not given, or that belongs to another recording, makes the
report INCOMPLETE and is named. Every other file is a recording of its own;
several recordings are checked each on its own (4 at a time), then one line
per recording and a total are printed. A recording of a replay (serve or push
--record) is checked per subscription: each subscriber's replies against its
own copy of the replay.

When the listing is longer than a screen (the terminal's height, or 50
lines when standard output is not a terminal), the text report shows a
summary instead: findings per rule and level, the worst sessions and the
first occurrence of each rule. --all lists every finding whatever the
length; --summary shows the summary whatever the length. --json is always
complete.

A report never passes input it could not read: a torn or damaged capture, an
empty input or a line over the size limit makes the verdict INCOMPLETE, with
the reason ("complete": false in JSON).

Exit status: 0 when no finding reaches the --fail-on level (MUST by default),
1 when one does, 2 for usage or file errors and for INCOMPLETE input (with
--allow-incomplete, INCOMPLETE input exits 0 or 1 by the findings of what was
read).`,
		Example: `  aaep-replay check session.aaep
  aaep-replay check run-*.aaep --summary
  aaep-replay check captures/ --all | less
  aaep-replay check --json --fail-on should session.aaep > report.json
  aaep-replay check --protocol kahn run.jsonl
  aaep-replay check --rules`,
		Args: func(cmd *cobra.Command, args []string) error {
			if opts.Rules {
				return cobra.NoArgs(cmd, args)
			}
			if opts.MergeReports {
				return needFiles("check --merge-reports", "the JSON reports to merge (r0.json r1.json ...)", 1, -1)(cmd, args)
			}
			return needFiles("check", "a capture or JSONL FILE (several, a glob, a directory, or - for standard input)", 1, -1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.MergeReports {
				if cmd.Flags().Changed("shard") || opts.State != "" || opts.SinceArg != "" {
					return cli.Usagef("--merge-reports merges reports: --shard, --state and --since are for the runs that wrote them")
				}
				opts.Inputs = args
			} else if !opts.Rules {
				if opts.Summary && opts.All {
					return cli.Usagef("--summary and --all exclude each other")
				}
				var err error
				if opts.Threshold, err = parseFailOn(opts.FailOn); err != nil {
					return err
				}
				// Rules and options are checked once, before anything is read.
				if err := opts.Check.validate(); err != nil {
					return err
				}
				if opts.SinceArg != "" {
					if opts.Since, err = parseSince(opts.SinceArg, time.Now()); err != nil {
						return err
					}
				}
				if cmd.Flags().Changed("shard") {
					if opts.Shard, err = parseShard(opts.ShardArg); err != nil {
						return err
					}
				}
				if objstore.IsURL(opts.State) {
					if err := checkStateURL(opts.State, args); err != nil {
						return cli.Usage(fmt.Errorf("--state: %w", err))
					}
				} else if opts.State != "" {
					if err := outfile.Check(opts.State, outfile.Options{Inputs: args, NoStdout: "the state file is read back by the next run"}); err != nil {
						return cli.Output(fmt.Errorf("--state: %w", err))
					}
				}
				opts.Inputs = args
			}
			if runF != nil {
				return runF(opts)
			}
			return checkRun(opts)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.JSON, "json", false, "print the report as JSON (for CI)")
	f.StringVar(&opts.FailOn, "fail-on", "must", "lowest level that makes the exit status 1: must, should, info or never")
	opts.Check.add(f)
	f.BoolVar(&opts.Rules, "rules", false, "list every rule with its level and exit")
	numflag.Int(f, &opts.MaxFindings, "max-findings", report.DefaultMaxFindings, numflag.Positive(), "list at most this many findings (all are counted)")
	f.BoolVar(&opts.Summary, "summary", false, "text report: findings per rule and level, worst sessions, first occurrence of each rule")
	f.BoolVar(&opts.All, "all", false, "text report: every finding, however long (default: a summary when the list is longer than a screen)")
	f.StringVar(&opts.SinceArg, "since", "", "check only the recordings with a part (file or object) modified at or after this time: RFC 3339, or a duration (24h) before now")
	f.StringVar(&opts.State, "state", "", "a file (or s3:// object) remembering the parts checked (name, size, ETag or time) and where each recording's check goes on: check only what is new or changed since (a grown recording from its new parts), and update it after a run that read everything")
	f.StringVar(&opts.ShardArg, "shard", "", "I/N: judge only the recordings of shard I of N (FNV-1a 64 of the first part's name, modulo N; see docs/fleet.md)")
	f.BoolVar(&opts.MergeReports, "merge-reports", false, "merge the JSON reports of shards (the FILEs) into one, as a single check writes it")
	numflag.Int(f, &opts.S3Concurrency, "s3-concurrency", recording.DefaultConcurrency, numflag.Positive(), "objects fetched at once from object storage while the parts are opened (a small part whole, in one request)")
	f.BoolVar(&opts.AllowIncomplete, "allow-incomplete", false, "when part of the input cannot be read, exit by the findings of the rest instead of 2 (the report still says INCOMPLETE)")
	return cmd
}

// checkParallel bounds the recordings checked at once: several make the
// most of the cores (each check reads on one goroutine and checks on
// another) and, for object storage, of the network's waits.
const checkParallel = 4

// checkRun checks the inputs (or lists the rules) and prints the report:
// each recording on its own (the parts of a rotated recording as one, a
// serve --record recording's subscriptions each as a stream), grouped by
// recording, then (for several) one line per recording and a total.
func checkRun(opts *CheckOptions) error {
	if opts.Rules {
		return listRules(opts.app, opts.JSON)
	}
	if opts.MergeReports {
		return mergeReports(opts)
	}
	a, threshold := opts.app, opts.Threshold
	var inc *incremental
	ropts := a.inputOptions("check")
	ropts.Concurrency = opts.S3Concurrency
	// A shard reads the headers of every part of the prefix to link its
	// recordings, and the records of its own only: the header, not a
	// small part whole.
	ropts.PeekHead = opts.Shard.N > 1
	if !opts.Since.IsZero() || opts.State != "" {
		inc = &incremental{since: opts.Since}
		if opts.State != "" {
			st, err := readState(a, opts.State)
			if err != nil {
				return err
			}
			inc.state = st
		}
		ropts.Changed = inc.changed
		if opts.State != "" {
			ropts.Known = inc.known
		}
	}
	recs, err := a.recordingsWith("check", opts.Inputs, ropts)
	if err != nil {
		return err
	}
	if inc != nil && !a.quiet {
		fmt.Fprintf(a.Err, "aaep-replay: check: %d of %d parts new or changed (%s)\n", inc.picked, inc.order, inc.what(opts))
	}
	if opts.Shard.N > 0 {
		all := len(recs)
		recs = opts.Shard.pick(recs)
		if !a.quiet {
			fmt.Fprintf(a.Err, "aaep-replay: check: shard %d/%d: %d of %d recordings\n", opts.Shard.I, opts.Shard.N, len(recs), all)
		}
	}
	if inc != nil || opts.Shard.N > 0 {
		if len(recs) == 0 {
			if opts.JSON {
				if err := report.NewBatch(a.Out, true, threshold, 0).Close(); err != nil {
					return cli.Output(fmt.Errorf("writing report: %w", err))
				}
			}
			if inc != nil && opts.State != "" {
				if err := inc.save(a, opts.State, nil, nil, opts.Inputs); err != nil {
					return cli.Output(fmt.Errorf("--state: %w", err))
				}
			}
			return nil
		}
	}
	out, jsonOut := a.Out, (*bufio.Writer)(nil)
	if opts.JSON {
		// One document, read whole by its consumer: written in 64 KiB
		// pieces rather than a write per session.
		jsonOut = bufio.NewWriterSize(a.Out, 64<<10)
		out = jsonOut
	}
	// The reports stream: each session is written when it ends, so memory
	// holds only the sessions open at once, however long the recording
	// (the first recording's report; the others are held until it is
	// written, as they are checked at the same time).
	batch := report.NewBatch(out, opts.JSON, threshold, len(recs))
	reports := make([]*report.Report, len(recs))
	for i, rec := range recs {
		rep := batch.Add(rec.Name, recording.Names(recs[i:i+1]))
		rep.MaxFindings = opts.MaxFindings
		rep.Sources = rec.Sources()
		switch {
		case opts.All:
			rep.View = report.ViewAll
		case opts.Summary:
			rep.View = report.ViewSummary
		case len(recs) > 1:
			rep.View = report.ViewAll
		default:
			rep.View, rep.Screen = report.ViewAuto, a.screenLines()
		}
		reports[i] = rep
	}
	var resumes []*check.Resume
	if inc != nil && opts.State != "" {
		resumes = make([]*check.Resume, len(recs))
		for i, rec := range recs {
			resumes[i] = inc.resumeOf(rec)
		}
		if inc.resumed > 0 && !a.quiet {
			fmt.Fprintf(a.Err, "aaep-replay: check: %d of %d recordings go on where the last check ended (their new parts read, the records still open kept in %s)\n", inc.resumed, len(recs), opts.State)
		}
	}
	meter := a.meter("check")
	outcomes := check.RunEach(a.ctx, recs, opts.Check.config(), checkParallel, func(i int) (protocol.Sink, *check.Observer) {
		var obs check.Observer
		if len(recs) == 1 {
			obs.Progress = meter
		}
		if resumes != nil {
			obs.Resume = resumes[i]
		}
		return reports[i].Sink(nil), &obs
	})
	meter.Stop()
	if a.ctx.Err() != nil {
		return context.Cause(a.ctx)
	}
	var failed, incomplete int
	var firstErr error
	for i, o := range outcomes {
		rep := reports[i]
		switch {
		case o.Err != nil && len(recs) == 1:
			// Nothing could be read of the one recording: an input error.
			return cli.Input(o.Err)
		case o.Err != nil:
			rep.Incomplete(o.Err.Error())
			firstErr = cmp.Or(firstErr, o.Err)
		default:
			rep.Stats = o.Result.Stats
			rep.Streams = namedStreams(o.Result.Streams)
			for _, reason := range o.Result.Incomplete {
				rep.Incomplete(reason)
			}
			if o.Result.Err != nil {
				firstErr = cmp.Or(firstErr, o.Result.Err)
			}
		}
		if werr := rep.Close(); werr != nil {
			return cli.Output(fmt.Errorf("writing report: %w", werr))
		}
		if rep.Failed(threshold) {
			failed++
		}
		if !rep.Complete() {
			incomplete++
		}
	}
	werr := batch.Close()
	if werr == nil && jsonOut != nil {
		werr = jsonOut.Flush()
	}
	if werr != nil {
		return cli.Output(fmt.Errorf("writing report: %w", werr))
	}
	if incomplete > 0 && !opts.AllowIncomplete {
		if len(recs) == 1 {
			if firstErr != nil {
				return cli.Incomplete(firstErr)
			}
			fmt.Fprintf(a.Err, "aaep-replay: %s: INCOMPLETE: %s (--allow-incomplete judges what was read)\n", recs[0].Name, strings.Join(outcomes[0].Result.Incomplete, "; "))
		} else {
			fmt.Fprintf(a.Err, "aaep-replay: %d of %d recordings INCOMPLETE (--allow-incomplete judges what was read)\n", incomplete, len(recs))
			for i, rep := range reports {
				if !rep.Complete() {
					fmt.Fprintf(a.Err, "aaep-replay: %s: INCOMPLETE: %s\n", recs[i].Name, strings.Join(rep.IncompleteReasons(), "; "))
				}
			}
		}
		return cli.Silent(cli.KindIncomplete)
	}
	if opts.State != "" && firstErr == nil && incomplete == 0 {
		// Everything given was read: the next run need not read it again.
		snaps := make([]*check.Snapshot, len(outcomes))
		for i, o := range outcomes {
			if o.Result != nil {
				snaps[i] = o.Result.Snapshot
			}
		}
		if err := inc.save(a, opts.State, recs, snaps, opts.Inputs); err != nil {
			return cli.Output(fmt.Errorf("--state: %w", err))
		}
	}
	if failed > 0 {
		return cli.Silent(cli.KindFindings)
	}
	return nil
}

// namedStreams lists the streams of a recording that has several (a
// recording that is one stream names none).
func namedStreams(streams []string) []string {
	var out []string
	for _, s := range streams {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// parseFailOn parses --fail-on; "never" (protocol.Never) fails on nothing.
func parseFailOn(s string) (protocol.Level, error) {
	l, err := protocol.ParseThreshold(s)
	if err != nil {
		return 0, cli.Usagef("--fail-on: %w", err)
	}
	return l, nil
}

func listRules(a *app, asJSON bool) error {
	return report.WriteRules(a.Out, models.All(), asJSON)
}
