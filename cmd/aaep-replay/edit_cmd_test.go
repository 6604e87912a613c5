package main

import (
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/capedit"
	"github.com/aaep-tools/aaepkit/timing"
)

// Cases of --time-shift, the same on cut, filter, split and dedupe: verb
// and rest make the command line, shift finds the flag's value.
func timeShiftCases[O any](verb, rest string, shift func(*O) *capedit.TimeShift) []cmdCase[O] {
	argv := func(flags string) string { return verb + " in.aaep " + rest + " " + flags }
	at := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	return []cmdCase[O]{
		{name: "time-shift later", argv: argv("--time-shift +1.5s"), want: func(o *O) { *shift(o) = capedit.TimeShift{By: 1500 * time.Millisecond} }},
		{name: "time-shift earlier", argv: argv("--time-shift=-200ms"), want: func(o *O) { *shift(o) = capedit.TimeShift{By: -200 * time.Millisecond} }},
		{name: "time-shift to a start", argv: argv("--time-shift 2026-11-02T09:00:00Z"), want: func(o *O) { *shift(o) = capedit.TimeShift{To: at} }},
		{name: "time-shift nonsense", argv: argv("--time-shift soon"), err: `invalid argument "soon" for "--time-shift" flag: time shift "soon": want a duration such as +1.5s or -200ms, or a start time such as 2026-11-02T09:00:00Z`},
	}
}

func Test_NewCmdCut(t *testing.T) {
	defaults := func(a *app) CutOptions { return CutOptions{app: a, Inputs: []string{"in.aaep"}, Output: "out.aaep"} }
	cases := []cmdCase[CutOptions]{
		{name: "defaults", argv: "cut in.aaep -o out.aaep"},
		{name: "allow-incomplete", argv: "cut in.aaep -o out.aaep --allow-incomplete", want: func(o *CutOptions) { o.Reading = capfile.ReadPolicy{AllowIncomplete: true} }},
		{name: "strict", argv: "cut in.aaep -o out.aaep --strict", want: func(o *CutOptions) { o.Reading = capfile.ReadPolicy{Strict: true} }},
		{name: "force over an original recording", argv: "cut in.aaep -o out.aaep --force", want: func(o *CutOptions) { o.Cut.Force = true }},
		{name: "standard output", argv: "cut in.aaep -o -", want: func(o *CutOptions) { o.Output = "-" }},
		{name: "long output flag", argv: "cut in.aaep --output=out.aaep"},
		{name: "from a time until a record", argv: "cut in.aaep --from 1m30s --until #99 -o out.aaep", want: func(o *CutOptions) {
			o.From, o.Until = "1m30s", "#99"
			o.Cut.From = timing.Position{Set: true, Time: 90 * time.Second}
			o.Cut.To = timing.Position{Set: true, ByIndex: true, Index: 99}
		}},
		{name: "from a record, clock until", argv: "cut in.aaep --from 100 --until 01:02:03.5 -o out.aaep", want: func(o *CutOptions) {
			o.From, o.Until = "100", "01:02:03.5"
			o.Cut.From = timing.Position{Set: true, ByIndex: true, Index: 100}
			o.Cut.To = timing.Position{Set: true, Time: time.Hour + 2*time.Minute + 3500*time.Millisecond}
		}},
		{name: "until, two spellings", argv: "cut in.aaep --until #5 --to #60 -o out.aaep", err: "--until and --to are two spellings of one flag: give one of them"},
		{name: "until, old spelling --to", argv: "cut in.aaep --to #40 -o out.aaep", want: func(o *CutOptions) {
			o.Until, o.Cut.To = "#40", timing.Position{Set: true, ByIndex: true, Index: 40}
		}},

		{name: "no file", argv: "cut -o out.aaep", err: "cut needs the capture FILE to cut (see aaep-replay cut --help)"},
		{name: "two files (an unquoted glob)", argv: "cut a.aaep b.aaep -o out.aaep", want: func(o *CutOptions) { o.Inputs = []string{"a.aaep", "b.aaep"} }},
		{name: "no output", argv: "cut in.aaep --from 1s", err: "cut needs an output file: -o OUT"},
		{name: "bad from", argv: "cut in.aaep --from yesterday -o out.aaep", err: `--from: bad position "yesterday": want a time offset such as 1m30s or 1:30, or a record number such as #120`},
		{name: "negative until", argv: "cut in.aaep --until -1s -o out.aaep", err: `--until: bad position "-1s": want a time offset such as 1m30s or 1:30, or a record number such as #120`},
		{name: "misspelt flag", argv: "cut in.aaep --frm 1s -o out.aaep", err: "unknown flag: --frm"},
	}
	cases = append(cases, timeShiftCases("cut", "-o out.aaep", func(o *CutOptions) *capedit.TimeShift { return &o.Cut.TimeShift })...)
	testNewCmd(t, NewCmdCut, defaults, cases)
}

func Test_NewCmdFilter(t *testing.T) {
	defaults := func(a *app) FilterOptions {
		return FilterOptions{app: a, Inputs: []string{"in.aaep"}, Output: "out.aaep"}
	}
	cases := []cmdCase[FilterOptions]{
		{name: "session", argv: "filter in.aaep --session s1 -o out.aaep", want: func(o *FilterOptions) { o.Filter.Match.Sessions = []string{"s1"} }},
		{name: "sessions repeated and comma-separated", argv: "filter in.aaep --session s1,s2 --session s3 -o out.aaep", want: func(o *FilterOptions) {
			o.Filter.Match.Sessions = []string{"s1", "s2", "s3"}
		}},
		{name: "types", argv: "filter in.aaep --type tool.invoked,tool.completed -o out.aaep", want: func(o *FilterOptions) {
			o.Filter.Match.Types = []string{"tool.invoked", "tool.completed"}
		}},
		{name: "urgency", argv: "filter in.aaep --urgency critical -o out.aaep", want: func(o *FilterOptions) { o.Filter.Match.Urgencies = []string{"critical"} }},
		{name: "old spellings", argv: "filter in.aaep --filter-type a --filter-session s --filter-urgency background -o out.aaep", want: func(o *FilterOptions) {
			o.Filter.Match.Types, o.Filter.Match.Sessions, o.Filter.Match.Urgencies = []string{"a"}, []string{"s"}, []string{"background"}
		}},
		{name: "long output flag", argv: "filter in.aaep --output=out.aaep --urgency normal", want: func(o *FilterOptions) { o.Filter.Match.Urgencies = []string{"normal"} }},
		{name: "allow-incomplete", argv: "filter in.aaep -o out.aaep --urgency normal --allow-incomplete", want: func(o *FilterOptions) {
			o.Filter.Match.Urgencies, o.Reading = []string{"normal"}, capfile.ReadPolicy{AllowIncomplete: true}
		}},
		{name: "strict", argv: "filter in.aaep -o out.aaep --urgency normal --strict", want: func(o *FilterOptions) {
			o.Filter.Match.Urgencies, o.Reading = []string{"normal"}, capfile.ReadPolicy{Strict: true}
		}},
		{name: "messages-only alone", argv: "filter in.aaep --messages-only -o -", want: func(o *FilterOptions) {
			o.Filter.MessagesOnly, o.Output = true, "-"
		}},
		{name: "force over an original recording", argv: "filter in.aaep --urgency normal -o out.aaep --force", want: func(o *FilterOptions) {
			o.Filter.Match.Urgencies, o.Filter.Force = []string{"normal"}, true
		}},

		{name: "no file", argv: "filter --session s -o out.aaep", err: "filter needs the capture FILE to filter (see aaep-replay filter --help)"},
		{name: "no output", argv: "filter in.aaep --session s", err: "filter needs an output file: -o OUT"},
		{name: "nothing to filter by", argv: "filter in.aaep -o out.aaep", err: "filter needs at least one of --session, --type, --urgency, --messages-only"},
		{name: "unknown flag", argv: "filter in.aaep --kind x -o out.aaep", err: "unknown flag: --kind"},
	}
	cases = append(cases, timeShiftCases("filter", "--messages-only -o out.aaep", func(o *FilterOptions) *capedit.TimeShift {
		o.Filter.MessagesOnly = true
		return &o.Filter.TimeShift
	})...)
	testNewCmd(t, NewCmdFilter, defaults, cases)
}

func Test_NewCmdExport(t *testing.T) {
	defaults := func(a *app) ExportOptions {
		return ExportOptions{app: a, Inputs: []string{"in.aaep"}, Output: "-", Format: "jsonl", OTLP: otlpFlags{Check: checkFlags{Profile: "lenient"}}}
	}
	testNewCmd(t, NewCmdExport, defaults, []cmdCase[ExportOptions]{
		{name: "defaults: standard output", argv: "export in.aaep"},
		{name: "allow-incomplete", argv: "export in.aaep --allow-incomplete", want: func(o *ExportOptions) { o.Reading = capfile.ReadPolicy{AllowIncomplete: true} }},
		{name: "strict", argv: "export in.aaep --strict", want: func(o *ExportOptions) { o.Reading = capfile.ReadPolicy{Strict: true} }},
		{name: "several inputs", argv: "export run-*.aaep dir/ -", want: func(o *ExportOptions) { o.Inputs = []string{"run-*.aaep", "dir/", "-"} }},
		{name: "output", argv: "export in.aaep -o run.jsonl", want: func(o *ExportOptions) { o.Output = "run.jsonl" }},
		{name: "force over an original recording", argv: "export in.aaep -o run.jsonl --force", want: func(o *ExportOptions) { o.Output, o.Force = "run.jsonl", true }},
		{name: "standard output named", argv: "export in.aaep --output -"},
		{name: "with-meta", argv: "export --with-meta in.aaep", want: func(o *ExportOptions) { o.Export.WithMeta = true }},
		{name: "sent", argv: "export --sent in.aaep", want: func(o *ExportOptions) { o.Export.Sent = true }},
		{name: "otlp", argv: "export --format otlp --otlp-endpoint http://127.0.0.1:4318 --otlp-header Authorization=Bearer_x --otlp-header X-Tenant=a in.aaep", want: func(o *ExportOptions) {
			o.Format, o.OTLP.Endpoint, o.OTLP.Headers = "otlp", "http://127.0.0.1:4318", []string{"Authorization=Bearer_x", "X-Tenant=a"}
		}},
		{name: "otlp-json", argv: "export --format otlp-json -o t.json --include-text --protocol aaep --profile strict --disable SEQ-STATE-CHAIN in.aaep", want: func(o *ExportOptions) {
			o.Format, o.Output, o.OTLP.IncludeText = "otlp-json", "t.json", true
			o.OTLP.Check = checkFlags{Protocol: "aaep", Profile: "strict", Disable: []string{"SEQ-STATE-CHAIN"}}
		}},
		{name: "otlp batch spans", argv: "export --format otlp --otlp-endpoint http://127.0.0.1:4318 --otlp-batch-spans 512 in.aaep", want: func(o *ExportOptions) {
			o.Format, o.OTLP.Endpoint, o.OTLP.BatchSpans = "otlp", "http://127.0.0.1:4318", 512
		}},
		{name: "otlp without endpoint", argv: "export --format otlp in.aaep", err: "--format otlp needs --otlp-endpoint http://HOST:4318"},

		{name: "no file", argv: "export --with-meta", err: "export needs a capture FILE (several, a glob, a directory, or - for standard input) (see aaep-replay export --help)"},
		{name: "unknown flag", argv: "export in.aaep --json", err: "unknown flag: --json"},
	})
}

func Test_NewCmdImport(t *testing.T) {
	defaults := func(a *app) ImportOptions { return ImportOptions{app: a, Input: "in.jsonl", Output: "out.aaep"} }
	testNewCmd(t, NewCmdImport, defaults, []cmdCase[ImportOptions]{
		{name: "defaults", argv: "import in.jsonl -o out.aaep"},
		{name: "force over an original recording", argv: "import in.jsonl -o out.aaep --force", want: func(o *ImportOptions) { o.Import.Force = true }},
		{name: "standard input and output", argv: "import - -o -", want: func(o *ImportOptions) { o.Input, o.Output = "-", "-" }},
		{name: "plain", argv: "import in.jsonl --plain --output out.aaep", want: func(o *ImportOptions) { o.Import.Plain = true }},

		{name: "no file", argv: "import -o out.aaep", err: "import needs the JSON Lines FILE to import (see aaep-replay import --help)"},
		{name: "two files", argv: "import a.jsonl b.jsonl -o out.aaep", err: `import takes the JSON Lines FILE to import, got 2 arguments: ["a.jsonl" "b.jsonl"]`},
		{name: "no output", argv: "import in.jsonl", err: "import needs an output file: -o FILE.aaep"},
		{name: "unknown flag", argv: "import in.jsonl -o out.aaep --with-meta", err: "unknown flag: --with-meta"},
	})
}

func Test_NewCmdRepair(t *testing.T) {
	defaults := func(a *app) RepairOptions { return RepairOptions{app: a, Input: "crashed.aaep", Output: "fixed.aaep"} }
	testNewCmd(t, NewCmdRepair, defaults, []cmdCase[RepairOptions]{
		{name: "defaults", argv: "repair crashed.aaep -o fixed.aaep"},
		{name: "force over an original recording", argv: "repair crashed.aaep -o fixed.aaep --force", want: func(o *RepairOptions) { o.Force = true }},
		{name: "standard output", argv: "repair crashed.aaep --output -", want: func(o *RepairOptions) { o.Output = "-" }},

		{name: "no file", argv: "repair -o fixed.aaep", err: "repair needs the damaged or torn capture FILE to repair (see aaep-replay repair --help)"},
		{name: "two files", argv: "repair a.aaep b.aaep", err: `repair takes the damaged or torn capture FILE to repair, got 2 arguments: ["a.aaep" "b.aaep"]`},
		{name: "no output", argv: "repair crashed.aaep", err: "repair needs an output file: -o OUT"},
		{name: "unknown flag", argv: "repair crashed.aaep -o fixed.aaep --overwrite", err: "unknown flag: --overwrite"},
	})
}

func Test_NewCmdMerge(t *testing.T) {
	defaults := func(a *app) MergeOptions {
		return MergeOptions{app: a, Inputs: []string{"a.aaep", "b.aaep"}, Output: "both.aaep"}
	}
	testNewCmd(t, NewCmdMerge, defaults, []cmdCase[MergeOptions]{
		{name: "defaults", argv: "merge a.aaep b.aaep -o both.aaep"},
		{name: "allow-incomplete", argv: "merge a.aaep b.aaep -o both.aaep --allow-incomplete", want: func(o *MergeOptions) { o.Reading = capfile.ReadPolicy{AllowIncomplete: true} }},
		{name: "strict", argv: "merge a.aaep b.aaep -o both.aaep --strict", want: func(o *MergeOptions) { o.Reading = capfile.ReadPolicy{Strict: true} }},
		{name: "force over an original recording", argv: "merge a.aaep b.aaep -o both.aaep --force", want: func(o *MergeOptions) { o.Merge.Force = true }},
		{name: "long output flag", argv: "merge a.aaep b.aaep --output both.aaep"},
		{name: "one input (a glob or a directory)", argv: "merge dir/ -o both.aaep", want: func(o *MergeOptions) { o.Inputs = []string{"dir/"} }},
		{name: "join-sources", argv: "merge --join-sources a.aaep b.aaep -o both.aaep", want: func(o *MergeOptions) { o.Merge.JoinSources = true }},
		{name: "time-shifts", argv: "merge a.aaep b.aaep --time-shift b.aaep=-1.2s --time-shift dir/a.aaep=2026-11-02T09:00:00Z -o both.aaep", want: func(o *MergeOptions) {
			o.TimeShifts = []string{"b.aaep=-1.2s", "dir/a.aaep=2026-11-02T09:00:00Z"}
			o.Shifts = []inputShift{
				{flag: "b.aaep=-1.2s", name: "b.aaep", shift: capedit.TimeShift{By: -1200 * time.Millisecond}},
				{flag: "dir/a.aaep=2026-11-02T09:00:00Z", name: "dir/a.aaep", shift: capedit.TimeShift{To: time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)}},
			}
		}},
		{name: "a file name holding =", argv: "merge a=b.aaep c.aaep --time-shift a=b.aaep=+1s -o both.aaep", want: func(o *MergeOptions) {
			o.Inputs, o.TimeShifts = []string{"a=b.aaep", "c.aaep"}, []string{"a=b.aaep=+1s"}
			o.Shifts = []inputShift{{flag: "a=b.aaep=+1s", name: "a=b.aaep", shift: capedit.TimeShift{By: time.Second}}}
		}},

		{name: "no file", argv: "merge -o both.aaep", err: "merge needs the capture FILEs to merge (see aaep-replay merge --help)"},
		{name: "no output", argv: "merge a.aaep b.aaep", err: "merge needs an output file: -o OUT"},
		{name: "time-shift without a file", argv: "merge a.aaep b.aaep --time-shift -1.2s -o both.aaep", err: `--time-shift "-1.2s": say which input, as FILE=SHIFT (b.aaep=-1.2s)`},
		{name: "time-shift of nothing", argv: "merge a.aaep b.aaep --time-shift b.aaep=later -o both.aaep", err: `--time-shift: time shift "later": want a duration such as +1.5s or -200ms, or a start time such as 2026-11-02T09:00:00Z`},
		{name: "unknown flag", argv: "merge a.aaep b.aaep -o both.aaep --overwrite", err: "unknown flag: --overwrite"},
	})
}

func Test_NewCmdSplit(t *testing.T) {
	defaults := func(a *app) SplitOptions { return SplitOptions{app: a, Inputs: []string{"in.aaep"}} }
	const groups = "if any flags in the group [records duration by-session] are set none of the others can be; "
	cases := []cmdCase[SplitOptions]{
		{name: "records", argv: "split in.aaep --records 100000", want: func(o *SplitOptions) { o.Split.Records = 100000 }},
		{name: "allow-incomplete", argv: "split in.aaep --records 9 --allow-incomplete", want: func(o *SplitOptions) { o.Split.Records, o.Reading = 9, capfile.ReadPolicy{AllowIncomplete: true} }},
		{name: "strict", argv: "split in.aaep --records 9 --strict", want: func(o *SplitOptions) { o.Split.Records, o.Reading = 9, capfile.ReadPolicy{Strict: true} }},
		{name: "duration", argv: "split in.aaep --duration 10m -o long.aaep", want: func(o *SplitOptions) { o.Split.Duration, o.Output = 10*time.Minute, "long.aaep" }},
		{name: "long output flag", argv: "split in.aaep --records 5 --output=run.aaep", want: func(o *SplitOptions) { o.Split.Records, o.Output = 5, "run.aaep" }},
		{name: "by-session", argv: "split in.aaep --by-session -o parts/session.aaep --force", want: func(o *SplitOptions) {
			o.Split.BySession, o.Split.Force, o.Output = true, true, "parts/session.aaep"
		}},

		{name: "no file", argv: "split --records 5", err: "split needs the capture FILE to split (see aaep-replay split --help)"},
		{name: "no way to split", argv: "split in.aaep", err: "at least one of the flags in the group [records duration by-session] is required"},
		{name: "records and duration", argv: "split in.aaep --records 5 --duration 1m", err: groups + "[duration records] were all set"},
		{name: "records and by-session", argv: "split in.aaep --records 5 --by-session", err: groups + "[by-session records] were all set"},
		{name: "standard output", argv: "split in.aaep --records 5 -o -", err: "split writes several files: -o names their prefix, not standard output"},
		{name: "negative records", argv: "split in.aaep --records -1", err: `invalid argument "-1" for "--records" flag: want 0 (not by count) or a positive whole number`},
		{name: "records not whole", argv: "split in.aaep --records 1e3", err: `invalid argument "1e3" for "--records" flag: not a whole number; want 0 (not by count) or a positive whole number`},
		{name: "negative duration", argv: "split in.aaep --duration -1m", err: `invalid argument "-1m" for "--duration" flag: want 0 (not by duration) or a positive duration such as 500ms or 2s`},
	}
	cases = append(cases, timeShiftCases("split", "--records 10", func(o *SplitOptions) *capedit.TimeShift {
		o.Split.Records = 10
		return &o.Split.TimeShift
	})...)
	testNewCmd(t, NewCmdSplit, defaults, cases)
}

func Test_NewCmdDedupe(t *testing.T) {
	defaults := func(a *app) DedupeOptions {
		return DedupeOptions{app: a, Inputs: []string{"in.aaep"}, Output: "once.aaep", Dedupe: capedit.DedupeOptions{Window: time.Hour}}
	}
	cases := []cmdCase[DedupeOptions]{
		{name: "defaults", argv: "dedupe in.aaep -o once.aaep"},
		{name: "allow-incomplete", argv: "dedupe in.aaep -o once.aaep --allow-incomplete", want: func(o *DedupeOptions) { o.Reading = capfile.ReadPolicy{AllowIncomplete: true} }},
		{name: "strict", argv: "dedupe in.aaep -o once.aaep --strict", want: func(o *DedupeOptions) { o.Reading = capfile.ReadPolicy{Strict: true} }},
		{name: "force over an original recording", argv: "dedupe in.aaep -o once.aaep --force", want: func(o *DedupeOptions) { o.Dedupe.Force = true }},
		{name: "long output flag", argv: "dedupe in.aaep --output once.aaep"},
		{name: "window", argv: "dedupe in.aaep --window 5m -o once.aaep", want: func(o *DedupeOptions) { o.Dedupe.Window = 5 * time.Minute }},
		{name: "the whole capture", argv: "dedupe in.aaep --window 0 -o once.aaep", want: func(o *DedupeOptions) { o.Dedupe.Window = 0 }},

		{name: "no file", argv: "dedupe -o once.aaep", err: "dedupe needs the capture FILE to deduplicate (see aaep-replay dedupe --help)"},
		{name: "no output", argv: "dedupe in.aaep", err: "dedupe needs an output file: -o OUT"},
		{name: "negative window", argv: "dedupe in.aaep --window -1s -o once.aaep", err: `invalid argument "-1s" for "--window" flag: want 0 (the whole capture) or a positive duration such as 500ms or 2s`},
		{name: "window NaN", argv: "dedupe in.aaep --window NaN -o once.aaep", err: `invalid argument "NaN" for "--window" flag: not a duration; want 0 (the whole capture) or a positive duration such as 500ms or 2s`},
	}
	cases = append(cases, timeShiftCases("dedupe", "-o once.aaep", func(o *DedupeOptions) *capedit.TimeShift { return &o.Dedupe.TimeShift })...)
	testNewCmd(t, NewCmdDedupe, defaults, cases)
}
