package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

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
	t.Run("unwritable", func(t *testing.T) {
		t.Setenv("AAEP_CPUPROFILE", filepath.Join(t.TempDir(), "missing", "cpu.out"))
		if _, err := startProfile(nil); err == nil || !bytes.Contains([]byte(err.Error()), []byte("AAEP_CPUPROFILE")) {
			t.Fatalf("err = %v, want an error naming AAEP_CPUPROFILE", err)
		}
	})
}
