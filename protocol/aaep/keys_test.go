package aaep

import (
	"bytes"
	"os"
	"testing"

	"github.com/aaep-tools/aaepkit/internal/keytable"
)

// TestKeysGenerated fails while keys_gen.go is not what keys.txt
// generates: run go generate ./protocol/aaep after editing the list.
func TestKeysGenerated(t *testing.T) {
	src, err := os.ReadFile("keys.txt")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := keytable.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	want, err := keytable.Generate("aaep", "key", "kUnknown", "numKeys", "keyNames", "lookupKey", "keys.txt", entries)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("keys_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("keys_gen.go is stale: run go generate ./protocol/aaep")
	}
	if len(entries) != int(numKeys)-1 {
		t.Fatalf("%d entries in keys.txt, %d keys compiled", len(entries), numKeys-1)
	}
}

// TestKeyLookup: every key's name looks up to the key, other names to
// kUnknown, without allocating.
func TestKeyLookup(t *testing.T) {
	for k := kUnknown + 1; k < numKeys; k++ {
		if got := lookupKeyBytes([]byte(keyNames[k])); got != k {
			t.Errorf("lookupKey(%q) = %d, want %d", keyNames[k], got, k)
		}
	}
	for _, name := range []string{"", "Type", "type ", "sessionId", "x"} {
		if k := lookupKey(name); k != kUnknown {
			t.Errorf("lookupKey(%q) = %d, want kUnknown", name, k)
		}
	}
	b := []byte("summary_detailed")
	if n := testing.AllocsPerRun(100, func() { lookupKeyBytes(b) }); n != 0 {
		t.Errorf("lookupKeyBytes allocates %v times", n)
	}
}
