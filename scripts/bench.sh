#!/usr/bin/env bash
# bench.sh: the Go benchmarks and the end-to-end measurements, as one table.
#
#   make bench                  full run (about 20-25 minutes on 2 cores: view at
#                               2M messages in three shapes takes about 5)
#   BENCH_QUICK=1 make bench    smaller inputs, fewer runs (about 3 minutes)
#   BENCH_RUNS=N                runs per figure (default 5, quick 3)
#   BENCH_PACE_SPAN=60s         length of the capture replayed at 1x and 10x
#                               (default 30s, quick 4s; three runs of each)
#
# Every figure is the median of its runs, with the spread (min – max). All
# traffic stays on 127.0.0.1; every producer and client is the project's own
# code (internal/bench, transport/transporttest), bounded in time and count.
# Inputs are generated into a scratch directory that is removed at the end.
# Output: the table on stdout and in bench-out/bench.md; raw benchmark lines
# in bench-out/gobench.txt and bench-out/e2e.txt.
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
quick=${BENCH_QUICK:-0}
[ "$quick" = 0 ] && quick=
if [ -n "$quick" ]; then
	runs=${BENCH_RUNS:-3}
	benchtime=300ms
	check_events=200000
	seek_mib=128
	seek_label="128 MiB"
	pace_span=${BENCH_PACE_SPAN:-4s}
	e2e_flags=(-quick -check-events "$check_events" -seek-size "${seek_mib}MiB" -pace-span "$pace_span")
	mode="quick (BENCH_QUICK=1)"
else
	runs=${BENCH_RUNS:-5}
	benchtime=1s
	check_events=1000000
	seek_mib=1024
	seek_label="1 GiB"
	pace_span=${BENCH_PACE_SPAN:-30s}
	e2e_flags=(-check-events "$check_events" -seek-size "${seek_mib}MiB" -pace-span "$pace_span")
	mode="full"
fi

out=bench-out
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/aaep-bench.XXXXXX")
cleanup() {
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

started=$(date +%s)
log() { printf 'bench: %s\n' "$*" >&2; }

# The tools under test (make bench builds them first; build them when this
# script runs alone), the trace helper next to aaep-replay, and our own tools.
if [ ! -x bin/aaep-capture ] || [ ! -x bin/aaep-capture-grpc ] || [ ! -x bin/aaep-replay ] || [ ! -x bin/aaep-render ]; then
	CGO_ENABLED=0 $GO build -o bin/ ./cmd/...
fi
$GO build -o "$work/" ./internal/tools/benchtable ./internal/tools/benche2e

cpu=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
mem=$(awk '/^MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)
machine="$(nproc) CPUs ($cpu), $mem RAM, $($GO version | awk '{print $3, $4}'), $(uname -sr)"
when=$(date -u '+%Y-%m-%d %H:%M UTC')
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
log "machine: $machine"
log "mode: $mode, $runs runs per figure; load average $load_start"

# Go benchmarks: capfile write/read on one goroutine, Graphviz layout and SVG, show --pace.
status=0
log "go benchmarks (capfile, visualize/render)"
{
	$GO test -run '^$' -bench '^BenchmarkWrite$/^default$' -benchtime "$benchtime" -count "$runs" ./capfile
	$GO test -run '^$' -bench '^BenchmarkRead$' -benchtime "$benchtime" -count "$runs" ./capfile
	$GO test -run '^$' -bench '^BenchmarkSVG$' -benchtime "$benchtime" -count "$runs" ./visualize/render
	$GO test -run '^$' -bench '^BenchmarkPace$' -benchtime 1x -count "$runs" ./internal/show
} > "$out/gobench.txt" || { status=1; log "a Go benchmark failed; see $out/gobench.txt"; }

# End-to-end measurements against bin/aaep-capture and bin/aaep-replay.
"$work/benche2e" -bin bin -runs "$runs" -tmp "$work" "${e2e_flags[@]}" > "$out/e2e.txt" ||
	{ status=1; log "an end-to-end measurement failed; its rows say missing"; }
# view on the three shapes again at twice the size, once each (minutes at
# 2M): how its memory grows beyond the 1M rows.
if [ -n "$quick" ]; then shape_n2=80000; else shape_n2=2000000; fi
log "view at $shape_n2 messages in three shapes (one run each)"
"$work/benche2e" -bin bin -runs 1 -tmp "$work" -only viewshapes -shape-events "$shape_n2" | grep -v '^pkg:' >> "$out/e2e.txt" ||
	{ status=1; log "view at $shape_n2 messages failed; its rows say missing"; }

seek_key="Seek/${seek_mib}MiB"
view_key="View/${seek_mib}MiB"
if [ -n "$quick" ]; then
	view_many=100000 view_many_label=100,000 view_sessions=100 view_long=20000 view_long_label=20,000
	shape_n=40000 shape_label=40,000 shape_square=200x200
	shape_label2=80,000 shape_square2=282x282
else
	view_many=1000000 view_many_label=1,000,000 view_sessions=1,000 view_long=100000 view_long_label=100,000
	shape_n=1000000 shape_label=1,000,000 shape_square=1000x1000
	shape_label2=2,000,000 shape_square2=1414x1414
fi
check_label=$(echo "$check_events" | sed ':a; s/\B[0-9]\{3\}\>/,&/; ta')

cat > "$work/rows.txt" <<EOF
# label | benchmark | metric | unit | scale | target
## Capture over loopback (aaep-capture, realistic AAEP events of ~470 bytes)
WebSocket: aaep-capture | e2e/Capture/websocket | events/s | events/s | | ≥ 250,000 events/s
WebSocket: client that reads and discards (ceiling) | e2e/Capture/websocket | ceiling-events/s | events/s | |
WebSocket: capture ÷ ceiling (same run) | e2e/Capture/websocket | ratio | | | ≥ 0.70
SSE: aaep-capture | e2e/Capture/sse | events/s | events/s | | ≥ 400,000 events/s
SSE: client that reads and discards (ceiling) | e2e/Capture/sse | ceiling-events/s | events/s | |
SSE: capture ÷ ceiling (same run) | e2e/Capture/sse | ratio | | |
gRPC: aaep-capture | e2e/Capture/grpc | events/s | events/s | | ≥ SSE's
gRPC: client that reads and discards (ceiling) | e2e/Capture/grpc | ceiling-events/s | events/s | |
gRPC: capture ÷ ceiling (same run) | e2e/Capture/grpc | ratio | | |
## Capture file size, same events
capture file (.aaep) | e2e/CapSize/bytes | capfile-B/event | B/event | |
JSONL | e2e/CapSize/bytes | jsonl-B/event | B/event | |
JSONL + gzip (level 6) | e2e/CapSize/bytes | jsonl.gz-B/event | B/event | |
JSONL + zstd (level 3, one frame) | e2e/CapSize/bytes | jsonl.zst-B/event | B/event | |
JSONL ÷ capture file | e2e/CapSize/bytes | jsonl/capfile | × | | ≥ 7 ×
capture file ÷ JSONL + zstd | e2e/CapSize/bytes | capfile/jsonl.zst | × | |
## Capture file speed
write, file on disk (capfile API, one goroutine) | e2e/CapSize/speed | write-events/s | events/s | | ≥ 200,000 events/s
read, file on disk | e2e/CapSize/speed | read-events/s | events/s | | ≥ 500,000 events/s
write, in memory (capfile BenchmarkWrite/default) | capfile/Write/default | events/s | events/s | | ≥ 200,000 events/s
read, in memory (capfile BenchmarkRead) | capfile/Read | events/s | events/s | | ≥ 500,000 events/s
## Replay pacing (aaep-replay serve, $pace_span capture, bursty gaps around 5 ms, one WebSocket subscriber (the gRPC rows: one gRPC subscriber of serve --grpc); lateness at the subscriber = its read returned − the deadline, on the same system clock; the server's own figure = its write returned − the deadline)
1x: lateness at the subscriber p50 | e2e/Pacing/1x/default | sub-p50-µs | µs | |
1x: lateness at the subscriber p99 | e2e/Pacing/1x/default | sub-p99-µs | µs | | ≤ 1,500 µs
1x: lateness at the subscriber p99.9 | e2e/Pacing/1x/default | sub-p999-µs | µs | |
1x: lateness at the subscriber max | e2e/Pacing/1x/default | sub-max-µs | µs | |
1x: drift at the subscriber (last − first event) | e2e/Pacing/1x/default | sub-drift-µs | µs | | ≤ 1,000 µs
1x: server, write returned p99 | e2e/Pacing/1x/default | p99-µs | µs | |
1x: server, time in the write p99 | e2e/Pacing/1x/default | write-p99-µs | µs | |
1x --precise: lateness at the subscriber p50 | e2e/Pacing/1x/precise | sub-p50-µs | µs | |
1x --precise: lateness at the subscriber p99 | e2e/Pacing/1x/precise | sub-p99-µs | µs | | ≤ 100 µs
1x --precise: lateness at the subscriber p99.9 | e2e/Pacing/1x/precise | sub-p999-µs | µs | |
1x --precise: lateness at the subscriber max | e2e/Pacing/1x/precise | sub-max-µs | µs | |
1x --precise: drift at the subscriber (last − first event) | e2e/Pacing/1x/precise | sub-drift-µs | µs | |
1x --precise: server, write returned p99 | e2e/Pacing/1x/precise | p99-µs | µs | |
1x --precise: server, time in the write p99 | e2e/Pacing/1x/precise | write-p99-µs | µs | |
floor, a writer that spins until each deadline (benche2e spin-serve, 1x): lateness at the subscriber p50 | e2e/Pacing/1x/spin | sub-p50-µs | µs | |
floor: lateness at the subscriber p99 | e2e/Pacing/1x/spin | sub-p99-µs | µs | |
floor: lateness at the subscriber p99.9 | e2e/Pacing/1x/spin | sub-p999-µs | µs | |
floor: its write returned p99 | e2e/Pacing/1x/spin | p99-µs | µs | |
floor: time in the write p99 | e2e/Pacing/1x/spin | write-p99-µs | µs | |
1x over gRPC (serve --grpc, one gRPC subscriber): lateness at the subscriber p50 | e2e/Pacing/1x/grpc | sub-p50-µs | µs | |
1x over gRPC: lateness at the subscriber p99 | e2e/Pacing/1x/grpc | sub-p99-µs | µs | | ≤ 1,500 µs
1x over gRPC: lateness at the subscriber p99.9 | e2e/Pacing/1x/grpc | sub-p999-µs | µs | |
1x over gRPC: lateness at the subscriber max | e2e/Pacing/1x/grpc | sub-max-µs | µs | |
1x over gRPC: drift at the subscriber (last − first event) | e2e/Pacing/1x/grpc | sub-drift-µs | µs | |
1x over gRPC: server, write returned p99 | e2e/Pacing/1x/grpc | p99-µs | µs | |
10x: lateness at the subscriber p50 | e2e/Pacing/10x/default | sub-p50-µs | µs | |
10x: lateness at the subscriber p99 | e2e/Pacing/10x/default | sub-p99-µs | µs | |
10x: lateness at the subscriber p99.9 | e2e/Pacing/10x/default | sub-p999-µs | µs | |
10x: lateness at the subscriber max | e2e/Pacing/10x/default | sub-max-µs | µs | |
10x: drift at the subscriber (last − first event) | e2e/Pacing/10x/default | sub-drift-µs | µs | |
10x: server, write returned p99 | e2e/Pacing/10x/default | p99-µs | µs | |
10x: server, time in the write p99 | e2e/Pacing/10x/default | write-p99-µs | µs | |
10x --precise: lateness at the subscriber p50 | e2e/Pacing/10x/precise | sub-p50-µs | µs | |
10x --precise: lateness at the subscriber p99 | e2e/Pacing/10x/precise | sub-p99-µs | µs | |
10x --precise: lateness at the subscriber p99.9 | e2e/Pacing/10x/precise | sub-p999-µs | µs | |
10x --precise: lateness at the subscriber max | e2e/Pacing/10x/precise | sub-max-µs | µs | |
10x --precise: drift at the subscriber (last − first event) | e2e/Pacing/10x/precise | sub-drift-µs | µs | |
10x --precise: server, write returned p99 | e2e/Pacing/10x/precise | p99-µs | µs | |
10x --precise: server, time in the write p99 | e2e/Pacing/10x/precise | write-p99-µs | µs | |
10x over gRPC: lateness at the subscriber p50 | e2e/Pacing/10x/grpc | sub-p50-µs | µs | |
10x over gRPC: lateness at the subscriber p99 | e2e/Pacing/10x/grpc | sub-p99-µs | µs | |
10x over gRPC: lateness at the subscriber p99.9 | e2e/Pacing/10x/grpc | sub-p999-µs | µs | |
10x over gRPC: lateness at the subscriber max | e2e/Pacing/10x/grpc | sub-max-µs | µs | |
10x over gRPC: drift at the subscriber (last − first event) | e2e/Pacing/10x/grpc | sub-drift-µs | µs | |
## Replay fan-out (aaep-replay serve --no-delay, WebSocket, aggregate)
1 subscriber | e2e/Fanout/subs=1 | msgs/s | messages/s | |
10 subscribers | e2e/Fanout/subs=10 | msgs/s | messages/s | |
100 subscribers | e2e/Fanout/subs=100 | msgs/s | messages/s | | ≥ 400,000 messages/s
100 subscribers + 1 stalled (not reading) | e2e/Fanout/subs=100+stalled | msgs/s | messages/s | |
## Check (aaep-replay check --json, $check_label messages of interleaved sessions)
throughput, wall clock | e2e/Check | events/s | events/s | | ≥ 450,000 events/s
throughput per CPU second | e2e/Check | events/cpu-s | events/s | |
peak memory (max RSS) | e2e/Check | peak-MiB | MiB | |
## Diff (aaep-replay diff --json of that capture with itself: $check_label messages each side)
throughput, wall clock, per side | e2e/Diff | events/s | events/s | |
time ÷ check's time on the same input (check of both sides, same run) | e2e/Diff | x-check | × | | ≤ 2 ×
time ÷ check's time on one side (same run) | e2e/Diff | x-check-one | × | |
CPU time ÷ check's CPU time on the same input | e2e/Diff | x-check-cpu | × | |
peak memory (max RSS) | e2e/Diff | peak-MiB | MiB | |
## OpenTelemetry export (aaep-replay export of that capture: --format otlp to a receiver on 127.0.0.1 that discards; --format otlp-json to /dev/null)
otlp: throughput, wall clock | e2e/ExportOTLP | events/s | events/s | |
otlp: speed ÷ check's speed on the same input (same run) | e2e/ExportOTLP | x-check | × | | ≥ 0.8 ×
otlp: CPU speed ÷ check's CPU speed on the same input | e2e/ExportOTLP | x-check-cpu | × | |
otlp: peak memory (max RSS) | e2e/ExportOTLP | peak-MiB | MiB | |
otlp-json: throughput, wall clock | e2e/ExportOTLPJSON | events/s | events/s | |
otlp-json: speed ÷ check's speed on the same input (same run) | e2e/ExportOTLPJSON | x-check | × | |
otlp-json: CPU speed ÷ check's CPU speed on the same input | e2e/ExportOTLPJSON | x-check-cpu | × | |
## Trace rendering (aaep-replay visualize -o FILE.svg, one session, end to end)
100 events | e2e/Trace/events=100 | ms | ms | |
1,000 events | e2e/Trace/events=1000 | ms | ms | |
10,000 events | e2e/Trace/events=10000 | ms | ms | | < 1,000 ms
Graphviz layout + SVG only, 10,000 events (render BenchmarkSVG) | render/SVG/events=10000 | ns/op | ms | 0.000001 |
## A live fleet checked every minute (benche2e -only fleet: 20 simulated recorders on the loopback S3 server, ~10 events/s each, rotating every 20 s, sessions of about a minute; aaep-replay check --state s3://… of the prefix after each minute's parts; the first round, which reads everything, not counted)
bytes read (new parts + the state) ÷ bytes of the new parts | e2e/Fleet/incremental | read-ratio | × | | ≤ 1.2 ×
bytes of parts read ÷ bytes of the new parts | e2e/Fleet/incremental | parts-ratio | × | |
GETs per new part | e2e/Fleet/incremental | GETs/part | | | 1
new bytes a minute (20 recorders) | e2e/Fleet/incremental | new-KiB | KiB | |
state kept in the bucket | e2e/Fleet/incremental | state-KiB | KiB | |
check's time for a round | e2e/Fleet/incremental | check-ms | ms | |
the whole prefix without state: bytes read ÷ bytes stored | e2e/Fleet/full | parts-ratio | × | |
3 shards (--shard I/3, each with its state) merged (--merge-reports): the same JSON as one check, byte for byte (1: yes) | e2e/Fleet/shards | merge-equal | | | 1
3 shards: bytes read by all ÷ bytes stored | e2e/Fleet/shards | read-ratio | × | |
3 shards: GETs per part, all shards | e2e/Fleet/shards | GETs/part | | |
## Seek in a $seek_label capture (warm page cache)
open + seek to the middle + first record (capfile API) | e2e/$seek_key | open+middle-ms | ms | | < 50 ms
seek to a random time on an open reader | e2e/$seek_key | seek-ms | ms | |
serve --from middle: connect to first event | e2e/$seek_key | serve-first-event-ms | ms | | < 50 ms
s3:// object on a local S3 server (objstore.Remote): HTTP requests to open + seek to the middle + first record | e2e/$seek_key/remote | requests | | | ≤ 3
s3:// object: bytes read for it | e2e/$seek_key/remote | KiB-read | KiB | |
s3:// object: time for it | e2e/$seek_key/remote | open+middle-ms | ms | |
## show --pace (the demo capture at --speed 20; lateness = line written − due time)
lateness p99 | show/Pace | p99-late-µs | µs | |
lateness max | show/Pace | max-late-µs | µs | |
drift at the last line | show/Pace | drift-µs | µs | |
## aaep-replay view (the $seek_label capture above; a session of 100,000 events)
view FILE: start to listening (header and index read) | e2e/$view_key | listening-ms | ms | |
view FILE: start to first page answered (page, summary, sessions, 200 messages) | e2e/$view_key | first-page-ms | ms | | < 1,000 ms
timeline window of 10 s (10,000 events) from the middle | e2e/$view_key | timeline-window-ms | ms | |
100,000-event session: whole timeline (density per lane) | e2e/ViewSession/events=100000 | whole-ms | ms | |
100,000-event session: zoomed window of ~5,000 events | e2e/ViewSession/events=100000 | window-ms | ms | |
100,000-event session: steps list for the trace | e2e/ViewSession/events=100000 | steps-ms | ms | |
## aaep-replay view in headless Chromium (chromedp), as a user: $view_many_label events in $view_sessions sessions of 1,000, and one session of $view_long_label events
many sessions: page opened to its first rows on screen | e2e/ViewBrowser/events=$view_many | first-rows-ms | ms | | ≤ 1,000 ms
many sessions: page opened to the check done (verdicts in) | e2e/ViewBrowser/events=$view_many | checked-ms | ms | |
many sessions: select a session to its first rows on screen (median of 5) | e2e/ViewBrowser/events=$view_many | select-session-ms | ms | | ≤ 300 ms
many sessions: click a message to its inspector (median of 9) | e2e/ViewBrowser/events=$view_many | click-inspector-ms | ms | | ≤ 100 ms
many sessions: largest answer of the page's data API | e2e/ViewBrowser/events=$view_many | largest-answer-KiB | KiB | | ≤ 1,024 KiB
many sessions: view's peak resident memory | e2e/ViewBrowser/events=$view_many | view-peak-MiB | MiB | | ≤ 300 MiB
long session: page opened to its first rows on screen | e2e/ViewBrowser/session=$view_long | first-rows-ms | ms | | ≤ 1,000 ms
long session: select it to its first rows on screen | e2e/ViewBrowser/session=$view_long | select-session-ms | ms | | ≤ 300 ms
long session: click a message to its inspector | e2e/ViewBrowser/session=$view_long | click-inspector-ms | ms | | ≤ 100 ms
long session: largest answer of the page's data API | e2e/ViewBrowser/session=$view_long | largest-answer-KiB | KiB | | ≤ 1,024 KiB
long session: view's peak resident memory | e2e/ViewBrowser/session=$view_long | view-peak-MiB | MiB | | ≤ 300 MiB
long session: axe-core violations with it selected | e2e/ViewBrowser/session=$view_long | axe-violations | | | 0
## aaep-replay view --follow in headless Chromium while aaep-capture records a paced SSE producer (20 events/s, its 100 ms flush): a record's receive time to its row on the page
receive time to row, median | e2e/ViewLive/rate=20 | p50-ms | ms | | ≤ 500 ms
receive time to row, 95th percentile | e2e/ViewLive/rate=20 | p95-ms | ms | | ≤ 500 ms
receive time to row, largest | e2e/ViewLive/rate=20 | max-ms | ms | |
rows measured | e2e/ViewLive/rate=20 | rows | | |
## aaep-replay view at $shape_label messages in three shapes (check done; each filter asked once, not cached)
√n sessions of √n ($shape_square): check done | e2e/ViewShape/$shape_square | checked-ms | ms | |
√n sessions of √n ($shape_square): filter session == X (the longest session) | e2e/ViewShape/$shape_square | session-filter-ms | ms | | ≤ 100 ms
√n sessions of √n ($shape_square): filter index > n/2 | e2e/ViewShape/$shape_square | index-filter-ms | ms | | ≤ 100 ms
√n sessions of √n ($shape_square): filter index range of 1,000 | e2e/ViewShape/$shape_square | range-filter-ms | ms | | ≤ 100 ms
√n sessions of √n ($shape_square): text search of the whole capture | e2e/ViewShape/$shape_square | search-ms | ms | |
√n sessions of √n ($shape_square): view's peak resident memory | e2e/ViewShape/$shape_square | view-peak-MiB | MiB | | ≤ 300 MiB
short sessions (check's bulk capture, ~11.5 messages each): check done | e2e/ViewShape/short-sessions/events=$shape_n | checked-ms | ms | |
short sessions (check's bulk capture, ~11.5 messages each): filter session == X (the longest session) | e2e/ViewShape/short-sessions/events=$shape_n | session-filter-ms | ms | | ≤ 100 ms
short sessions (check's bulk capture, ~11.5 messages each): filter index > n/2 | e2e/ViewShape/short-sessions/events=$shape_n | index-filter-ms | ms | | ≤ 100 ms
short sessions (check's bulk capture, ~11.5 messages each): filter index range of 1,000 | e2e/ViewShape/short-sessions/events=$shape_n | range-filter-ms | ms | | ≤ 100 ms
short sessions (check's bulk capture, ~11.5 messages each): text search of the whole capture | e2e/ViewShape/short-sessions/events=$shape_n | search-ms | ms | |
short sessions (check's bulk capture, ~11.5 messages each): view's peak resident memory | e2e/ViewShape/short-sessions/events=$shape_n | view-peak-MiB | MiB | | ≤ 300 MiB
one session: check done | e2e/ViewShape/1x$shape_n | checked-ms | ms | |
one session: filter session == X (the longest session) | e2e/ViewShape/1x$shape_n | session-filter-ms | ms | | ≤ 100 ms
one session: filter index > n/2 | e2e/ViewShape/1x$shape_n | index-filter-ms | ms | | ≤ 100 ms
one session: filter index range of 1,000 | e2e/ViewShape/1x$shape_n | range-filter-ms | ms | | ≤ 100 ms
one session: text search of the whole capture | e2e/ViewShape/1x$shape_n | search-ms | ms | |
one session: view's peak resident memory | e2e/ViewShape/1x$shape_n | view-peak-MiB | MiB | | ≤ 300 MiB
## aaep-replay view at $shape_label2 messages in the same three shapes (one run each): its memory grows less than linearly
√n sessions of √n ($shape_square2): check done | e2e/ViewShape/$shape_square2 | checked-ms | ms | |
√n sessions of √n ($shape_square2): filter session == X (the longest session) | e2e/ViewShape/$shape_square2 | session-filter-ms | ms | | ≤ 100 ms
√n sessions of √n ($shape_square2): view's peak resident memory | e2e/ViewShape/$shape_square2 | view-peak-MiB | MiB | | < 2 × its 1M row
short sessions (~11.5 messages each): check done | e2e/ViewShape/short-sessions/events=$shape_n2 | checked-ms | ms | |
short sessions (~11.5 messages each): filter session == X (the longest session) | e2e/ViewShape/short-sessions/events=$shape_n2 | session-filter-ms | ms | | ≤ 100 ms
short sessions (~11.5 messages each): view's peak resident memory | e2e/ViewShape/short-sessions/events=$shape_n2 | view-peak-MiB | MiB | | < 2 × its 1M row
one session: check done | e2e/ViewShape/1x$shape_n2 | checked-ms | ms | |
one session: filter session == X | e2e/ViewShape/1x$shape_n2 | session-filter-ms | ms | | ≤ 100 ms
one session: view's peak resident memory | e2e/ViewShape/1x$shape_n2 | view-peak-MiB | MiB | | < 2 × its 1M row
## Recorder cost (aaep-capture, one SSE producer at a steady rate, default 100 ms flush; the reference Python tool was not available to measure beside it)
10 events/s: peak resident memory | e2e/Recorder/rate=10 | peak-MiB | MiB | | ≤ 16 MiB
10 events/s: bytes per event in the capture written live (100 ms flush) | e2e/Recorder/rate=10 | file-B/event | B/event | | ≤ 45 B/event
10 events/s: CPU per event, whole run (start-up included) | e2e/Recorder/rate=10 | cpu-µs/event | µs | |
10 events/s, aaep-capture-grpc (gRPC linked in) on the same SSE: peak resident memory | e2e/Recorder/rate=10/grpc-linked | peak-MiB | MiB | | aaep-capture links no gRPC
10 events/s: CPU per event, steady state | e2e/Recorder/rate=10 | steady-cpu-µs/event | µs | |
10 events/s to s3:// (spooled, a part uploaded every 5 s, /metrics scraped every 5 s, 120 s; quick: 20 s): peak resident memory | e2e/Recorder/rate=10/s3 | peak-MiB | MiB | | ≤ 16 MiB
10 events/s to s3://: CPU per event, steady state | e2e/Recorder/rate=10/s3 | steady-cpu-µs/event | µs | |
1,000 events/s: peak resident memory | e2e/Recorder/rate=1000 | peak-MiB | MiB | |
1,000 events/s: CPU per event, whole run | e2e/Recorder/rate=1000 | cpu-µs/event | µs | |
1,000 events/s: CPU per event, steady state | e2e/Recorder/rate=1000 | steady-cpu-µs/event | µs | |
10,000 events/s: peak resident memory | e2e/Recorder/rate=10000 | peak-MiB | MiB | |
10,000 events/s: CPU per event, whole run | e2e/Recorder/rate=10000 | cpu-µs/event | µs | |
10,000 events/s: CPU per event, steady state | e2e/Recorder/rate=10000 | steady-cpu-µs/event | µs | |
EOF

table=$(cat "$out/gobench.txt" "$out/e2e.txt" | "$work/benchtable" -rows "$work/rows.txt")
elapsed=$(( $(date +%s) - started ))
load_end=$(cut -d' ' -f1-3 /proc/loadavg)
{
	echo "## Performance"
	echo
	echo "Machine: $machine. Run: $when, $mode, $runs runs per figure (pacing: at most 3), took $((elapsed / 60))m$((elapsed % 60))s; load average $load_start at the start, $load_end at the end."
	echo
	echo "Reproduce: \`make bench\` (or \`BENCH_QUICK=1 make bench\` for a two-minute version). Median of the runs, spread min – max; loopback only."
	echo
	echo "$table"
} > "$out/bench.md"
cat "$out/bench.md"
log "done in ${elapsed}s; table in $out/bench.md"
exit "$status"
