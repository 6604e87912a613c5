package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/binarytest"
	"github.com/aaep-tools/aaepkit/transport/transporttest"
)

// signalBound is how long a command may take to end after SIGINT or
// SIGTERM: a bound that only a command that does not end at all exceeds
// (a hang detector, not a timing assertion).
const signalBound = 20 * time.Second

// signalCase is a command that runs or waits until a signal ends it.
type signalCase struct {
	name string
	bin  *binarytest.Binary
	// args run in a directory holding demo.aaep, part.aaep and
	// demo.jsonl; SILENT is the address of a listener that accepts and
	// never answers, CLOSED one where nothing listens; WSPRODUCER and
	// SSEPRODUCER the URL of a producer that sends 20 events and holds
	// the connection open.
	args []string
	// fifo, when set, makes "in" in that directory a FIFO whose writer
	// writes these bytes and then stays silent, open.
	fifo []byte
	// stdin, when set, is written into the pipe that is the command's
	// standard input, whose writing end then stays open.
	stdin []byte
	// setup, when set, prepares the directory before the command starts.
	setup func(t *testing.T, dir string)
	// ready waits until the command is running and holds what the case
	// asserts on (nil: once a FIFO's or pipe's bytes were taken).
	ready func(t *testing.T, r *signalRun)
	// code is the exit status the signal must end the command with.
	code func(sig syscall.Signal) int
	// check asserts what the command left behind.
	check func(t *testing.T, r *signalRun)
	// serial keeps the case from running beside the others: CLOSED is a
	// port picked before anything binds it, which another case's
	// listener could take meanwhile.
	serial bool
}

// signalRun is one run of a signalCase.
type signalRun struct {
	dir            string
	cmd            *exec.Cmd
	stdout, stderr *syncBuffer
	pipe           *os.File // the writing end of a FIFO or of standard input
	// sleep is what SLEEP stands for in the case's arguments and process
	// markers: a number of this run's own, so that the runs side by side
	// (SIGINT's and SIGTERM's) each find and miss only their own process.
	sleep string
}

// interrupted is the status of a command a signal stopped before its work
// was done: 128 + the signal's number, as a shell reports it.
func interrupted(sig syscall.Signal) int { return 128 + int(sig) }

// stoppedAsAsked is the status of a command whose work a signal ends.
func stoppedAsAsked(syscall.Signal) int { return 0 }

// TestEveryCommandEndsOnSignal: every command of aaep-replay and
// aaep-capture that runs or waits (serving, viewing, following, testing a
// subscriber, pushing, recording a live source, reading a FIFO or a pipe
// whose writer is silent) ends on SIGINT and on SIGTERM, with the exit
// status the README's table gives, and without losing what it had read or
// written (issue 34: show of a FIFO ignored both signals, show of a stream
// ended by one exited 0 and printed nothing of what it had read, and
// aaep-capture of a FIFO recorded nothing of the lines its writer wrote).
func TestEveryCommandEndsOnSignal(t *testing.T) {
	demo, err := os.ReadFile(demoCapture)
	if err != nil {
		t.Fatal(err)
	}
	part := captureWithoutIndex(t, demo)
	jsonl := exportLines(t)
	lines := func(n int) func(*testing.T, *signalRun) {
		return func(t *testing.T, r *signalRun) {
			t.Helper()
			if got := strings.Count(r.stdout.String(), "\n"); got != n {
				t.Errorf("%d lines on standard output, want %d (what was read before the signal)", got, n)
			}
		}
	}
	showLines := strings.Count(showOf(t, demoCapture), "\n")
	nothingWritten := func(t *testing.T, r *signalRun) {
		t.Helper()
		if _, err := os.Stat(filepath.Join(r.dir, "out.aaep")); err == nil {
			t.Error("out.aaep written by a command the signal interrupted")
		}
		binarytest.NoLeftovers(t, r.dir)
	}
	recorded := func(n int) func(*testing.T, *signalRun) {
		return func(t *testing.T, r *signalRun) {
			t.Helper()
			got, clean := receivedRecords(t, filepath.Join(r.dir, "out.aaep"))
			if got != n || !clean {
				t.Errorf("out.aaep: %d received records, closed cleanly %v; want %d, closed cleanly", got, clean, n)
			}
		}
	}
	three := []byte(strings.Join(strings.SplitAfter(string(jsonl), "\n")[:3], ""))
	cases := []signalCase{
		{name: "serve --record", bin: replayBin, args: []string{"serve", "--no-delay", "--listen", "127.0.0.1:0", "--record", "out.aaep", "demo.aaep"},
			ready: subscribeSSE(102), code: stoppedAsAsked, check: recorded(102)},
		{name: "view", bin: replayBin, args: []string{"view", "--listen", "127.0.0.1:0", "demo.aaep"},
			ready: stderrSays("Ctrl-C to stop"), code: stoppedAsAsked},
		{name: "show --follow", bin: replayBin, args: []string{"show", "--follow", "live.aaep"}, setup: func(t *testing.T, dir string) { beingWritten(t, dir) },
			ready: stdoutLines(showLines), code: stoppedAsAsked, check: lines(showLines)},
		{name: "test waiting for a subscriber", bin: replayBin, args: []string{"test", "--level", "1", "--listen", "127.0.0.1:0"},
			ready: stderrSays("waiting for a subscriber"), code: interrupted},
		{name: "test --exec a subscriber that never attaches", bin: replayBin, args: []string{"test", "--level", "1", "--exec", "sh -c 'exec sleep SLEEP' {url}"},
			ready: processRuns("sleep SLEEP"), code: interrupted, check: noProcess("sleep SLEEP")},
		{name: "push to a subscriber that never answers", bin: replayBin, args: []string{"push", "demo.aaep", "--to", "ws://SILENT/aaep/v1/ws"},
			code: interrupted},
		{name: "show of a FIFO", bin: replayBin, args: []string{"show", "in"}, fifo: part, code: interrupted, check: lines(showLines)},
		{name: "show -", bin: replayBin, args: []string{"show", "-"}, stdin: part, code: interrupted, check: lines(showLines)},
		{name: "export of a FIFO", bin: replayBin, args: []string{"export", "in"}, fifo: part, code: interrupted, check: lines(102)},
		{name: "check of a FIFO", bin: replayBin, args: []string{"check", "in"}, fifo: part, code: interrupted},
		{name: "check -", bin: replayBin, args: []string{"check", "-"}, stdin: jsonl, code: interrupted},
		{name: "info of a FIFO", bin: replayBin, args: []string{"info", "in"}, fifo: part, code: interrupted},
		// What was read is written out, as before damage.
		{name: "filter of a FIFO", bin: replayBin, args: []string{"filter", "in", "--messages-only", "-o", "out.aaep"}, fifo: part, code: interrupted, check: recorded(102)},
		// import and repair read their input whole before they write.
		{name: "import of a FIFO", bin: replayBin, args: []string{"import", "in", "-o", "out.aaep"}, fifo: jsonl, code: interrupted, check: nothingWritten},
		{name: "import -", bin: replayBin, args: []string{"import", "-", "-o", "out.aaep"}, stdin: jsonl, code: interrupted, check: nothingWritten},
		{name: "repair of a FIFO", bin: replayBin, args: []string{"repair", "in", "-o", "out.aaep"}, fifo: part, code: interrupted, check: nothingWritten},
		{name: "visualize of a FIFO", bin: replayBin, args: []string{"visualize", "in", "-o", "out.svg"}, fifo: part, code: interrupted},
		{name: "diff of a FIFO", bin: replayBin, args: []string{"diff", "in", "demo.aaep"}, fifo: part, code: interrupted},
		{name: "aaep-capture of a FIFO", bin: captureBin, args: []string{"in", "-o", "out.aaep"}, fifo: three,
			ready: readableRecords(3), code: stoppedAsAsked, check: recorded(3)},
		{name: "aaep-capture -", bin: captureBin, args: []string{"-", "-o", "out.aaep"}, stdin: three,
			ready: readableRecords(3), code: stoppedAsAsked, check: recorded(3)},
		{name: "aaep-capture of a live WebSocket producer", bin: captureBin, args: []string{"WSPRODUCER", "-o", "out.aaep"},
			ready: readableRecords(21), code: stoppedAsAsked, check: recorded(21)}, // the accepted and 20 events
		{name: "aaep-capture of a live SSE producer", bin: captureBin, args: []string{"SSEPRODUCER", "-o", "out.aaep"},
			ready: readableRecords(20), code: stoppedAsAsked, check: recorded(20)},
		{name: "aaep-capture waiting for a producer", bin: captureBin, args: []string{"ws://CLOSED/aaep/v1/ws", "--wait", "-o", "out.aaep"},
			ready: stderrSays("retrying"), code: func(syscall.Signal) int { return 1 }, serial: true}, // stopped before recording anything
	}
	// The cases run side by side (at most -parallel at once): each waits
	// for its command in a directory, with listeners and producers, of its
	// own, and signals its own command only.
	for _, c := range cases {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
			t.Run(c.name+"/"+unix.SignalName(sig), func(t *testing.T) {
				if !c.serial {
					t.Parallel()
				}
				r := startSignalCase(t, c, sig, demo, part, jsonl)
				if err := r.cmd.Process.Signal(sig); err != nil {
					t.Fatal(err)
				}
				done := make(chan error, 1)
				go func() { done <- r.cmd.Wait() }()
				select {
				case <-done:
				case <-time.After(signalBound):
					r.cmd.Process.Kill()
					<-done
					t.Fatalf("still running %v after %s; stderr:\n%s", sig, signalBound, r.stderr.String())
				}
				if got, want := r.cmd.ProcessState.ExitCode(), c.code(sig); got != want {
					t.Errorf("exit status %d after %s, want %d; stderr:\n%s", got, unix.SignalName(sig), want, r.stderr.String())
				}
				// The signal is named as what ended the command: never
				// the context's bare "context canceled", never damage of
				// the capture being read (with repair advised).
				for _, bad := range []string{"context canceled", "corrupt capture", "aaep-replay repair"} {
					if strings.Contains(r.stderr.String(), bad) {
						t.Errorf("stderr after %s says %q:\n%s", unix.SignalName(sig), bad, r.stderr.String())
					}
				}
				if c.check != nil {
					c.check(t, r)
				}
			})
		}
	}
}

// startSignalCase starts c's command and returns once it is ready.
func startSignalCase(t *testing.T, c signalCase, sig syscall.Signal, demo, part, jsonl []byte) *signalRun {
	t.Helper()
	dir := t.TempDir()
	for name, b := range map[string][]byte{"demo.aaep": demo, "part.aaep": part, "demo.jsonl": jsonl} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if c.setup != nil {
		c.setup(t, dir)
	}
	sleep := strconv.Itoa(7031 + int(sig))
	args := append([]string(nil), c.args...)
	var accepted <-chan struct{}
	for i, a := range args {
		switch {
		case strings.Contains(a, "SILENT"):
			var addr string
			addr, accepted = silentListener(t)
			args[i] = strings.Replace(a, "SILENT", addr, 1)
		case a == "WSPRODUCER":
			args[i] = (&transporttest.WSProducer{Frames: transporttest.Frames(transporttest.Events(20)), Hold: true}).Start(t)
		case a == "SSEPRODUCER":
			args[i] = (&transporttest.SSEProducer{Frames: transporttest.Frames(transporttest.Events(20)), Hold: true}).Start(t)
		case strings.Contains(a, "CLOSED"):
			args[i] = strings.Replace(a, "CLOSED", fmt.Sprintf("127.0.0.1:%d", freePorts(t, 1)[0]), 1)
		case strings.Contains(a, "SLEEP"):
			args[i] = strings.ReplaceAll(a, "SLEEP", sleep)
		}
	}
	r := &signalRun{dir: dir, stdout: &syncBuffer{}, stderr: &syncBuffer{}, sleep: sleep}
	r.cmd = exec.Command(c.bin.Path(t), args...)
	r.cmd.Dir, r.cmd.Stdout, r.cmd.Stderr = dir, r.stdout, r.stderr
	if c.stdin != nil {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		r.cmd.Stdin, r.pipe = pr, pw
		t.Cleanup(func() { pr.Close(); pw.Close() })
		if _, err := pw.Write(c.stdin); err != nil { // within the pipe's buffer
			t.Fatal(err)
		}
	}
	fifo := filepath.Join(dir, "in")
	if c.fifo != nil {
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if r.cmd.ProcessState == nil {
			// A case that failed before its signal: SIGTERM first, so
			// that the command ends what it started.
			r.cmd.Process.Signal(syscall.SIGTERM)
			t := time.AfterFunc(5*time.Second, func() { r.cmd.Process.Kill() })
			r.cmd.Wait()
			t.Stop()
		}
	})
	if c.fifo != nil {
		// The open returns once the command opened the FIFO: it is
		// running, its signals handled.
		opened := make(chan error, 1)
		go func() {
			f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err == nil {
				r.pipe = f
				t.Cleanup(func() { f.Close() })
				_, err = f.Write(c.fifo)
			}
			opened <- err
		}()
		select {
		case err := <-opened:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(signalBound):
			t.Fatalf("the command never opened its FIFO; stderr:\n%s", r.stderr.String())
		}
	}
	if r.pipe != nil {
		waitTaken(t, r)
		waitIdle(t, r)
	}
	if c.ready != nil {
		c.ready(t, r)
	}
	if accepted != nil {
		select {
		case <-accepted: // connected: it waits for an answer
		case <-time.After(signalBound):
			t.Fatalf("the command never connected; stderr:\n%s", r.stderr.String())
		}
	}
	if ended(r.cmd.Process.Pid) {
		t.Fatalf("the command ended before the signal; stderr:\n%s", r.stderr.String())
	}
	return r
}

// waitTaken waits until the command has read every byte written into its
// FIFO or pipe: it is running, and what the case asserts was read.
func waitTaken(t *testing.T, r *signalRun) {
	t.Helper()
	waitFor(t, r, "the bytes written to be read", func() bool {
		n, err := unix.IoctlGetInt(int(r.pipe.Fd()), unix.TIOCINQ) // FIONREAD
		return err == nil && n == 0
	})
}

// waitIdle waits until every thread of the command sleeps (state S in
// /proc) five polls in a row: what it has taken is handled, and it waits
// for more.
func waitIdle(t *testing.T, r *signalRun) {
	t.Helper()
	idle := 0
	waitFor(t, r, "the command to wait, idle", func() bool {
		if allSleeping(r.cmd.Process.Pid) {
			idle++
		} else {
			idle = 0
		}
		return idle >= 5
	})
}

// ended reports whether the process has exited (a zombie until waited for).
func ended(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(b), ')')
	return i < 0 || i+2 >= len(b) || b[i+2] == 'Z'
}

func allSleeping(pid int) bool {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	if err != nil || len(tasks) == 0 {
		return false
	}
	for _, task := range tasks {
		b, err := os.ReadFile(task)
		if err != nil {
			return false
		}
		// pid (comm) state ...: comm may hold spaces and parentheses.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 || i+2 >= len(b) || b[i+2] != 'S' {
			return false
		}
	}
	return true
}

// waitFor polls cond until it holds, failing t after signalBound.
func waitFor(t *testing.T, r *signalRun, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(signalBound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: not after %s; stderr:\n%s", what, signalBound, r.stderr.String())
		}
		if ended(r.cmd.Process.Pid) {
			t.Fatalf("waiting for %s: the command ended; stderr:\n%s", what, r.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func stderrSays(s string) func(*testing.T, *signalRun) {
	return func(t *testing.T, r *signalRun) {
		t.Helper()
		waitFor(t, r, fmt.Sprintf("%q on standard error", s), func() bool { return strings.Contains(r.stderr.String(), s) })
	}
}

// processesRunning lists the processes whose command line starts with
// marker (the subscriber's own, not the command's that names it).
func processesRunning(marker string) []string {
	lines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var found []string
	for _, l := range lines {
		b, err := os.ReadFile(l)
		if err == nil && strings.HasPrefix(strings.ReplaceAll(string(b), "\x00", " "), marker) {
			found = append(found, l)
		}
	}
	return found
}

// processRuns waits until a process runs a command line starting with marker
// (a subscriber the command starts; SLEEP in it is the run's number).
func processRuns(marker string) func(*testing.T, *signalRun) {
	return func(t *testing.T, r *signalRun) {
		t.Helper()
		marker := strings.ReplaceAll(marker, "SLEEP", r.sleep)
		waitFor(t, r, "a process running "+marker, func() bool { return len(processesRunning(marker)) > 0 })
	}
}

// noProcess asserts that no process runs a command line starting with marker (a
// subscriber the command started and had to end; SLEEP in it is the run's
// number).
func noProcess(marker string) func(*testing.T, *signalRun) {
	return func(t *testing.T, r *signalRun) {
		t.Helper()
		marker := strings.ReplaceAll(marker, "SLEEP", r.sleep)
		deadline := time.Now().Add(signalBound)
		for {
			left := processesRunning(marker)
			if len(left) == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("still running after the command ended: %v", left)
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

func stdoutLines(n int) func(*testing.T, *signalRun) {
	return func(t *testing.T, r *signalRun) {
		t.Helper()
		waitFor(t, r, fmt.Sprintf("%d lines on standard output", n), func() bool { return strings.Count(r.stdout.String(), "\n") >= n })
	}
}

func readableRecords(n int) func(*testing.T, *signalRun) {
	return func(t *testing.T, r *signalRun) {
		t.Helper()
		path := filepath.Join(r.dir, "out.aaep")
		waitFor(t, r, fmt.Sprintf("%d records readable in out.aaep", n), func() bool {
			got, _ := receivedRecords(t, path)
			return got >= n
		})
	}
}

var eventsURL = regexp.MustCompile(`http://127\.0\.0\.1:[0-9]+/aaep/v1/events`)

// subscribeSSE subscribes over SSE to the replay served and returns once
// n events arrived; the connection stays open.
func subscribeSSE(n int) func(*testing.T, *signalRun) {
	return func(t *testing.T, r *signalRun) {
		t.Helper()
		var url string
		waitFor(t, r, "the address served", func() bool {
			url = eventsURL.FindString(r.stderr.String())
			return url != ""
		})
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		got := make(chan int, 1)
		go func() {
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(nil, 1<<20)
			events := 0
			for sc.Scan() && events < n {
				if strings.HasPrefix(sc.Text(), "data:") {
					events++
				}
			}
			got <- events
		}()
		select {
		case events := <-got:
			if events != n {
				t.Fatalf("the subscriber got %d events, want %d", events, n)
			}
		case <-time.After(signalBound):
			t.Fatalf("the subscriber did not get %d events in %s", n, signalBound)
		}
	}
}

// silentListener accepts connections on 127.0.0.1 and never answers;
// accepted is closed at the first.
func silentListener(t *testing.T) (addr string, accepted <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	first := make(chan struct{})
	var conns []net.Conn
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if conns = append(conns, c); len(conns) == 1 {
				close(first)
			}
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-ended
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String(), first
}

// captureWithoutIndex returns the capture's header and records, without
// the index and trailer a clean close writes: a capture still being
// written, whose reader waits for more.
func captureWithoutIndex(t *testing.T, capture []byte) []byte {
	t.Helper()
	r, err := capfile.Open(demoCapture)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	l, ok := r.Layout()
	if !ok || l.DataEnd() <= 0 {
		t.Fatalf("%s: no stored index", demoCapture)
	}
	return capture[:l.DataEnd()]
}

// exportLines returns the demo capture's messages as JSON Lines.
func exportLines(t *testing.T) []byte {
	t.Helper()
	code, out, errs := replay(t, "export", demoCapture)
	if code != 0 {
		t.Fatalf("export: exit %d: %s", code, errs)
	}
	return []byte(out)
}

// showOf is show's listing of a capture.
func showOf(t *testing.T, path string) string {
	t.Helper()
	code, out, errs := replay(t, "show", path)
	if code != 0 {
		t.Fatalf("show: exit %d: %s", code, errs)
	}
	return out
}

// receivedRecords counts the received records readable in a capture and
// says whether it was closed cleanly.
func receivedRecords(t *testing.T, path string) (n int, clean bool) {
	t.Helper()
	r, err := capfile.Open(path)
	if err != nil {
		return 0, false
	}
	defer r.Close()
	for {
		rec, err := r.Next()
		if err != nil {
			break
		}
		if rec.Kind == capfile.KindReceived {
			n++
		}
	}
	return n, r.Clean()
}
