package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/binarytest"
	"github.com/aaep-tools/aaepkit/source/sourcetest"
)

// captureBin is the real aaep-capture, built once per test run.
var captureBin = binarytest.New(".", "aaep-capture")

// binary builds the real aaep-capture once per test run.
func binary(t *testing.T) string { return captureBin.Path(t) }

// startBinary starts aaep-capture with args; stderr is collected.
func startBinary(t *testing.T, args ...string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return cmd, stderr
}

// readable counts the received records that can be read from a capture
// that may still be being written (its torn tail is not an error here).
func readable(path string) int {
	r, err := capfile.Open(path)
	if err != nil {
		return 0
	}
	defer r.Close()
	n := 0
	for {
		rec, err := r.Next()
		if err != nil {
			return n
		}
		if rec.Kind == capfile.KindReceived {
			n++
		}
	}
}

// waitReadable polls until n received records can be read from path.
func waitReadable(t *testing.T, path string, n int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for readable(path) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d records never became readable in %s (have %d)", n, path, readable(path))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestBinarySIGINT(t *testing.T) {
	events := sourcetest.Events(200)
	p := &sourcetest.WSProducer{Frames: sourcetest.Frames(events), Hold: true}
	url := p.Start(t)
	out := filepath.Join(t.TempDir(), "int.aaep")
	cmd, stderr := startBinary(t, "--endpoint", url, "--output", out, "--header", "Authorization: Bearer sigint-secret-77")
	waitReadable(t, out, len(events)+1) // the accepted message and the events
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGINT: %v; stderr %s", err, stderr.String())
	}
	if zout, err := exec.Command("zstd", "-t", out).CombinedOutput(); err != nil {
		t.Fatalf("zstd -t: %v\n%s", err, zout)
	}
	r, err := capfile.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, recs := readCapture(t, out)
	if !r.Clean() {
		t.Error("capture not closed cleanly (no index)")
	}
	checkEvents(t, recs, append([][]byte{kinds(recs, capfile.KindReceived)[0].Payload}, events...))
	if last := recs[len(recs)-1]; !bytes.Contains(last.Payload, []byte(`"capture stopped"`)) {
		t.Errorf("last record %s", last.Payload)
	}
	if !strings.Contains(stderr.String(), "stopped: interrupted") {
		t.Errorf("summary %q", stderr.String())
	}
	if rcv := p.Received(); len(rcv) < 2 || !bytes.Contains(rcv[len(rcv)-1], []byte("subscription.close")) {
		t.Errorf("producer did not get a subscription.close: %q", rcv)
	}
	assertAbsent(t, out, "sigint-secret-77")
}

func TestBinarySIGTERMStopsExecChild(t *testing.T) {
	child := sourcetest.StdioChild{Events: 10, Wait: true}
	out := filepath.Join(t.TempDir(), "term.aaep")
	cmd, stderr := startBinary(t, append([]string{"-o", out, "--exec", "--"}, child.Args()...)...)
	waitReadable(t, out, 11)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v; stderr %s", err, stderr.String())
	}
	_, recs := readCapture(t, out)
	if n := len(kinds(recs, capfile.KindReceived)); n != 11 {
		t.Errorf("%d received", n)
	}
	if ev := connEvents(recs); ev[len(ev)-1] != "closed" {
		t.Errorf("events %v", ev)
	}
}

func TestBinarySIGKILL(t *testing.T) {
	first := sourcetest.Events(300)
	p := &sourcetest.WSProducer{Frames: sourcetest.Frames(first), Hold: true}
	url := p.Start(t)
	out := filepath.Join(t.TempDir(), "kill.aaep")
	cmd, _ := startBinary(t, url, "-o", out, "--flush-interval", "50ms")
	// Records become readable from the file while it is being written,
	// within a flush interval of their arrival; a kill then loses nothing
	// of them.
	waitReadable(t, out, len(first)+1)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if n := readable(out); n != len(first)+1 {
		t.Fatalf("%d records readable after SIGKILL, want %d", n, len(first)+1)
	}
	r, err := capfile.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for {
		if _, err = r.Next(); err != nil {
			break
		}
	}
	if !capfile.IsTorn(err) {
		t.Errorf("end of a killed capture: %v, want a torn tail", err)
	}
}
