package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/aaep-tools/aaepkit/internal/cli"
)

// TestShowPaceKeys runs show --pace --paused with standard input and output
// on a pseudo-terminal: nothing is printed until "." steps one line, lines
// end with \r\n in raw mode, and q quits with status 0.
func TestShowPaceKeys(t *testing.T) {
	master, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("open pty: %v", err)
	}
	defer master.Close()
	var (
		mu   sync.Mutex
		term bytes.Buffer
	)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			mu.Lock()
			term.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	lines := func() int {
		mu.Lock()
		defer mu.Unlock()
		return strings.Count(term.String(), "\r\n")
	}
	waitLines := func(n int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for lines() < n {
			if time.Now().After(deadline) {
				mu.Lock()
				defer mu.Unlock()
				t.Fatalf("%d lines, want %d; terminal:\n%q", lines(), n, term.String())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), cli.Streams{In: tty, Out: tty, Err: io.Discard}, []string{"show", "../../testdata/demo.aaep", "--pace", "--paused", "--no-check"})
	}()
	time.Sleep(300 * time.Millisecond)
	if n := lines(); n != 0 {
		t.Fatalf("a paused listing printed %d lines", n)
	}
	master.Write([]byte("."))
	waitLines(1)
	master.Write([]byte("."))
	waitLines(2)
	time.Sleep(200 * time.Millisecond)
	if n := lines(); n != 2 {
		t.Fatalf("two steps printed %d lines", n)
	}
	mu.Lock()
	first := strings.SplitN(term.String(), "\r\n", 2)[0]
	mu.Unlock()
	if !strings.HasPrefix(first, "09:00:00.231723 #0 s0 recv sess_d0fd4a2cb8d12071 aaep:agent.session.started") {
		t.Errorf("first line %q", first)
	}
	master.Write([]byte("q"))
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("q: exit %d, want 0", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("q did not stop show --pace")
	}
	tty.Close()
}
