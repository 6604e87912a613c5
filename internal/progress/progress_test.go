package progress

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// terminal opens a pseudo-terminal and collects what is written to it.
type terminal struct {
	tty *os.File
	mu  sync.Mutex
	buf bytes.Buffer
	got chan struct{}
}

func openTerminal(t *testing.T) *terminal {
	t.Helper()
	master, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("open pty: %v", err)
	}
	term := &terminal{tty: tty, got: make(chan struct{}, 1)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		b := make([]byte, 4096)
		for {
			n, err := master.Read(b)
			if n > 0 {
				term.mu.Lock()
				term.buf.Write(b[:n])
				term.mu.Unlock()
				select {
				case term.got <- struct{}{}:
				default:
				}
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		tty.Close()
		master.Close()
		<-done
	})
	return term
}

func (term *terminal) text() string {
	term.mu.Lock()
	defer term.mu.Unlock()
	return term.buf.String()
}

// waitFor waits (at most 10 s) until the terminal has shown want.
func (term *terminal) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for !strings.Contains(term.text(), want) {
		select {
		case <-term.got:
		case <-deadline:
			t.Fatalf("terminal never showed %q; got %q", want, term.text())
		}
	}
}

// waitUntil waits (at most 10 s) until what the terminal shows satisfies ok.
func (term *terminal) waitUntil(t *testing.T, what string, ok func(string) bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for !ok(term.text()) {
		select {
		case <-term.got:
		case <-deadline:
			t.Fatalf("terminal never showed %s; got %q", what, term.text())
		}
	}
}

func fastDisplay(t *testing.T) {
	oldDelay, oldInterval := Delay, Interval
	Delay, Interval = 0, 5*time.Millisecond
	t.Cleanup(func() { Delay, Interval = oldDelay, oldInterval })
}

func TestOnOnlyForTerminals(t *testing.T) {
	term := openTerminal(t)
	if !On(term.tty) {
		t.Error("On(pseudo-terminal) = false")
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	file, err := os.Create(t.TempDir() + "/log")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	for name, out := range map[string]any{"/dev/null": null, "pipe": w, "file": file, "buffer": &bytes.Buffer{}} {
		if On(out.(interface{ Write([]byte) (int, error) })) {
			t.Errorf("On(%s) = true", name)
		}
		if m := New(out.(interface{ Write([]byte) (int, error) }), "check", true); m != nil {
			m.Stop()
			t.Errorf("New(%s) drew a meter", name)
		}
	}
}

func TestMeterDrawsOnTerminal(t *testing.T) {
	fastDisplay(t)
	term := openTerminal(t)
	if m := New(term.tty, "check", false); m != nil {
		t.Fatal("New with show=false (-q) returned a meter")
	}
	m := New(term.tty, "check", true)
	if m == nil {
		t.Fatal("New on a terminal returned nil")
	}
	m.AddTotal(1000)
	m.File("run-0001.aaep")
	for i := 0; i < 250; i++ {
		m.Record(90 * time.Second)
	}
	term.waitFor(t, "25%")
	m.Stop()
	m.Stop()
	term.waitUntil(t, "the erase of Stop", func(s string) bool { return strings.HasSuffix(s, "\r\x1b[K") })
	got := term.text()
	for _, want := range []string{"check: run-0001.aaep 250 records (at 1:30)", "rec/s", "ETA "} {
		if !strings.Contains(got, want) {
			t.Errorf("status line lacks %q: %q", want, got)
		}
	}
	if !strings.HasSuffix(got, "\r\x1b[K") {
		t.Errorf("Stop did not erase the status line: %q", got)
	}
}

func TestMeterPercentFromBytes(t *testing.T) {
	fastDisplay(t)
	term := openTerminal(t)
	m := New(term.tty, "import", true)
	m.AddTotalBytes(400)
	m.Bytes(100)
	m.Record(0)
	term.waitFor(t, "25%")
	m.Printf(term.tty, "a warning\n")
	m.Stop()
	term.waitFor(t, "a warning")
	if !strings.Contains(term.text(), "\r\x1b[Ka warning") {
		t.Errorf("Printf did not erase the line before its message: %q", term.text())
	}
}

func TestNilMeter(t *testing.T) {
	var m *Meter
	m.AddTotal(1)
	m.AddTotalBytes(1)
	m.Record(time.Second)
	m.Bytes(1)
	m.File("x")
	m.Stop()
	var b bytes.Buffer
	m.Printf(&b, "x=%d\n", 1)
	if b.String() != "x=1\n" {
		t.Errorf("nil Printf wrote %q", b.String())
	}
}

func TestFormats(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{{0, "0"}, {999, "999"}, {1000, "1,000"}, {1234567, "1,234,567"}, {-4200, "-4,200"}} {
		if got := Count(c.n); got != c.want {
			t.Errorf("Count(%d) = %q, want %q", c.n, got, c.want)
		}
	}
	for _, c := range []struct {
		d    time.Duration
		want string
	}{{0, "0:00"}, {90 * time.Second, "1:30"}, {3725 * time.Second, "1:02:05"}, {1499 * time.Millisecond, "0:01"}} {
		if got := Clock(c.d); got != c.want {
			t.Errorf("Clock(%v) = %q, want %q", c.d, got, c.want)
		}
	}
	for _, c := range []struct {
		n    int64
		want string
	}{{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {3 << 19, "1.5 MiB"}, {5 << 30, "5.0 GiB"}} {
		if got := Size(c.n); got != c.want {
			t.Errorf("Size(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}
