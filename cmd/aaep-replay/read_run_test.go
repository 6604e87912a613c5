package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/capfile/capfiletest"
	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/show"
	"github.com/aaep-tools/aaepkit/timing"
)

// Test_readRun feeds the options of the verbs that read a capture and
// print or draw it (info, show, visualize) straight to their run
// functions. The demo capture: 108 records, 8 sessions, 6 findings.
func Test_readRun(t *testing.T) {
	const sessions = `"sess_1d5972647e6722a4", "sess_25c69ca9707f8e17", "sess_2803345d6f36a672", "sess_64578a1f29640f65", "sess_c5b1010e591eff65", "sess_c7d6e86c00ee6e7d", "sess_d0fd4a2cb8d12071", "sess_eb1273ca151c1c3d"`
	lines := func(s string) int { return strings.Count(s, "\n") }
	for _, tc := range []struct {
		name   string
		run    func(a *app, dir string) error
		code   int
		err    string                                        // exact, DIR standing for the directory
		stderr string                                        // exact, DIR standing for the directory
		check  func(t *testing.T, stdout string, dir string) // stdout and files
		// anyStderr: stderr is not compared (a warning whose offsets vary).
		anyStderr bool
	}{
		{name: "info as JSON", run: func(a *app, dir string) error {
			return infoRun(&InfoOptions{app: a, Inputs: []string{demoCapture}, JSON: true, Speed: 1, Gap: 10 * time.Second})
		}, check: func(t *testing.T, stdout, _ string) {
			var sum struct {
				Records int64  `json:"records"`
				Status  string `json:"status"`
			}
			if err := json.Unmarshal([]byte(stdout), &sum); err != nil || sum.Records != 108 || sum.Status != "clean" {
				t.Errorf("info --json: %+v, %v\n%s", sum, err, stdout)
			}
		}},
		{name: "info of a missing file", run: func(a *app, dir string) error {
			return infoRun(&InfoOptions{app: a, Inputs: []string{filepath.Join(dir, "none.aaep")}, Speed: 1, Gap: 10 * time.Second})
		}, code: cli.ExitUsage, err: "info: stat DIR/none.aaep: no such file or directory"},
		{name: "show marks the findings", run: func(a *app, dir string) error {
			return showRun(&ShowOptions{app: a, Inputs: []string{demoCapture}, Check: checkFlags{Profile: "lenient"}, Show: show.Options{Timing: timing.Config{Speed: 1}}})
		}, stderr: demoReading, check: func(t *testing.T, stdout, _ string) {
			if lines(stdout) != 108 || strings.Count(stdout, " !! ") != 6 {
				t.Errorf("show: %d lines, %d marked; want 108 and 6\n%s", lines(stdout), strings.Count(stdout, " !! "), stdout)
			}
		}},
		{name: "show one session unchecked", run: func(a *app, dir string) error {
			o := &ShowOptions{app: a, Inputs: []string{demoCapture}, Show: show.Options{NoCheck: true, Timing: timing.Config{Speed: 1}}}
			o.Show.Match.Sessions = []string{"sess_eb1273ca151c1c3d"}
			return showRun(o)
		}, stderr: demoReading, check: func(t *testing.T, stdout, _ string) {
			if lines(stdout) != 8 || strings.Count(stdout, "sess_eb1273ca151c1c3d") != 8 || strings.Contains(stdout, "!!") {
				t.Errorf("show --session --no-check:\n%s", stdout)
			}
		}},
		{name: "visualize as DOT", run: func(a *app, dir string) error {
			return visualizeRun(&VisualizeOptions{app: a, Inputs: []string{demoCapture}, Input: demoCapture, Output: filepath.Join(dir, "t.dot"), Format: "dot", Check: checkFlags{Profile: "lenient"}, MaxSessions: 100})
		}, stderr: "aaep-replay: drew 8 sessions (108 messages, 6 findings) to DIR/t.dot\n", check: func(t *testing.T, stdout, dir string) {
			dot, err := os.ReadFile(filepath.Join(dir, "t.dot"))
			if err != nil || !bytes.HasPrefix(dot, []byte("digraph aaep_trace {")) || stdout != "" {
				t.Errorf("t.dot: %v, %.40q; stdout %q", err, dot, stdout)
			}
		}},
		{name: "visualize of a session not there", run: func(a *app, dir string) error {
			return visualizeRun(&VisualizeOptions{app: a, Inputs: []string{demoCapture}, Input: demoCapture, Output: filepath.Join(dir, "t.dot"), Format: "dot", Session: "nope", MaxSessions: 100})
		}, code: cli.ExitUsage, err: `no session "nope" in ` + demoCapture + ` (sessions seen: ` + sessions + `)`, check: func(t *testing.T, _, dir string) {
			if _, err := os.Stat(filepath.Join(dir, "t.dot")); !os.IsNotExist(err) {
				t.Errorf("t.dot written: %v", err)
			}
		}},
		// A capture whose first byte is damaged is a damaged capture, never
		// JSON Lines (item 5 of issue 23): visualize drew it, exit 0.
		{name: "visualize of a capture with a damaged first byte", run: func(a *app, dir string) error {
			in := braceCapture(t, dir)
			return visualizeRun(&VisualizeOptions{app: a, Inputs: []string{in}, Input: in, Output: filepath.Join(dir, "t.dot"), Format: "dot", Check: checkFlags{Profile: "lenient"}, MaxSessions: 100})
		}, code: cli.ExitUsage, err: "DIR/brace.aaep: capfile: corrupt capture at byte 0: damaged capture header: it starts 7b 2a 4d 18 41 41 45 50 43 41 50 46, a capture starts 5a 2a 4d 18 41 41 45 50 43 41 50 46"},
		{name: "info of it", run: func(a *app, dir string) error {
			return infoRun(&InfoOptions{app: a, Inputs: []string{braceCapture(t, dir)}, Speed: 1, Gap: 10 * time.Second})
		}, code: cli.ExitUsage},
		// A capture that yields nothing, or is damaged, exits 2 in every
		// reader unless --allow-incomplete; a torn tail is a warning that
		// counts its unreadable bytes, and an error with --strict.
		{name: "info of a capture cut inside its first frame", run: func(a *app, dir string) error {
			return infoRun(&InfoOptions{app: a, Inputs: []string{cutShort(t, dir)}, Speed: 1, Gap: 10 * time.Second})
		}, code: cli.ExitUsage, err: "DIR/short.aaep: no record could be read: capfile: torn capture tail at byte 208, record 0: file ends inside a zstd frame (while reading a record header) (792 bytes unreadable, to the end at byte 1000)"},
		{name: "info of it, --allow-incomplete", run: func(a *app, dir string) error {
			return infoRun(&InfoOptions{app: a, Inputs: []string{cutShort(t, dir)}, Speed: 1, Gap: 10 * time.Second, Reading: capfile.ReadPolicy{AllowIncomplete: true}})
		}, stderr: "aaep-replay: warning: DIR/short.aaep: no record could be read: capfile: torn capture tail at byte 208, record 0: file ends inside a zstd frame (while reading a record header) (792 bytes unreadable, to the end at byte 1000) (--allow-incomplete: going on with what was read)\n"},
		{name: "show of it", run: func(a *app, dir string) error {
			return showRun(&ShowOptions{app: a, Inputs: []string{cutShort(t, dir)}, Show: show.Options{NoCheck: true, Timing: timing.Config{Speed: 1}}})
		}, code: cli.ExitUsage, err: "DIR/short.aaep: no record could be read: capfile: torn capture tail at byte 208, record 0: file ends inside a zstd frame (while reading a record header) (792 bytes unreadable, to the end at byte 1000)",
			stderr: "aaep-replay: reading DIR/short.aaep: sources: #0 websocket ws://127.0.0.1:8765/aaep/v1/ws (aaep.v1)\n"},
		{name: "visualize of it", run: func(a *app, dir string) error {
			in := cutShort(t, dir)
			return visualizeRun(&VisualizeOptions{app: a, Inputs: []string{in}, Input: in, Output: filepath.Join(dir, "t.dot"), Format: "dot", Check: checkFlags{Profile: "lenient"}, MaxSessions: 100})
		}, code: cli.ExitUsage, err: "DIR/short.aaep: no record could be read: capfile: torn capture tail at byte 208, record 0: file ends inside a zstd frame (while reading a record header) (792 bytes unreadable, to the end at byte 1000)"},
		{name: "show of a torn tail warns", run: func(a *app, dir string) error {
			torn, _ := damagedPair(t, dir)
			return showRun(&ShowOptions{app: a, Inputs: []string{torn}, Show: show.Options{NoCheck: true, Timing: timing.Config{Speed: 1}}})
		}, stderr: tornReading + "aaep-replay: warning: DIR/torn.aaep: capfile: torn capture tail at byte TORN, record 48: file ends inside a zstd frame (while reading a record header) (UNREAD bytes unreadable, to the end at byte END); showed the 48 records before it\n"},
		{name: "show of a capture being written", run: func(a *app, dir string) error {
			return showRun(&ShowOptions{app: a, Inputs: []string{beingWritten(t, dir)}, Show: show.Options{NoCheck: true, Timing: timing.Config{Speed: 1}}})
		}, stderr: liveReading + "aaep-replay: warning: DIR/live.aaep: capfile: capture being written (its recorder holds it open): 108 records so far, the rest still to come; showed the 108 records before it\n"},
		{name: "info of a capture being written", run: func(a *app, dir string) error {
			return infoRun(&InfoOptions{app: a, Inputs: []string{beingWritten(t, dir)}, Speed: 1, Gap: 10 * time.Second})
		}, check: func(t *testing.T, stdout, _ string) {
			if !strings.Contains(stdout, "status:      being written (its recorder holds it open), 108 records so far\n") || strings.Contains(stdout, "torn") {
				t.Errorf("info of a capture being written:\n%s", stdout)
			}
		}, anyStderr: true},
		{name: "show --strict of a torn tail", run: func(a *app, dir string) error {
			torn, _ := damagedPair(t, dir)
			return showRun(&ShowOptions{app: a, Inputs: []string{torn}, Show: show.Options{NoCheck: true, Timing: timing.Config{Speed: 1}}, Reading: capfile.ReadPolicy{Strict: true}})
		}, code: cli.ExitUsage, stderr: tornReading},
		{name: "info --strict of a torn tail", run: func(a *app, dir string) error {
			torn, _ := damagedPair(t, dir)
			return infoRun(&InfoOptions{app: a, Inputs: []string{torn}, Speed: 1, Gap: 10 * time.Second, Reading: capfile.ReadPolicy{Strict: true}})
		}, code: cli.ExitUsage},
		{name: "visualize of damage, --allow-incomplete", run: func(a *app, dir string) error {
			_, bad := damagedPair(t, dir)
			return visualizeRun(&VisualizeOptions{app: a, Inputs: []string{bad}, Input: bad, Output: filepath.Join(dir, "t.dot"), Format: "dot", Check: checkFlags{Profile: "lenient"}, MaxSessions: 100, Reading: capfile.ReadPolicy{AllowIncomplete: true}})
		}, check: func(t *testing.T, _, dir string) {
			if _, err := os.Stat(filepath.Join(dir, "t.dot")); err != nil {
				t.Errorf("nothing drawn: %v", err)
			}
		}, anyStderr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var stdout, stderr bytes.Buffer
			a := &app{Streams: cli.Streams{In: strings.NewReader(""), Out: &stdout, Err: &stderr}, ctx: context.Background()}
			err := tc.run(a, dir)
			dirOf := func(s string) string {
				s = strings.ReplaceAll(s, "DIR", dir)
				if torn := filepath.Join(dir, "torn.aaep"); strings.Contains(s, "TORN") {
					at, end := tornAt(t, torn)
					s = strings.NewReplacer("TORN", fmt.Sprint(at), "UNREAD", fmt.Sprint(end-at), "END", fmt.Sprint(end)).Replace(s)
				}
				return s
			}
			if code := cli.Code(err); code != tc.code {
				t.Fatalf("exit code %d (%v), want %d", code, err, tc.code)
			}
			if tc.err != "" && err.Error() != dirOf(tc.err) {
				t.Errorf("error %q, want %q", err, dirOf(tc.err))
			}
			if !tc.anyStderr && stderr.String() != dirOf(tc.stderr) {
				t.Errorf("stderr %q, want %q", stderr.String(), dirOf(tc.stderr))
			}
			if tc.check != nil {
				tc.check(t, stdout.String(), dir)
			}
		})
	}
}

// demoReading and tornReading are the line show writes on stderr before
// the records of the demo capture and of damagedPair's torn one: where
// they were recorded from.
const (
	demoReading = "aaep-replay: reading ../../testdata/demo.aaep: sources: #0 websocket ws://127.0.0.1:8765/aaep/v1/ws (aaep.v1)\n"
	tornReading = "aaep-replay: reading DIR/torn.aaep: sources: #0 websocket ws://127.0.0.1:8765/aaep/v1/ws\n"
	liveReading = "aaep-replay: reading DIR/live.aaep: sources: #0 websocket ws://127.0.0.1:8765/aaep/v1/ws (aaep.v1)\n"
)

// beingWritten writes the demo capture's records to a capture whose
// writer holds it open (flushed, not closed) until the test ends: a
// capture being written.
func beingWritten(t *testing.T, dir string) string {
	t.Helper()
	hdr, recs := capfiletest.ReadAll(t, demoCapture)
	path := filepath.Join(dir, "live.aaep")
	w, err := capfile.Create(path, hdr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	for i := range recs {
		if err := w.Append(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return path
}

// cutShort writes the demo capture's first 1000 bytes, which end inside its
// first (and only) frame: a capture of which no record can be read.
func cutShort(t *testing.T, dir string) string {
	t.Helper()
	demo, err := os.ReadFile(demoCapture)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "short.aaep")
	if err := os.WriteFile(path, demo[:1000], 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// damagedPair writes a capture of several frames and returns a torn copy
// (cut inside its last frame, after 48 records) and a copy damaged in its
// second frame.
func damagedPair(t *testing.T, dir string) (torn, bad string) {
	t.Helper()
	src, _ := fileopsCapture(t, dir, "src.aaep")
	torn, bad, _ = fileopsDamaged(t, src)
	return torn, bad
}

// tornAt is where the torn copy's last frame starts, and its size.
func tornAt(t *testing.T, torn string) (at, end int64) {
	t.Helper()
	r, err := capfile.Open(torn)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for {
		if _, err = r.Next(); err != nil {
			break
		}
	}
	var ce *capfile.CorruptionError
	if !errors.As(err, &ce) {
		t.Fatalf("%s: %v, want a torn tail", torn, err)
	}
	return ce.Offset, ce.Size
}

// braceCapture writes the demo capture with its first byte damaged into '{'.
func braceCapture(t *testing.T, dir string) string {
	t.Helper()
	demo, err := os.ReadFile(demoCapture)
	if err != nil {
		t.Fatal(err)
	}
	demo[0] = '{'
	path := filepath.Join(dir, "brace.aaep")
	if err := os.WriteFile(path, demo, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
