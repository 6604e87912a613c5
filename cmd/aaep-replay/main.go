// Command aaep-replay replays, checks, visualizes and edits AAEP capture files.
package main

import "os"

func main() { os.Exit(Main(os.Args[1:])) }
