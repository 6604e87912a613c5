package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
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
	t.Run("an input is not written over", func(t *testing.T) {
		dir := t.TempDir()
		input := filepath.Join(dir, "capture.aaep")
		want := []byte("the user's capture")
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
