#!/usr/bin/env bash
# make fuzz: run every fuzz target of the module for FUZZTIME each (go test
# accepts one -fuzz target per run). Targets are found, not listed, so a new
# FuzzXxx is fuzzed without editing this file. Their seed corpora already run
# in every `go test`.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-30s}
go=${GO:-go}

grep -rl --include='*_test.go' '^func Fuzz' . | sort | while read -r file; do
  pkg=./$(dirname "${file#./}")
  grep -o '^func Fuzz[A-Za-z0-9_]*' "$file" | sed 's/^func //' | while read -r name; do
    echo "== $pkg $name ($fuzztime)"
    "$go" test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -fuzzminimizetime 2s "$pkg"
  done
done
