package capturecmd

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/numflag"
	"github.com/aaep-tools/aaepkit/internal/outfile"
	"github.com/aaep-tools/aaepkit/msgfilter"
	"github.com/aaep-tools/aaepkit/transport"
)

// version is set at build time with -ldflags "-X
// github.com/aaep-tools/aaepkit/internal/capturecmd.version=..." (make
// build); go install and go build get the same form from the commit they
// build (cli.Version).
var version string

func init() { version = cli.Version(version) }

// Main runs aaep-capture with args and returns the process exit code.
func Main(args []string) int {
	takeHandedOver()
	// The first signal stops the capture cleanly; a second one, while it
	// winds down, stops waiting for anything (uploads included) and exits
	// with the summary.
	ctx, stop := stopSignals()
	defer stop()
	return run(ctx, cli.System(), args)
}

func run(ctx context.Context, s cli.Streams, args []string) int {
	s.Err = cli.MessageWriter(s.Err, args) // names with control characters quoted
	cmd := newCaptureCmd(withArgs(ctx, args), s, nil)
	cmd.SetArgs(args)
	cmd.SetIn(s.In)
	cmd.SetOut(s.Out)
	cmd.SetErr(s.Err)
	cli.StrictCompletion(cmd, args) // after SetOut: the scripts go there
	err := cli.Execute(ctx, cmd)
	return cli.Report(s.Err, "aaep-capture", err)
}

// options are the parsed command line.
type options struct {
	cli.Streams
	ctx context.Context

	endpoints   []string
	execArgs    []string // --exec: the command after "--"
	output      string
	force       bool
	duration    time.Duration
	maxEvents   int64
	maxBytes    sizeFlag
	flushEvery  time.Duration
	filterTypes []string
	filterSess  []string
	filterUrg   []string
	headers     []string
	cacert      string
	cert        string
	key         string
	deadline    time.Duration
	insecure    bool
	redact      []string
	quiet       bool
	json        bool
	subscribe   bool
	subFile     string
	framing     string
	exec        bool
	follow      bool
	maxMessage  sizeFlag
	maxRetries  int
	wait        bool
	retryWait   time.Duration
	rotateSize  sizeFlag
	rotateEvery time.Duration
	ring        int
	storage     storageOptions
	metrics     string
}

// newCaptureCmd builds the command; runF replaces captureRun in tests of
// the flag parsing.
func newCaptureCmd(ctx context.Context, s cli.Streams, runF func(*options) error) *cobra.Command {
	o := &options{Streams: s, ctx: ctx, maxMessage: transport.DefaultMaxMessageSize}
	cmd := &cobra.Command{
		Use:   "aaep-capture [endpoint] --output FILE [flags] [-- command args...]",
		Short: "Record live AAEP event streams into a capture file",
		Long: `aaep-capture records what an AAEP producer sends, byte for byte, with the
monotonic time each message arrived, into a capture file that aaep-replay
can replay, check, draw and edit.

Endpoints (--endpoint, repeatable, or the first argument):
  http://, https://       Server-Sent Events; a bare origin tries /aaep/v1/events,
                          then /events
  ws://, wss://           WebSocket, subprotocol aaep.v1; a subscription.request
                          is sent after connecting
  unix:///path/to.sock    Unix domain socket (--framing lp|ndjson|auto)
  grpc://HOST:PORT        gRPC (aaep.v1.AaepService), grpcs:// with TLS;
                          GetManifest is kept, a subscription.request is sent
  exec:command args       a child process speaking stdio JSON-RPC 2.0
                          (or --exec -- command args...)
  FILE, -                 an NDJSON file (the reference Python tool's JSONL
                          included) or standard input; --follow tails it

Several endpoints are recorded into one file, each record tagged with its
source. Lost connections are retried with exponential backoff and jitter; every
connect, disconnect, refusal and close is recorded as a connection event.

Exit status: 0 when the capture stopped as asked (--duration, --max-events,
--max-bytes, Ctrl-C/SIGTERM, or every source ended cleanly), 1 when an endpoint
failed (unreachable after the retries, rejected, or a producer process that
exited with an error), 2 for a usage error or a file that cannot be read or
written.`,
		Example: `  aaep-capture --endpoint http://localhost:8080 --output session.aaep
  aaep-capture wss://agent.example/aaep/v1/ws -o run.aaep --header "Authorization: Bearer $TOKEN"
  aaep-capture http://localhost:8080 -o tools.aaep --type tool.invoked --max-events 100
  aaep-capture grpcs://agent.example:8443 -o run.aaep --cacert ca.pem --cert me.pem --key me-key.pem
  aaep-capture unix:///run/user/1000/aaep/planner.sock -o local.aaep --framing lp
  aaep-capture --exec -o child.aaep -- ./producer --verbose
  aaep-capture session.jsonl -o imported.aaep
  aaep-capture http://prod:8080 -o long.aaep --rotate-every 1h --ring 24 --redact request_text
  aaep-capture http://agent:8080 -o s3://captures/fleet/agent-7.aaep --rotate-every 10m --s3-endpoint http://minio:9000`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.parseArgs(args, cmd.ArgsLenAtDash()); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			if e := needsSibling(o.endpoints); e != "" {
				return handOver(o, e)
			}
			if o.storage.drain != "" {
				return drainRun(o)
			}
			return captureRun(o)
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return cli.Usagef("%w", err) })
	f := cmd.Flags()
	f.SortFlags = false
	f.StringArrayVarP(&o.endpoints, "endpoint", "e", nil, "endpoint to record (repeatable); the first argument works too")
	f.StringVarP(&o.output, "output", "o", "", "capture file to write, - for standard output, or s3://BUCKET/PREFIX/name.aaep (required)")
	f.BoolVar(&o.force, "force", false, "replace an existing non-empty capture file, once the producer sent a message (refused without it: live data cannot be recorded again)")
	numflag.Duration(f, &o.duration, "duration", 0, numflag.NonNegative("no limit"), "stop after this long (e.g. 30s, 1h); 0: no limit")
	numflag.Int64(f, &o.maxEvents, "max-events", 0, numflag.NonNegative("no limit"), "stop after recording this many events (handshake messages do not count); 0: no limit")
	f.Var(&o.maxBytes, "max-bytes", "stop after recording this many bytes of received messages (e.g. 100MiB); 0: no limit")
	numflag.Duration(f, &o.flushEvery, "flush-interval", 100*time.Millisecond, numflag.Positive(), "flush to disk at least this often; a killed capture loses at most this much")
	f.StringArrayVar(&o.filterTypes, "type", nil, "record only this event type, exact or a suffix such as tool.invoked (repeatable; --filter-type too)")
	f.StringArrayVar(&o.filterSess, "session", nil, "record only this session (repeatable)")
	f.StringArrayVar(&o.filterUrg, "urgency", nil, "record only this urgency, e.g. critical; absent counts as normal (repeatable)")
	f.StringArrayVar(&o.headers, "header", nil, `request header "Name: value" for HTTP and WebSocket, metadata for gRPC (repeatable); never recorded`)
	f.StringVar(&o.cacert, "cacert", "", "PEM file of CA certificates to trust for https://, wss:// and grpcs://")
	f.StringVar(&o.cert, "cert", "", "PEM client certificate for mutual TLS (with --key)")
	f.StringVar(&o.key, "key", "", "PEM private key of --cert")
	numflag.Duration(f, &o.deadline, "grpc-deadline", transport.DefaultStreamDeadline, numflag.Positive(), "deadline of one gRPC stream; when it passes the recorder subscribes again")
	f.BoolVar(&o.insecure, "insecure", false, "do not verify TLS certificates (prints a warning)")
	f.StringArrayVar(&o.redact, "redact", nil, `replace the value of this JSON field, at any depth, by "[REDACTED]" (repeatable)`)
	f.BoolVarP(&o.quiet, "quiet", "q", false, "print no progress and no summary")
	f.BoolVar(&o.json, "json", false, "print a JSON summary on standard output")
	f.BoolVar(&o.subscribe, "subscribe", false, "SSE: POST a subscription.request to /aaep/v1/subscriptions first; Unix: send one after connecting")
	f.StringVar(&o.subFile, "subscribe-file", "", "JSON file with the subscription.request (or just its capabilities) to send")
	f.StringVar(&o.framing, "framing", "auto", "framing of Unix sockets: lp (4-byte big-endian length), ndjson, or auto")
	f.BoolVar(&o.exec, "exec", false, "start the command after -- as a producer speaking stdio JSON-RPC")
	f.BoolVar(&o.follow, "follow", false, "keep reading a file endpoint as it grows")
	f.Var(&o.maxMessage, "max-message-size", "largest message to record; a larger one is recorded as a refusal")
	numflag.Int(f, &o.maxRetries, "max-retries", transport.DefaultRetry.MaxRetries, numflag.AtLeast(-1), "reconnection attempts after a failure before giving up; -1: forever")
	f.BoolVar(&o.wait, "wait", false, "keep retrying when the very first connection is refused (start before the producer); without it a refused first attempt fails at once")
	numflag.Duration(f, &o.retryWait, "retry-max-wait", transport.DefaultRetry.Max, numflag.Positive(), "longest wait between reconnection attempts")
	f.Var(&o.rotateSize, "rotate-size", "start a new file when the current one reaches this size (e.g. 512MiB)")
	numflag.Duration(f, &o.rotateEvery, "rotate-every", 0, numflag.NonNegative("no rotation by time"), "start a new file at every multiple of this duration (e.g. 1h)")
	numflag.Int(f, &o.ring, "ring", 0, numflag.NonNegative("keep every file"), "with rotation, keep only the newest N files")
	f.StringVar(&o.metrics, "metrics", "", "serve health metrics in the Prometheus text format at http://ADDR/metrics, e.g. 127.0.0.1:9464 (off unless given)")
	addStorageFlags(f, &o.storage)
	cli.UseVocabulary(cmd)
	cli.RefuseEmptyPaths(cmd, cli.PathFlags...)
	return cmd
}

// parseArgs validates the flags and the positional arguments.
func (o *options) parseArgs(args []string, dash int) error {
	if o.storage.pathStyle && o.storage.virtual {
		return cli.Usagef("--s3-path-style and --s3-virtual-host contradict each other")
	}
	if o.storage.drain != "" {
		if len(args) > 0 || len(o.endpoints) > 0 || o.output != "" || o.exec {
			return cli.Usagef("--drain-spool uploads what a spool holds and exits: it takes no endpoint and no --output")
		}
		return nil
	}
	before := args
	if dash >= 0 {
		before, o.execArgs = args[:dash], args[dash:]
	}
	if len(o.execArgs) > 0 && !o.exec {
		return cli.Usagef("arguments after -- need --exec")
	}
	if o.exec && len(o.execArgs) == 0 {
		return cli.Usagef("--exec needs a command after --, e.g. --exec -- ./producer")
	}
	if len(before) > 1 {
		return cli.Usagef("one endpoint argument at most (use --endpoint for more): %q", before)
	}
	o.endpoints = append(append([]string(nil), before...), o.endpoints...)
	if len(o.endpoints) == 0 && !o.exec {
		return cli.Usagef("no endpoint: give --endpoint URL, a first argument, or --exec -- command")
	}
	for _, e := range o.endpoints {
		if err := cli.CheckURLPort("endpoint", e); err != nil {
			return err
		}
	}
	if o.metrics != "" {
		if err := cli.CheckListen("--metrics", o.metrics); err != nil {
			return err
		}
	}
	if o.output == "" {
		return cli.Usagef("--output is required")
	}
	if o.framing != "auto" && !hasUnixEndpoint(o.endpoints) {
		return cli.Usagef("--framing %s frames Unix socket streams; no endpoint is a unix:// socket (%s)", o.framing, strings.Join(o.endpoints, ", "))
	}
	if outfile.IsStdout(o.output) {
		// A capture is a stream (its index comes last), so it can be piped
		// onward; a single one only, and not mixed with a JSON summary.
		switch {
		case o.rotateSize > 0 || o.rotateEvery > 0:
			return cli.Usagef("--output - (standard output) is one stream: it cannot be rotated")
		case o.json:
			return cli.Usagef("--output - (standard output) carries the capture: --json cannot print there too")
		}
	}
	// The numeric flags refused their own bad values as they were parsed
	// (numflag); what is left are the rules between flags.
	switch {
	case o.maxMessage <= 0:
		return cli.Usagef("--max-message-size must be positive")
	case o.rotateEvery > 0 && o.rotateEvery < time.Second:
		return cli.Usagef("--rotate-every %v: one second at least", o.rotateEvery)
	case o.rotateSize > 0 && o.rotateSize < minRotateSize:
		return cli.Usagef("--rotate-size %s: 1MiB at least (a part is closed at the first write after it reaches the size, so it can pass it by one write)", o.rotateSize.String())
	case o.ring > 0 && o.rotateSize == 0 && o.rotateEvery == 0:
		return cli.Usagef("--ring needs --rotate-size or --rotate-every")
	}
	if err := cli.CheckEnum("urgency", o.filterUrg, msgfilter.UrgencyValues...); err != nil {
		return err
	}
	if (o.cert == "") != (o.key == "") {
		return cli.Usagef("--cert and --key go together (a client certificate and its key)")
	}
	if _, err := transport.ParseFraming(o.framing); err != nil {
		return cli.Usagef("--framing: %w", err)
	}
	if _, err := parseHeaders(o.headers); err != nil {
		return err
	}
	return nil
}

// minRotateSize is the smallest --rotate-size: below it, what one write
// adds (up to --flush-interval of messages) would make the parts' sizes
// mean little.
const minRotateSize = 1 << 20

// hasUnixEndpoint reports whether one of endpoints is a Unix socket, the
// one kind of endpoint --framing applies to.
func hasUnixEndpoint(endpoints []string) bool {
	for _, e := range endpoints {
		if strings.HasPrefix(e, "unix://") || strings.HasPrefix(e, "unix:") {
			return true
		}
	}
	return false
}
