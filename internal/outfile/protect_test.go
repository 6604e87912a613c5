package outfile_test

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/outfile"
)

// captureBytes is a small capture with header h.
func captureBytes(t *testing.T, h capfile.Header) []byte {
	t.Helper()
	var buf bytes.Buffer
	h.Start = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	w, err := capfile.NewWriter(&buf, h, &capfile.WriterOptions{FlushInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(&capfile.Record{Kind: capfile.KindReceived, Payload: []byte(`{"type":"x"}`)}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestOriginalRecordingRefused: an original recording (and a file that
// starts like a capture whose header cannot be read) is replaced only with
// Force; derived captures, text and a plain import are replaced as before.
func TestOriginalRecordingRefused(t *testing.T) {
	recorded := captureBytes(t, capfile.Header{Tool: "aaep-capture/1.0"})
	damaged := bytes.Clone(recorded)
	damaged[0] = '{' // a damaged first byte: still a capture, not text
	for _, tc := range []struct {
		name    string
		data    []byte
		refused bool
	}{
		{"aaep-capture recording", recorded, true},
		{"replay recorded by serve --record", captureBytes(t, capfile.Header{Tool: "aaep-replay/1.0", Meta: map[string]string{"replay_of": "in.aaep"}}), true},
		{"capture with a damaged first byte", damaged, true},
		{"torn recording", recorded[:len(recorded)-60], true},
		{"cut of a recording", captureBytes(t, capfile.Header{Tool: "aaep-capture/1.0", Meta: map[string]string{"derived_from": "in.aaep"}}), false},
		{"merge of recordings", captureBytes(t, capfile.Header{Tool: "aaep-capture/1.0", Meta: map[string]string{"merged_from": "a.aaep, b.aaep"}}), false},
		{"plain import", captureBytes(t, capfile.Header{Tool: "aaep-replay/1.0"}), false},
		{"JSON Lines", []byte(`{"type":"x"}` + "\n"), false},
		{"empty file", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out.aaep")
			if err := os.WriteFile(out, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			cerr := outfile.Check(out, outfile.Options{})
			err := writeAll(t, out, outfile.Options{}, "new")
			if !tc.refused {
				if err != nil || cerr != nil || read(t, out) != "new" {
					t.Fatalf("Check %v, WriteFile %v; want the file replaced", cerr, err)
				}
				return
			}
			var oe *outfile.Error
			if !errors.Is(err, outfile.ErrOriginal) || !errors.Is(cerr, outfile.ErrOriginal) || !errors.As(err, &oe) || cli.Code(err) != cli.ExitUsage {
				t.Fatalf("Check %v, WriteFile %v; want ErrOriginal", cerr, err)
			}
			if got, _ := os.ReadFile(out); !bytes.Equal(got, tc.data) {
				t.Fatal("the recording was changed")
			}
			sameNames(t, dir, "out.aaep")
			if err := writeAll(t, out, outfile.Options{Force: true}, "new"); err != nil || read(t, out) != "new" {
				t.Fatalf("with Force: %v", err)
			}
		})
	}
}

// TestChangedWhileWritingNotReplaced: Commit replaces only the file Open
// looked at. A file that appears at the path meanwhile (a command's own
// output, when AAEP_CPUPROFILE names it), or replaces the one that was
// there, is left alone.
func TestChangedWhileWritingNotReplaced(t *testing.T) {
	for _, existed := range []bool{false, true} {
		dir := t.TempDir()
		out := filepath.Join(dir, "out")
		if existed {
			write(t, out, "before")
		}
		f, err := outfile.Open(out, outfile.Options{})
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(f, "profile")
		other := filepath.Join(dir, "other")
		write(t, other, "the command's output")
		if err := os.Rename(other, out); err != nil {
			t.Fatal(err)
		}
		err = f.Commit()
		if !errors.Is(err, outfile.ErrChanged) {
			t.Errorf("existed %v: Commit = %v, want ErrChanged", existed, err)
		}
		if got := read(t, out); got != "the command's output" {
			t.Errorf("existed %v: the file holds %q", existed, got)
		}
		sameNames(t, dir, "out")
	}
}

// TestNotWritableRefused: a file the user may not write is refused before
// anything is written. Root may write any file (as cp does), so the refusal
// is tested for a user without that right in cmd/aaep-replay's
// TestNothingUnaskedChanges (run as nobody); here, as any user, a read-only
// file system's refusal and the typed error.
func TestNotWritableRefused(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Log("running as root, which may write a 0444 file as cp may: the refusal is tested as nobody in cmd/aaep-replay (TestNothingUnaskedChanges)")
		err := &outfile.Error{Op: "refuse", Path: "x", Err: outfile.ErrNotWritable}
		if !errors.Is(err, fs.ErrPermission) || err.Error() != "x: no write permission; not replaced (permission denied)" {
			t.Errorf("ErrNotWritable: %v", err)
		}
		return
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "ro")
	write(t, out, "keep")
	os.Chmod(out, 0o444)
	if err := writeAll(t, out, outfile.Options{}, "new"); !errors.Is(err, outfile.ErrNotWritable) || read(t, out) != "keep" {
		t.Fatalf("WriteFile over a 0444 file: %v", err)
	}
}

// TestMissingDirectoryNamed: an output in a directory that does not exist
// is reported with that directory, never with the temporary file's name.
func TestMissingDirectoryNamed(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "parts", "long-000001.aaep")
	err := writeAll(t, out, outfile.Options{}, "x")
	want := "create " + out + ": directory " + filepath.Join(dir, "parts") + ": no such file or directory"
	if err == nil || err.Error() != want || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("error %v, want %q", err, want)
	}
}
