#!/usr/bin/env bash
# record.sh: makes the real recordings the tests of package recdiff read,
# with the project's own tools, as a user makes them (run from the
# repository's root after `make build`; every process it starts is stopped
# on any exit path; everything stays on 127.0.0.1):
#
#   v1.aaep      the demo producer (aaep-replay serve of testdata/demo.aaep)
#                recorded by aaep-capture over WebSocket
#   v1-again.aaep the same behaviour recorded again, every id changed
#                (sess_, evt_, rpl_, call_, out_: the hex reversed) and at
#                another speed, so ids and times differ
#   v2.aaep      the same, with the first session's request changed and its
#                first tool call (invocation and completion) gone
#   sub-good.aaep, sub-flip.aaep, sub-nodeclare.aaep
#                aaep-replay test --record of the confirmation-reject
#                scenario with the scripted subscriber (internal/subtest's
#                sub.py) behaving, answering accept where the user
#                rejected, and subscribing without declaring that it can
#                reply
set -euo pipefail
cd "$(dirname "$0")/../../.."

bin=${BIN:-bin}
out=internal/recdiff/testdata
work=$(mktemp -d "${TMPDIR:-/tmp}/recdiff.XXXXXX")
pids=()
cleanup() {
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
	for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The sources: the demo capture, with its ids changed, and with its first
# session's request and first tool call changed.
"$bin/aaep-replay" export --with-meta testdata/demo.aaep >"$work/demo.jsonl"
perl -pe 's/\b(sess|evt|rpl|call|out)_([0-9a-f]+)/$1."_".reverse($2)/ge' "$work/demo.jsonl" >"$work/again.jsonl"
first=$(sed -n 's/.*"type":"aaep:agent.session.started","event_id":"[^"]*","session_id":"\([^"]*\)".*/\1/p' "$work/demo.jsonl" | head -n 1)
tool=$(grep -n "\"session_id\":\"$first\".*aaep:agent.tool.invoked\|aaep:agent.tool.invoked.*\"session_id\":\"$first\"" "$work/demo.jsonl" | head -n 1 | cut -d: -f1)
done_=$(grep -n "aaep:agent.tool.completed\",\"event_id\":\"[^\"]*\",\"session_id\":\"$first\"" "$work/demo.jsonl" | head -n 1 | cut -d: -f1)
sed -e "${tool}d" -e "${done_}d" \
	-e "/\"session_id\":\"$first\"/s/\"summary_normal\":\"Booking a return flight from Lisbon to Oslo/\"summary_normal\":\"Booking a one-way flight from Lisbon to Oslo/" \
	"$work/demo.jsonl" >"$work/v2.jsonl"
for s in again v2; do
	"$bin/aaep-replay" import -q "$work/$s.jsonl" -o "$work/$s.aaep"
done
cp testdata/demo.aaep "$work/v1.aaep"

# record SOURCE SPEED OUT: serve SOURCE and record it over WebSocket.
record() {
	local src=$1 speed=$2 dst=$3 addr= events
	"$bin/aaep-replay" serve "$src" --listen 127.0.0.1:0 --speed "$speed" >"$work/serve.log" 2>"$work/serve.err" &
	local pid=$!
	pids+=("$pid")
	for _ in $(seq 1 100); do
		addr=$(sed -n 's#.* on ws://\([^/]*\)/aaep/v1/ws.*#\1#p' "$work/serve.err" | head -n 1)
		[ -n "$addr" ] && break
		sleep 0.1
	done
	[ -n "$addr" ] || { echo "record.sh: serve did not start" >&2; cat "$work/serve.err" >&2; exit 1; }
	events=$("$bin/aaep-replay" info --json "$src" | sed -n 's/^  *"received": \([0-9]*\),*$/\1/p' | head -n 1)
	rm -f "$dst"
	"$bin/aaep-capture" --endpoint "ws://$addr/aaep/v1/ws" --subscribe-file testdata/demo-subscribe.json \
		--output "$dst" --max-events "$events" --duration 60s --quiet
	kill "$pid"
	wait "$pid" 2>/dev/null || true
}
record "$work/v1.aaep" 20 "$out/v1.aaep"
record "$work/again.aaep" 30 "$out/v1-again.aaep"
record "$work/v2.aaep" 20 "$out/v2.aaep"

# The subscriber's replies, recorded by aaep-replay test.
for mode in good flip nodeclare; do
	rm -f "$out/sub-$mode.aaep"
	"$bin/aaep-replay" test -q --scenario confirmation-reject \
		--exec "python3 internal/subtest/testdata/sub.py {url} $mode" --record "$out/sub-$mode.aaep" >/dev/null || true
done
ls -l "$out"/*.aaep
