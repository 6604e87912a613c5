package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMain makes the test binary the discard client of the capture
// measurement when started as "<test binary> discard TRANSPORT URL", and
// the pacing measurement's spinning writer as "<test binary> spin-serve ...".
func TestMain(m *testing.M) {
	if len(os.Args) == 4 && os.Args[1] == "discard" {
		n, err := Discard(os.Args[2], os.Args[3])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(n)
		os.Exit(0)
	}
	if len(os.Args) > 2 && os.Args[1] == "spin-serve" {
		if err := SpinServe(os.Args[2:], os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// buildTools builds aaep-capture, aaep-replay and the aaep-render helper
// into a temporary directory.
func buildTools(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-o", dir+"/", "./cmd/...")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return dir
}

// TestMeasurements runs every measurement once on tiny inputs against the
// real binaries and checks that each reports plausible figures.
func TestMeasurements(t *testing.T) {
	bin := buildTools(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var results []Result
	env := &Env{
		CaptureBin:     filepath.Join(bin, "aaep-capture"),
		CaptureGRPCBin: filepath.Join(bin, "aaep-capture-grpc"),
		ReplayBin:      filepath.Join(bin, "aaep-replay"),
		Self:           self,
		Dir:            t.TempDir(),
		Runs:           1,
		Emit:           func(r Result) { results = append(results, r) },
	}
	for _, m := range []struct {
		name  string
		run   func() error
		names []string
		// positive lists metrics that must be above zero.
		positive []string
	}{
		{"capture", func() error { return Capture(ctx, env, 2000) },
			[]string{"Capture/websocket", "Capture/sse", "Capture/grpc"}, []string{"events/s", "ceiling-events/s", "ratio"}},
		{"capsize", func() error { return CapSize(ctx, env, 3000) },
			[]string{"CapSize/bytes", "CapSize/speed"}, []string{"capfile-B/event", "jsonl-B/event", "jsonl.gz-B/event", "jsonl.zst-B/event", "write-events/s", "read-events/s"}},
		{"pacing", func() error { return Pacing(ctx, env, 300*time.Millisecond) },
			[]string{"Pacing/1x/default", "Pacing/1x/precise", "Pacing/1x/spin", "Pacing/1x/grpc", "Pacing/10x/default", "Pacing/10x/precise", "Pacing/10x/grpc"}, []string{"events", "sub-p50-µs", "write-p99-µs"}},
		{"fanout", func() error { return Fanout(ctx, env, 300, []int{1, 3}) },
			[]string{"Fanout/subs=1", "Fanout/subs=3", "Fanout/subs=3+stalled"}, []string{"msgs/s"}},
		{"check", func() error { return Check(ctx, env, 3000, "") },
			[]string{"Check", "ExportOTLP", "ExportOTLPJSON", "Diff"}, []string{"events/s", "events/cpu-s", "peak-MiB", "x-check", "x-check-one", "x-check-cpu"}},
		{"check, capture kept and reused", func() error {
			kept := filepath.Join(t.TempDir(), "kept.aaep")
			if err := Check(ctx, env, 3000, kept); err != nil {
				return err
			}
			st, err := os.Stat(kept)
			if err != nil {
				return fmt.Errorf("the capture was not kept: %w", err)
			}
			results = nil
			if err := Check(ctx, env, 3000, kept); err != nil {
				return err
			}
			again, err := os.Stat(kept)
			if err != nil || !again.ModTime().Equal(st.ModTime()) || again.Size() != st.Size() {
				return fmt.Errorf("the kept capture was written again (%v)", err)
			}
			return nil
		}, []string{"Check", "ExportOTLP", "ExportOTLPJSON", "Diff"}, []string{"events/s", "events/cpu-s", "peak-MiB"}},
		{"trace", func() error { return Trace(ctx, env, []int{10, 100}) },
			[]string{"Trace/events=10", "Trace/events=100"}, []string{"ms", "svg-KiB"}},
		{"seek", func() error { return Seek(ctx, env, 256<<10) },
			[]string{"Seek/256KiB/remote", "Seek/256KiB", "View/256KiB"}, []string{"open+middle-ms", "seek-ms", "serve-first-event-ms", "first-page-ms", "timeline-window-ms", "window-events", "requests", "KiB-read"}},
		{"viewsession", func() error { return ViewSession(ctx, env, 2000) },
			[]string{"ViewSession/events=2000"}, []string{"whole-ms", "window-ms", "window-events", "steps-ms"}},
		{"fleet", func() error { return Fleet(ctx, env, 3, 2) },
			[]string{"Fleet/incremental", "Fleet/shards", "Fleet/full"}, []string{"read-ratio", "parts-ratio", "GETs/part", "new-KiB", "state-KiB", "merge-equal"}},
		{"viewshapes", func() error { return ViewShapes(ctx, env, 2500, "") },
			[]string{"ViewShape/50x50", "ViewShape/short-sessions/events=2500", "ViewShape/1x2500"}, []string{"checked-ms", "session-filter-ms", "search-ms", "view-peak-MiB"}},
		{"recorder", func() error { return RecorderCost(ctx, env, []float64{50}, 3*time.Second, 3*time.Second) },
			[]string{"Recorder/rate=50", "Recorder/rate=50/s3", "Recorder/rate=50/grpc-linked"}, []string{"peak-MiB", "cpu-µs/event", "events", "file-B/event"}},
		{"livebytes", func() error { return LiveBytes(ctx, env, 50, 2*time.Second, "") },
			[]string{"LiveBytes/rate=50"}, []string{"events", "file-B/event"}},
	} {
		t.Run(m.name, func(t *testing.T) {
			results = nil
			if err := m.run(); err != nil {
				t.Fatal(err)
			}
			var names []string
			seen := map[string]bool{}
			for _, r := range results {
				names = append(names, r.Name)
				for _, x := range r.Metrics {
					if slices.Contains(m.positive, x.Unit) {
						seen[x.Unit] = true
						if !(x.Value > 0) {
							t.Errorf("%s: %s = %v, want a positive figure", r.Name, x.Unit, x.Value)
						}
					}
				}
				if !strings.HasPrefix(r.Line(), "Benchmark"+r.Name+"\t1\t") {
					t.Errorf("line %q", r.Line())
				}
			}
			for _, unit := range m.positive {
				if !seen[unit] {
					t.Errorf("no result reports %s", unit)
				}
			}
			if !slices.Equal(names, m.names) {
				t.Errorf("results %v, want %v", names, m.names)
			}
		})
	}
	entries, err := os.ReadDir(env.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".svg") || strings.HasPrefix(e.Name(), "capture-") || e.Name() == "seek.aaep" {
			t.Errorf("%s left behind in the scratch directory", e.Name())
		}
	}
}
