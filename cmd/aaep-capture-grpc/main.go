// Command aaep-capture-grpc is aaep-capture with the gRPC source (grpc://,
// grpcs://) linked in. aaep-capture hands command lines with a gRPC
// endpoint to it, so that recorders of other transports do not pay for
// grpc-go's memory; run directly it records every source aaep-capture does.
package main

import (
	"os"

	"github.com/aaep-tools/aaepkit/internal/capturecmd"
	_ "github.com/aaep-tools/aaepkit/transport/grpcsource"
)

func main() { os.Exit(capturecmd.Main(os.Args[1:])) }
