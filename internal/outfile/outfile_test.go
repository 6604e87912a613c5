package outfile_test

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/outfile"
)

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// names lists a directory, so tests can assert that no temporary file stays.
func names(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

func sameNames(t *testing.T, dir string, want ...string) {
	t.Helper()
	sort.Strings(want)
	got := names(t, dir)
	if len(got) != len(want) {
		t.Fatalf("directory holds %q, want %q", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("directory holds %q, want %q", got, want)
		}
	}
}

func writeAll(t *testing.T, path string, o outfile.Options, data string) error {
	t.Helper()
	return outfile.WriteFile(path, o, func(w io.Writer) error {
		_, err := io.WriteString(w, data)
		return err
	})
}

func TestSymlinkIsFollowed(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	target := filepath.Join(sub, "target.out")
	write(t, target, "old")
	link := filepath.Join(dir, "link.out")
	if err := os.Symlink("sub/target.out", link); err != nil {
		t.Fatal(err)
	}
	if err := writeAll(t, link, outfile.Options{}, "through the link"); err != nil {
		t.Fatal(err)
	}
	lst, _ := os.Lstat(link)
	if lst.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("the link was replaced by a %v", lst.Mode())
	}
	if got := read(t, target); got != "through the link" {
		t.Errorf("target holds %q", got)
	}
	sameNames(t, sub, "target.out")
	sameNames(t, dir, "link.out", "sub")

	// A dangling link: its target is created.
	dangling := filepath.Join(dir, "dangling.out")
	os.Symlink("sub/created.out", dangling)
	if err := writeAll(t, dangling, outfile.Options{}, "created"); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(sub, "created.out")); got != "created" {
		t.Errorf("dangling link's target holds %q", got)
	}
	if lst, _ := os.Lstat(dangling); lst.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the dangling link was replaced")
	}
}

func TestOutputIsInputRefused(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.aaep")
	write(t, in, "precious")
	sym := filepath.Join(dir, "sym.aaep")
	os.Symlink("in.aaep", sym)
	symsym := filepath.Join(dir, "symsym.aaep")
	os.Symlink(sym, symsym)
	hard := filepath.Join(dir, "hard.aaep")
	if err := os.Link(in, hard); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(dir, "d"), 0o755)
	cases := map[string]string{
		"same path":          in,
		"other spelling":     filepath.Join(dir, "d", "..", "in.aaep"),
		"symbolic link":      sym,
		"link to a link":     symsym,
		"hard link":          hard,
		"input is a symlink": in, // checked below with the input named through the link
	}
	for name, out := range cases {
		t.Run(name, func(t *testing.T) {
			inputs := []string{"-", filepath.Join(dir, "other"), in}
			if name == "input is a symlink" {
				inputs = []string{sym}
			}
			if err := outfile.Check(out, outfile.Options{Inputs: inputs}); !errors.Is(err, outfile.ErrSameFile) {
				t.Errorf("Check: %v, want ErrSameFile", err)
			}
			err := writeAll(t, out, outfile.Options{Inputs: inputs}, "overwritten")
			if !errors.Is(err, outfile.ErrSameFile) {
				t.Fatalf("WriteFile: %v, want ErrSameFile", err)
			}
			var oe *outfile.Error
			if !errors.As(err, &oe) || cli.KindOf(err) != cli.KindOutput || cli.Code(err) != cli.ExitUsage {
				t.Errorf("error %v is not an output error with exit code 2", err)
			}
			if got := read(t, in); got != "precious" {
				t.Errorf("input now holds %q", got)
			}
			sameNames(t, dir, "d", "hard.aaep", "in.aaep", "sym.aaep", "symsym.aaep")
		})
	}
}

func TestDirectoryRefused(t *testing.T) {
	dir := t.TempDir()
	err := writeAll(t, dir, outfile.Options{}, "x")
	if !errors.Is(err, outfile.ErrDirectory) {
		t.Fatalf("got %v, want ErrDirectory", err)
	}
}

func TestStdout(t *testing.T) {
	var buf bytes.Buffer
	if err := writeAll(t, "-", outfile.Options{Stdout: &buf}, "to stdout"); err != nil {
		t.Fatal(err)
	}
	if buf.String() != "to stdout" {
		t.Errorf("stdout got %q", buf.String())
	}
	dir := t.TempDir()
	t.Chdir(dir)
	err := writeAll(t, "-", outfile.Options{NoStdout: "--record is printed to standard output"}, "x")
	if !errors.Is(err, outfile.ErrNoStdout) {
		t.Fatalf("got %v, want ErrNoStdout", err)
	}
	sameNames(t, dir) // never a file named "-"

	// Standard output redirected into an input (">> in") is refused.
	in := filepath.Join(dir, "in.jsonl")
	write(t, in, "{}\n")
	f, err := os.OpenFile(in, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := writeAll(t, "-", outfile.Options{Stdout: f, Inputs: []string{in}}, "loop"); !errors.Is(err, outfile.ErrSameFile) {
		t.Errorf("stdout appending to the input: %v, want ErrSameFile", err)
	}
	if got := read(t, in); got != "{}\n" {
		t.Errorf("input now holds %q", got)
	}
}

func TestFailureKeepsTarget(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "keep.out")
	write(t, out, "old")
	boom := errors.New("boom")
	err := outfile.WriteFile(out, outfile.Options{}, func(w io.Writer) error {
		io.WriteString(w, "half")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("got %v", err)
	}
	if got := read(t, out); got != "old" {
		t.Errorf("target holds %q after a failure", got)
	}
	sameNames(t, dir, "keep.out")

	// A partial failure (damage in the input) keeps what was written.
	err = outfile.WriteFile(out, outfile.Options{}, func(w io.Writer) error {
		io.WriteString(w, "intact part")
		return outfile.KeepPartial(boom)
	})
	if !errors.Is(err, boom) || !outfile.IsPartial(err) {
		t.Fatalf("got %v", err)
	}
	if got := read(t, out); got != "intact part" {
		t.Errorf("target holds %q after a partial failure", got)
	}
	sameNames(t, dir, "keep.out")
}

func TestLiveRecording(t *testing.T) {
	t.Run("existing non-empty file is kept", func(t *testing.T) {
		dir := t.TempDir()
		out := filepath.Join(dir, "session.aaep")
		write(t, out, "earlier recording")
		_, err := outfile.Open(out, outfile.Options{Live: true})
		if !errors.Is(err, outfile.ErrExists) {
			t.Fatalf("got %v, want ErrExists", err)
		}
		if want := "already exists; not overwritten"; !bytes.Contains([]byte(err.Error()), []byte(want)) {
			t.Errorf("message %q lacks %q", err, want)
		}
		if got := read(t, out); got != "earlier recording" {
			t.Errorf("file holds %q", got)
		}
		sameNames(t, dir, "session.aaep")
	})
	t.Run("empty file is replaced", func(t *testing.T) {
		dir := t.TempDir()
		out := filepath.Join(dir, "session.aaep")
		write(t, out, "")
		f, err := outfile.Open(out, outfile.Options{Live: true})
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(f, "new")
		if err := f.Publish(); err != nil {
			t.Fatal(err)
		}
		if err := f.Commit(); err != nil {
			t.Fatal(err)
		}
		if got := read(t, out); got != "new" {
			t.Errorf("file holds %q", got)
		}
	})
	t.Run("force replaces, but only once something is recorded", func(t *testing.T) {
		dir := t.TempDir()
		out := filepath.Join(dir, "session.aaep")
		write(t, out, "earlier recording")
		os.Chmod(out, 0o600)
		f, err := outfile.Open(out, outfile.Options{Live: true, Force: true})
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(f, "header")
		if got := read(t, out); got != "earlier recording" {
			t.Errorf("before Publish the file holds %q", got)
		}
		if err := f.Publish(); err != nil {
			t.Fatal(err)
		}
		io.WriteString(f, "+records")
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		// Visible before Commit: a killed recorder leaves it here.
		if got := read(t, out); got != "header+records" {
			t.Errorf("after Publish the file holds %q", got)
		}
		if err := f.Commit(); err != nil {
			t.Fatal(err)
		}
		if st, _ := os.Stat(out); st.Mode().Perm() != 0o600 {
			t.Errorf("mode %v, want the replaced file's 0600", st.Mode().Perm())
		}
		sameNames(t, dir, "session.aaep")
	})
	t.Run("nothing recorded leaves no file", func(t *testing.T) {
		dir := t.TempDir()
		out := filepath.Join(dir, "session.aaep")
		f, err := outfile.Open(out, outfile.Options{Live: true})
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(f, "header only")
		f.Abort()
		sameNames(t, dir)

		f, _ = outfile.Open(out, outfile.Options{Live: true})
		io.WriteString(f, "connection events only")
		f.Publish()
		f.Discard()
		sameNames(t, dir)
	})
	t.Run("a file that appeared meanwhile is not replaced", func(t *testing.T) {
		dir := t.TempDir()
		out := filepath.Join(dir, "session.aaep")
		f, err := outfile.Open(out, outfile.Options{Live: true})
		if err != nil {
			t.Fatal(err)
		}
		write(t, out, "another recorder's")
		io.WriteString(f, "mine")
		if err := f.Publish(); !errors.Is(err, outfile.ErrExists) {
			t.Fatalf("Publish: %v, want ErrExists", err)
		}
		f.Abort()
		if got := read(t, out); got != "another recorder's" {
			t.Errorf("file holds %q", got)
		}
		sameNames(t, dir, "session.aaep")
	})
	t.Run("a published recording survives Abort", func(t *testing.T) {
		dir := t.TempDir()
		out := filepath.Join(dir, "session.aaep")
		f, _ := outfile.Open(out, outfile.Options{Live: true})
		io.WriteString(f, "recorded")
		f.Publish()
		f.Abort()
		if got := read(t, out); got != "recorded" {
			t.Errorf("file holds %q", got)
		}
	})
}
