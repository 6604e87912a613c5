// Command benche2e runs the end-to-end measurements of `make bench` (see
// package internal/bench) and prints one `go test -bench` style line per run
// on standard output, for the benchtable tool; progress goes to standard
// error.
//
//	benche2e -bin bin -runs 5 [-quick] [-only capture,pacing]
//
// Everything runs on 127.0.0.1 against the aaep-capture and aaep-replay
// binaries in -bin, in a scratch directory removed at the end. With
// "discard TRANSPORT URL" it is instead the reading client that the capture
// measurement compares aaep-capture with: it prints how many messages it read.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/aaep-tools/aaepkit/internal/bench"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

var measurements = []string{"capture", "capsize", "pacing", "fanout", "check", "trace", "seek", "viewsession", "viewbrowser", "viewlive", "viewshapes", "recorder", "livebytes", "fleet"}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "discard" {
		if len(args) != 3 {
			fmt.Fprintln(stderr, "usage: benche2e discard websocket|sse URL")
			return 2
		}
		n, err := bench.Discard(args[1], args[2])
		if err != nil {
			fmt.Fprintln(stderr, "benche2e discard:", err)
			return 1
		}
		fmt.Fprintln(stdout, n)
		return 0
	}
	if len(args) > 0 && args[0] == "spin-serve" {
		// The pacing measurement's floor (bench.SpinServe), in aaep-replay
		// serve's place: "benche2e spin-serve FILE --listen ADDR ...".
		if err := bench.SpinServe(args[1:], stdout, stderr); err != nil {
			fmt.Fprintln(stderr, "benche2e spin-serve:", err)
			if errors.Is(err, bench.ErrUsage) {
				return 2
			}
			return 1
		}
		return 0
	}
	fs := flag.NewFlagSet("benche2e", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		binDir      = fs.String("bin", "bin", "directory holding aaep-capture and aaep-replay")
		runs        = fs.Int("runs", 5, "runs of every measurement")
		quick       = fs.Bool("quick", false, "smaller inputs, for a run of about two minutes")
		only        = fs.String("only", "", "comma-separated measurements to run (default all but livebytes, which recorder includes): "+strings.Join(measurements, ","))
		paceSpan    = fs.Duration("pace-span", 0, "length of the capture replayed at 1x and 10x (default 30s, 4s with -quick)")
		paceRuns    = fs.Int("pace-runs", 3, "runs of the pacing measurement (at most -runs)")
		checkEvents = fs.Int("check-events", 1_000_000, "messages in the capture that check reads")
		checkFile   = fs.String("check-capture", "", "keep the capture that check reads at this path (reused when it exists), to check it with other builds alternately")
		seekSize    = fs.String("seek-size", "", "size of the capture for the seek measurement (default 1GiB, 128MiB with -quick)")
		shapeEvents = fs.String("shape-events", "", "viewshapes: comma-separated sizes of the captures in messages (default 1000000, 40000 with -quick)")
		shapeOnly   = fs.String("shapes", "", "viewshapes: comma-separated shapes to measure (default all): "+strings.Join(bench.ViewShapeNames, ","))
		shapeDir    = fs.String("shape-dir", "", "viewshapes: keep the captures in this directory (reused when there), to measure other builds on them alternately")
		tmp         = fs.String("tmp", "", "parent of the scratch directory (default the system's)")
		liveSpan    = fs.Duration("live-span", 0, "livebytes: how long aaep-capture records (default 20s, 5s with -quick); the row is named LiveBytes/rate=10/span=D when set")
		fleetN      = fs.Int("fleet-recorders", 20, "fleet: simulated recorders")
		fleetRounds = fs.Int("fleet-rounds", 0, "fleet: checks (default 6, 3 with -quick)")
		fleetRotate = fs.Duration("fleet-rotate", 20*time.Second, "fleet: the recorders' rotation")
		fleetEvery  = fs.Duration("fleet-every", time.Minute, "fleet: time between checks")
		fleetFull   = fs.Bool("fleet-full", true, "fleet: at the end, also check the whole prefix without the state, and as 3 shards merged")
	)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *runs < 1 {
		fmt.Fprintln(stderr, "benche2e: -runs must be at least 1")
		return 2
	}
	selected := map[string]bool{}
	if *only == "" {
		for _, m := range measurements {
			// livebytes is a row of recorder, alone: not run twice.
			selected[m] = m != "livebytes"
		}
	} else {
		for _, m := range strings.Split(*only, ",") {
			m = strings.TrimSpace(m)
			if !slices.Contains(measurements, m) {
				fmt.Fprintf(stderr, "benche2e: unknown measurement %q (want %s)\n", m, strings.Join(measurements, ", "))
				return 2
			}
			selected[m] = true
		}
	}
	if *paceSpan == 0 {
		*paceSpan = 30 * time.Second
		if *quick {
			*paceSpan = 4 * time.Second
		}
	}
	if *seekSize == "" {
		*seekSize = "1GiB"
		if *quick {
			*seekSize = "128MiB"
		}
	}
	var shapeSizes []int
	if *shapeEvents != "" {
		for _, f := range strings.Split(*shapeEvents, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 4 {
				fmt.Fprintf(stderr, "benche2e: -shape-events: %q: want a number of messages of at least 4\n", f)
				return 2
			}
			shapeSizes = append(shapeSizes, n)
		}
	}
	var shapes []string
	if *shapeOnly != "" {
		for _, f := range strings.Split(*shapeOnly, ",") {
			f = strings.TrimSpace(f)
			if !slices.Contains(bench.ViewShapeNames, f) {
				fmt.Fprintf(stderr, "benche2e: -shapes: unknown shape %q (want %s)\n", f, strings.Join(bench.ViewShapeNames, ", "))
				return 2
			}
			shapes = append(shapes, f)
		}
	}
	seekBytes, err := parseSize(*seekSize)
	if err != nil {
		fmt.Fprintln(stderr, "benche2e: -seek-size:", err)
		return 2
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(stderr, "benche2e:", err)
		return 1
	}
	dir, err := os.MkdirTemp(*tmp, "aaep-bench-")
	if err != nil {
		fmt.Fprintln(stderr, "benche2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	abs := func(name string) string {
		p, _ := filepath.Abs(filepath.Join(*binDir, name))
		return p
	}
	env := &bench.Env{
		CaptureBin:     abs("aaep-capture"),
		ReplayBin:      abs("aaep-replay"),
		CaptureGRPCBin: abs("aaep-capture-grpc"),
		Self:           self,
		Dir:            dir,
		Runs:           *runs,
		Log:            stderr,
		Emit:           func(r bench.Result) { fmt.Fprintln(stdout, r.Line()) },
	}
	pick := func(full, small int) int {
		if *quick {
			return small
		}
		return full
	}
	fmt.Fprintln(stdout, "pkg: e2e")
	failed := 0
	for _, m := range measurements {
		if !selected[m] {
			continue
		}
		fmt.Fprintf(stderr, "benche2e: %s\n", m)
		start := time.Now()
		var err error
		switch m {
		case "capture":
			err = bench.Capture(ctx, env, pick(1_000_000, 200_000))
		case "capsize":
			err = bench.CapSize(ctx, env, pick(200_000, 50_000))
		case "pacing":
			pe := *env
			pe.Runs = max(1, min(*runs, *paceRuns))
			err = bench.Pacing(ctx, &pe, *paceSpan)
		case "fanout":
			err = bench.Fanout(ctx, env, pick(20_000, 5_000), []int{1, 10, 100})
		case "check":
			err = bench.Check(ctx, env, *checkEvents, *checkFile)
		case "trace":
			err = bench.Trace(ctx, env, []int{100, 1_000, 10_000})
		case "seek":
			err = bench.Seek(ctx, env, seekBytes)
		case "viewsession":
			err = bench.ViewSession(ctx, env, 100_000)
		case "viewbrowser":
			be := *env
			be.Runs = max(1, min(*runs, 3))
			npm := os.Getenv("AAEP_NPM_DIR")
			if npm == "" {
				npm = filepath.Join(".cache", "npm")
			}
			err = bench.ViewBrowser(ctx, &be, pick(1000, 100), 1000, pick(100_000, 20_000), npm)
		case "viewlive":
			le := *env
			le.Runs = max(1, min(*runs, 3))
			err = bench.ViewLive(ctx, &le, 20, time.Duration(pick(20, 5))*time.Second)
		case "viewshapes":
			ve := *env
			ve.Runs = max(1, min(*runs, 3))
			sizes := shapeSizes
			if len(sizes) == 0 {
				sizes = []int{pick(1_000_000, 40_000)}
			}
			for _, n := range sizes {
				if err = bench.ViewShapes(ctx, &ve, n, *shapeDir, shapes...); err != nil {
					break
				}
			}
		case "recorder":
			span, s3Span := 20*time.Second, 120*time.Second
			if *quick {
				span, s3Span = 5*time.Second, 20*time.Second
			}
			re := *env
			re.Runs = max(1, min(*runs, 3))
			err = bench.RecorderCost(ctx, &re, []float64{10, 1_000, 10_000}, span, s3Span)
		case "livebytes":
			span := 20 * time.Second
			if *quick {
				span = 5 * time.Second
			}
			label := ""
			if *liveSpan > 0 {
				span, label = *liveSpan, "/span="+liveSpan.String()
			}
			le := *env
			le.Runs = max(1, min(*runs, 3))
			err = bench.LiveBytes(ctx, &le, 10, span, label)
		case "fleet":
			rounds := *fleetRounds
			if rounds == 0 {
				rounds = pick(6, 3)
			}
			err = bench.FleetWith(ctx, env, bench.FleetOptions{Recorders: *fleetN, Rounds: rounds, Rotate: *fleetRotate, Every: *fleetEvery, Full: *fleetFull})
		}
		if err != nil {
			failed++
			fmt.Fprintf(stderr, "benche2e: %s failed: %v\n", m, err)
			if errors.Is(err, context.Canceled) || ctx.Err() != nil {
				return 1
			}
			continue
		}
		fmt.Fprintf(stderr, "benche2e: %s took %v\n", m, time.Since(start).Round(time.Second))
	}
	if failed > 0 {
		return 1
	}
	return 0
}

// parseSize reads a byte count such as 1GiB, 128MiB or 1000000.
func parseSize(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}, {"", 1}}
	for _, u := range units {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			v, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
			if err != nil || v <= 0 {
				return 0, fmt.Errorf("%q: want a positive size such as 1GiB or 128MiB", s)
			}
			return v * u.mult, nil
		}
	}
	return 0, fmt.Errorf("%q: want a size such as 1GiB", s)
}
