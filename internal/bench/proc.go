package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ProcResult is what a finished child process cost.
type ProcResult struct {
	Wall      time.Duration
	User, Sys time.Duration
	// MaxRSS is the peak resident set size in bytes.
	MaxRSS int64
	// ExitCode is the exit status (-1 when killed by a signal).
	ExitCode int
	Stdout   []byte
	Stderr   []byte
}

// CPU is user plus system time.
func (p ProcResult) CPU() time.Duration { return p.User + p.Sys }

// RunProc runs name with args to completion, bounded by ctx, and measures
// its wall time (from start to exit), CPU time and peak memory. stdout, when
// not nil, receives standard output instead of the result's Stdout. Any
// exit status is returned, not treated as an error; the caller decides.
func RunProc(ctx context.Context, stdout io.Writer, name string, args ...string) (ProcResult, error) {
	return runProc(ctx, stdout, nil, name, args...)
}

// RunProcWatch is RunProc with watch called with the child's process id
// every 100 ms while it runs.
func RunProcWatch(ctx context.Context, watch func(pid int), name string, args ...string) (ProcResult, error) {
	return runProc(ctx, nil, watch, name, args...)
}

func runProc(ctx context.Context, stdout io.Writer, watch func(pid int), name string, args ...string) (ProcResult, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var out, errb bytes.Buffer
	cmd.Stdout = &out
	if stdout != nil {
		cmd.Stdout = stdout
	}
	cmd.Stderr = &errb
	cmd.WaitDelay = 2 * time.Second
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return ProcResult{ExitCode: -1}, fmt.Errorf("%s: %w", name, err)
	}
	// The child's rusage ru_maxrss is no good here: Linux carries the
	// parent's peak into a child across exec, and this parent holds the
	// generated inputs. The child's own high-water mark (VmHWM) is read
	// from /proc while it runs; it only grows, so the last reading is the
	// peak to within one poll interval.
	hwm := make(chan int64, 1)
	stopPoll := make(chan struct{})
	go func() { hwm <- pollHWM(cmd.Process.Pid, stopPoll) }()
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		if watch == nil {
			return
		}
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stopPoll:
				return
			case <-t.C:
				watch(cmd.Process.Pid)
			}
		}
	}()
	err := cmd.Wait()
	wall := time.Since(start)
	close(stopPoll)
	peak := <-hwm
	<-watched
	res := ProcResult{Wall: wall, Stdout: out.Bytes(), Stderr: errb.Bytes(), ExitCode: -1}
	if st := cmd.ProcessState; st != nil {
		res.ExitCode = st.ExitCode()
		res.User, res.Sys = st.UserTime(), st.SystemTime()
	}
	res.MaxRSS = peak
	if ctx.Err() != nil {
		return res, fmt.Errorf("%s: %w (stderr: %s)", name, ctx.Err(), tail(res.Stderr))
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return res, fmt.Errorf("%s: %w", name, err)
	}
	return res, nil
}

// pollHWM reads the peak resident memory (VmHWM, in bytes) of process pid
// every 5 ms until stop is closed, and returns the last value read.
func pollHWM(pid int, stop <-chan struct{}) int64 {
	path := "/proc/" + strconv.Itoa(pid) + "/status"
	var peak int64
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if b, err := os.ReadFile(path); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
					kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
					if err == nil && kb*1024 > peak {
						peak = kb * 1024
					}
				}
			}
		}
		select {
		case <-stop:
			return peak
		case <-tick.C:
		}
	}
}

// tail returns the last line or so of a process's output, for errors.
func tail(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = "..." + s[len(s)-300:]
	}
	return s
}

// ReplayServer is a running `aaep-replay serve` process.
type ReplayServer struct {
	// Addr is the host:port it listens on.
	Addr string
	// GRPCAddr is the host:port of its gRPC listener (serve --grpc), or "".
	GRPCAddr string

	cmd   *exec.Cmd
	done  chan struct{}
	mu    sync.Mutex
	lines [][]byte // stdout lines (notices)
	errb  bytes.Buffer
	cond  *sync.Cond
}

var (
	serveAddr = regexp.MustCompile(`on ws://([0-9.:\[\]a-f]+)/aaep/v1/ws`)
	grpcAddr  = regexp.MustCompile(` and grpc://([0-9.:\[\]a-f]+) `)
)

// StartReplayServer starts `replayBin serve FILE --listen 127.0.0.1:0
// --json --close-at-end extra...` and waits (at most 30 s) until it says
// where it listens. The measurements read each replay to its close frame.
func StartReplayServer(ctx context.Context, replayBin, file string, extra ...string) (*ReplayServer, error) {
	return startServer(ctx, replayBin, "serve", file, extra...)
}

// startServer starts `bin verb FILE --listen 127.0.0.1:0 --json
// --close-at-end extra...` (aaep-replay serve, or SpinServe in its place).
func startServer(ctx context.Context, bin, verb, file string, extra ...string) (*ReplayServer, error) {
	replayBin := bin
	args := append([]string{verb, file, "--listen", "127.0.0.1:0", "--json", "--close-at-end"}, extra...)
	cmd := exec.Command(replayBin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", replayBin, err)
	}
	s := &ReplayServer{cmd: cmd, done: make(chan struct{})}
	s.cond = sync.NewCond(&s.mu)
	addr := make(chan [2]string, 1)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			if m := serveAddr.FindStringSubmatch(line); m != nil {
				var g string
				if mg := grpcAddr.FindStringSubmatch(line); mg != nil {
					g = mg[1]
				}
				select {
				case addr <- [2]string{m[1], g}:
				default:
				}
			}
			s.mu.Lock()
			if s.errb.Len() < 1<<16 {
				s.errb.WriteString(line + "\n")
			}
			s.mu.Unlock()
		}
	}()
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
		for sc.Scan() {
			s.mu.Lock()
			s.lines = append(s.lines, append([]byte(nil), sc.Bytes()...))
			s.cond.Broadcast()
			s.mu.Unlock()
		}
	}()
	go func() {
		wg.Wait()
		_ = cmd.Wait()
		s.mu.Lock()
		close(s.done)
		s.cond.Broadcast()
		s.mu.Unlock()
	}()
	t := time.NewTimer(30 * time.Second)
	defer t.Stop()
	select {
	case a := <-addr:
		s.Addr, s.GRPCAddr = a[0], a[1]
		return s, nil
	case <-s.done:
		return nil, fmt.Errorf("%s serve exited before listening: %s", replayBin, tail(s.stderr()))
	case <-t.C:
	case <-ctx.Done():
	}
	s.Stop()
	return nil, fmt.Errorf("%s serve did not start listening within 30s: %s", replayBin, tail(s.stderr()))
}

func (s *ReplayServer) stderr() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte(nil), s.errb.Bytes()...)
}

// WaitLine waits until the server has printed a stdout line for which
// match returns true, and returns it. It gives up after timeout or when
// the server exits.
func (s *ReplayServer) WaitLine(timeout time.Duration, match func([]byte) bool) ([]byte, error) {
	deadline := time.Now().Add(timeout)
	stop := time.AfterFunc(timeout, func() {
		s.mu.Lock()
		s.cond.Broadcast()
		s.mu.Unlock()
	})
	defer stop.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := 0
	for {
		for ; seen < len(s.lines); seen++ {
			if match(s.lines[seen]) {
				line := s.lines[seen]
				s.lines = append(s.lines[:seen], s.lines[seen+1:]...)
				return line, nil
			}
		}
		select {
		case <-s.done:
			return nil, fmt.Errorf("replay server exited: %s", tail(s.errb.Bytes()))
		default:
		}
		if !time.Now().Before(deadline) {
			return nil, fmt.Errorf("no matching line from the replay server within %v", timeout)
		}
		s.cond.Wait()
	}
}

// Stop sends SIGTERM, waits up to 10 s, then kills the process.
func (s *ReplayServer) Stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		return
	case <-time.After(10 * time.Second):
	}
	_ = s.cmd.Process.Kill()
	<-s.done
}
