package main

import (
	"fmt"
	"io"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/numflag"
	"github.com/aaep-tools/aaepkit/internal/outfile"
	"github.com/aaep-tools/aaepkit/objstore"
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/check"
	"github.com/aaep-tools/aaepkit/protocol/models"
	"github.com/aaep-tools/aaepkit/recording"
	"github.com/aaep-tools/aaepkit/visualize"
)

// VisualizeOptions are what visualize was asked: its inputs and flags.
type VisualizeOptions struct {
	*app

	// Inputs are the FILE arguments; Input names what is drawn: the first
	// input (several get their names joined when they are expanded).
	Inputs []string
	Input  string
	Output string
	// Force replaces an original recording named by Output.
	Force bool
	// Reading says how the end of reading a damaged or torn capture is judged.
	Reading capfile.ReadPolicy
	// FormatName is --format as given; Format is the format drawn, from
	// --format or else the --output file's extension.
	FormatName string
	Format     visualize.Format
	Session    string
	// Check are the checker's flags: --protocol, --profile, --disable.
	Check       checkFlags
	MaxSessions int
}

// NewCmdVisualize builds visualize; runF, when given, runs instead of
// visualizeRun (tests of the command line).
func NewCmdVisualize(a *app, runF func(*VisualizeOptions) error) *cobra.Command {
	o := &VisualizeOptions{app: a}
	cmd := &cobra.Command{
		Use:   "visualize FILE...",
		Short: "Draw each session's path through its protocol's state machine, violations in red",
		Long: `visualize checks a capture (or a JSON lines file, one message per line) like
check does, and draws each session's path through its protocol's state
machine: states, transitions numbered in order with their time since the
session's first message, repeated transitions merged with a count, tool calls,
confirmations, clarifications and their replies, streaming output, and every
step that breaks a rule in red with the rule's ID and a short reason. A legend
explains the colours and shapes.

Without --session, every session is drawn, one box per session, up to
--max-sessions (the first ones seen; the rest are counted). The output
is written beside the input as FILE.svg (FILE.png, FILE.dot with --format)
unless --output names a file ("-" is standard output, the default when FILE
is "-", standard input). The format is also
taken from the --output file's extension.

SVG and PNG are drawn by the aaep-render helper (Graphviz), which must be
installed next to aaep-replay or in PATH; PNG also needs rsvg-convert
(package librsvg2-bin). --format dot needs neither.

Findings do not change the exit status (use check for that): 0 when the
drawing was written, 2 for usage, input or drawing errors. A torn capture is
drawn up to its last intact record, with a warning.

` + inputsHelp + ` Several inputs are drawn as one
stream in time order, into the --output they then need.`,
		Example: `  aaep-replay visualize session.aaep
  aaep-replay visualize session.aaep -o trace.svg
  aaep-replay visualize session.aaep --session sess_42 --format png
  aaep-replay --input session.aaep --visualize --output trace.svg`,
		Args: needFiles("visualize", "a capture or JSONL FILE (several with --output, a glob, a directory, or - for standard input)", 1, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Inputs, o.Input = args, args[0]
			var err error
			if o.Format, err = outputFormat(o.Output, o.FormatName, cmd.Flags().Changed("format")); err != nil {
				return err
			}
			if err := o.Check.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return visualizeRun(o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.Output, "output", "o", "", "file to write (default: FILE.<format> beside the input; - for standard output)")
	addReadingFlags(f, &o.Reading)
	f.BoolVar(&o.Force, "force", false, "replace an original recording (a capture a recorder wrote) at the output; never an input")
	f.StringVar(&o.FormatName, "format", "svg", "output format: svg, png or dot (default: from the --output extension, else svg)")
	f.StringVar(&o.Session, "session", "", "draw only the session with this ID")
	o.Check.add(f)
	numflag.Int(f, &o.MaxSessions, "max-sessions", visualize.DefaultMaxSessions, numflag.NonNegative("no limit"), "draw at most this many sessions, the first ones seen (0: no limit)")
	return cmd
}

// outputFormat works out the format from --format (name, when formatSet)
// and the --output name.
func outputFormat(output, name string, formatSet bool) (visualize.Format, error) {
	byName, named := visualize.FormatOf(output)
	if !formatSet {
		if named {
			return byName, nil
		}
		return visualize.FormatSVG, nil
	}
	f, err := visualize.ParseFormat(name)
	if err != nil {
		return "", cli.Usagef("--format: %w", err)
	}
	if named && byName != f {
		return "", cli.Usagef("--format %s does not match the --output file %s", f, output)
	}
	return f, nil
}

// visualizeRun checks the inputs and draws their sessions.
func visualizeRun(o *VisualizeOptions) error {
	a, format := o.app, o.Format
	recs, err := a.recordings("visualize", o.Inputs)
	if err != nil {
		return err
	}
	if names := recording.Names(recs); len(names) > 1 {
		if o.Output == "" {
			return cli.Usagef("visualize of several inputs needs --output (-o FILE.svg, or - for standard output)")
		}
		o.Input = strings.Join(names, ", ")
	}
	paths := recording.Paths(recs)
	output := o.Output
	switch {
	case output != "":
	case o.Input == "-":
		output = "-"
	case objstore.IsURL(o.Input):
		// An object: the drawing goes to the current directory.
		output = path.Base(o.Input) + "." + string(format)
	default:
		output = o.Input + "." + string(format)
	}
	if err := outfile.Check(output, outfile.Options{Inputs: paths, Force: o.Force}); err != nil {
		return err // before the capture is read and drawn
	}
	mods := models.All()
	maxSessions := o.MaxSessions
	if maxSessions == 0 {
		maxSessions = -1
	}
	col := visualize.NewCollector(visualize.CollectorOptions{Session: o.Session, MaxSessions: maxSessions})
	seen := newVisSessionNames(8)
	sink := col.Sink()
	step := sink.Step
	sink.Step = func(s protocol.Step) { seen.add(s.Session); step(s) }
	cfg := o.Check.config()
	// Each recording is checked on its own, one after the other (the
	// collector is one): its parts in order, its streams apart.
	meter := a.meter("visualize")
	var messages int64
	for _, rec := range recs {
		res, err := check.Run(a.ctx, rec, cfg, sink, &check.Observer{Progress: meter})
		if err != nil {
			meter.Stop()
			return cli.Input(err)
		}
		sum := res.Read
		if rerr := res.Err; rerr != nil {
			if _, warn := o.Reading.Judge(rerr, sum.Messages+sum.Skipped); warn == nil {
				meter.Stop()
				return cli.Damaged(rerr)
			}
			meter.Printf(a.Err, "aaep-replay: warning: %v; drawing the %s before it (--allow-incomplete)\n", rerr, visPlural(sum.Messages, "message"))
		}
		if gaps := sum.Gaps(); len(gaps) > 0 {
			meter.Stop()
			return cli.Incomplete(fmt.Errorf("%s: %s", rec.Name, strings.Join(gaps, "; ")))
		}
		messages += sum.Messages
		if sum.Torn != nil {
			fail, warn := o.Reading.Judge(sum.Torn, sum.Messages+sum.Skipped)
			if warn != nil {
				meter.Printf(a.Err, "aaep-replay: warning: %s: %v; drawing the %s before it\n", rec.Name, warn, visPlural(sum.Messages, "message"))
			}
			if fail != nil {
				meter.Stop()
				return cli.Damaged(fmt.Errorf("%s: %w", rec.Name, fail))
			}
		}
		for _, p := range rec.Problems {
			meter.Printf(a.Err, "aaep-replay: warning: %s\n", p)
		}
	}
	meter.Stop()

	traces := col.Traces()
	if o.Session != "" && len(traces) == 0 {
		return cli.Usagef("no session %q in %s (sessions seen: %s)", o.Session, o.Input, seen)
	}
	if n := col.Dropped(); n > 0 {
		fmt.Fprintf(a.Err, "aaep-replay: note: drew the first %s; %s more left out (raise --max-sessions, or draw one with --session ID)\n",
			visPlural(int64(len(traces)), "session"), visPlural(n, "session"))
	}
	machines := map[string]protocol.Machine{}
	for _, m := range mods {
		machines[m.Name()] = m.Machine()
	}
	dot := visualize.DOT(traces, visualize.DOTOptions{Title: filepath.Base(o.Input), Sources: describeSources(recs), Machines: machines})
	out, err := visualize.Draw(a.ctx, dot, format, nil)
	if err != nil {
		return cli.Output(fmt.Errorf("draw %s: %w", o.Input, err))
	}
	err = outfile.WriteFile(output, outfile.Options{Inputs: paths, Stdout: a.Out, Binary: format == visualize.FormatPNG, Force: o.Force},
		func(w io.Writer) error {
			_, err := w.Write(out)
			return err
		})
	if err != nil {
		return cli.Output(err)
	}
	var findings int64
	for _, t := range traces {
		findings += t.Findings
	}
	where := output
	if output == "-" {
		where = "standard output"
	}
	// A subscription handshake's trace is drawn, but is no session.
	drawn := visPlural(visualize.SessionCount(traces), "session")
	if other := int64(len(traces)) - visualize.SessionCount(traces); other > 0 {
		drawn += " and " + visPlural(other, "block") + " about the stream"
	}
	fmt.Fprintf(a.Err, "aaep-replay: drew %s (%s, %s) to %s\n",
		drawn, visPlural(messages, "message"), visPlural(findings, "finding"), where)
	return nil
}

// visSessionNames remembers the first few session IDs seen, for an error message.
type visSessionNames struct {
	max   int
	names map[string]bool
	more  bool
}

func newVisSessionNames(max int) *visSessionNames {
	return &visSessionNames{max: max, names: map[string]bool{}}
}

func (s *visSessionNames) add(id string) {
	if s.names[id] {
		return
	}
	if len(s.names) >= s.max {
		s.more = true
		return
	}
	s.names[id] = true
}

func (s *visSessionNames) String() string {
	if len(s.names) == 0 {
		return "none"
	}
	list := make([]string, 0, len(s.names))
	for n := range s.names {
		list = append(list, fmt.Sprintf("%q", n))
	}
	sort.Strings(list)
	out := strings.Join(list, ", ")
	if s.more {
		out += ", ..."
	}
	return out
}

func visPlural(n int64, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// describeSources names where recs were recorded from, for a drawing's
// heading: one recording's sources with their ids (as check's "sources:"
// line), several recordings' each once.
func describeSources(recs []*recording.Recording) string {
	if len(recs) == 1 {
		return capfile.DescribeOrigins(recs[0].Sources())
	}
	var from []string
	for _, rec := range recs {
		for _, o := range rec.Sources() {
			if d := o.Describe(); !slices.Contains(from, d) {
				from = append(from, d)
			}
		}
	}
	return strings.Join(from, "; ")
}
