package main

import (
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/show"
	"github.com/aaep-tools/aaepkit/timing"
)

func Test_NewCmdVisualize(t *testing.T) {
	defaults := func(a *app) VisualizeOptions {
		return VisualizeOptions{app: a, Inputs: []string{"in.aaep"}, Input: "in.aaep", FormatName: "svg", Format: "svg", Check: checkFlags{Profile: "lenient"}, MaxSessions: 100}
	}
	const needs = "visualize needs a capture or JSONL FILE (several with --output, a glob, a directory, or - for standard input) (see aaep-replay visualize --help)"
	testNewCmd(t, NewCmdVisualize, defaults, []cmdCase[VisualizeOptions]{
		{name: "defaults", argv: "visualize in.aaep"},
		{name: "allow-incomplete", argv: "visualize in.aaep --allow-incomplete", want: func(o *VisualizeOptions) { o.Reading = capfile.ReadPolicy{AllowIncomplete: true} }},
		{name: "strict", argv: "visualize in.aaep --strict", want: func(o *VisualizeOptions) { o.Reading = capfile.ReadPolicy{Strict: true} }},
		{name: "the documented --input --visualize form", argv: "--input in.aaep --visualize"},
		{name: "the documented form with --output", argv: "--input=in.aaep --visualize --output trace.svg", want: func(o *VisualizeOptions) { o.Output = "trace.svg" }},
		{name: "several inputs", argv: "visualize a.aaep b.jsonl -o both.svg", want: func(o *VisualizeOptions) {
			o.Inputs, o.Input, o.Output = []string{"a.aaep", "b.jsonl"}, "a.aaep", "both.svg"
		}},
		{name: "format from the output's name", argv: "visualize in.aaep -o trace.png", want: func(o *VisualizeOptions) { o.Output, o.Format = "trace.png", "png" }},
		{name: "dot output", argv: "visualize in.aaep --output trace.dot", want: func(o *VisualizeOptions) { o.Output, o.Format = "trace.dot", "dot" }},
		{name: "force over an original recording", argv: "visualize in.aaep --output trace.dot --force", want: func(o *VisualizeOptions) {
			o.Output, o.Format, o.Force = "trace.dot", "dot", true
		}},
		{name: "format flag", argv: "visualize in.aaep --format png", want: func(o *VisualizeOptions) { o.FormatName, o.Format = "png", "png" }},
		{name: "format flag matching the output", argv: "visualize in.aaep --format dot -o x.dot", want: func(o *VisualizeOptions) {
			o.FormatName, o.Format, o.Output = "dot", "dot", "x.dot"
		}},
		{name: "format flag, output without extension", argv: "visualize in.aaep --format dot -o -", want: func(o *VisualizeOptions) {
			o.FormatName, o.Format, o.Output = "dot", "dot", "-"
		}},
		{name: "session", argv: "visualize in.aaep --session sess_42", want: func(o *VisualizeOptions) { o.Session = "sess_42" }},
		{name: "session, old spelling", argv: "visualize in.aaep --filter-session sess_42", want: func(o *VisualizeOptions) { o.Session = "sess_42" }},
		{name: "session, two spellings", argv: "visualize in.aaep --session a --filter-session b", err: "--session and --filter-session are two spellings of one flag: give one of them"},
		{name: "protocol and profile", argv: "visualize in.aaep --protocol kahn --profile strict", want: func(o *VisualizeOptions) {
			o.Check.Protocol, o.Check.Profile = "kahn", "strict"
		}},
		{name: "disable", argv: "visualize in.aaep --disable TRN-SSE-ID --disable ASP-C01", want: func(o *VisualizeOptions) { o.Check.Disable = []string{"TRN-SSE-ID", "ASP-C01"} }},
		{name: "max-sessions", argv: "visualize in.aaep --max-sessions 3", want: func(o *VisualizeOptions) { o.MaxSessions = 3 }},
		{name: "max-sessions 0 is no limit", argv: "visualize in.aaep --max-sessions 0", want: func(o *VisualizeOptions) { o.MaxSessions = 0 }},

		{name: "no file", argv: "visualize -o x.svg", err: needs},
		{name: "--visualize alone", argv: "--visualize", err: "--visualize needs --input FILE (or: aaep-replay visualize FILE)"},
		{name: "unknown format", argv: "visualize in.aaep --format pdf", err: `--format: unknown format "pdf" (want svg, png or dot)`},
		{name: "format against the output's name", argv: "visualize in.aaep --format png -o x.svg", err: "--format png does not match the --output file x.svg"},
		{name: "negative max-sessions", argv: "visualize in.aaep --max-sessions -1", err: `invalid argument "-1" for "--max-sessions" flag: want 0 (no limit) or a positive whole number`},
		{name: "session needs a value", argv: "visualize in.aaep --session", err: "flag needs an argument: --session"},
	})
}

func Test_NewCmdInfo(t *testing.T) {
	defaults := func(a *app) InfoOptions {
		return InfoOptions{app: a, Inputs: []string{"in.aaep"}, Speed: 1, Gap: 10 * time.Second}
	}
	testNewCmd(t, NewCmdInfo, defaults, []cmdCase[InfoOptions]{
		{name: "defaults", argv: "info in.aaep"},
		{name: "allow-incomplete", argv: "info in.aaep --allow-incomplete", want: func(o *InfoOptions) { o.Reading = capfile.ReadPolicy{AllowIncomplete: true} }},
		{name: "strict", argv: "info in.aaep --strict", want: func(o *InfoOptions) { o.Reading = capfile.ReadPolicy{Strict: true} }},
		{name: "several inputs", argv: "info captures/ run-*.aaep", want: func(o *InfoOptions) { o.Inputs = []string{"captures/", "run-*.aaep"} }},
		{name: "json", argv: "info --json in.aaep", want: func(o *InfoOptions) { o.JSON = true }},
		{name: "speed and max-idle", argv: "info --speed 4 --max-idle 2s in.aaep", want: func(o *InfoOptions) { o.Speed, o.MaxIdle = 4, 2*time.Second }},
		{name: "gap", argv: "info --gap 500ms in.aaep", want: func(o *InfoOptions) { o.Gap = 500 * time.Millisecond }},
		{name: "index-only", argv: "info --index-only s3://b/k.aaep", want: func(o *InfoOptions) { o.IndexOnly, o.Inputs = true, []string{"s3://b/k.aaep"} }},

		{name: "no file", argv: "info --json", err: "info needs a capture FILE (several, a glob, a directory, or - for standard input) (see aaep-replay info --help)"},
		{name: "speed zero", argv: "info --speed 0 in.aaep", err: `invalid argument "0" for "--speed" flag: want a number from 0.01 to 1000`},
		{name: "speed NaN", argv: "info in.aaep --speed NaN", err: `invalid argument "NaN" for "--speed" flag: want a number from 0.01 to 1000`},
		{name: "negative max-idle", argv: "info in.aaep --max-idle -1s", err: `invalid argument "-1s" for "--max-idle" flag: want 0 (no cap) or a positive duration such as 500ms or 2s`},
		{name: "zero gap", argv: "info in.aaep --gap 0", err: `invalid argument "0" for "--gap" flag: want a positive duration such as 500ms or 2s`},
		{name: "negative gap", argv: "info in.aaep --gap -1s", err: `invalid argument "-1s" for "--gap" flag: want a positive duration such as 500ms or 2s`},
	})
}

func Test_NewCmdShow(t *testing.T) {
	defaults := func(a *app) ShowOptions {
		return ShowOptions{app: a, Inputs: []string{"in.aaep"}, Check: checkFlags{Profile: "lenient"}, Show: show.Options{Poll: 50 * time.Millisecond, Timing: timing.Config{Speed: 1}}}
	}
	const pace = "--speed, --max-idle and --paused go with --pace"
	testNewCmd(t, NewCmdShow, defaults, []cmdCase[ShowOptions]{
		{name: "defaults", argv: "show in.aaep"},
		{name: "allow-incomplete", argv: "show in.aaep --allow-incomplete", want: func(o *ShowOptions) { o.Reading = capfile.ReadPolicy{AllowIncomplete: true} }},
		{name: "strict", argv: "show in.aaep --strict", want: func(o *ShowOptions) { o.Reading = capfile.ReadPolicy{Strict: true} }},
		{name: "follow", argv: "show in.aaep -f --poll 1s", want: func(o *ShowOptions) { o.Show.Follow, o.Show.Poll = true, time.Second }},
		{name: "follow, long form", argv: "show in.aaep --follow", want: func(o *ShowOptions) { o.Show.Follow = true }},
		{name: "selections", argv: "show in.aaep --session s1,s2 --type tool.invoked --urgency critical --messages-only", want: func(o *ShowOptions) {
			o.Show.Match.Sessions, o.Show.Match.Types, o.Show.Match.Urgencies = []string{"s1", "s2"}, []string{"tool.invoked"}, []string{"critical"}
			o.Show.MessagesOnly = true
		}},
		{name: "old spellings", argv: "show in.aaep --filter-session s1 --filter-type x --filter-urgency background", want: func(o *ShowOptions) {
			o.Show.Match.Sessions, o.Show.Match.Types, o.Show.Match.Urgencies = []string{"s1"}, []string{"x"}, []string{"background"}
		}},
		{name: "relative and no-check", argv: "show in.aaep --relative --no-check", want: func(o *ShowOptions) { o.Show.Relative, o.Show.NoCheck = true, true }},
		{name: "protocol and profile", argv: "show in.aaep --protocol asp --profile strict", want: func(o *ShowOptions) { o.Check.Protocol, o.Check.Profile = "asp", "strict" }},
		{name: "disable", argv: "show in.aaep --disable TRN-SSE-ID,ASP-C01", want: func(o *ShowOptions) { o.Check.Disable = []string{"TRN-SSE-ID", "ASP-C01"} }},
		{name: "pace", argv: "show in.aaep --pace", want: func(o *ShowOptions) { o.Show.Pace = true }},
		{name: "pace with its flags", argv: "show in.aaep --pace --speed 2 --max-idle 2s --paused", want: func(o *ShowOptions) {
			o.Show.Pace, o.Show.Timing, o.Show.Paused = true, timing.Config{Speed: 2, MaxIdle: 2 * time.Second}, true
		}},

		{name: "no file", argv: "show --follow", err: "show needs the capture FILE to show (see aaep-replay show --help)"},
		{name: "two files (an unquoted glob)", argv: "show a.aaep b.aaep", want: func(o *ShowOptions) { o.Inputs = []string{"a.aaep", "b.aaep"} }},
		{name: "speed without pace", argv: "show in.aaep --speed 2", err: pace},
		{name: "speed 1 without pace", argv: "show in.aaep --speed 1", err: pace},
		{name: "max-idle without pace", argv: "show in.aaep --max-idle 1s", err: pace},
		{name: "paused without pace", argv: "show in.aaep --paused", err: pace},
		{name: "zero poll", argv: "show in.aaep -f --poll 0", err: `invalid argument "0" for "--poll" flag: want a positive duration such as 500ms or 2s`},
		{name: "speed too high", argv: "show in.aaep --pace --speed 1001", err: `invalid argument "1001" for "--speed" flag: want a number from 0.01 to 1000`},
		{name: "negative max-idle", argv: "show in.aaep --pace --max-idle -1s", err: `invalid argument "-1s" for "--max-idle" flag: want 0 (no cap) or a positive duration such as 500ms or 2s`},
	})
}
