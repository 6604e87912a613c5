# aaep-capture / aaep-replay
#
#   make demo    build both tools and run the end-to-end demo on 127.0.0.1
#   make test    vet, format check and every test (with the race detector)
#   make bench   Go benchmarks plus end-to-end measurements, one table
#   make fuzz    fuzz every fuzz target for FUZZTIME each
#   make lint    gofmt, go vet, macOS and Windows builds of the tools (and vet for Windows)
#   make staticcheck  staticcheck (fetched from the module proxy on first use)
#   make proto   regenerate grpcbind/aaepv1 from proto/ (protoc; pinned Go plugins)

GO       ?= go
BIN      := bin
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X main.version=$(VERSION) -X github.com/aaep-tools/aaepkit/internal/capturecmd.version=$(VERSION)
FUZZTIME ?= 30s
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: all build test testdeps lint staticcheck bench fuzz demo clean proto

all: build

# CGO_ENABLED=0: no tool needs C (Go's own DNS resolver, a static binary);
# a recorder built with cgo maps the C library too, about 1.2 MiB resident.
build:
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/ ./cmd/...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	GOOS=darwin GOARCH=arm64 $(GO) build -o /dev/null ./cmd/...   # the tools build for macOS too
	GOOS=windows GOARCH=amd64 $(GO) build -o /dev/null ./cmd/...  # and for Windows,
	GOOS=windows GOARCH=amd64 $(GO) vet ./...                      # tests included

staticcheck:
	$(GO) run $(STATICCHECK) ./...

# The slowest test packages are named first so that they start first
# (go test runs two packages at once, in the order given; ./... adds the
# rest once): left in ./...'s order, internal/viewer started last and ran
# alone at the end.
SLOW_TESTS = ./internal/viewer ./internal/subtest ./cmd/aaep-replay ./internal/capturecmd

test: lint testdeps
	AAEP_REQUIRE_TESTDEPS=1 AAEP_NPM_DIR=$(CURDIR)/.cache/npm $(GO) test -race -timeout 9m $(SLOW_TESTS) ./...

testdeps:
	./scripts/testdeps.sh

proto:
	GO=$(GO) ./scripts/proto.sh

fuzz:
	GO=$(GO) ./scripts/fuzz.sh $(FUZZTIME)

bench: build testdeps
	./scripts/bench.sh

demo: build
	./scripts/demo.sh

clean:
	rm -rf $(BIN) demo-out bench-out
