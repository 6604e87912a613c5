#!/usr/bin/env bash
# testdeps.sh: install what the tests need when it is missing, so `make test`
# passes by itself on a fresh Debian machine with Go.
#
#   Debian packages: zstd (capture files checked by the real zstd),
#                    librsvg2-bin (PNG traces), chromium (browser tests),
#                    python3 (the scripted subscriber), curl (the README's
#                    quick start), npm (to install the npm packages),
#                    protobuf-compiler and python3-grpcio (the Python gRPC
#                    peer, run by /usr/bin/python3 whatever python3 is first
#                    on PATH), util-linux (setpriv: tests run as two
#                    users).
#   npm packages:    listed in scripts/npm-test-packages, installed into
#                    .cache/npm (AAEP_NPM_DIR overrides), found by the tests
#                    through AAEP_NPM_DIR.
#   Jaeger:          github.com/jaegertracing/jaeger/cmd/jaeger, pinned in
#                    the module of its own scripts/jaeger (so the project's
#                    dependencies stay lean), built from the Go module proxy
#                    once into .cache/bin/jaeger (AAEP_JAEGER overrides) for
#                    the OTLP export's end-to-end test; several minutes the
#                    first time, skipped when the binary is there.
#
# make test then runs the tests with AAEP_REQUIRE_TESTDEPS=1: a test whose
# dependency is missing fails instead of being skipped (internal/testdeps).
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v zstd >/dev/null 2>&1 || need+=(zstd)
command -v rsvg-convert >/dev/null 2>&1 || need+=(librsvg2-bin)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v python3 >/dev/null 2>&1 || need+=(python3)
command -v curl >/dev/null 2>&1 || need+=(curl)
command -v npm >/dev/null 2>&1 || need+=(npm)
command -v protoc >/dev/null 2>&1 || need+=(protobuf-compiler)
/usr/bin/python3 -c 'import grpc' >/dev/null 2>&1 || need+=(python3-grpcio)
command -v setpriv >/dev/null 2>&1 || need+=(util-linux)
if [ ${#need[@]} -gt 0 ]; then
  echo "testdeps: installing ${need[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

npmdir="${AAEP_NPM_DIR:-$PWD/.cache/npm}"
if [ -s scripts/npm-test-packages ]; then
  missing=0
  while read -r pkg; do
    [ -z "$pkg" ] && continue
    name="${pkg%@*}"
    [ -d "$npmdir/node_modules/$name" ] || missing=1
  done < <(grep -v '^#' scripts/npm-test-packages)
  if [ "$missing" -eq 1 ]; then
    command -v npm >/dev/null 2>&1 || { echo "testdeps: npm is needed for the npm test packages" >&2; exit 1; }
    mkdir -p "$npmdir"
    echo "testdeps: installing npm test packages into $npmdir" >&2
    (cd "$npmdir" && npm install --no-save --no-audit --no-fund --silent $(grep -v '^#' "$OLDPWD/scripts/npm-test-packages" | tr '\n' ' ')) >&2
  fi
fi

jaeger="${AAEP_JAEGER:-$PWD/.cache/bin/jaeger}"
if [ ! -x "$jaeger" ]; then
  echo "testdeps: building jaeger into $jaeger (once; several minutes)" >&2
  mkdir -p "$(dirname "$jaeger")"
  (cd scripts/jaeger && go build -o "$jaeger.tmp" github.com/jaegertracing/jaeger/cmd/jaeger)
  mv "$jaeger.tmp" "$jaeger"
fi
