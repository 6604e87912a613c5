package main

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/outfile"
)

// TestStartProfile: AAEP_CPUPROFILE names a file that receives a CPU
// profile (gzip-compressed protobuf); a file named on the command line is
// never written over, and an unwritable path is an error that names the
// variable.
func TestStartProfile(t *testing.T) {
	t.Run("unset", func(t *testing.T) {
		t.Setenv("AAEP_CPUPROFILE", "")
		stop, err := startProfile(nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("written", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "cpu.out")
		t.Setenv("AAEP_CPUPROFILE", path)
		stop, err := startProfile([]string{"check", "x.aaep"})
		if err != nil {
			t.Fatal(err)
		}
		sum := 0
		for i := range 1_000_000 {
			sum += i % 7
		}
		_ = sum
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
			t.Fatalf("profile starts % x, want a gzip stream", b[:min(len(b), 4)])
		}
	})
	t.Run("an input is not written over, even a profile", func(t *testing.T) {
		// An input that is not a profile is refused as any file that is
		// not (TestProfileOnlyOverAProfile); one that is is refused as an
		// input.
		dir := t.TempDir()
		input := filepath.Join(dir, "input.pprof")
		var prof bytes.Buffer
		if err := pprof.StartCPUProfile(&prof); err != nil {
			t.Fatal(err)
		}
		pprof.StopCPUProfile()
		want := prof.Bytes()
		if err := os.WriteFile(input, want, 0o644); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(dir, "link")
		if err := os.Symlink(input, link); err != nil {
			t.Fatal(err)
		}
		t.Setenv("AAEP_CPUPROFILE", link)
		_, err := startProfile([]string{"check", input, "--json"})
		if !errors.Is(err, outfile.ErrSameFile) {
			t.Fatalf("err = %v, want ErrSameFile", err)
		}
		if got, _ := os.ReadFile(input); !bytes.Equal(got, want) {
			t.Fatalf("input now holds %q", got)
		}
	})
	t.Run("the command's own output", func(t *testing.T) {
		// AAEP_CPUPROFILE=T aaep-replay cut in.aaep -o T: T does not exist
		// yet, and is refused by name however it is spelled.
		dir := t.TempDir()
		t.Chdir(dir)
		for _, args := range [][]string{
			{"cut", "in.aaep", "-o", "T"},
			{"cut", "in.aaep", "--output=./T"},
			{"export", "in.aaep", "-o", filepath.Join(dir, "T")},
		} {
			t.Setenv("AAEP_CPUPROFILE", "T")
			_, err := startProfile(args)
			if err == nil || cli.Code(err) != cli.ExitUsage || !strings.Contains(err.Error(), "AAEP_CPUPROFILE: T is named on the command line") {
				t.Errorf("%q: err = %v, want a usage error", args, err)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "T")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("T was written: %v", err)
		}
	})
	t.Run("a file that appears meanwhile is not replaced", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "cpu.out")
		t.Setenv("AAEP_CPUPROFILE", path)
		stop, err := startProfile([]string{"check", "x.aaep"})
		if err != nil {
			t.Fatal(err)
		}
		want := []byte("written by the command meanwhile")
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := stop(); !errors.Is(err, outfile.ErrChanged) {
			t.Errorf("stop = %v, want ErrChanged", err)
		}
		if got, _ := os.ReadFile(path); !bytes.Equal(got, want) {
			t.Errorf("the file now holds %q", got)
		}
	})
	t.Run("unwritable", func(t *testing.T) {
		t.Setenv("AAEP_CPUPROFILE", filepath.Join(t.TempDir(), "missing", "cpu.out"))
		if _, err := startProfile(nil); err == nil || !bytes.Contains([]byte(err.Error()), []byte("AAEP_CPUPROFILE")) {
			t.Fatalf("err = %v, want an error naming AAEP_CPUPROFILE", err)
		}
	})
}

// TestProfileOnlyOverAProfile: AAEP_CPUPROFILE writes a profile only to a
// path that does not exist or holds a profile already. A capture the
// command reads is refused however it is named (a glob, a directory, a
// merge glob, standard input), and so is any other file, before the
// command runs: exit 2, the file as it was, no output written.
func TestProfileOnlyOverAProfile(t *testing.T) {
	dir := t.TempDir()
	fileopsCapture(t, dir, "derive1.aaep")
	fileopsCapture(t, dir, "derive2.aaep")
	if err := os.Mkdir(filepath.Join(dir, "d2"), 0o755); err != nil {
		t.Fatal(err)
	}
	fileopsCapture(t, dir, "d2/x.aaep")
	for _, c := range []struct {
		name, profile, stdin string
		args                 []string
	}{
		{"export glob", "derive1.aaep", "", []string{"export", "derive*.aaep", "-o", "out.jsonl"}},
		{"export directory", "d2/x.aaep", "", []string{"export", "d2", "-o", "out.jsonl"}},
		{"check directory", "d2/x.aaep", "", []string{"check", "d2"}},
		{"merge glob", "derive2.aaep", "", []string{"merge", "derive*.aaep", "-o", "out.aaep"}},
		{"standard input", "derive1.aaep", "derive1.aaep", []string{"check", "-"}},
		{"a capture not read", "derive2.aaep", "", []string{"info", "d2/x.aaep"}},
	} {
		before := hashOf(t, filepath.Join(dir, c.profile))
		cmd := exec.Command(replayBin.Path(t), c.args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "AAEP_CPUPROFILE="+c.profile)
		if c.stdin != "" {
			f, err := os.Open(filepath.Join(dir, c.stdin))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			cmd.Stdin = f
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != cli.ExitUsage || !strings.Contains(stderr.String(), "AAEP_CPUPROFILE: "+c.profile+" exists and is not a CPU profile") {
			t.Errorf("%s: %v, %q; want exit 2 and the profile refused", c.name, err, stderr.String())
		}
		if hashOf(t, filepath.Join(dir, c.profile)) != before {
			t.Fatalf("%s: %s was written over", c.name, c.profile)
		}
		for _, out := range []string{"out.jsonl", "out.aaep"} {
			if _, err := os.Stat(filepath.Join(dir, out)); err == nil {
				t.Fatalf("%s: the command ran and wrote %s", c.name, out)
			}
		}
	}
	noTempFiles(t, dir)
}

// TestProfilePaths: what AAEP_CPUPROFILE may name, directly: a new file or
// a profile (which the new profile replaces); not a directory, a device, a
// link to nothing, an empty file or a gzip file that is not a profile.
func TestProfilePaths(t *testing.T) {
	dir := t.TempDir()
	newProfile := func(path string) {
		t.Helper()
		t.Setenv("AAEP_CPUPROFILE", path)
		stop, err := startProfile([]string{"check", "x.aaep"})
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if err := stop(); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if !isProfile(path) {
			t.Fatalf("%s: no profile written", path)
		}
	}
	cpu := filepath.Join(dir, "cpu.out")
	newProfile(cpu)
	old, _ := os.Stat(cpu)
	newProfile(cpu) // over a profile
	if now, _ := os.Stat(cpu); os.SameFile(old, now) {
		t.Errorf("the profile was not replaced")
	}

	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("not a profile at all, but gzip-compressed\n"))
	zw.Close()
	os.WriteFile(filepath.Join(dir, "notes.gz"), gz.Bytes(), 0o644)
	os.WriteFile(filepath.Join(dir, "empty"), nil, 0o644)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.Symlink("missing", filepath.Join(dir, "dangling"))
	for name, want := range map[string]string{
		"notes.gz":    "exists and is not a CPU profile",
		"empty":       "exists and is not a CPU profile",
		"sub":         "is a directory",
		"dangling":    "a symbolic link to a missing file",
		"/dev/null":   "is a device",
		"/dev/stdin":  "",
		"/dev/stdout": "",
	} {
		path := name
		if !filepath.IsAbs(name) {
			path = filepath.Join(dir, name)
		}
		var before []byte
		if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
			before, _ = os.ReadFile(path)
		}
		t.Setenv("AAEP_CPUPROFILE", path)
		stop, err := startProfile([]string{"check", "x.aaep"})
		if err == nil {
			stop()
		}
		if err == nil || cli.Code(err) != cli.ExitUsage || !strings.Contains(err.Error(), "AAEP_CPUPROFILE: "+path) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want a usage error saying %q", name, err, want)
		}
		if before != nil {
			if got, _ := os.ReadFile(path); !bytes.Equal(got, before) {
				t.Errorf("%s was written over", name)
			}
		}
		if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is gone", name)
		}
	}
}
