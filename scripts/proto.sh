#!/usr/bin/env bash
# proto.sh: regenerate the Go code of proto/ (make proto). protoc comes from
# Debian's protobuf-compiler; its two Go plugins run through `go run` at the
# pinned versions below, so that everyone generates the same code.
set -euo pipefail
cd "$(dirname "$0")/.."

GO="${GO:-go}"
PROTOC_GEN_GO="google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12"
PROTOC_GEN_GO_GRPC="google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.0"

if ! command -v protoc >/dev/null 2>&1; then
  echo "proto: protoc is needed (Debian: apt-get install protobuf-compiler)" >&2
  exit 1
fi

plugins="$(mktemp -d)"
trap 'rm -rf "$plugins"' EXIT
for p in "protoc-gen-go $PROTOC_GEN_GO" "protoc-gen-go-grpc $PROTOC_GEN_GO_GRPC"; do
  set -- $p
  printf '#!/bin/sh\nexec %s run %s "$@"\n' "$GO" "$2" >"$plugins/$1"
  chmod +x "$plugins/$1"
done

module="github.com/aaep-tools/aaepkit"
protoc -I proto \
  --plugin=protoc-gen-go="$plugins/protoc-gen-go" \
  --plugin=protoc-gen-go-grpc="$plugins/protoc-gen-go-grpc" \
  --go_out=. --go_opt=module="$module" \
  --go-grpc_out=. --go-grpc_opt=module="$module" \
  aaep/v1/aaep.proto
