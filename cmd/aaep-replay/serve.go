package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/grpcbind/grpcserve"
	"github.com/aaep-tools/aaepkit/internal/capedit"
	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/numflag"
	"github.com/aaep-tools/aaepkit/internal/outfile"
	"github.com/aaep-tools/aaepkit/msgfilter"
	"github.com/aaep-tools/aaepkit/objstore"
	"github.com/aaep-tools/aaepkit/recording"
	"github.com/aaep-tools/aaepkit/serve"
	"github.com/aaep-tools/aaepkit/timing"
)

// replayFlags are the options serve and push share: timing, range, filters,
// loop, recording and output.
type replayFlags struct {
	speed    float64
	noDelay  bool
	maxIdle  time.Duration
	precise  bool
	from, to string
	// fromPos and toPos are --from and --until (push and view too) parsed.
	fromPos, toPos timing.Position
	sessions       []string
	types          []string
	loop           int
	record         string
	force          bool
	sources        []string // the local files of the recordings replayed (--record is none of them)
	json           bool
	// storage and stderr serve --record s3://...: set by the verb when it
	// runs.
	storage *objstore.Options
	stderr  io.Writer
	// growing is set by view --follow: the capture is being written, so
	// a selection empty now is not refused (its records may be to come).
	growing bool
}

// add registers the flags; toName is the name of the range-end flag
// ("until"; push also has --to, its target).
func (f *replayFlags) add(fs *pflag.FlagSet, toName string) {
	numflag.Float(fs, &f.speed, "speed", 1, numflag.Between(timing.MinSpeed, timing.MaxSpeed), fmt.Sprintf("replay speed factor (%g to %g)", timing.MinSpeed, float64(timing.MaxSpeed)))
	fs.BoolVar(&f.noDelay, "no-delay", false, "send every event as fast as possible")
	numflag.Duration(fs, &f.maxIdle, "max-idle", 0, numflag.NonNegative("no cap"), "cap every wait between two events at this wall-clock time (0: no cap)")
	fs.BoolVar(&f.precise, "precise", false, "spin the last ~150µs before each deadline: wake-ups within microseconds of it (holds a core that long per event)")
	fs.StringVar(&f.from, "from", "", "start at a time offset (1m30s, 1:30) or record number (#120 or 120)")
	fs.StringVar(&f.to, toName, "", "stop after a time offset or record number (inclusive)")
	fs.StringSliceVar(&f.sessions, "session", nil, "replay only this session (repeatable)")
	fs.StringSliceVar(&f.types, "type", nil, "replay only this event type, exact or suffix such as tool.invoked (repeatable)")
	numflag.Int(fs, &f.loop, "loop", 1, numflag.NonNegative("forever"), "play the range N times; 0 loops forever")
	fs.StringVar(&f.record, "record", "", "write the replay as seen on the wire to this capture file (never over an existing one without --force)")
	fs.BoolVar(&f.force, "force", false, "let --record replace an existing non-empty file")
	fs.BoolVar(&f.json, "json", false, "print replies and subscriber summaries as JSON lines")
}

// timing is the replay's timing as the flags set it.
func (f *replayFlags) timing() timing.Config {
	return timing.Config{Speed: f.speed, NoDelay: f.noDelay, MaxIdle: f.maxIdle}
}

// validate checks the flags that need no input (the range's ends are
// parsed into fromPos and toPos); toName is the name of the range-end flag.
func (f *replayFlags) validate(toName string) error {
	if err := f.timing().Validate(); err != nil {
		return cli.Usagef("--speed/--max-idle: %w", err)
	}
	if f.noDelay && f.speed != 1 {
		return cli.Usagef("--no-delay sends every event at once, so --speed %g means nothing with it: give one of them", f.speed)
	}
	var err error
	if f.fromPos, err = timing.ParsePosition(f.from); err != nil {
		return cli.Usagef("--from: %w", err)
	}
	if f.toPos, err = timing.ParsePosition(f.to); err != nil {
		return cli.Usagef("--%s: %w", toName, err)
	}
	return nil
}

// options turns the validated flags into serve.Options for the recording
// rec (replayed through a cursor over its parts), refusing a --record
// output or a selection that rec rules out.
func (f *replayFlags) options(ctx context.Context, rec *recording.Recording, toName string) (serve.Options, error) {
	input := rec.Name
	o := serve.Options{
		Open:   func() (serve.Cursor, error) { return rec.Records(ctx) },
		Timing: f.timing(),
		Filter: msgfilter.Filter{Sessions: f.sessions, Types: f.types},
		Passes: f.loop,
	}
	if f.loop == 0 {
		o.Passes = -1
	}
	if f.precise {
		o.Clock = timing.Precise(0)
	}
	o.Range.From, o.Range.To = f.fromPos, f.toPos
	if err := f.checkRecord(ctx, input); err != nil {
		return o, err
	}
	if f.growing {
		return o, nil
	}
	// An empty selection would serve nothing without a word (and an SSE
	// client would reconnect forever): refuse it, saying what there is.
	sel := capedit.Selection{From: o.Range.From, To: o.Range.To, ToFlag: "--" + toName, Sessions: f.sessions}
	r, err := rec.Records(ctx)
	if err != nil {
		return o, cli.Input(err)
	}
	defer r.Close()
	if err := capedit.CheckSelectionOf(input, r, sel); errors.Is(err, capedit.ErrEmptySelection) {
		return o, cli.Usage(err)
	}
	if err := capedit.CheckMatch(ctx, input, r, o.Filter); err != nil {
		return o, cli.Usage(err)
	}
	return o, nil
}

// openRecord creates the --record capture. Its header says what was
// replayed and how, so that a check of the recording can relate the
// payloads' own timestamps (those of the original capture) to it.
func (f *replayFlags) openRecord(ctx context.Context, input string, orig capfile.Header, endpoint, transport string) (*recordFile, error) {
	if f.record == "" {
		return nil, nil
	}
	meta := map[string]string{
		capfile.MetaReplayOf: filepath.Base(input),
		"replay_of_start":    orig.Start.Format(time.RFC3339Nano),
		"replay_speed":       strconv.FormatFloat(f.speed, 'g', -1, 64),
		"view":               "subscriber: received = sent by aaep-replay, sent = sent by the subscriber; source N = Nth subscriber, attribute subscription = its id",
	}
	if f.noDelay {
		meta["replay_speed"] = "no-delay"
	}
	hdr := capfile.Header{
		Start:   time.Now(),
		Tool:    capfile.ToolReplay + "/" + version,
		Origins: []capfile.Origin{{ID: 0, Transport: transport, Endpoint: capfile.StripCredentials(endpoint), Subprotocol: serve.Subprotocol}},
		Meta:    meta,
	}
	if objstore.IsURL(f.record) {
		return f.openRemoteRecord(ctx, hdr, f.stderr)
	}
	out, err := outfile.Open(f.record, f.recordOptions(input))
	if err != nil {
		return nil, cli.Output(fmt.Errorf("--record %w", err))
	}
	w, err := capfile.NewWriter(out, hdr, recordWriterOptions(out))
	if err != nil {
		out.Discard()
		return nil, cli.Output(fmt.Errorf("--record: %w", err))
	}
	return &recordFile{name: f.record, w: w, f: out}, nil
}

// recordHeaderRoom is the room kept in a --record header for subscribers'
// sources, listed as they arrive: some 900 of them.
const recordHeaderRoom = 64 << 10

// recordWriterOptions lets a --record file's header grow with each
// subscriber (a stream output cannot: its subscribers are then source 0).
func recordWriterOptions(out *outfile.File) *capfile.WriterOptions {
	o := &capfile.WriterOptions{}
	if at, ok := out.HeaderAt(); ok {
		o.HeaderReserve, o.HeaderAt = recordHeaderRoom, at
	}
	return o
}

// ServeOptions are what serve was asked: its inputs and flags.
type ServeOptions struct {
	*app

	Inputs     []string
	Replay     replayFlags
	Listen     string
	GRPC       string
	GRPCTLS    grpcTLSFlags
	Shared     bool
	Control    bool
	Paused     bool
	SSEEvent   string
	CORSOrigin []string
	// AllowOrigin are the origins whose pages may use /control and /stats.
	AllowOrigin []string
	Keepalive   time.Duration
	CloseAtEnd  bool
}

// NewCmdServe builds serve; runF, when given, runs instead of serveRun
// (tests of the command line).
func NewCmdServe(a *app, runF func(*ServeOptions) error) *cobra.Command {
	opts := &ServeOptions{app: a}
	cmd := &cobra.Command{
		Use:   "serve FILE",
		Short: "Replay a capture to subscribers over WebSocket and SSE",
		Long: `serve replays a capture the way its producer sent it, to any number of
subscribers, until interrupted (Ctrl-C):

  WebSocket  ws://ADDR/aaep/v1/ws (subprotocol aaep.v1): send a
             subscription.request first to negotiate, or nothing (the stream
             starts after a short grace period, unfiltered); a request sent
             later is answered between two events, losing none.
  SSE        http://ADDR/aaep/v1/events and http://ADDR/events; resume with
             Last-Event-ID. POST /aaep/v1/subscriptions to negotiate first,
             then open the stream at the Location it returns. Events are
             framed as recorded (--sse-event): a producer that sent unnamed
             events (EventSource.onmessage) is replayed unnamed.
  gRPC       with --grpc ADDR: aaep.v1.AaepService at grpc://ADDR; send a
             subscription.request first on Subscribe, replies on the same
             stream; GetManifest answers the capture's manifest.
  Replies    POST /aaep/v1/replies or /messages: confirmation.reply and
             clarification.reply (204, or 400 for an unknown token),
             subscription.renegotiate, subscription.close.
  Status     GET /healthz, GET /stats (per subscriber: position, lateness,
             queue depth, drops, closes).
  Control    with --control: GET /control, POST /control/play, /pause,
             /step?count=N, /seek?index=N or ?to=1m30s, /speed?value=F, and
             GET /control/log (what each subscriber received and sent).

Each subscriber gets its own replay from the start; --shared puts everyone on
one timeline that starts with the first subscriber (later ones join live, and
an SSE subscriber reconnecting with Last-Event-ID resumes where it was).
When a replay has ended, its stream stays open with keepalives (--keepalive)
until the subscriber leaves, as a producer that went quiet would;
--close-at-end closes it instead. GET /stats says which subscribers have
received the whole replay ("complete"). Browsers on any origin may subscribe
and POST replies (CORS); --cors-origin restricts that. /control and /stats
answer no web page of another origin (--allow-origin names one that may),
and only requests whose Host header names this server (an IP address,
localhost or this machine's name), so that no page drives the replay,
DNS rebinding included.
Payloads go out byte for byte. Timing follows the capture's receive times,
scheduled at absolute deadlines. --from and --until take a time offset (1m30s,
1:30) or a record number (#120 or 120, counting every record from 0, as info
and check show them); both ends are inclusive.

Replies, subscriptions and, when a subscriber leaves, its lateness p50/p99/max
and drift are printed to stdout (--json: one JSON object per line).`,
		Example: `  aaep-replay serve session.aaep
  aaep-replay --input session.aaep --speed 4 --max-idle 2s
  aaep-replay serve session.aaep --shared --loop 0 --listen 0.0.0.0:8765
  aaep-replay serve session.aaep --from 1m30s --until '#400' --session sess_2c91a7
  aaep-replay serve session.aaep --record subscriber-run.aaep --json
  aaep-replay serve session.aaep --grpc 127.0.0.1:8766
  aaep-replay serve session.aaep --control --paused   # then: curl -X POST localhost:8765/control/step

  aaep-replay serve session.aaep --sse-event none --cors-origin http://localhost:3000`,
		Args: needFiles("serve", "the capture FILE to replay (several, a glob or a directory are replayed as one, in time order)", 1, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Inputs = args
			if err := opts.Replay.validate("until"); err != nil {
				return err
			}
			if opts.Paused && !opts.Control {
				return cli.Usagef("--paused goes with --control")
			}
			if err := serve.CheckSSEEvent(opts.SSEEvent); err != nil {
				return cli.Usagef("--sse-event: %w", err)
			}
			for _, o := range opts.CORSOrigin {
				if o == "*" {
					continue
				}
				if _, err := serve.NormalizeOrigin(o); err != nil {
					return cli.Usagef("--cors-origin: %w", err)
				}
			}
			if err := checkAllowOrigins(opts.AllowOrigin); err != nil {
				return err
			}
			if err := opts.GRPCTLS.check(opts.GRPC); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return serveRun(opts)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.Listen, "listen", "127.0.0.1:8765", "address to listen on (a non-loopback address prints a warning)")
	fs.StringVar(&opts.GRPC, "grpc", "", "also serve the replay over gRPC (aaep.v1.AaepService) on this address, e.g. 127.0.0.1:8766")
	opts.GRPCTLS.add(fs)
	fs.BoolVar(&opts.Shared, "shared", false, "one timeline for all subscribers; late joiners join live")
	fs.BoolVar(&opts.Control, "control", false, "steer the replay through the JSON API under /control (play, pause, step, seek, speed); implies --shared")
	fs.BoolVar(&opts.Paused, "paused", false, "with --control: start paused (POST /control/step or /control/play to go on)")
	fs.StringVar(&opts.SSEEvent, "sse-event", serve.SSEEventRecorded, `SSE event: line: "recorded" (as captured; aaep.event when the capture has no SSE framing), "none" (unnamed events, for EventSource.onmessage), or a NAME for every event`)
	fs.StringArrayVar(&opts.CORSOrigin, "cors-origin", nil, "browser origin allowed to subscribe and reply, e.g. http://localhost:3000 (repeatable; default: any origin)")
	addAllowOrigin(fs, &opts.AllowOrigin, "/control and /stats")
	numflag.Duration(fs, &opts.Keepalive, "keepalive", serve.DefaultKeepalive, numflag.ZeroOrAtLeast(float64(serve.MinKeepalive), "off"),
		fmt.Sprintf("send an SSE comment or WebSocket ping after this much silence (%v or more; 0: off); a WebSocket peer that leaves a ping unanswered for %v is closed", serve.MinKeepalive, serve.DefaultPongWait))
	fs.BoolVar(&opts.CloseAtEnd, "close-at-end", false, "close each subscription when its replay ends (default: keep it open with keepalives, like a producer that went quiet)")
	opts.Replay.add(fs, "until")
	return cmd
}

// serveRun replays the inputs, read as one capture when there are several
// (a recording's parts in order, recordings in time order), to subscribers
// until interrupted.
func serveRun(opts *ServeOptions) error {
	a := opts.app
	rec, paths, err := a.replayed("serve", opts.Inputs)
	if err != nil {
		return err
	}
	f := &opts.Replay
	f.sources = paths
	f.storage, f.stderr = &a.storage, a.Err
	so, err := f.options(a.ctx, rec, "until")
	if err != nil {
		return err
	}
	so.Shared = opts.Shared || opts.Control
	so.SSEEvent = opts.SSEEvent
	so.CORSOrigins = opts.CORSOrigin
	so.AllowOrigins = opts.AllowOrigin
	so.Keepalive = opts.Keepalive // at least serve.MinKeepalive, or 0 (numflag refused the rest)
	if opts.Keepalive == 0 {
		so.Keepalive = -1
	}
	so.CloseAtEnd = opts.CloseAtEnd
	if opts.Control {
		so.Control = timing.NewController(so.Clock, so.Timing, opts.Paused)
	}
	return serveReplay(a, rec, opts.Listen, opts.GRPC, &opts.GRPCTLS, f, so, nil)
}

// serveReplay listens on listen (and on grpcListen for gRPC, when given),
// serves the replay of input (wrapped by wrap, when given, which may print
// where to find it and returns a function that releases what it holds)
// until Ctrl-C, then shuts everything down.
func serveReplay(a *app, replayed *recording.Recording, listen, grpcListen string, grpcTLS *grpcTLSFlags, f *replayFlags, opts serve.Options, wrap func(srv *serve.Server, addr string) (http.Handler, func(), error)) error {
	if err := cli.CheckListen("--listen", listen); err != nil {
		return err
	}
	if grpcListen != "" {
		if err := cli.CheckListen("--grpc", grpcListen); err != nil {
			return err
		}
	}
	grpcConf, err := grpcTLS.config()
	if err != nil {
		return err
	}
	printer := serve.NewPrinter(a.Out, f.json)
	opts.Notify = printer.Notify
	input := replayed.Name
	hdr, err := checkCapture(a.ctx, replayed, a.Err)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return cli.Unavailable(fmt.Errorf("listen on %s: %w", listen, err))
	}
	defer ln.Close()
	addr := ln.Addr().String()
	rec, err := f.openRecord(a.ctx, input, hdr, "http://"+addr, "replay")
	if err != nil {
		return err
	}
	if rec != nil {
		opts.Record = rec
	}
	srv, err := serve.New(opts)
	if err != nil {
		rec.discard()
		return cli.Input(fmt.Errorf("%s: %w", input, err))
	}
	if !isLoopback(addr) {
		fmt.Fprintf(a.Err, "aaep-replay: warning: listening on %s, reachable from other machines; anyone who connects gets the capture's payloads, without authentication\n", addr)
	}
	var gs *grpcserve.Server
	if grpcListen != "" {
		if gs, err = grpcserve.Listen(grpcListen, srv, grpcConf); err != nil {
			_ = srv.Shutdown(context.Background())
			rec.discard()
			return cli.Unavailable(fmt.Errorf("listen on %s (--grpc): %w", grpcListen, err))
		}
		if ga := gs.Addr().String(); !isLoopback(ga) && grpcTLS.ClientCA == "" {
			fmt.Fprintf(a.Err, "aaep-replay: warning: serving gRPC on %s, reachable from other machines, without authentication of subscribers (--grpc-client-ca)\n", ga)
		}
	}
	var h http.Handler = srv
	if wrap != nil {
		wh, release, err := wrap(srv, addr)
		if err != nil {
			_ = srv.Shutdown(context.Background())
			rec.discard()
			return err
		}
		defer release()
		h = wh
	}
	also := ""
	if gs != nil {
		scheme := "grpc://"
		if grpcConf != nil {
			scheme = "grpcs://"
		}
		also = " and " + scheme + gs.Addr().String()
	}
	fmt.Fprintf(a.Err, "aaep-replay: serving %s on ws://%s/aaep/v1/ws and http://%s/aaep/v1/events%s (Ctrl-C to stop)\n", input, addr, addr, also)
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 2)
	go func() { served <- hs.Serve(serve.Listener(ln)) }()
	if gs != nil {
		go func() {
			if err := gs.Serve(); err != nil {
				served <- err
			}
		}()
	}
	var serveErr error
	select {
	case <-a.ctx.Done():
	case serveErr = <-served:
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// Subscriptions first (SSE streams are requests the HTTP server
	// would wait for), then the listener.
	_ = srv.Shutdown(sctx)
	_ = hs.Shutdown(sctx)
	if gs != nil {
		gs.Stop()
	}
	recErr := srv.RecordError()
	if err := rec.close(a.Err); err != nil && recErr == nil {
		recErr = err
	}
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return cli.Unavailable(fmt.Errorf("serve: %w", serveErr))
	}
	if recErr != nil {
		return cli.Output(recErr)
	}
	return nil
}

// checkCapture opens the recording once, so that a file error is reported
// (exit 2) before anything listens or connects, and returns its header.
//
// The recording is read through once and what will not be served is said
// on stderr (the replay goes on): each damaged range, which the replay
// skips as repair does (recording.Gap's words), a torn tail with its
// unreadable bytes, or a recording of which nothing could be read.
func checkCapture(ctx context.Context, rec *recording.Recording, stderr io.Writer) (capfile.Header, error) {
	r, err := rec.Records(ctx)
	if err != nil {
		return capfile.Header{}, cli.Input(err)
	}
	defer r.Close()
	var n int64
	var gaps []string
	for {
		if _, err = r.Next(); err == nil {
			n++
			continue
		}
		if errors.Is(err, io.EOF) {
			break
		}
		gap, rerr := r.Resume()
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			break // not damage that can be skipped: judged below
		}
		if !capfile.IsTorn(err) {
			gaps = append(gaps, recording.SkipWarning(err, gap))
		}
		if rerr != nil {
			if !capfile.IsTorn(err) {
				err = io.EOF
			}
			break // a torn tail stays to be judged
		}
	}
	for _, g := range gaps {
		fmt.Fprintf(stderr, "aaep-replay: warning: %s: %s\n", rec.Name, g)
	}
	fail, warn := (capfile.ReadPolicy{}).Judge(err, n)
	switch {
	case fail != nil || warn != nil:
		which := "records before it"
		if len(gaps) > 0 {
			which = "readable records"
		}
		fmt.Fprintf(stderr, "aaep-replay: warning: %s: %v; serving the %d %s\n", rec.Name, errors.Join(fail, warn), n, which)
	case len(gaps) > 0:
		fmt.Fprintf(stderr, "aaep-replay: warning: %s: serving the %d readable records\n", rec.Name, n)
	}
	return r.Header(), nil
}

// addAllowOrigin adds --allow-origin, the origins whose pages may use what
// (the operator's endpoints) besides the server's own pages.
func addAllowOrigin(fs *pflag.FlagSet, p *[]string, what string) {
	fs.StringArrayVar(p, "allow-origin", nil, "origin (scheme://host[:port]) of a web page that may use "+what+" (repeatable; default: none but the server's own pages)")
}

// checkAllowOrigins refuses an --allow-origin that is not an origin.
func checkAllowOrigins(origins []string) error {
	for _, o := range origins {
		if _, err := serve.NormalizeOrigin(o); err != nil {
			return cli.Usagef("--allow-origin: %w", err)
		}
	}
	return nil
}

// isLoopback reports whether a listen address only accepts local connections.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
