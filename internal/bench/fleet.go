package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/sample"
	"github.com/aaep-tools/aaepkit/objstore/s3test"
)

// fleetPart is one part a simulated recorder uploads: its key, bytes and
// the end of its window (when the recorder rotates it).
type fleetPart struct {
	key  string
	data []byte
	end  time.Duration
}

// fleetRecorder writes one live recorder's parts as aaep-capture does at
// the given rotation: a part per window, each naming its number and the
// part before it, its records flushed every 100 ms of their time (the
// recorder's crash promise), so that the parts are framed as a live
// capture's are. The events are sample.Stream's interleaved sessions.
func fleetRecorder(dir string, host int, sessions int, rotate, span time.Duration) ([]fleetPart, int, error) {
	msgs := sample.Stream(sample.Options{Sessions: sessions, Seed: uint64(host) + 1, Compact: true, Violations: true, Gap: 2 * time.Second, Stagger: 1300 * time.Millisecond})
	start := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	var parts []fleetPart
	events := 0
	next := 0
	for j := 0; time.Duration(j)*rotate < span; j++ {
		from, to := time.Duration(j)*rotate, time.Duration(j+1)*rotate
		name := fmt.Sprintf("host-%02d-%06d.aaep", host, j+1)
		meta := map[string]string{"part": strconv.Itoa(j + 1)}
		if j > 0 {
			meta["previous"] = fmt.Sprintf("host-%02d-%06d.aaep", host, j)
		}
		path := filepath.Join(dir, name)
		w, err := capfile.Create(path, capfile.Header{Start: start.Add(from), Tool: "aaep-capture/bench", Meta: meta,
			Origins: []capfile.Origin{{ID: 0, Transport: "websocket", Endpoint: fmt.Sprintf("ws://10.0.0.%d:8765/aaep/v1/ws", host)}}},
			&capfile.WriterOptions{FlushInterval: -1})
		if err != nil {
			return nil, 0, err
		}
		if j == 0 {
			if err := w.Append(&capfile.Record{Kind: capfile.KindConn, Payload: []byte(`{"event":"connected"}`)}); err != nil {
				return nil, 0, err
			}
		}
		flushAt := from + 100*time.Millisecond
		for ; next < len(msgs) && msgs[next].Offset < to; next++ {
			m := msgs[next]
			for m.Offset >= flushAt {
				if err := w.Flush(); err != nil {
					return nil, 0, err
				}
				flushAt += 100 * time.Millisecond
			}
			kind := capfile.KindReceived
			if m.FromSubscriber {
				kind = capfile.KindSent
			}
			if err := w.Append(&capfile.Record{Kind: kind, Time: int64(m.Offset - from), Session: m.Session, Payload: m.JSON}); err != nil {
				return nil, 0, err
			}
			events++
		}
		if err := w.Close(); err != nil {
			return nil, 0, err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, 0, err
		}
		os.Remove(path)
		parts = append(parts, fleetPart{key: "fleet/" + name, data: data, end: to})
	}
	return parts, events, nil
}

// Fleet measures check --state over a prefix that live recorders keep
// adding parts to: recorders rotating every 20 s, a check every minute of
// their time (the parts rotated by then uploaded), the state kept in the
// bucket. The first round reads everything; each later round should read
// the new parts only, with the state. Results, one per later round:
// Fleet/incremental with the bytes read for parts and for the state over
// the bytes of the new parts (read-ratio, parts-ratio), GETs per new part,
// the state's size and the check's time.
func Fleet(ctx context.Context, e *Env, recorders, rounds int) error {
	return FleetWith(ctx, e, FleetOptions{Recorders: recorders, Rounds: rounds, Rotate: 20 * time.Second, Every: time.Minute, Full: true})
}

// FleetOptions shape a Fleet measurement.
type FleetOptions struct {
	Recorders, Rounds int
	// Rotate is the recorders' rotation, Every the time between checks.
	Rotate, Every time.Duration
	// Full adds, at the end, a check of the whole prefix without the state
	// (Fleet/full), to compare, and 3 shards merged against one check
	// (Fleet/shards).
	Full bool
}

// FleetWith is Fleet with other sizes and times; its results are named
// as Fleet's.
func FleetWith(ctx context.Context, e *Env, o FleetOptions) error {
	recorders, rounds, rotate, every := o.Recorders, o.Rounds, o.Rotate, o.Every
	span := time.Duration(rounds) * every
	var all []fleetPart
	events := 0
	for h := range recorders {
		// About 10 events a second: a session started every 3 s, each
		// event about 2 s after the one before, so that a session lasts
		// about a minute and some are open at every rotation and check.
		parts, n, err := fleetRecorder(e.Dir, h, int(span/(1300*time.Millisecond)), rotate, span)
		if err != nil {
			return err
		}
		all = append(all, parts...)
		events += n
	}
	e.logf("fleet: %d recorders, %d events over %v (%.1f events/s each), %d parts", recorders, events, span, float64(events)/span.Seconds()/float64(recorders), len(all))
	srv, err := s3test.New("bench")
	if err != nil {
		return err
	}
	defer srv.Close()
	const state = "state/fleet.state"
	uploaded := map[string]bool{}
	for r := 1; r <= rounds; r++ {
		now := time.Duration(r) * every
		var newBytes int64
		newParts := 0
		for _, p := range all {
			if p.end <= now && !uploaded[p.key] {
				if err := srv.Put("bench", p.key, p.data); err != nil {
					return err
				}
				uploaded[p.key] = true
				newBytes += int64(len(p.data))
				newParts++
			}
		}
		rd, err := fleetCheck(ctx, e, srv, state, r)
		if err != nil {
			return err
		}
		partBytes, stateRead, gets, took := rd.partBytes, rd.stateRead, rd.gets, rd.took
		st, err := srv.Get("bench", state)
		if err != nil {
			return fmt.Errorf("fleet round %d: no state kept: %v", r, err)
		}
		e.logf("fleet round %d: %d new parts, %d new bytes; read %d bytes of parts in %d GETs and %d listings, %d bytes of state; state now %d bytes; %v (%v CPU); %s",
			r, newParts, newBytes, partBytes, gets, rd.lists, stateRead, len(st), took.Round(time.Millisecond), rd.cpu.Round(time.Millisecond), rd.stderr)
		if r == 1 {
			continue // the first round reads everything
		}
		e.Emit(Result{Name: "Fleet/incremental", Metrics: []Metric{
			{float64(partBytes+stateRead) / float64(newBytes), "read-ratio"},
			{float64(partBytes) / float64(newBytes), "parts-ratio"},
			{float64(gets) / float64(newParts), "GETs/part"},
			{float64(newBytes) / (1 << 10), "new-KiB"},
			{float64(len(st)) / (1 << 10), "state-KiB"},
			{ms(took), "check-ms"},
			{ms(rd.cpu), "check-cpu-ms"},
		}})
	}
	if o.Full {
		if err := fleetShards(ctx, e, srv, all, uploaded, 3); err != nil {
			return err
		}
		var total int64
		parts := 0
		for _, p := range all {
			if uploaded[p.key] {
				total += int64(len(p.data))
				parts++
			}
		}
		rd, err := fleetCheck(ctx, e, srv, "", 0)
		if err != nil {
			return err
		}
		e.logf("fleet full check: %d parts, %d bytes; read %d bytes in %d GETs and %d listings; %v (%v CPU)", parts, total, rd.partBytes, rd.gets, rd.lists, rd.took.Round(time.Millisecond), rd.cpu.Round(time.Millisecond))
		e.Emit(Result{Name: "Fleet/full", Metrics: []Metric{
			{float64(rd.partBytes) / float64(total), "parts-ratio"},
			{float64(rd.gets) / float64(parts), "GETs/part"},
			{float64(total) / (1 << 10), "KiB"},
			{ms(rd.took), "check-ms"},
			{ms(rd.cpu), "check-cpu-ms"},
		}})
	}
	return nil
}

// fleetShards checks the prefix once whole and as n shards, each with a
// state of its own (a first run), merges the shards' reports and compares
// the merge with the whole check's report, byte for byte. Result
// Fleet/shards: merge-equal (1 when equal), and what the shards read in
// all against the bytes stored.
func fleetShards(ctx context.Context, e *Env, srv *s3test.Server, all []fleetPart, uploaded map[string]bool, n int) error {
	var stored int64
	parts := 0
	for _, p := range all {
		if uploaded[p.key] {
			stored += int64(len(p.data))
			parts++
		}
	}
	run := func(args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, e.ReplayBin, args...)
		cmd.Env = append(os.Environ(), srv.Env()...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("fleet: %s: %v: %s", strings.Join(args, " "), err, errb.String())
		}
		return out.Bytes(), nil
	}
	single, err := run("check", "--json", "--fail-on", "never", "s3://bench/fleet/")
	if err != nil {
		return err
	}
	from := len(srv.Settled())
	var reports []string
	for i := range n {
		out, err := run("check", "--json", "--fail-on", "never", "--shard", fmt.Sprintf("%d/%d", i, n), "--state", fmt.Sprintf("s3://bench/state/shard-%d.state", i), "s3://bench/fleet/")
		if err != nil {
			return err
		}
		path := filepath.Join(e.Dir, fmt.Sprintf("fleet-r%d.json", i))
		if err := os.WriteFile(path, out, 0o644); err != nil {
			return err
		}
		defer os.Remove(path)
		reports = append(reports, path)
	}
	var read, gets int64
	for _, q := range srv.Settled()[from:] {
		p, query, _ := strings.Cut(q.Path, "?")
		if key, ok := strings.CutPrefix(p, "/bench/fleet/"); ok && q.Method == "GET" && key != "" && !strings.Contains(query, "list-type") {
			read += q.Bytes
			gets++
		}
	}
	merged, err := run(append([]string{"check", "--merge-reports"}, reports...)...)
	if err != nil {
		return err
	}
	equal := 0.0
	if bytes.Equal(merged, single) {
		equal = 1
	}
	e.logf("fleet: %d shards: merged report equal to one check's: %v; the shards read %d bytes of %d stored in %d GETs for %d parts", n, equal == 1, read, stored, gets, parts)
	e.Emit(Result{Name: "Fleet/shards", Metrics: []Metric{
		{equal, "merge-equal"},
		{float64(read) / float64(stored), "read-ratio"},
		{float64(gets) / float64(parts), "GETs/part"},
	}})
	return nil
}

// fleetRead is what one check of the fleet's prefix asked of the server.
type fleetRead struct {
	partBytes, stateRead, gets, lists int64
	took, cpu                         time.Duration
	stderr                            string
}

// fleetCheck runs aaep-replay check of the prefix, with the state object
// when state is not "", and counts what it fetched.
func fleetCheck(ctx context.Context, e *Env, srv *s3test.Server, state string, round int) (fleetRead, error) {
	var rd fleetRead
	from := len(srv.Settled())
	args := []string{"check", "--json", "--fail-on", "never", "s3://bench/fleet/"}
	if state != "" {
		args = append(args, "--state", "s3://bench/"+state)
	}
	cmd := exec.CommandContext(ctx, e.ReplayBin, args...)
	cmd.Env = append(os.Environ(), srv.Env()...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	started := time.Now()
	if err := cmd.Run(); err != nil {
		return rd, fmt.Errorf("fleet round %d: check: %v: %s", round, err, errb.String())
	}
	rd.took = time.Since(started)
	rd.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	rd.stderr = strings.TrimSpace(errb.String())
	for _, q := range srv.Settled()[from:] {
		p, query, _ := strings.Cut(q.Path, "?")
		key, ok := strings.CutPrefix(p, "/bench/")
		if q.Method != "GET" || !ok {
			continue
		}
		switch {
		case key == "" || strings.Contains(query, "list-type"):
			rd.lists++
		case state != "" && key == state:
			rd.stateRead += q.Bytes
		case strings.HasPrefix(key, "fleet/"):
			rd.partBytes += q.Bytes
			rd.gets++
		}
	}
	return rd, nil
}
