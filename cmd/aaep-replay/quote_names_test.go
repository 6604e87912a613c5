package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestControlCharactersInNamesQuoted: a file name with control characters
// is quoted (as strconv.Quote quotes it) in every message that names it,
// on standard error and in the text that names files on standard output,
// and no raw control character reaches either (issue 34: "bad\x1bname"
// was printed as it is, ESC and all; a name holding a line break forged a
// line). Messages of Go's os package are quoted too.
func TestControlCharactersInNamesQuoted(t *testing.T) {
	demo, err := os.ReadFile(demoCapture)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	esc := filepath.Join(dir, "d\x1b[2Jemo.aaep")
	if err := os.WriteFile(esc, demo, 0o644); err != nil {
		t.Fatal(err)
	}
	jsonl := filepath.Join(dir, "bad\x1bname.jsonl")
	if err := os.WriteFile(jsonl, []byte(`{"type":"x"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "no\x07file.aaep")
	forged := filepath.Join(dir, "x\naaep-replay: all good.aaep")
	q := func(s string) string {
		return `"` + strings.NewReplacer("\x1b", `\x1b`, "\x07", `\a`, "\n", `\n`).Replace(s) + `"`
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		out  []string // on standard output
		errs []string // on standard error
	}{
		{"info of a missing file", []string{"info", missing}, 2, nil, []string{q(missing)}},
		{"info", []string{"info", esc}, 0, []string{"file:        " + q(esc)}, nil},
		{"check", []string{"check", jsonl}, 0, []string{q(jsonl) + ": 1 message"}, nil},
		{"check of two", []string{"check", demoCapture, esc}, 1, []string{"=== " + q(esc), "FAIL       " + q(esc) + ":"}, nil},
		{"show of two", []string{"show", demoCapture, esc}, 0, []string{"=== " + q(esc) + "\n"}, nil},
		{"cut to a name with a line break", []string{"cut", esc, "--from", "#0", "-o", forged}, 0, []string{"to " + q(forged) + "\n"}, nil},
		{"an output that exists", []string{"cut", demoCapture, "--from", "#0", "-o", esc}, 2, nil, []string{q(esc)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := replay(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s", code, tc.code, errs)
			}
			for _, w := range tc.out {
				if !strings.Contains(out, w) {
					t.Errorf("standard output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.errs {
				if !strings.Contains(errs, w) {
					t.Errorf("standard error lacks %q:\n%s", w, errs)
				}
			}
			for what, s := range map[string]string{"standard output": out, "standard error": errs} {
				if i := strings.IndexFunc(s, func(r rune) bool { return r < 0x20 && r != '\n' && r != '\t' }); i >= 0 {
					t.Errorf("%s holds a control character (%q at %d):\n%q", what, s[i], i, s)
				}
			}
			if strings.Contains(errs, "\naaep-replay: all good") || strings.Contains(out, "\naaep-replay: all good") {
				t.Error("a line forged by a name's line break")
			}
		})
	}
}

// TestCaptureQuotesNames: aaep-capture quotes names as aaep-replay does.
func TestCaptureQuotesNames(t *testing.T) {
	dir := t.TempDir()
	code, _, errs := captureBin.Run(t, dir, "no\rfile.jsonl", "-o", "out.aaep")
	if code != 2 || !strings.Contains(errs, `"no\rfile.jsonl"`) || strings.ContainsRune(errs, '\r') {
		t.Errorf("exit %d, want 2 and the name quoted:\n%q", code, errs)
	}
}

// TestProfileNameQuoted: AAEP_CPUPROFILE's name, which is not on the
// command line, is quoted as well in what the real binary says of it.
func TestProfileNameQuoted(t *testing.T) {
	dir := t.TempDir()
	name := "p\x1b[2J.prof"
	if err := os.WriteFile(filepath.Join(dir, name), []byte("not a profile"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(replayBin.Path(t), "info", filepath.Join("..", "..", "..", "nothing.aaep"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "AAEP_CPUPROFILE="+name)
	var errs strings.Builder
	cmd.Stderr = &errs
	err := cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(errs.String(), `"p\x1b[2J.prof"`) || strings.ContainsRune(errs.String(), 0x1b) {
		t.Errorf("exit %d (%v), want 2 and the name quoted:\n%q", code, err, errs.String())
	}
}
