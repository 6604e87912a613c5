package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/capedit"
	"github.com/aaep-tools/aaepkit/internal/outfile"
	"github.com/aaep-tools/aaepkit/recording"
)

// ExportOptions are what export was asked: its inputs and flags.
type ExportOptions struct {
	*app

	Inputs []string
	// Output is the file written, - for standard output (the default).
	Output string
	// Force replaces an original recording named by Output.
	Force bool
	// Reading says how the end of reading a damaged or torn capture is judged.
	Reading capfile.ReadPolicy
	Export  capedit.ExportOptions
	// Format is jsonl (the default), otlp or otlp-json; OTLP are the
	// flags of the last two.
	Format string
	OTLP   otlpFlags
}

// NewCmdExport builds export; runF, when given, runs instead of exportRun
// (tests of the command line).
func NewCmdExport(a *app, runF func(*ExportOptions) error) *cobra.Command {
	o := &ExportOptions{app: a}
	cmd := &cobra.Command{
		Use:   "export FILE...",
		Short: "Write a capture's messages as JSON Lines",
		Long: `export writes one received message per line, byte for byte as recorded: the
JSON Lines the reference Python aaep-capture writes and aaep-validate reads.
A message with line breaks (pretty-printed JSON) has them replaced with
spaces, and a warning says how many.

--with-meta writes every record (messages both ways, connection events,
markers) wrapped with its receive time, kind, direction, source, session,
flags and attributes, after a first line holding the capture header:
  {"aaep_export":1,"header":{...}}
  {"recv_ns":1500000,"kind":"received","dir":"in","source":0,"session":"s1","message":{...}}
import reads such a file back into an identical capture.

--format otlp sends every session as an OpenTelemetry trace to an OTLP/HTTP
receiver (--otlp-endpoint http://HOST:4318: Jaeger, Tempo, a Collector);
--format otlp-json writes the same traces as OTLP JSON, one request per
line, as the Collector's file exporter does. The check's findings are span
events; text is left out unless --include-text. See docs/otel.md.

` + inputsHelp + ` Several captures are exported as
one, in time order, as "merge --join-sources" of them would be.`,
		Example: `  aaep-replay export session.aaep > session.jsonl
  aaep-replay export run-*.aaep -o run.jsonl
  aaep-replay export --with-meta -o session.meta.jsonl session.aaep
  aaep-replay export --format otlp --otlp-endpoint http://localhost:4318 session.aaep
  aaep-replay export --format otlp-json -o session.otlp.jsonl session.aaep`,
		Args: needFiles("export", "a capture FILE (several, a glob, a directory, or - for standard input)", 1, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Inputs = args
			if err := validateExport(o); err != nil {
				return err
			}
			if o.Output == "" {
				o.Output = "-"
			}
			if runF != nil {
				return runF(o)
			}
			if o.Format != formatJSONL {
				return exportOTLP(o)
			}
			return exportRun(o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.Output, "output", "o", "", "write to this file instead of standard output (-: standard output)")
	addReadingFlags(f, &o.Reading)
	f.BoolVar(&o.Force, "force", false, "replace an original recording (a capture a recorder wrote) at the output; never an input")
	f.BoolVar(&o.Export.WithMeta, "with-meta", false, "wrap every record with its time, kind, direction, source and attributes")
	f.BoolVar(&o.Export.Sent, "sent", false, "also export the messages the recorder sent (without --with-meta)")
	f.StringVar(&o.Format, "format", formatJSONL, "what to write: jsonl, otlp (OpenTelemetry traces to --otlp-endpoint) or otlp-json (OTLP JSON to -o)")
	o.OTLP.add(f)
	return cmd
}

// exportRun writes the inputs' messages as JSON Lines.
func exportRun(o *ExportOptions) error {
	a, opts := o.app, o.Export
	recs, err := a.recordings("export", o.Inputs)
	if err != nil {
		return err
	}
	var ws []capedit.Warning
	run := func(w io.Writer) error {
		opts.Progress = a.meter("export")
		st, err := capedit.ExportRecordings(a.ctx, recs, w, opts)
		opts.Progress.Stop()
		if st != nil {
			ws = st.Warnings
			if st.Empty > 0 {
				fmt.Fprintf(a.Err, "aaep-replay: warning: left out %d empty messages (an empty line is not a message; --with-meta keeps them)\n", st.Empty)
			}
			if st.Reflowed > 0 {
				fmt.Fprintf(a.Err, "aaep-replay: warning: %d messages held line breaks, written with spaces instead (use --with-meta for byte-exact output)\n", st.Reflowed)
			}
		}
		return err
	}
	// Damage: every line before it is written (Export's error is marked
	// outfile.KeepPartial, so a file output is kept), then the damage is
	// reported.
	err = outfile.WriteFile(o.Output, outfile.Options{Inputs: recording.Paths(recs), Stdout: a.Out, Force: o.Force}, run)
	return a.fileopsDone(o.Reading, ws, err, func() {})
}
