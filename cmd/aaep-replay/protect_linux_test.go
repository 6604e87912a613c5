//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/internal/binarytest"
)

// nobody is the user the property test runs the commands as.
const nobody = 65534

// TestNothingUnaskedChanges is the property of the output policy that no
// command changes the bytes, mode or owner of an existing file it was not
// asked to replace, run as a user who is not root (nobody), in a
// world-writable directory that also holds root's files: every writer of
// aaep-replay and aaep-capture -o, against every kind of existing output.
// Only a derived capture and JSON Lines of the user's own are replaced (and
// keep their mode and owner); an original recording (by name, symbolic or
// hard link), a read-only file, root's files (read-only or writable by all)
// and a file in a directory the user may not write are refused, exit 2.
func TestNothingUnaskedChanges(t *testing.T) {
	if os.Geteuid() != 0 {
		// Only root can make the other user's files and run as nobody; the
		// refusals of root's files are then not tested here.
		t.Logf("NOT TESTED as another user: running as uid %d, not root; the files of another user cannot be made", os.Geteuid())
	}
	verbs := writerVerbs()
	verbs = append(verbs, writerVerb{"aaep-capture", true, func(d, o string) []string { return []string{"src.jsonl", "-o", o} }, "src.jsonl"})
	for _, v := range verbs {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			dir := protectDir(t)
			replaced := map[string]bool{"derived.aaep": true, "notes.jsonl": true}
			if v.name == "aaep-capture" {
				replaced = map[string]bool{} // a live recording replaces no non-empty file without --force
			}
			targets := []string{"derived.aaep", "notes.jsonl", "orig.aaep", "orig-link.aaep", "orig-hard.aaep", "ro.jsonl"}
			if os.Geteuid() == 0 {
				targets = append(targets, "root-ro.txt", "root-rw.txt", "rootdir/x.jsonl")
			}
			for _, target := range targets {
				before := snapshot(t, dir)
				beforeSub := snapshot(t, filepath.Join(dir, "rootdir"))
				code, _, stderr := protectRun(t, v, dir, v.args(dir, target)...)
				after := snapshot(t, dir)
				for name, st := range after {
					if name == target && replaced[target] {
						continue
					}
					if before[name] != "" && st != before[name] {
						t.Errorf("-o %s: %s changed:\n\t%s\nwas\n\t%s", target, name, st, before[name])
					}
				}
				for name, st := range snapshot(t, filepath.Join(dir, "rootdir")) {
					if st != beforeSub[name] {
						t.Errorf("-o %s: rootdir/%s changed", target, name)
					}
				}
				if replaced[target] {
					if code != 0 {
						t.Errorf("-o %s (the user's own %s): exit %d, %s", target, target, code, stderr)
					}
					// Replaced: the same mode and owner, other bytes.
					b, a := before[target], after[target]
					if i := strings.Index(b, " sha256"); i < 0 || !strings.HasPrefix(a, b[:i+1]) || a == b {
						t.Errorf("-o %s: replaced as %q, was %q", target, a, b)
					}
					continue
				}
				if code != 2 || strings.Contains(stderr, ".tmp-") {
					t.Errorf("-o %s: exit %d, %q; want a refusal (exit 2) naming no temporary file", target, code, stderr)
				}
			}
			binarytest.NoLeftovers(t, dir)
		})
	}
}

// protectRun runs v's command in dir as nobody (as root) or as the user
// the test runs as.
func protectRun(t *testing.T, v writerVerb, dir string, args ...string) (int, []byte, string) {
	t.Helper()
	bin := replayBin
	if v.name == "aaep-capture" {
		bin = captureBin
	}
	if os.Geteuid() == 0 {
		return bin.RunAs(t, nobody, nobody, dir, args...)
	}
	return bin.Run(t, dir, args...)
}

// protectDir makes a world-writable directory (not sticky) holding the
// inputs of writerVerbs and one existing output of every kind, the user's
// (nobody's, under root) and root's.
func protectDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "protect-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	fileopsCapture(t, dir, "src.aaep")
	fileopsCapture(t, dir, "other.aaep")
	run := func(args ...string) {
		if code, _, stderr := runBinary(t, dir, args...); code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, stderr)
		}
	}
	run("export", "src.aaep", "-o", "src.jsonl")
	demo, err := os.ReadFile(demoCapture)
	if err != nil {
		t.Fatal(err)
	}
	mine := func(name string, mode os.FileMode) {
		path := filepath.Join(dir, name)
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		if os.Geteuid() == 0 {
			if err := os.Chown(path, nobody, nobody); err != nil {
				t.Fatal(err)
			}
		}
	}
	os.WriteFile(filepath.Join(dir, "orig.aaep"), demo, 0o644) // recorded by aaep-capture
	mine("orig.aaep", 0o644)
	run("cut", "orig.aaep", "--from", "#3", "-o", "derived.aaep")
	mine("derived.aaep", 0o640)
	run("export", "orig.aaep", "-o", "notes.jsonl")
	mine("notes.jsonl", 0o664)
	run("export", "src.aaep", "-o", "ro.jsonl")
	mine("ro.jsonl", 0o444)
	for _, name := range []string{"src.aaep", "other.aaep", "src.jsonl"} {
		mine(name, 0o644)
	}
	if err := os.Symlink("orig.aaep", filepath.Join(dir, "orig-link.aaep")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(dir, "orig.aaep"), filepath.Join(dir, "orig-hard.aaep")); err != nil {
		t.Fatal(err)
	}
	// root's files, and a directory of root's the user may not write.
	os.WriteFile(filepath.Join(dir, "root-ro.txt"), []byte("root's, read-only\n"), 0o444)
	os.WriteFile(filepath.Join(dir, "root-rw.txt"), []byte("root's, writable by all\n"), 0o666)
	os.Chmod(filepath.Join(dir, "root-rw.txt"), 0o666) // whatever the umask
	os.Mkdir(filepath.Join(dir, "rootdir"), 0o755)
	os.WriteFile(filepath.Join(dir, "rootdir", "x.jsonl"), []byte("{}\n"), 0o644)
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestNothingUnaskedChangesReaders: the commands that only read (and split,
// whose parts are new files beside their prefix) change no existing file,
// run as nobody in the directory of TestNothingUnaskedChanges.
func TestNothingUnaskedChangesReaders(t *testing.T) {
	t.Parallel() // processes of its own, in a directory of its own
	if os.Geteuid() != 0 {
		t.Logf("NOT TESTED as another user: running as uid %d, not root", os.Geteuid())
	}
	dir := protectDir(t)
	for _, args := range [][]string{
		{"info", "orig.aaep", "derived.aaep"},
		{"check", "orig.aaep", "notes.jsonl", "--json"},
		{"show", "orig.aaep"},
		{"export", "orig.aaep", "src.aaep"},
		{"split", "orig.aaep", "--records", "50", "-o", "derived.aaep"},
		{"split", "orig.aaep", "--records", "50", "-o", "orig-link.aaep"},
		{"split", "orig.aaep", "--by-session", "-o", "rootdir/x.aaep"},
	} {
		before := snapshot(t, dir)
		code, _, stderr := protectRun(t, writerVerb{name: args[0]}, dir, args...)
		for name, st := range snapshot(t, dir) {
			if before[name] != "" && st != before[name] {
				t.Errorf("%q: %s changed", args, name)
			}
		}
		want := 0
		switch args[0] {
		case "check":
			want = 1 // the demo's findings
		case "split":
			if strings.HasPrefix(args[len(args)-1], "rootdir/") && os.Geteuid() == 0 {
				want = 2 // nobody may not create files there
			}
		}
		if code != want {
			t.Errorf("%q: exit %d, want %d: %s", args, code, want, stderr)
		}
	}
	binarytest.NoLeftovers(t, dir)
}
