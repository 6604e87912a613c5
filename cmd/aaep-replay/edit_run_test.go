package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/capfile/capfiletest"
	"github.com/aaep-tools/aaepkit/internal/capedit"
	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/timing"
)

// Test_editRun feeds the edits' options straight to their run functions,
// as the second table of each cli/cli verb does: the files they write
// (records counted back), what they print on stdout and stderr, and their
// exit codes. The input is a copy of the demo capture (108 records, 102
// messages; session sess_eb1273ca151c1c3d has 8).
func Test_editRun(t *testing.T) {
	upTo := func(i int64) timing.Position { return timing.Position{Set: true, ByIndex: true, Index: i} }
	for _, tc := range []struct {
		name string
		// run runs the verb on in, writing into dir.
		run            func(a *app, in, dir string) error
		stdout, stderr string // exact, DIR standing for dir
		code           int
		err            string // the error's text, DIR standing for dir
		// records are the outputs' record counts ("-": standard output; -1:
		// an output that is not a capture; -2: an output that must not exist).
		// anyStderr: stderr is not compared (a warning whose offsets vary).
		anyStderr bool
		records   map[string]int
	}{
		{name: "cut into a file", run: func(a *app, in, dir string) error {
			return cutRun(&CutOptions{app: a, Inputs: []string{in}, Output: filepath.Join(dir, "cut.aaep"), Cut: capedit.CutOptions{To: upTo(9)}})
		}, stdout: "wrote 10 records to DIR/cut.aaep\n", records: map[string]int{"cut.aaep": 10}},
		{name: "cut to standard output", run: func(a *app, in, dir string) error {
			return cutRun(&CutOptions{app: a, Inputs: []string{in}, Output: "-", Cut: capedit.CutOptions{From: upTo(100)}})
		}, stderr: "wrote 8 records to standard output\n", records: map[string]int{"-": 8}},
		{name: "cut over its input", run: func(a *app, in, dir string) error {
			return cutRun(&CutOptions{app: a, Inputs: []string{in}, Output: in})
		}, code: cli.ExitUsage, err: "DIR/in.aaep: output is the same file as an input"},
		{name: "filter by session", run: func(a *app, in, dir string) error {
			o := &FilterOptions{app: a, Inputs: []string{in}, Output: filepath.Join(dir, "one.aaep")}
			o.Filter.Match.Sessions = []string{"sess_eb1273ca151c1c3d"}
			return filterRun(o)
		}, stdout: "kept 8 of 108 records in DIR/one.aaep\n", records: map[string]int{"one.aaep": 8}},
		{name: "dedupe", run: func(a *app, in, dir string) error {
			return dedupeRun(&DedupeOptions{app: a, Inputs: []string{in}, Output: filepath.Join(dir, "once.aaep")})
		}, stdout: "dropped 0 redelivered events of 108 records; wrote 108 to DIR/once.aaep\n", records: map[string]int{"once.aaep": 108}},
		{name: "repair of an intact capture", run: func(a *app, in, dir string) error {
			return repairRun(&RepairOptions{app: a, Input: in, Output: filepath.Join(dir, "fixed.aaep")})
		}, stdout: "kept 108 records; the source was intact\nwrote DIR/fixed.aaep (8906 bytes)\n", records: map[string]int{"fixed.aaep": 108}},
		{name: "export, then import", run: func(a *app, in, dir string) error {
			if err := exportRun(&ExportOptions{app: a, Inputs: []string{in}, Output: filepath.Join(dir, "x.jsonl")}); err != nil {
				return err
			}
			return importRun(&ImportOptions{app: a, Input: filepath.Join(dir, "x.jsonl"), Output: filepath.Join(dir, "x.aaep")})
		}, stdout: "imported 102 records from 102 lines of plain JSON Lines into DIR/x.aaep\n", records: map[string]int{"x.aaep": 102}},
		{name: "merge", run: func(a *app, in, dir string) error {
			return mergeRun(&MergeOptions{app: a, Inputs: []string{in, filepath.Join(dir, "copy.aaep")}, Output: filepath.Join(dir, "both.aaep")})
		}, stdout: "merged 216 records from 2 captures into DIR/both.aaep\n", records: map[string]int{"both.aaep": 216}},
		{name: "merge with a shift of no input", run: func(a *app, in, dir string) error {
			shifts, err := readShifts([]string{"nope.aaep=+1s"})
			if err != nil {
				return err
			}
			return mergeRun(&MergeOptions{app: a, Inputs: []string{in, filepath.Join(dir, "copy.aaep")}, Output: filepath.Join(dir, "both.aaep"), Shifts: shifts})
		}, code: cli.ExitUsage, err: "--time-shift nope.aaep=+1s: nope.aaep is not one of the inputs"},
		// An original recording (copy.aaep: the demo capture, recorded by
		// aaep-capture) is never replaced without --force; a derived capture
		// is, so that a pipeline runs again without a flag.
		{name: "import over an original recording", run: func(a *app, in, dir string) error {
			if err := exportRun(&ExportOptions{app: a, Inputs: []string{in}, Output: filepath.Join(dir, "x.jsonl")}); err != nil {
				return err
			}
			return importRun(&ImportOptions{app: a, Input: filepath.Join(dir, "x.jsonl"), Output: filepath.Join(dir, "copy.aaep")})
		}, code: cli.ExitUsage, err: "DIR/copy.aaep: an original recording, which cannot be made again; not replaced (--force replaces it)", records: map[string]int{"x.jsonl": -1}},
		{name: "export over an original recording", run: func(a *app, in, dir string) error {
			return exportRun(&ExportOptions{app: a, Inputs: []string{in}, Output: filepath.Join(dir, "copy.aaep")})
		}, code: cli.ExitUsage, err: "DIR/copy.aaep: an original recording, which cannot be made again; not replaced (--force replaces it)"},
		{name: "repair over an original recording", run: func(a *app, in, dir string) error {
			return repairRun(&RepairOptions{app: a, Input: in, Output: filepath.Join(dir, "copy.aaep")})
		}, code: cli.ExitUsage, err: "DIR/copy.aaep: an original recording, which cannot be made again; not replaced (--force replaces it)"},
		{name: "cut over an original recording with --force", run: func(a *app, in, dir string) error {
			return cutRun(&CutOptions{app: a, Inputs: []string{in}, Output: filepath.Join(dir, "copy.aaep"), Cut: capedit.CutOptions{To: upTo(9), Output: capedit.Output{Force: true}}})
		}, stdout: "wrote 10 records to DIR/copy.aaep\n", records: map[string]int{"copy.aaep": 10}},
		{name: "cut over an earlier cut", run: func(a *app, in, dir string) error {
			if err := cutRun(&CutOptions{app: a, Inputs: []string{in}, Output: filepath.Join(dir, "cut.aaep"), Cut: capedit.CutOptions{To: upTo(20)}}); err != nil {
				return err
			}
			return cutRun(&CutOptions{app: a, Inputs: []string{in}, Output: filepath.Join(dir, "cut.aaep"), Cut: capedit.CutOptions{To: upTo(9)}})
		}, stdout: "wrote 21 records to DIR/cut.aaep\nwrote 10 records to DIR/cut.aaep\n", records: map[string]int{"cut.aaep": 10}},
		// Reading damaged and torn captures (item 6 of issue 23).
		{name: "export of a capture cut inside its first frame", run: func(a *app, in, dir string) error {
			return exportRun(&ExportOptions{app: a, Inputs: []string{cutShort(t, dir)}, Output: filepath.Join(dir, "x.jsonl")})
		}, code: cli.ExitUsage, err: "DIR/short.aaep: no record could be read: capfile: torn capture tail at byte 208, record 0: file ends inside a zstd frame (while reading a record header) (792 bytes unreadable, to the end at byte 1000)",
			records: map[string]int{"x.jsonl": -2}},
		{name: "dedupe of it", run: func(a *app, in, dir string) error {
			return dedupeRun(&DedupeOptions{app: a, Inputs: []string{cutShort(t, dir)}, Output: filepath.Join(dir, "once.aaep")})
		}, code: cli.ExitUsage, records: map[string]int{"once.aaep": -2}},
		{name: "cut --strict of a torn tail", run: func(a *app, in, dir string) error {
			torn, _ := damagedPair(t, dir)
			return cutRun(&CutOptions{app: a, Inputs: []string{torn}, Output: filepath.Join(dir, "cut.aaep"), Reading: capfile.ReadPolicy{Strict: true}})
		}, code: cli.ExitUsage, stdout: "wrote 48 records to DIR/cut.aaep\n", records: map[string]int{"cut.aaep": 48}, anyStderr: true},
		{name: "filter of damage, --allow-incomplete", run: func(a *app, in, dir string) error {
			_, bad := damagedPair(t, dir)
			o := &FilterOptions{app: a, Inputs: []string{bad}, Output: filepath.Join(dir, "f.aaep"), Reading: capfile.ReadPolicy{AllowIncomplete: true}}
			o.Filter.MessagesOnly = true
			return filterRun(o)
		}, stdout: "kept 7 of 8 records in DIR/f.aaep\n", records: map[string]int{"f.aaep": 7}, anyStderr: true},
		// Import never invents a time (item 7 of issue 23): a timestamp no
		// capture can hold is refused with its line, and nothing is written.
		{name: "import of a timestamp past 2262", run: func(a *app, in, dir string) error {
			jsonl := filepath.Join(dir, "far.jsonl")
			os.WriteFile(jsonl, []byte(`{"type":"aaep:agent.session.started","timestamp":"2026-11-02T09:00:00Z"}`+"\n"+`{"type":"aaep:agent.state.changed","timestamp":"9999-12-31T23:59:59Z"}`+"\n"), 0o644)
			return importRun(&ImportOptions{app: a, Input: jsonl, Output: filepath.Join(dir, "far.aaep")})
		}, code: cli.ExitUsage, err: "DIR/far.jsonl: line 2: timestamp out of range: 9999-12-31T23:59:59Z is outside the times a capture can hold (1677-09-21T00:12:43Z to 2262-04-11T23:47:16Z); correct the line, then re-anchor with --time-shift if need be",
			records: map[string]int{"far.aaep": -2}},
		{name: "import of a zero timestamp", run: func(a *app, in, dir string) error {
			jsonl := filepath.Join(dir, "zero.jsonl")
			os.WriteFile(jsonl, []byte(`{"type":"aaep:agent.session.started","timestamp":"0001-01-01T00:00:00Z"}`+"\n"), 0o644)
			return importRun(&ImportOptions{app: a, Input: jsonl, Output: filepath.Join(dir, "zero.aaep")})
		}, code: cli.ExitUsage, err: "DIR/zero.jsonl: line 1: timestamp out of range: 0001-01-01T00:00:00Z is outside the times a capture can hold (1677-09-21T00:12:43Z to 2262-04-11T23:47:16Z); correct the line, then re-anchor with --time-shift if need be",
			records: map[string]int{"zero.aaep": -2}},
		{name: "import of timestamps 500 years apart", run: func(a *app, in, dir string) error {
			jsonl := filepath.Join(dir, "span.jsonl")
			os.WriteFile(jsonl, []byte(`{"type":"x","timestamp":"1700-01-01T00:00:00Z"}`+"\n"+`{"type":"x","timestamp":"2200-01-01T00:00:00Z"}`+"\n"), 0o644)
			return importRun(&ImportOptions{app: a, Input: jsonl, Output: filepath.Join(dir, "span.aaep")})
		}, code: cli.ExitUsage, err: "DIR/span.jsonl: line 2: timestamp out of range: timestamp 2200-01-01T00:00:00Z is more than 292 years after the first, 1700-01-01T00:00:00Z (a capture's records are at most that far from its start)",
			records: map[string]int{"span.aaep": -2}},
		// Messages (item 9 of issue 23).
		{name: "import of one line", run: func(a *app, in, dir string) error {
			jsonl := filepath.Join(dir, "one.jsonl")
			os.WriteFile(jsonl, []byte(`{"type":"aaep:agent.session.started","timestamp":"2026-11-02T09:00:00Z"}`+"\n"), 0o644)
			return importRun(&ImportOptions{app: a, Input: jsonl, Output: filepath.Join(dir, "one.aaep")})
		}, stdout: "imported 1 record from 1 line of plain JSON Lines into DIR/one.aaep\n", records: map[string]int{"one.aaep": 1}},
		{name: "import of gzip-compressed JSON Lines", run: func(a *app, in, dir string) error {
			gz := filepath.Join(dir, "x.jsonl.gz")
			os.WriteFile(gz, []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3}, 0o644)
			return importRun(&ImportOptions{app: a, Input: gz, Output: filepath.Join(dir, "x.aaep")})
		}, code: cli.ExitUsage, err: "DIR/x.jsonl.gz: a gzip-compressed file, not JSON Lines (decompress it first: gunzip)", records: map[string]int{"x.aaep": -2}},
		{name: "import of a JSON array", run: func(a *app, in, dir string) error {
			arr := filepath.Join(dir, "events.json")
			os.WriteFile(arr, []byte(`[{"type":"aaep:agent.session.started"},{"type":"aaep:agent.session.completed"}]`+"\n"), 0o644)
			return importRun(&ImportOptions{app: a, Input: arr, Output: filepath.Join(dir, "x.aaep")})
		}, code: cli.ExitUsage, err: "DIR/events.json: a JSON array, not JSON Lines: one message per line is read, so split the array into one event per line (e.g. jq -c '.[]')", records: map[string]int{"x.aaep": -2}},
		{name: "split by count", run: func(a *app, in, dir string) error {
			o := &SplitOptions{app: a, Inputs: []string{in}, Output: filepath.Join(dir, "p.aaep")}
			o.Split.Records = 40
			return splitRun(o)
		}, stdout: "wrote 40 records to DIR/p-000001.aaep (232ms to 6.493s)\n" +
			"wrote 40 records to DIR/p-000002.aaep (6.532s to 10.953s)\n" +
			"wrote 28 records to DIR/p-000003.aaep (11.037s to 15.187s)\n" +
			"split 108 records of DIR/in.aaep into 3 parts\n",
			records: map[string]int{"p-000001.aaep": 40, "p-000002.aaep": 40, "p-000003.aaep": 28}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			demo, err := os.ReadFile(demoCapture)
			if err != nil {
				t.Fatal(err)
			}
			in := filepath.Join(dir, "in.aaep")
			for _, name := range []string{in, filepath.Join(dir, "copy.aaep")} {
				if err := os.WriteFile(name, demo, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			before := snapshot(t, dir)
			var stdout, stderr bytes.Buffer
			a := &app{Streams: cli.Streams{In: strings.NewReader(""), Out: &stdout, Err: &stderr}, ctx: context.Background()}
			err = tc.run(a, in, dir)
			// Nothing but the outputs named changed (a failed command's
			// outputs included).
			for name, st := range snapshot(t, dir) {
				if _, out := tc.records[name]; !out && before[name] != "" && st != before[name] {
					t.Errorf("%s changed, and is not an output", name)
				}
			}
			dirOf := func(s string) string { return strings.ReplaceAll(s, "DIR", dir) }
			if code := cli.Code(err); code != tc.code {
				t.Fatalf("exit code %d (%v), want %d", code, err, tc.code)
			}
			if tc.err != "" && err.Error() != dirOf(tc.err) {
				t.Errorf("error %q, want %q", err, dirOf(tc.err))
			}
			if _, toStdout := tc.records["-"]; !toStdout && stdout.String() != dirOf(tc.stdout) {
				t.Errorf("stdout\n%s\nwant\n%s", stdout.String(), dirOf(tc.stdout))
			}
			if !tc.anyStderr && stderr.String() != dirOf(tc.stderr) {
				t.Errorf("stderr %q, want %q", stderr.String(), dirOf(tc.stderr))
			}
			for name, want := range tc.records {
				path := filepath.Join(dir, name)
				if want == -2 {
					if _, err := os.Stat(path); err == nil {
						t.Errorf("%s was written", name)
					}
					continue
				}
				if want < 0 {
					continue // an output that is not a capture
				}
				if name == "-" {
					path = filepath.Join(dir, "stdout.aaep")
					if err := os.WriteFile(path, stdout.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				if _, recs := capfiletest.ReadAll(t, path); len(recs) != want {
					t.Errorf("%s holds %d records, want %d", name, len(recs), want)
				}
			}
			if after, _ := os.ReadFile(in); !bytes.Equal(after, demo) {
				t.Error("the input changed")
			}
		})
	}
}

// snapshot describes every file in dir (not below it) by its bytes' hash,
// mode and owner, by name.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range ents {
		out[e.Name()] = fileState(t, filepath.Join(dir, e.Name()))
	}
	return out
}

// fileState is a file's bytes' hash, mode and owner (for a symbolic link:
// the link's target name).
func fileState(t *testing.T, path string) string {
	t.Helper()
	st, err := os.Lstat(path)
	if err != nil {
		return "absent"
	}
	head := fmt.Sprintf("%v%s", st.Mode(), ownerOf(st))
	switch {
	case st.Mode()&fs.ModeSymlink != 0:
		link, _ := os.Readlink(path)
		return head + " -> " + link
	case st.Mode().IsRegular():
		b, err := os.ReadFile(path)
		if err != nil {
			return head + " unreadable"
		}
		return fmt.Sprintf("%s sha256 %x", head, sha256.Sum256(b))
	}
	return head
}
