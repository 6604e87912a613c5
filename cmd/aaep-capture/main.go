// Command aaep-capture records live AAEP event streams (Server-Sent Events,
// WebSocket, Unix sockets, stdio JSON-RPC, NDJSON files) into capture files.
package main

import (
	"os"

	"github.com/aaep-tools/aaepkit/internal/capturecmd"
)

func main() { os.Exit(capturecmd.Main(os.Args[1:])) }
