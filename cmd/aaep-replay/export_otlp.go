package main

import (
	"fmt"
	"io"
	"net/http"

	"github.com/spf13/pflag"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"

	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/numflag"
	"github.com/aaep-tools/aaepkit/internal/outfile"
	"github.com/aaep-tools/aaepkit/otlpexport"
	"github.com/aaep-tools/aaepkit/recording"
)

// The formats export writes.
const (
	formatJSONL    = "jsonl"
	formatOTLP     = "otlp"
	formatOTLPJSON = "otlp-json"
)

// otlpFlags are export's OpenTelemetry flags.
type otlpFlags struct {
	Endpoint    string
	Headers     []string
	IncludeText bool
	BatchSpans  int
	Check       checkFlags
}

func (o *otlpFlags) add(f *pflag.FlagSet) {
	f.StringVar(&o.Endpoint, "otlp-endpoint", "", "--format otlp: the OTLP/HTTP receiver's base URL, e.g. http://localhost:4318 (traces are posted to /v1/traces)")
	f.StringArrayVar(&o.Headers, "otlp-header", nil, "--format otlp: add this KEY=VALUE header to every request (repeatable; for authorization)")
	f.BoolVar(&o.IncludeText, "include-text", false, "--format otlp, otlp-json: add the recorded text (summaries, questions, answers, output, tool arguments) to the spans")
	numflag.Int(f, &o.BatchSpans, "otlp-batch-spans", 0, numflag.NonNegative("the format's default"), fmt.Sprintf("--format otlp, otlp-json: about how many spans one request holds (whole traces); default %d for otlp (the Collector's batch size; a request over %d MiB encoded is sent as smaller ones), %d for otlp-json (a line each)", otlpexport.DefaultPostSpans, otlpexport.DefaultMaxRequestBytes>>20, otlpexport.DefaultBatchSpans))
	o.Check.add(f)
}

// validateExport refuses the flags that do not go with the format asked.
func validateExport(o *ExportOptions) error {
	switch o.Format {
	case formatJSONL:
		if o.OTLP.Endpoint != "" || len(o.OTLP.Headers) > 0 || o.OTLP.IncludeText || o.OTLP.BatchSpans != 0 {
			return cli.Usagef("--otlp-endpoint, --otlp-header, --otlp-batch-spans and --include-text go with --format otlp or otlp-json")
		}
		return nil
	case formatOTLP, formatOTLPJSON:
	default:
		return cli.Usagef("--format %q: want jsonl, otlp or otlp-json", o.Format)
	}
	if o.Export.WithMeta || o.Export.Sent {
		return cli.Usagef("--with-meta and --sent go with --format jsonl")
	}
	if err := o.OTLP.Check.validate(); err != nil {
		return err
	}
	if o.Format == formatOTLPJSON {
		if o.OTLP.Endpoint != "" || len(o.OTLP.Headers) > 0 {
			return cli.Usagef("--otlp-endpoint and --otlp-header go with --format otlp (otlp-json writes a file: -o)")
		}
		return nil
	}
	if o.OTLP.Endpoint == "" {
		return cli.Usagef("--format otlp needs --otlp-endpoint http://HOST:4318")
	}
	if o.Output != "" && o.Output != "-" {
		return cli.Usagef("--format otlp sends to --otlp-endpoint; -o goes with --format otlp-json")
	}
	if _, err := otlpexport.TracesURL(o.OTLP.Endpoint); err != nil {
		return cli.Usagef("--otlp-endpoint: %w", err)
	}
	h := http.Header{}
	for _, kv := range o.OTLP.Headers {
		if err := otlpexport.ParseHeader(h, kv); err != nil {
			return cli.Usagef("--otlp-header: %w", err)
		}
	}
	return nil
}

// exportOTLP exports the inputs as OpenTelemetry traces: posted to the
// endpoint (otlp) or written as OTLP JSON (otlp-json).
func exportOTLP(o *ExportOptions) error {
	a := o.app
	recs, err := a.recordings("export", o.Inputs)
	if err != nil {
		return err
	}
	opts := otlpexport.Options{Check: o.OTLP.Check.config(), IncludeText: o.OTLP.IncludeText, BatchSpans: o.OTLP.BatchSpans, Version: version}
	run := func(emit func(*coltracepb.ExportTraceServiceRequest) error) (*otlpexport.Stats, error) {
		opts.Progress = a.meter("export")
		st, err := otlpexport.Export(a.ctx, recs, opts, emit)
		opts.Progress.Stop()
		return st, err
	}
	var st *otlpexport.Stats
	var where string
	if o.Format == formatOTLP {
		url, _ := otlpexport.TracesURL(o.OTLP.Endpoint)
		if opts.BatchSpans == 0 {
			opts.BatchSpans = otlpexport.DefaultPostSpans
		}
		c := &otlpexport.Client{URL: url, Header: http.Header{}}
		for _, kv := range o.OTLP.Headers {
			otlpexport.ParseHeader(c.Header, kv)
		}
		st, err = run(func(req *coltracepb.ExportTraceServiceRequest) error { return cli.Unavailable(c.Send(a.ctx, req)) })
		if err != nil {
			if cli.KindOf(err) == cli.KindUnavailable {
				return err
			}
			return cli.Input(err)
		}
		if c.Rejected > 0 {
			fmt.Fprintf(a.Err, "aaep-replay: warning: %s rejected %d spans: %s\n", url, c.Rejected, c.Warning)
		}
		if c.TooLarge > 0 {
			fmt.Fprintf(a.Err, "aaep-replay: warning: %s refused %d requests as too large and took them in halves; a smaller --otlp-batch-spans (this export's: %d) sends smaller ones at once\n",
				url, c.TooLarge, opts.BatchSpans)
		}
		n, plural := st.Requests+int64(c.Split), "s" // a split request is two
		if n == 1 {
			plural = ""
		}
		where = fmt.Sprintf("%s in %d request%s, %.1f MB gzipped", url, n, plural, float64(c.Bytes)/1e6)
		if c.Split > 0 {
			where += fmt.Sprintf(" (%d sent in halves)", c.Split)
		}
	} else {
		err = outfile.WriteFile(o.Output, outfile.Options{Inputs: recording.Paths(recs), Stdout: a.Out, Force: o.Force}, func(w io.Writer) error {
			jw := otlpexport.NewJSONWriter(w)
			var err error
			st, err = run(jw.Write)
			if ferr := jw.Flush(); err == nil {
				err = ferr
			}
			return err
		})
		if err != nil {
			return err // outfile's and reading errors are typed (cli.KindOf)
		}
		where = outName(o.Output)
	}
	for _, why := range st.Incomplete {
		fmt.Fprintf(a.Err, "aaep-replay: warning: INCOMPLETE: %s\n", why)
	}
	if !a.quiet {
		// A stream's trace of findings that concern no session (a
		// subscription handshake's) is no session.
		stream := ""
		if n := st.Traces - st.Sessions; n > 0 {
			stream = fmt.Sprintf("%d of findings about the stream; ", n)
		}
		fmt.Fprintf(a.Err, "aaep-replay: exported %d sessions as %d traces (%s%d spans, %d events, %d findings) from %d messages to %s\n",
			st.Sessions, st.Traces, stream, st.Spans, st.Events, st.Findings, st.Messages, where)
	}
	if len(st.Incomplete) > 0 && !o.Reading.AllowIncomplete {
		return cli.Silent(cli.KindIncomplete)
	}
	return nil
}
