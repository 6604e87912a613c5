package capturecmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/transport"
)

// The gRPC source links grpc-go and protobuf (about 110 packages), whose
// initialisation and pages cost every recorder some 5 MiB of resident
// memory whether or not it records gRPC. So aaep-capture is built without
// it, and hands a command line with a grpc:// or grpcs:// endpoint to
// aaep-capture-grpc, the same recorder with the gRPC source registered,
// installed beside it (go install ./cmd/..., make build).

// SiblingName is the recorder with the gRPC source.
const SiblingName = "aaep-capture-grpc"

// siblingEnv marks a process started by handing over, so that a sibling
// that cannot record gRPC either does not hand over again. Main reads it
// into handedOver and clears it, so that the processes a recorder starts
// (--exec) do not inherit it.
const siblingEnv = "AAEP_CAPTURE_HANDED_OVER"

var handedOver bool

func takeHandedOver() {
	handedOver = os.Getenv(siblingEnv) != ""
	_ = os.Unsetenv(siblingEnv)
}

// sibSchemes are the URL schemes the sibling records.
var sibSchemes = []string{"grpc", "grpcs"}

// argsKey carries the command line in the context, for handing it over.
type argsKey struct{}

func withArgs(ctx context.Context, args []string) context.Context {
	return context.WithValue(ctx, argsKey{}, args)
}

// needsSibling returns the first endpoint of a scheme this build does not
// record and the sibling does, or "".
func needsSibling(endpoints []string) string {
	for _, e := range endpoints {
		scheme, _, ok := strings.Cut(e, "://")
		if !ok {
			continue
		}
		for _, s := range sibSchemes {
			if strings.EqualFold(scheme, s) && !transport.Registered(s) {
				return e
			}
		}
	}
	return ""
}

// handOver runs the sibling with this process's command line in its place
// (Unix: exec, so that its signals, standard streams and exit status are
// this process's; Windows: as a child whose exit status is returned). It
// returns only on failure (or, on Windows, with the child's status).
func handOver(o *options, endpoint string) error {
	path, err := findSibling()
	if err == nil && handedOver {
		err = fmt.Errorf("%s does not record it either", path)
	}
	if err != nil {
		return cli.Unavailable(fmt.Errorf("endpoint %s: gRPC is recorded by %s, the recorder with the gRPC source, which is not installed (%w); "+
			"install it beside aaep-capture: in a checkout of aaepkit `go install ./cmd/...` installs both, `make build` puts both in ./bin",
			transport.SafeURL(endpoint), SiblingName, err))
	}
	args, _ := o.ctx.Value(argsKey{}).([]string)
	if err := os.Setenv(siblingEnv, "1"); err != nil {
		return cli.Unavailable(err)
	}
	return runSibling(o.ctx, path, args)
}

// findSibling returns the sibling beside this executable, else on PATH.
func findSibling() (string, error) {
	name := SiblingName
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	if self, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(self); err == nil {
			self = real
		}
		p := filepath.Join(filepath.Dir(self), name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	p, err := exec.LookPath(SiblingName)
	if err != nil {
		var ee *exec.Error
		if errors.As(err, &ee) {
			err = ee.Err
		}
		return "", fmt.Errorf("not beside this executable nor on PATH: %w", err)
	}
	return p, nil
}
