// Command keytable writes a protocol model's table of known member names
// from its key list (see package internal/keytable). A go:generate line in
// the model's directory runs it:
//
//	go run ../../internal/tools/keytable -in keys.txt -out keys_gen.go -pkg aaep
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/aaep-tools/aaepkit/internal/keytable"
)

func main() {
	in := flag.String("in", "keys.txt", "the key list")
	out := flag.String("out", "keys_gen.go", "the Go file to write")
	pkg := flag.String("pkg", "", "the Go package of the output")
	flag.Parse()
	if err := run(*in, *out, *pkg); err != nil {
		fmt.Fprintln(os.Stderr, "keytable:", err)
		os.Exit(1)
	}
}

func run(in, out, pkg string) error {
	if pkg == "" {
		return fmt.Errorf("-pkg is required")
	}
	src, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	entries, err := keytable.Parse(src)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	code, err := keytable.Generate(pkg, "key", "kUnknown", "numKeys", "keyNames", "lookupKey", in, entries)
	if err != nil {
		return err
	}
	return os.WriteFile(out, code, 0o644)
}
