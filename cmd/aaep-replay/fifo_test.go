//go:build unix

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/internal/cli"
)

// TestFIFOReadOnce: a FIFO is opened once and read as a stream (issue 34:
// show opened it a second time and waited there for a writer that had
// gone, deaf to Ctrl-C; info took the bytes its first look consumed for
// "not a capture"). show of a FIFO prints what show of the file prints;
// with no writer, cancelling (Ctrl-C) ends the wait.
func TestFIFOReadOnce(t *testing.T) {
	demo, err := os.ReadFile(demoCapture)
	if err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(t.TempDir(), "f")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	_, want, _ := replay(t, "show", demoCapture)
	wrote := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err == nil {
			_, err = f.Write(demo)
			f.Close()
		}
		wrote <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	code := run(ctx, cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, []string{"show", fifo})
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	if code != 0 || out.String() != want {
		t.Errorf("show FIFO: exit %d, %d bytes (want %d, as show of the file)\n%s", code, out.Len(), len(want), errb.String())
	}

	// No writer: Ctrl-C (the context's end) ends the wait.
	ctx, cancel = context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, []string{"show", fifo})
	}()
	time.Sleep(200 * time.Millisecond)
	cancel()
	select {
	case code := <-done:
		if code == 0 {
			t.Errorf("show of a FIFO no one writes, cancelled: exit 0")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("show of a FIFO no one writes did not end when cancelled")
	}
	// Release the goroutine still opening the FIFO.
	if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		f.Close()
	}
}

// TestMergeRefusesFIFO: merge reads each input twice, so a FIFO is refused
// as standard input is, naming it (its second read found nothing, and merge
// said the FIFO was "a JSON Lines file, not a capture").
func TestMergeRefusesFIFO(t *testing.T) {
	demo, err := os.ReadFile(demoCapture)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	fifo := filepath.Join(dir, "f")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.Write(demo) // the refusal may close the FIFO before all of it is read
			f.Close()
		}
	}()
	out := filepath.Join(dir, "m.aaep")
	code, _, errs := replay(t, "merge", fifo, demoCapture, "-o", out)
	<-wrote
	if code != 2 || !strings.Contains(errs, "merge cannot read "+fifo+", a FIFO or a device") {
		t.Errorf("merge of a FIFO: exit %d, want 2 naming the FIFO:\n%s", code, errs)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("merge of a FIFO wrote its output")
	}
}

// TestCutRefusesFIFO: cut seeks, so a FIFO is refused as - is, naming it
// and filter, before anything is opened (it opened the FIFO twice and
// waited in the second open for a writer that had gone).
func TestCutRefusesFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "f")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	code := run(ctx, cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, []string{"cut", fifo, "--from", "#1", "-o", filepath.Join(dir, "c.aaep")})
	if code != 2 || !strings.Contains(errb.String(), fifo+" is a FIFO or a device") || !strings.Contains(errb.String(), "filter") {
		t.Errorf("cut of a FIFO: exit %d, want 2 naming it and filter:\n%s", code, errb.String())
	}
}
