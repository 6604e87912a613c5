package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/capedit"
	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/numflag"
	"github.com/aaep-tools/aaepkit/internal/show"
	"github.com/aaep-tools/aaepkit/msgfilter"
	"github.com/aaep-tools/aaepkit/recording"
	"github.com/aaep-tools/aaepkit/timing"
)

// ShowOptions are what show was asked: its input and flags.
type ShowOptions struct {
	*app

	// Inputs are the FILE arguments: captures, globs, directories,
	// s3:// objects and prefixes, each recording shown in turn.
	Inputs []string
	// Check are the checker's flags (show.Options.Check when it runs).
	Check checkFlags
	// Show holds the flags show.Run reads (the terminal's keys are added
	// when it runs).
	Show show.Options
	// Reading says how the end of reading a damaged or torn capture is
	// judged (not while following: --follow reads a capture being written).
	Reading capfile.ReadPolicy
}

// NewCmdShow builds show; runF, when given, runs instead of showRun (tests
// of the command line).
func NewCmdShow(a *app, runF func(*ShowOptions) error) *cobra.Command {
	o := &ShowOptions{app: a}
	opts := &o.Show
	cmd := &cobra.Command{
		Use:   "show FILE...",
		Short: "Print a capture one line per message, as tcpdump -r does",
		Long: `show prints one line per record of a capture: receive time (UTC), record
number, source, direction (recv, sent, conn, mark), session, type and the
human summary (summary_normal, or the message's key fields). Every finding
is printed as " !! LEVEL RULE", so grep ' !! ' finds them all and
grep ' !! MUST ' every MUST: a message's line ends with the findings made
when it was read; a finding made later (a sequence gap seen when the session
ends) gets a line of its own, "  !! LEVEL RULE #RECORD SESSION: message",
printed right after its message's line when that message is at most 4096
records back (not with --follow or --pace); a finding about a whole session
(one that never ended) names end-of-stream instead of a record.

Given several recordings (FILE repeated, or a directory, glob or s3://
prefix holding several hosts' rotated recordings), show prints each in turn under a line
"=== NAME" naming it, its findings judged on that recording alone, as check
judges it.

--follow keeps reading a capture that aaep-capture is still writing and
stops when the recorder closes it (or on Ctrl-C). --session, --type,
--urgency and --messages-only select lines as filter does; the checker still
reads every message.

--pace prints each line at its recorded time, scaled by --speed, with waits
capped by --max-idle, like asciinema play. When standard input is a terminal,
space pauses and resumes, "." steps one line while paused, q quits.`,
		Example: `  aaep-replay show session.aaep
  aaep-replay show session.aaep | grep ' !! '        # every finding
  aaep-replay show session.aaep | grep ' !! MUST '   # every MUST finding
  aaep-replay show live.aaep --follow --session sess_1
  aaep-replay show session.aaep --pace --speed 2 --max-idle 2s`,
		Args: needFiles("show", "the capture FILE to show", 1, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fs := cmd.Flags()
			if !opts.Pace && (fs.Changed("speed") || fs.Changed("max-idle") || fs.Changed("paused")) {
				return cli.Usagef("--speed, --max-idle and --paused go with --pace")
			}
			if err := cli.CheckEnum("urgency", opts.Match.Urgencies, msgfilter.UrgencyValues...); err != nil {
				return err
			}
			if err := o.Check.validate(); err != nil {
				return err
			}
			o.Inputs = args
			if runF != nil {
				return runF(o)
			}
			return showRun(o)
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&opts.Follow, "follow", "f", false, "keep reading a capture that is being written, until it is closed")
	numflag.Duration(f, &opts.Poll, "poll", show.DefaultPoll, numflag.Positive(), "with --follow: how often to look for new records")
	f.StringSliceVar(&opts.Match.Sessions, "session", nil, "show messages of this session (repeatable)")
	f.StringSliceVar(&opts.Match.Types, "type", nil, "show messages of this type, exact or suffix (repeatable)")
	f.StringSliceVar(&opts.Match.Urgencies, "urgency", nil, "show messages of this urgency (repeatable)")
	f.BoolVar(&opts.MessagesOnly, "messages-only", false, "leave out connection events and markers")
	f.BoolVar(&opts.Relative, "relative", false, "print the offset since the capture's start instead of the time")
	f.BoolVar(&opts.NoCheck, "no-check", false, "do not run the protocol checker (no marks)")
	o.Check.add(f)
	f.BoolVar(&opts.Pace, "pace", false, "print each line at its recorded time")
	numflag.Float(f, &opts.Timing.Speed, "speed", 1, numflag.Between(timing.MinSpeed, timing.MaxSpeed), fmt.Sprintf("with --pace: speed factor (%g to %g)", timing.MinSpeed, float64(timing.MaxSpeed)))
	numflag.Duration(f, &opts.Timing.MaxIdle, "max-idle", 0, numflag.NonNegative("no cap"), "with --pace: cap every wait between two lines at this time (0: no cap)")
	f.BoolVar(&opts.Paused, "paused", false, "with --pace: start paused (space plays, . steps)")
	addReadingFlags(f, &o.Reading)
	return cmd
}

// showRun prints the capture, one line per record.
func showRun(o *ShowOptions) error {
	a, opts := o.app, o.Show
	path := quoteNames(o.Inputs)
	opts.Check = o.Check.config()
	ctx, cancel := context.WithCancel(a.ctx)
	defer cancel()
	if opts.Pace {
		if in, ok := a.In.(*os.File); ok {
			keys, restore, err := show.TerminalKeys(ctx, in, cancel)
			if err != nil {
				return cli.Input(fmt.Errorf("terminal: %w", err))
			}
			defer restore()
			if keys != nil {
				opts.Keys = keys
				if out, ok := a.Out.(*os.File); ok && isTerminalFile(out) {
					opts.CRLF = true
				}
			}
		}
	}
	recs, err := a.recordings("show", o.Inputs)
	if err != nil {
		return err
	}
	if !opts.Follow && !opts.Match.Empty() {
		if err := checkShowSelection(ctx, recs, path, opts.Match); err != nil {
			return err
		}
	}
	if len(recs) == 1 {
		name := recs[0].Name
		if len(o.Inputs) == 1 {
			name = o.Inputs[0]
		}
		return showOne(ctx, o, recs[0], name, opts)
	}
	if opts.Follow {
		return cli.Usagef("--follow follows one capture being written; %s holds %d recordings", path, len(recs))
	}
	// Several recordings: each in turn, under a line naming it, its
	// findings judged on its own (as check judges it), so that a session
	// of one host is never read as the continuation of another's.
	var failed []error
	for _, rec := range recs {
		if ctx.Err() != nil {
			break
		}
		if _, err := fmt.Fprintf(a.Out, "=== %s\n", cli.Quote(rec.Name)); err != nil {
			return cli.Output(fmt.Errorf("show: %w", err))
		}
		for _, p := range rec.Problems {
			fmt.Fprintf(a.Err, "aaep-replay: warning: %s: %s\n", rec.Name, p)
		}
		if err := showOne(ctx, o, rec, rec.Name, opts); err != nil {
			fmt.Fprintf(a.Err, "aaep-replay: %v\n", err)
			failed = append(failed, err)
		}
	}
	if len(failed) > 0 {
		return cli.Damaged(fmt.Errorf("show: %d of %d recordings could not be shown whole: %w", len(failed), len(recs), failed[0]))
	}
	return nil
}

// checkShowSelection refuses (exit 2) a --session, --type or --urgency
// that selects no message of the recordings, saying what they hold: show
// would print nothing and exit 0.
func checkShowSelection(ctx context.Context, recs []*recording.Recording, name string, m msgfilter.Filter) error {
	r, err := recording.Join(recs).Records(ctx)
	if err != nil {
		return nil // reading reports it
	}
	defer r.Close()
	if err := capedit.CheckSelectionOf(name, r, capedit.Selection{Sessions: m.Sessions}); errors.Is(err, capedit.ErrEmptySelection) {
		return cli.Usage(err)
	}
	if err := capedit.CheckMatch(ctx, name, r, m); err != nil {
		return cli.Usage(err)
	}
	return nil
}

// showOne prints one recording, named name in what it says of it.
func showOne(ctx context.Context, o *ShowOptions, rec *recording.Recording, name string, opts show.Options) error {
	a := o.app
	if src := capfile.DescribeOrigins(rec.Sources()); src != "" && !a.quiet {
		// As tcpdump -r names the file and its link type on stderr: the
		// lines' sN column is a source of this table.
		fmt.Fprintf(a.Err, "aaep-replay: reading %s: sources: %s\n", name, src)
	}
	st, err := show.Run(ctx, rec, a.Out, opts)
	if err != nil {
		if _, warn := o.Reading.Judge(err, st.Records); warn != nil {
			fmt.Fprintf(a.Err, "aaep-replay: warning: %v (after %d records; --allow-incomplete: going on with what was read)\n", warn, st.Records)
			return nil
		}
		if st.Records == 0 {
			return cli.Damaged(err)
		}
		return cli.Damaged(fmt.Errorf("%w (after %d records)", err, st.Records))
	}
	if st.Torn != nil {
		// Following, a torn tail is a recorder gone without closing the
		// capture; not following, the end of a capture being written
		// says so (capfile.IsLive).
		fail, warn := o.Reading.Judge(st.Torn, st.Records)
		if warn != nil {
			fmt.Fprintf(a.Err, "aaep-replay: warning: %s: %v; showed the %d records before it\n", name, warn, st.Records)
		}
		if fail != nil {
			return cli.Damaged(fmt.Errorf("%s: %w", name, fail))
		}
	}
	return nil
}

// isTerminalFile reports a terminal (golang.org/x/term: /dev/null, a
// character device, is not one).
func isTerminalFile(f *os.File) bool { return cli.IsTerminal(f) }
