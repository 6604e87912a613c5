package main

import (
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/protocol"
)

func Test_NewCmdCheck(t *testing.T) {
	defaults := func(a *app) CheckOptions {
		return CheckOptions{app: a, Inputs: []string{"in.aaep"}, FailOn: "must", Threshold: protocol.Must, Check: checkFlags{Profile: "lenient"}, MaxFindings: 100000, S3Concurrency: 4}
	}
	const needs = "check needs a capture or JSONL FILE (several, a glob, a directory, or - for standard input) (see aaep-replay check --help)"
	testNewCmd(t, NewCmdCheck, defaults, []cmdCase[CheckOptions]{
		{name: "defaults", argv: "check in.aaep"},
		{name: "several inputs", argv: "check a.aaep b.jsonl - dir/", want: func(o *CheckOptions) {
			o.Inputs = []string{"a.aaep", "b.jsonl", "-", "dir/"}
		}},
		{name: "json", argv: "check --json in.aaep", want: func(o *CheckOptions) { o.JSON = true }},
		{name: "fail-on should", argv: "check in.aaep --fail-on should", want: func(o *CheckOptions) { o.FailOn, o.Threshold = "should", protocol.Should }},
		{name: "fail-on info", argv: "check in.aaep --fail-on=INFO", want: func(o *CheckOptions) { o.FailOn, o.Threshold = "INFO", protocol.Info }},
		{name: "fail-on never", argv: "check in.aaep --fail-on never", want: func(o *CheckOptions) { o.FailOn, o.Threshold = "never", protocol.Never }},
		{name: "protocol", argv: "check --protocol kahn in.aaep", want: func(o *CheckOptions) { o.Check.Protocol = "kahn" }},
		{name: "profile strict", argv: "check --profile strict in.aaep", want: func(o *CheckOptions) { o.Check.Profile = "strict" }},
		{name: "disable repeated and comma-separated", argv: "check --disable TRN-SSE-ID,ASP-C01 --disable STREAM-NOT-JSON in.aaep", want: func(o *CheckOptions) {
			o.Check.Disable = []string{"TRN-SSE-ID", "ASP-C01", "STREAM-NOT-JSON"}
		}},
		{name: "max-findings", argv: "check --max-findings 7 in.aaep", want: func(o *CheckOptions) { o.MaxFindings = 7 }},
		{name: "summary", argv: "check --summary in.aaep", want: func(o *CheckOptions) { o.Summary = true }},
		{name: "all", argv: "check --all in.aaep", want: func(o *CheckOptions) { o.All = true }},
		{name: "allow-incomplete", argv: "check --allow-incomplete in.aaep", want: func(o *CheckOptions) { o.AllowIncomplete = true }},
		{name: "since", argv: "check --since 2026-11-26T00:00:00Z s3://b/p/", want: func(o *CheckOptions) {
			o.Inputs, o.SinceArg, o.Since = []string{"s3://b/p/"}, "2026-11-26T00:00:00Z", time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
		}},
		{name: "state", argv: "check --state nightly.state s3://b/p/", want: func(o *CheckOptions) { o.Inputs, o.State = []string{"s3://b/p/"}, "nightly.state" }},
		{name: "bad since", argv: "check --since yesterday in.aaep", err: `--since "yesterday": neither an RFC 3339 time (2026-11-26T00:00:00Z) nor a duration (24h) before now`},
		{name: "quiet is the root's", argv: "-q check in.aaep"},
		{name: "shard", argv: "check --shard 1/4 s3://b/p/", want: func(o *CheckOptions) { o.Inputs, o.ShardArg, o.Shard = []string{"s3://b/p/"}, "1/4", shard{I: 1, N: 4} }},
		{name: "s3-concurrency", argv: "check --s3-concurrency 16 s3://b/p/", want: func(o *CheckOptions) { o.Inputs, o.S3Concurrency = []string{"s3://b/p/"}, 16 }},
		{name: "merge-reports", argv: "check --merge-reports r0.json r1.json", want: func(o *CheckOptions) { o.Inputs, o.MergeReports, o.Threshold = []string{"r0.json", "r1.json"}, true, 0 }},
		{name: "rules", argv: "check --rules", want: func(o *CheckOptions) {
			o.Rules, o.Inputs, o.Threshold = true, nil, 0
		}},
		{name: "rules as JSON", argv: "check --rules --json", want: func(o *CheckOptions) {
			o.Rules, o.JSON, o.Inputs, o.Threshold = true, true, nil, 0
		}},
		// --rules lists the rules whatever else is asked.
		{name: "rules ignores the check's flags", argv: "check --rules --summary --all --fail-on bogus --protocol bogus", want: func(o *CheckOptions) {
			o.Rules, o.Summary, o.All, o.FailOn, o.Check.Protocol, o.Inputs, o.Threshold = true, true, true, "bogus", "bogus", nil, 0
		}},

		{name: "no file", argv: "check", err: needs},
		{name: "no file but flags", argv: "check --json --all", err: needs},
		{name: "rules with a file", argv: "check --rules in.aaep", err: `unknown command "in.aaep" for "aaep-replay check"`},
		{name: "summary and all", argv: "check --summary --all in.aaep", err: "--summary and --all exclude each other"},
		{name: "bad fail-on", argv: "check --fail-on sometimes in.aaep", err: `--fail-on: unknown level "sometimes" (want must, should, info or never)`},
		{name: "unknown protocol", argv: "check --protocol http in.aaep", err: `--protocol: unknown protocol "http" (known: aaep, asp, kahn, kahn-ci)`},
		{name: "unknown profile", argv: "check --profile loose in.aaep", err: `--profile: unknown profile "loose" (want strict or lenient)`},
		{name: "unknown rule disabled", argv: "check --disable NO-SUCH-RULE in.aaep", err: `--disable: cannot disable unknown rule "NO-SUCH-RULE"`},
		{name: "max-findings zero", argv: "check --max-findings 0 in.aaep", err: `invalid argument "0" for "--max-findings" flag: want a whole number greater than 0`},
		{name: "max-findings negative", argv: "check --max-findings -5 in.aaep", err: `invalid argument "-5" for "--max-findings" flag: want a whole number greater than 0`},
		{name: "max-findings not a number", argv: "check --max-findings NaN in.aaep", err: `invalid argument "NaN" for "--max-findings" flag: not a whole number; want a whole number greater than 0`},
		{name: "max-findings needs a value", argv: "check in.aaep --max-findings", err: `flag needs an argument: --max-findings`},
		{name: "json takes no value", argv: "check --json=maybe in.aaep", err: `invalid argument "maybe" for "--json" flag: strconv.ParseBool: parsing "maybe": invalid syntax`},
		{name: "unknown flag", argv: "check --sumary in.aaep", err: "unknown flag: --sumary"},
		{name: "no vocabulary alias here", argv: "check --filter-type x in.aaep", err: "unknown flag: --filter-type"},
	})
}
