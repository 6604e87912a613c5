package main

import (
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/headless"
	"github.com/aaep-tools/aaepkit/internal/numflag"
	"github.com/aaep-tools/aaepkit/internal/outfile"
	"github.com/aaep-tools/aaepkit/internal/subtest"
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/serve"
)

// TestOptions are what test was asked: its scenarios, how the subscriber
// comes, and where the verdict goes.
type TestOptions struct {
	*app

	// Files are scenario files named on the command line.
	Files []string
	// Scenarios are built-in scenarios by name; Levels select the
	// built-ins of those levels.
	Scenarios []string
	Levels    []int
	List      bool
	Listen    string
	To        string
	Exec      string
	// Page is a web subscriber's URL, opened in headless Chromium per
	// scenario; Announcements gives an --exec subscriber descriptor 3 for
	// its announcements.
	Page          string
	Announcements bool
	Transport     string
	AttachTimeout time.Duration
	JSON          bool
	JUnit         string
	Record        string
	Force         bool
	// RequireEvidence fails checks passed by absence (no reply, stayed
	// connected) that nothing shows the subscriber took in the events.
	RequireEvidence bool
	// FailOn is the lowest level of a subscriber-side finding that fails
	// the run (must, should, info or never), as check's; Threshold parsed.
	FailOn    string
	Threshold protocol.Level
	// Check are the checker's flags: --profile.
	Check checkFlags
	// SSEEvent frames the SSE stream as serve's --sse-event.
	SSEEvent string
}

// defaultTestListen is where test listens for a subscriber that attaches.
const defaultTestListen = "127.0.0.1:8765"

// NewCmdTest builds test; runF, when given, runs instead of testRun (tests
// of the command line).
func NewCmdTest(a *app, runF func(*TestOptions) error) *cobra.Command {
	opts := &TestOptions{app: a}
	cmd := &cobra.Command{
		Use:   "test [SCENARIO...]",
		Short: "Play scenarios to a subscriber and judge what it sends back",
		Long: `test plays each scenario (a capture and what the subscriber is expected to do
with it) to a subscriber over serve's timeline, records the exchange and
judges the subscriber: the scenario's expectations (a reply with a decision
within a time, no reply at all, a subscription.request with capabilities,
staying connected, resuming after a cut), and the subscriber-side rules of
check (reply schema, subscription_id, the token echoed, capabilities
declared), at their levels: a MUST fails the run, a SHOULD warns.

The subscriber comes one of three ways:
  --listen ADDR  it attaches to ws://ADDR/aaep/v1/ws or http://ADDR/aaep/v1/events
                 (default 127.0.0.1:8765), as it would to serve
  --to URL       test dials a subscriber listening for WebSocket connections, as push
  --exec 'CMD {url}'
                 test starts CMD per scenario, {url} being the replay's base URL
                 (http://127.0.0.1:PORT), and ends it when the scenario is over;
                 AAEP_TEST_SCENARIO, AAEP_TEST_LEVEL and AAEP_TEST_USER (the
                 scripted user's decision) are in its environment
  --page 'URL'   test opens a web subscriber in headless Chromium per scenario,
                 {url} in URL being the replay's base URL ({decisions}: the
                 scripted user's, query-escaped), and hears what its ARIA live
                 regions announce, as a screen reader would
  --transport grpc
                 over gRPC (aaep.v1.AaepService) instead: the subscriber attaches
                 to grpc://ADDR, {url} is grpc://127.0.0.1:PORT (not with --to)

--transport sse|websocket|grpc says which transport the subscriber uses; by
default the way it attaches tells (--to: WebSocket; otherwise the transport it
came over). A scenario of another transport (handshake-sse for a WebSocket
subscriber) is reported NOT APPLICABLE, neither passed nor failed.

Scenarios are files (SCENARIO..., a YAML schema: docs/subscriber-testing.md) or
built in: --scenario NAME, --level 1|2|3, or both; --list shows the built-ins
with the sections they test and the scripted user's decision.

The stream is the one serve sends: SSE events named as recorded (aaep.event,
B.1.3, where the capture has none), --sse-event none|NAME as serve's. Where
nothing the subscriber sent shows it heard an event, the verdict says so.

A check that passes by absence (no reply, stayed connected) is reported
"passed, unverified: nothing shows the subscriber took in the events";
--require-evidence makes it a failure.

What the subscriber told its user (§9.3.2: the session's start and end told
apart, tool calls, unknown types, critical events never suppressed) is
judged where it is observed: --page hears a web page's live regions;
--announcements gives an --exec subscriber descriptor 3
(AAEP_TEST_ANNOUNCEMENTS_FD) to write one JSON line per announcement,
{"text": ..., "urgency": "assertive"|"polite", "modality": "speech"}. Observed
announcements are the evidence of the checks passed by absence; unobserved,
the announce checks are reported NOT OBSERVABLE, neither passed nor failed.

Exit status: 0 when every required expectation passed and no rule broke at
the --fail-on level (MUST by default; should makes a SHOULD finding fail too)
(scenarios not applicable count neither way),
1 when one failed, 2 when a scenario could not run (no subscriber attached
within --attach-timeout, an invalid scenario file) or for usage errors.`,
		Example: `  aaep-replay test --list
  aaep-replay test --scenario confirmation-default-reject --exec 'python3 sub.py {url}'
  aaep-replay test --level 2 --exec 'node subscriber.js {url}' --junit report.xml
  aaep-replay test my-scenario.yaml --listen 127.0.0.1:9000 --record run.aaep
  aaep-replay test --level 1 --to ws://127.0.0.1:9000/aaep --json
  aaep-replay test --level 2 --transport grpc --exec 'node grpc-subscriber.js {url}'
  aaep-replay test --level 1 --page 'http://localhost:5173/?aaep={url}'
  aaep-replay test --level 1 --exec 'python3 nvda-harness.py {url}' --announcements`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				opts.Files = args
			}
			for _, l := range opts.Levels {
				if l < 1 || l > 3 {
					return cli.Usagef("--level %d: want 1, 2 or 3", l)
				}
			}
			if opts.List {
				if len(args) > 0 || len(opts.Scenarios) > 0 {
					return cli.Usagef("--list shows the built-in scenarios: no SCENARIO or --scenario with it")
				}
			} else if len(args) == 0 && len(opts.Scenarios) == 0 && len(opts.Levels) == 0 {
				return cli.Usagef("test needs a SCENARIO file, --scenario NAME or --level N (see aaep-replay test --list)")
			}
			if err := opts.Check.validate(); err != nil {
				return err
			}
			var err error
			if opts.Threshold, err = parseFailOn(opts.FailOn); err != nil {
				return err
			}
			if opts.To != "" && opts.Exec != "" {
				return cli.Usagef("--to and --exec exclude each other")
			}
			if opts.Page != "" {
				if opts.To != "" || opts.Exec != "" {
					return cli.Usagef("--page opens the subscriber: not with --to or --exec")
				}
				u, err := url.Parse(opts.Page)
				if err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "file") {
					return cli.Usagef("--page %q: want an http://, https:// or file:// URL", opts.Page)
				}
				if !strings.Contains(opts.Page, "{url}") {
					return cli.Usagef("--page %q: put {url} where the page takes the replay's URL", opts.Page)
				}
				if opts.Transport == subtest.TransportGRPC {
					return cli.Usagef("--page opens a web subscriber: not with --transport grpc")
				}
			}
			if opts.Announcements && opts.Exec == "" {
				return cli.Usagef("--announcements is for an --exec subscriber (it writes them to descriptor 3; --page hears a page's own)")
			}
			if opts.To != "" {
				u, err := url.Parse(opts.To)
				if err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
					return cli.Usagef("--to %q: want a ws:// or wss:// URL", opts.To)
				}
			}
			if opts.Exec != "" && !strings.Contains(opts.Exec, "{url}") {
				return cli.Usagef("--exec %q: put {url} where the subscriber takes the replay's URL", opts.Exec)
			}
			if cmd.Flags().Changed("listen") && opts.To != "" {
				return cli.Usagef("--listen and --to exclude each other")
			}
			switch opts.Transport {
			case "", subtest.TransportWebSocket:
			case subtest.TransportSSE, subtest.TransportGRPC:
				if opts.To != "" {
					return cli.Usagef("--to dials a WebSocket subscriber: not with --transport %s", opts.Transport)
				}
			default:
				return cli.Usagef("--transport %q: want sse, websocket or grpc (by default the way the subscriber attaches tells)", opts.Transport)
			}
			if err := cli.CheckListen("--listen", opts.Listen); err != nil {
				return err
			}
			if err := serve.CheckSSEEvent(opts.SSEEvent); err != nil {
				return cli.Usagef("--sse-event: %w", err)
			}
			if runF != nil {
				return runF(opts)
			}
			return testRun(opts)
		},
	}
	fs := cmd.Flags()
	fs.StringArrayVar(&opts.Scenarios, "scenario", nil, "a built-in scenario to play (repeatable; --list shows them)")
	fs.IntSliceVar(&opts.Levels, "level", nil, "play the built-in scenarios of this conformance level (1, 2 or 3; repeatable)")
	fs.BoolVar(&opts.List, "list", false, "list the built-in scenarios by level and exit")
	fs.StringVar(&opts.Listen, "listen", defaultTestListen, "address the subscriber attaches to (with --exec: default a free port on 127.0.0.1)")
	fs.StringVar(&opts.To, "to", "", "WebSocket URL of a subscriber that listens (ws:// or wss://)")
	fs.StringVar(&opts.Transport, "transport", "", "the subscriber's transport: sse, websocket or grpc (default: as it attaches; a scenario of another transport is not applicable)")
	fs.StringVar(&opts.Exec, "exec", "", "command that starts the subscriber, {url} replaced by the replay's base URL (run by /bin/sh)")
	fs.StringVar(&opts.Page, "page", "", "URL of a web subscriber to open in headless Chromium, {url} replaced by the replay's base URL; its ARIA live regions are heard")
	fs.BoolVar(&opts.Announcements, "announcements", false, "the --exec subscriber writes its announcements to descriptor 3 (AAEP_TEST_ANNOUNCEMENTS_FD), one JSON line each")
	numflag.Duration(fs, &opts.AttachTimeout, "attach-timeout", subtest.DefaultAttachTimeout, numflag.Positive(), "how long to wait for the subscriber before the scenario counts as not run (exit 2)")
	fs.BoolVar(&opts.JSON, "json", false, "print the verdict as JSON")
	fs.StringVar(&opts.JUnit, "junit", "", "also write the verdict as JUnit XML to this file (Jenkins, GitLab)")
	fs.StringVar(&opts.Record, "record", "", "keep the exchange in this capture file, for view (several scenarios: FILE-SCENARIO.aaep each)")
	fs.BoolVar(&opts.Force, "force", false, "let --record replace an existing non-empty file")
	fs.StringVar(&opts.FailOn, "fail-on", "must", "lowest level of a subscriber-side finding that fails the run: must, should, info or never (as check's)")
	fs.BoolVar(&opts.RequireEvidence, "require-evidence", false, "fail the checks passed by absence (no reply, stayed connected) that nothing shows the subscriber took in the events (default: passed, unverified)")
	fs.StringVar(&opts.SSEEvent, "sse-event", serve.SSEEventRecorded, `SSE event: line, as serve's: "recorded" (aaep.event where the capture has no SSE framing, B.1.3), "none" (unnamed events, for EventSource.onmessage), or a NAME`)
	opts.Check.add(fs, flagProfile)
	return cmd
}

// testRun lists the built-ins, or plays every scenario and reports.
func testRun(opts *TestOptions) error {
	a := opts.app
	if opts.List {
		return listScenarios(a.Out, opts.Levels, opts.JSON)
	}
	scenarios, err := opts.load()
	if err != nil {
		return err
	}
	ropts := subtest.Options{To: opts.To, Exec: opts.Exec, Page: opts.Page, Announcements: opts.Announcements, Transport: opts.Transport, AttachTimeout: opts.AttachTimeout, Output: a.Err, Profile: string(opts.Check.Profile), RequireEvidence: opts.RequireEvidence, FailOn: opts.Threshold, SSEEvent: opts.SSEEvent}
	if (opts.Exec == "" && opts.Page == "") || opts.Listen != defaultTestListen {
		ropts.Listen = opts.Listen
	}
	if opts.Page != "" {
		if _, err := headless.Find(); err != nil {
			return fmt.Errorf("--page: %w", err) // said once, not once a scenario
		}
		ropts.Browser = &subtest.Browser{}
		defer ropts.Browser.Close()
	}
	if opts.Exec == "" && opts.To == "" && opts.Page == "" {
		ropts.Announce = func(sc *subtest.Scenario, base string) {
			if opts.Transport == subtest.TransportGRPC {
				fmt.Fprintf(a.Err, "aaep-replay test: %s: waiting for a gRPC subscriber on %s (user: %s)\n", sc.Name, base, sc.User)
				return
			}
			host := strings.TrimPrefix(base, "http://")
			fmt.Fprintf(a.Err, "aaep-replay test: %s: waiting for a subscriber on ws://%s/aaep/v1/ws or %s/aaep/v1/events (user: %s)\n", sc.Name, host, base, sc.User)
		}
	}
	if opts.Record != "" {
		ropts.Record = opts.recorder(len(scenarios) > 1)
	}
	var results []*subtest.Result
	for _, sc := range scenarios {
		res, err := subtest.Run(a.ctx, sc, ropts)
		if err != nil {
			return cli.Incomplete(fmt.Errorf("%s: %w", sc.Name, err))
		}
		results = append(results, res)
		if a.ctx.Err() != nil {
			break
		}
	}
	if opts.JUnit != "" {
		err := outfile.WriteFile(opts.JUnit, outfile.Options{Inputs: opts.Files, NoStdout: "the report is printed there; name a file"},
			func(w io.Writer) error { return subtest.WriteJUnit(w, results) })
		if err != nil {
			return cli.Output(fmt.Errorf("--junit %w", err))
		}
	}
	if opts.JSON {
		err = subtest.WriteJSON(a.Out, results)
	} else {
		err = subtest.WriteText(a.Out, results)
	}
	if err != nil {
		return cli.Output(fmt.Errorf("writing the report: %w", err))
	}
	switch subtest.Summarize(results).Verdict {
	case subtest.VerdictNotRun:
		return cli.Silent(cli.KindIncomplete)
	case subtest.VerdictFail:
		return cli.Silent(cli.KindFindings)
	}
	return nil
}

// load reads the scenario files and picks the built-ins asked for, in
// that order; an invalid file is a usage error naming its line.
func (opts *TestOptions) load() ([]*subtest.Scenario, error) {
	var out []*subtest.Scenario
	for _, f := range opts.Files {
		sc, err := subtest.Load(f)
		if err != nil {
			return nil, cli.Input(err)
		}
		out = append(out, sc)
	}
	for _, name := range opts.Scenarios {
		sc, err := subtest.Builtin(name)
		if err != nil {
			return nil, cli.Usagef("--scenario: %v", err)
		}
		if len(opts.Levels) > 0 && !slices.Contains(opts.Levels, sc.Level) {
			return nil, cli.Usagef("--scenario %s is a level %d scenario, not of --level %v", name, sc.Level, opts.Levels)
		}
		out = append(out, sc)
	}
	if len(opts.Scenarios) == 0 {
		for _, l := range opts.Levels {
			out = append(out, subtest.BuiltinsAt(l)...)
		}
	}
	return out, nil
}

// recorder opens --record for each scenario (named FILE-SCENARIO.EXT when
// there are several) under the rules of serve --record.
func (opts *TestOptions) recorder(several bool) func(*subtest.Scenario, string, capfile.Header) (subtest.Recorder, error) {
	return func(sc *subtest.Scenario, capture string, hdr capfile.Header) (subtest.Recorder, error) {
		name := opts.Record
		if several {
			ext := filepath.Ext(name)
			name = strings.TrimSuffix(name, ext) + "-" + sc.Name + ext
		}
		hdr.Tool = capfile.ToolReplay + "/" + version
		f := &replayFlags{record: name, force: opts.Force, sources: append([]string{capture}, opts.Files...)}
		if err := f.checkRecord(opts.app.ctx, capture); err != nil {
			return nil, err
		}
		out, err := outfile.Open(name, f.recordOptions(capture))
		if err != nil {
			return nil, fmt.Errorf("--record %w", err)
		}
		w, err := capfile.NewWriter(out, hdr, recordWriterOptions(out))
		if err != nil {
			out.Discard()
			return nil, fmt.Errorf("--record: %w", err)
		}
		return &testRecording{recordFile: &recordFile{name: name, w: w, f: out}, stderr: opts.Err}, nil
	}
}

// testRecording is a --record file as subtest.Run closes it.
type testRecording struct {
	*recordFile
	stderr io.Writer
}

func (r *testRecording) Close() error { return r.recordFile.close(r.stderr) }
func (r *testRecording) Path() string { return r.name }

// listScenarios prints the built-ins by level (those of levels, when given).
func listScenarios(w io.Writer, levels []int, asJSON bool) error {
	list := []*subtest.Scenario{}
	for _, sc := range subtest.Builtins() {
		if len(levels) == 0 || slices.Contains(levels, sc.Level) {
			list = append(list, sc)
		}
	}
	if asJSON {
		return writeJSON(w, list)
	}
	var b strings.Builder
	cur := 0
	for _, sc := range list {
		if sc.Level != cur {
			cur = sc.Level
			fmt.Fprintf(&b, "Level %d\n", cur)
		}
		fmt.Fprintf(&b, "  %-28s %s\n", sc.Name, strings.Join(sc.Sections, ", "))
		fmt.Fprintf(&b, "      %s\n", sc.Description)
		fmt.Fprintf(&b, "      user: %s\n", sc.User)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
