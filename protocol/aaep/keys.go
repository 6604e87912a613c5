package aaep

import "math/bits"

//go:generate go run ../../internal/tools/keytable -in keys.txt -out keys_gen.go -pkg aaep

// key identifies a known top-level field name (envelope, core payload and
// handshake/reply fields), so that rules read fields by index, not by hash.
// The keys, their names and lookupKey are generated from keys.txt
// (keys_gen.go).
type key uint8

// lookupKeyBytes is lookupKey for a byte slice, without allocating.
func lookupKeyBytes(b []byte) key { return lookupKey(string(b)) }

// keySet is a set of keys.
type keySet [2]uint64

func (s *keySet) add(k key) { s[k>>6] |= 1 << (k & 63) }

// minus returns the keys of s that are not in t.
func (s keySet) minus(t keySet) keySet { return keySet{s[0] &^ t[0], s[1] &^ t[1]} }

// each calls fn for every key of s in key order.
func (s keySet) each(fn func(k key)) {
	for w := range s {
		for set := s[w]; set != 0; set &= set - 1 {
			fn(key(w*64 + bits.TrailingZeros64(set)))
		}
	}
}
func setOf(keys ...key) (s keySet) {
	for _, k := range keys {
		s.add(k)
	}
	return s
}
