//go:build !nogrpc

package capturecmd

// The gRPC source: grpc:// and grpcs:// endpoints. A build with -tags
// nogrpc leaves it (and the gRPC library) out, so that make bench can
// measure what linking it costs the recorder.
import _ "github.com/aaep-tools/aaepkit/transport/grpcsource"
