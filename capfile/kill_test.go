package capfile

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// recorderEnv makes the test binary act as a recording process (see TestMain).
const recorderEnv = "CAPFILE_TEST_RECORDER"

func TestMain(m *testing.M) {
	if path := os.Getenv(recorderEnv); path != "" {
		runRecorder(path)
		return
	}
	code := m.Run()
	removeBigCapture()
	os.Exit(code)
}

// runRecorder appends generated records to path forever, with small frames
// and a 5 ms flush timer. After every explicit Flush it prints the number of
// records flushed so far: those must survive a SIGKILL.
func runRecorder(path string) {
	w, err := Create(path, testHeader(), &WriterOptions{FrameSize: 32 << 10, FlushInterval: 5 * time.Millisecond})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	g := newRecGen(77, 5, time.Millisecond)
	out := bufio.NewWriter(os.Stdout)
	for i := 1; ; i++ {
		rec := g.next()
		if err := w.Append(&rec); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		if i%37 == 0 {
			if err := w.Flush(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(2)
			}
			fmt.Fprintln(out, i)
			out.Flush()
		}
	}
}

func TestKill9(t *testing.T) {
	for round := 0; round < 3; round++ {
		t.Run(fmt.Sprint("round", round), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "live.aaep")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), recorderEnv+"="+path)
			cmd.Stderr = os.Stderr
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Kill after a varying number of flushes, while it keeps writing.
			target := 2000 + 1500*round
			flushed := 0
			sc := bufio.NewScanner(stdout)
			var live <-chan liveRead
			for sc.Scan() {
				n, err := strconv.Atoi(sc.Text())
				if err != nil {
					t.Fatalf("recorder printed %q", sc.Text())
				}
				flushed = n
				if live == nil {
					// The running recorder's file is being written;
					// a live reader follows it from here on.
					if !BeingWritten(path) {
						t.Fatal("BeingWritten = false while the recorder runs")
					}
					lr, err := OpenLive(ctx, path, &LiveOptions{Poll: 5 * time.Millisecond})
					if err != nil {
						t.Fatal(err)
					}
					defer lr.Close()
					live = readLive(lr)
				}
				if flushed >= target {
					break
				}
			}
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			// Count what was printed before the kill landed.
			for sc.Scan() {
				if n, err := strconv.Atoi(sc.Text()); err == nil {
					flushed = n
				}
			}
			err = cmd.Wait()
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("recorder did not die of SIGKILL: %v", err)
			}
			if flushed < target {
				t.Fatalf("recorder flushed only %d records", flushed)
			}
			want := genRecords(77, flushed, 5, time.Millisecond)

			// The live reader returned every flushed record, then, the
			// recorder gone, a torn tail (not "being written").
			var followed []Record
			for x := range live {
				if x.err != nil {
					if !IsTorn(x.err) || IsLive(x.err) {
						t.Fatalf("live reader's end after kill -9: %v, want a torn tail", x.err)
					}
					break
				}
				followed = append(followed, x.rec)
			}
			if len(followed) < flushed {
				t.Fatalf("live reader read %d records, %d were flushed", len(followed), flushed)
			}
			equalRecords(t, followed[:flushed], want)
			if BeingWritten(path) {
				t.Error("BeingWritten = true after kill -9")
			}

			// A plain read yields every flushed record, then a torn tail.
			r := openers["file"](t, path)
			got, err := readAll(r)
			if len(got) < flushed {
				t.Fatalf("read %d records, but %d were flushed before the kill (error %v)", len(got), flushed, err)
			}
			equalRecords(t, got[:flushed], want)
			if !IsTorn(err) || IsLive(err) {
				t.Fatalf("end of a killed capture = %v, want a torn tail", err)
			}
			if r.Clean() {
				t.Error("Clean() = true for a killed capture")
			}
			x, err := r.FileIndex()
			if err != nil || !x.Rebuilt || x.Records != int64(len(got)) {
				t.Errorf("rebuilt index: %+v, %v", x, err)
			}

			// Repair keeps the same records in a clean file.
			dst := filepath.Join(dir, "repaired.aaep")
			rep, err := Repair(path, dst)
			if err != nil {
				t.Fatal(err)
			}
			rr := openers["file"](t, dst)
			fixed, err := readAll(rr)
			if err != nil || !rr.Clean() {
				t.Fatalf("repaired capture: %v, clean %v", err, rr.Clean())
			}
			equalRecords(t, fixed, got)
			if rep.Kept != int64(len(got)) || len(rep.Dropped) > 1 {
				t.Errorf("repair report: %v", rep)
			}
			t.Logf("flushed %d, recovered %d; %v", flushed, len(got), rep)
		})
	}
}
