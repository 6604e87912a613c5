// Command aaep-capture records live AAEP event streams (Server-Sent Events,
// WebSocket, Unix sockets, stdio JSON-RPC, NDJSON files) into capture files.
package main

import "os"

func main() { os.Exit(Main(os.Args[1:])) }
