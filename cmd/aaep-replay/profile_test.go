package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestStartProfile: AAEP_CPUPROFILE names a file that receives a CPU
// profile (gzip-compressed protobuf), and an unwritable path is an error
// that names the variable.
func TestStartProfile(t *testing.T) {
	t.Run("unset", func(t *testing.T) {
		t.Setenv("AAEP_CPUPROFILE", "")
		stop, err := startProfile()
		if err != nil {
			t.Fatal(err)
		}
		stop()
	})
	t.Run("written", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "cpu.out")
		t.Setenv("AAEP_CPUPROFILE", path)
		stop, err := startProfile()
		if err != nil {
			t.Fatal(err)
		}
		sum := 0
		for i := range 1_000_000 {
			sum += i % 7
		}
		_ = sum
		stop()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
			t.Fatalf("profile starts % x, want a gzip stream", b[:min(len(b), 4)])
		}
	})
	t.Run("unwritable", func(t *testing.T) {
		t.Setenv("AAEP_CPUPROFILE", filepath.Join(t.TempDir(), "missing", "cpu.out"))
		if _, err := startProfile(); err == nil || !bytes.Contains([]byte(err.Error()), []byte("AAEP_CPUPROFILE")) {
			t.Fatalf("err = %v, want an error naming AAEP_CPUPROFILE", err)
		}
	})
}
