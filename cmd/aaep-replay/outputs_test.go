package main

import (
	"bytes"
	"crypto/sha256"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/binarytest"
)

// The output policy (internal/outfile) through the real aaep-replay binary:
// every verb that writes a file, against inputs, links, devices, standard
// output and existing files.

// replayBin is the real aaep-replay, built once per test run.
var replayBin = binarytest.New(".", "aaep-replay")

// runBinary runs aaep-replay in dir and returns its exit code, stdout and stderr.
func runBinary(t *testing.T, dir string, args ...string) (int, []byte, string) {
	t.Helper()
	return replayBin.Run(t, dir, args...)
}

func hashOf(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// writerVerb is a verb that writes a file: args builds its command line.
type writerVerb struct {
	name    string
	capture bool // its output is a capture (else text)
	args    func(dir, out string) []string
	input   string // the input named in args, relative to dir
}

func writerVerbs() []writerVerb {
	return []writerVerb{
		{"export", false, func(d, o string) []string { return []string{"export", "src.aaep", "-o", o} }, "src.aaep"},
		{"import", true, func(d, o string) []string { return []string{"import", "src.jsonl", "-o", o} }, "src.jsonl"},
		{"cut", true, func(d, o string) []string { return []string{"cut", "src.aaep", "--from", "#1", "-o", o} }, "src.aaep"},
		{"filter", true, func(d, o string) []string { return []string{"filter", "src.aaep", "--messages-only", "-o", o} }, "src.aaep"},
		{"merge", true, func(d, o string) []string { return []string{"merge", "other.aaep", "src.aaep", "-o", o} }, "src.aaep"},
		{"repair", true, func(d, o string) []string { return []string{"repair", "src.aaep", "-o", o} }, "src.aaep"},
		{"dedupe", true, func(d, o string) []string { return []string{"dedupe", "src.aaep", "-o", o} }, "src.aaep"},
		{"visualize", false, func(d, o string) []string { return []string{"visualize", "src.aaep", "--format", "dot", "-o", o} }, "src.aaep"},
	}
}

// outputsDir holds src.aaep, other.aaep and src.jsonl.
func outputsDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	fileopsCapture(t, dir, "src.aaep")
	fileopsCapture(t, dir, "other.aaep")
	if code, _, stderr := runBinary(t, dir, "export", "src.aaep", "-o", "src.jsonl"); code != 0 {
		t.Fatalf("export: %d %s", code, stderr)
	}
	return dir
}

func TestOutputIsInputRefused(t *testing.T) {
	for _, v := range writerVerbs() {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			dir := outputsDir(t)
			in := filepath.Join(dir, v.input)
			if err := os.Symlink(v.input, filepath.Join(dir, "sym")); err != nil {
				t.Fatal(err)
			}
			if err := os.Link(in, filepath.Join(dir, "hard")); err != nil {
				t.Fatal(err)
			}
			os.Mkdir(filepath.Join(dir, "sub"), 0o755)
			before := hashOf(t, in)
			for _, out := range []string{v.input, "./" + v.input, "sub/../" + v.input, in, "sym", "hard"} {
				code, stdout, stderr := runBinary(t, dir, v.args(dir, out)...)
				if code != 2 || !strings.Contains(stderr, "same file as an input") {
					t.Errorf("-o %s: exit %d, stderr %q; want 2 and a refusal", out, code, stderr)
				}
				if len(stdout) != 0 {
					t.Errorf("-o %s: wrote %d bytes to stdout", out, len(stdout))
				}
				if hashOf(t, in) != before {
					t.Fatalf("-o %s: the input was changed", out)
				}
				if lst, _ := os.Lstat(filepath.Join(dir, "sym")); lst.Mode()&fs.ModeSymlink == 0 {
					t.Fatalf("-o %s: the link was replaced", out)
				}
			}
			noTempFiles(t, dir)
		})
	}
}

func noTempFiles(t *testing.T, dir string) { t.Helper(); binarytest.NoLeftovers(t, dir) }

// recordPayloads concatenates a capture's payloads (headers differ in their
// start time when written twice).
func recordPayloads(t *testing.T, data []byte) []byte {
	t.Helper()
	r, err := capfile.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("not a capture: %v", err)
	}
	var all []byte
	for {
		rec, err := r.Next()
		if err != nil {
			break
		}
		all = append(all, rec.Payload...)
	}
	return all
}

func TestOutputToStdout(t *testing.T) {
	for _, v := range writerVerbs() {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			dir := outputsDir(t)
			for _, name := range []string{"-", "/dev/stdout"} {
				code, stdout, stderr := runBinary(t, dir, v.args(dir, name)...)
				if code != 0 {
					t.Fatalf("-o %s: exit %d: %s", name, code, stderr)
				}
				if v.capture {
					if len(recordPayloads(t, stdout)) == 0 {
						t.Errorf("-o %s: standard output holds a capture without records", name)
					}
				} else if len(stdout) == 0 || stdout[len(stdout)-1] != '\n' {
					t.Errorf("-o %s: standard output holds %d bytes", name, len(stdout))
				}
			}
			if _, err := os.Lstat(filepath.Join(dir, "-")); err == nil {
				t.Errorf("a file named - was created")
			}
			noTempFiles(t, dir)
		})
	}
}

// TestVisualizeDefaultOutputBesideInput: --visualize writes FILE.svg beside
// the input, and refuses when that name is the input.
func TestVisualizeOutputIsInput(t *testing.T) {
	dir := outputsDir(t)
	os.Rename(filepath.Join(dir, "src.aaep"), filepath.Join(dir, "same.aaep"))
	before := hashOf(t, filepath.Join(dir, "same.aaep"))
	code, _, stderr := runBinary(t, dir, "visualize", "same.aaep", "--format", "dot", "-o", "same.aaep")
	if code != 2 || !strings.Contains(stderr, "same file as an input") || hashOf(t, filepath.Join(dir, "same.aaep")) != before {
		t.Errorf("visualize -o its input: exit %d, %q", code, stderr)
	}
	// Several inputs: none of them may be the output.
	code, _, stderr = runBinary(t, dir, "visualize", "other.aaep", "same.aaep", "--format", "dot", "-o", "same.aaep")
	if code != 2 || !strings.Contains(stderr, "same file as an input") || hashOf(t, filepath.Join(dir, "same.aaep")) != before {
		t.Errorf("visualize of two inputs -o the second: exit %d, %q", code, stderr)
	}
	code, _, stderr = runBinary(t, dir, "export", "other.aaep", "same.aaep", "-o", "same.aaep")
	if code != 2 || !strings.Contains(stderr, "same file as an input") || hashOf(t, filepath.Join(dir, "same.aaep")) != before {
		t.Errorf("export of two inputs -o the second: exit %d, %q", code, stderr)
	}
	// The default name FILE.dot made a link to the input.
	os.Symlink("same.aaep", filepath.Join(dir, "same.aaep.dot"))
	code, _, stderr = runBinary(t, dir, "--input", "same.aaep", "--visualize", "--format", "dot")
	if code != 2 || !strings.Contains(stderr, "same file as an input") || hashOf(t, filepath.Join(dir, "same.aaep")) != before {
		t.Errorf("--visualize onto a link to its input: exit %d, %q", code, stderr)
	}
}

// TestRepairKeepsNothing: a capture whose every frame is damaged is not
// "intact", writes nothing and exits 2.
func TestRepairKeepsNothing(t *testing.T) {
	dir := t.TempDir()
	src, _ := fileopsCapture(t, dir, "src.aaep")
	r, err := capfile.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	x, err := r.FileIndex()
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(src)
	for _, f := range x.Frames {
		data[f.Offset+f.Size/2] ^= 0x5a
	}
	bad := filepath.Join(dir, "bad.aaep")
	os.WriteFile(bad, data, 0o644)
	code, stdout, stderr := runBinary(t, dir, "repair", "bad.aaep", "-o", "fixed.aaep")
	if code != 2 || strings.Contains(string(stdout)+stderr, "intact") && !strings.Contains(stderr, "no intact record") {
		t.Errorf("repair of a capture with no intact record: exit %d, %q %q", code, stdout, stderr)
	}
	if strings.Contains(string(stdout)+stderr, "the source was intact") {
		t.Errorf("repair says the source was intact: %q %q", stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "fixed.aaep")); err == nil {
		t.Errorf("repair wrote an output with no records")
	}
}

// captureBin is the real aaep-capture, built once per test run.
var captureBin = binarytest.New("../aaep-capture", "aaep-capture")

// TestMain lets 4 parallel tests run side by side, unless -parallel says
// otherwise: they mostly wait (a scenario's pace, the stalled subscriber's
// cut-off, processes of their own), not compute.
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", "4")
	}
	code := m.Run()
	replayBin.Remove()
	captureBin.Remove()
	renderBin.Remove()
	os.Exit(code)
}
