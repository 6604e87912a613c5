#!/usr/bin/env bash
# make demo: replay the bundled multi-session capture with aaep-replay on
# 127.0.0.1 (the embedded default producer), record it with aaep-capture over
# WebSocket and over SSE, check the recording, draw its trace, and say where
# everything is. Every process started here is stopped on any exit path.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=bin
out=demo-out
input=testdata/demo.aaep
speed=${DEMO_SPEED:-10}

mkdir -p "$out"
rm -f "$out"/*

pids=()
cleanup() {
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${pids[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say() { printf '%s\n' "$*"; }

# 1. The producer: aaep-replay serves the bundled capture on a free port.
"$bin/aaep-replay" serve "$input" --listen 127.0.0.1:0 --speed "$speed" >"$out/replay.log" 2>"$out/replay.err" &
pids+=($!)
addr=
for _ in $(seq 1 100); do
  addr=$(sed -n 's#.* on ws://\([^/]*\)/aaep/v1/ws.*#\1#p' "$out/replay.err" | head -n 1)
  [ -n "$addr" ] && break
  if ! kill -0 "${pids[0]}" 2>/dev/null; then
    say "demo: aaep-replay did not start:"; cat "$out/replay.err"; exit 1
  fi
  sleep 0.1
done
[ -n "$addr" ] || { say "demo: aaep-replay did not say where it listens"; exit 1; }

events=$("$bin/aaep-replay" info --json "$input" | sed -n 's/^  *"received": \([0-9]*\),*$/\1/p' | head -n 1)
say "Replaying $input ($events events, 8 sessions) at ${speed}x on $addr"

# 2. Two recorders, one per transport, each stopping after the whole stream.
# The recorder says it can deliver replies, so the producer sends it the
# confirmation and clarification events too (§5.3.1.4).
"$bin/aaep-capture" --endpoint "ws://$addr/aaep/v1/ws" --subscribe-file testdata/demo-subscribe.json --output "$out/ws.aaep" --max-events "$events" --duration 60s --quiet --json >"$out/capture-ws.json" &
ws=$!; pids+=($ws)
"$bin/aaep-capture" --endpoint "http://$addr/aaep/v1/events" --subscribe --subscribe-file testdata/demo-subscribe.json --output "$out/sse.aaep" --max-events "$events" --duration 60s --quiet --json >"$out/capture-sse.json" &
sse=$!; pids+=($sse)
wait "$ws" || { say "demo: WebSocket capture failed (exit $?)"; exit 1; }
wait "$sse" || { say "demo: SSE capture failed (exit $?)"; exit 1; }

# 3. Check the WebSocket recording; exit 1 means it found MUST-level violations.
set +e
# The replayed events keep their original 2026-11-02 timestamps, so the
# rule against backdated timestamps would flag every session of a replay.
"$bin/aaep-replay" check --disable SEQ-TIMESTAMP-BACKDATED "$out/ws.aaep" >"$out/report.txt"
check=$?
set -e
[ "$check" -le 1 ] || { say "demo: check failed:"; cat "$out/report.txt"; exit 1; }

# 4. Draw the trace.
"$bin/aaep-replay" visualize "$out/ws.aaep" -o "$out/trace.svg" 2>"$out/visualize.log"

say ""
say "Recorded over WebSocket: $out/ws.aaep ($("$bin/aaep-replay" info "$out/ws.aaep" | sed -n 's/^records: *//p' | head -n 1))"
say "Recorded over SSE:       $out/sse.aaep ($("$bin/aaep-replay" info "$out/sse.aaep" | sed -n 's/^records: *//p' | head -n 1))"
say "Check report:            $out/report.txt"
say "State-machine trace:     $out/trace.svg (violations in red)"
say ""
say "What the checker found:"
grep -E '^  MUST' "$out/report.txt" | head -n 8 | cut -c1-150
tail -n 2 "$out/report.txt"
say ""
say "The FAIL is the point: two sessions of the bundled capture break the protocol on purpose"
say "(a broken state chain, a tool completion with no invocation, a confirmation that is not critical)."
say "Open $out/trace.svg to see each one in red; the demo itself succeeded."
