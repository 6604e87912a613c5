// Package payload is the one JSON front end of aaepkit: a single strict
// RFC 8259 pass over a message's payload that yields everything the
// recorder, the filters, the viewer and the protocol checks read from it.
//
// One call to (*Doc).Decode gives:
//
//   - validity, and for invalid input the first error: its byte offset in
//     the payload and a sentence saying what is wrong (Err);
//   - the encoding: a UTF-8 byte-order mark before the JSON is skipped and
//     reported (BOM), and UTF-8 is validated (UTF8) — by a pass of its own
//     only when a string holds a byte of 0x80 or above, or the payload is
//     not JSON, since an ASCII JSON text is UTF-8;
//   - for an object, its top-level members in order (Members), duplicate
//     names detected (Stats.Dup), looked up by name (Get: the last of
//     repeated members wins, as in encoding/json);
//   - the statistics the size and range rules need (Stats): nesting depth,
//     the longest string, the first integer beyond ±2^53, non-ASCII bytes;
//   - the routing fields of every protocol (Routing): AAEP's type,
//     identifiers and urgency, ASP's performative, sessionId and messageId,
//     KAHN's run_id, event and ts.
//
// Values are read with the methods of Value, whose semantics are written
// once, there: strings are unescaped, integers are whole numbers however
// written (JSON Schema's "integer"), numbers are float64.
//
// # Depth
//
// MaxDepth (10000, encoding/json's limit) is the one nesting limit. Values
// nested deeper are still read, without recursion and validated as
// strictly, because RFC 8259 allows any depth; the document stays Valid and
// Stats.TooDeep says the limit was passed, so that callers that need
// encoding/json's answer (it refuses such input) can refuse it too.
// Statistics cover the values nested up to MaxDepth.
//
// # Reuse
//
// A Doc is reused across messages: Decode resets it and keeps its buffers,
// so decoding a typical message allocates once, for the routing strings
// that differ in every message (event_id, timestamp, ...: one allocation
// between them); session keys and names are interned. Everything a Doc
// holds except its strings (Routing) aliases the payload and is valid only
// as long as the payload is unchanged and until the next Decode. A Doc is
// not safe for concurrent use.
//
// # Paying for what is read
//
// Decode works out everything above. A caller that reads less says so
// with DecodeOnly and a Need: the recorder, which wants only validity, the
// encoding and the session key of each message, asks for NeedSession and
// gets them in about the time of a validating pass, without the member
// list, the statistics or the routing strings it would not read. What was
// not asked for is left zero; everything that is worked out has the same
// value as Decode gives it.
package payload

import (
	"hash/maphash"
	"strconv"
	"unicode/utf8"
)

// Need says what a decoding works out beyond what it always does: the
// validity and first error, the kind of the top-level value, the
// byte-order mark, UTF-8, and Stats.Depth, Stats.TooDeep and
// Stats.NonASCII (so JSONValid and UTF8 are always answered).
type Need uint8

const (
	// NeedMembers records the top-level members: Members, Get and Lookup,
	// and Stats.Dup. Without it, Members is empty, Get and Lookup find
	// nothing and Stats.Dup is -1.
	NeedMembers Need = 1 << iota
	// NeedStats measures the rest of Stats: the longest string and the
	// first integer beyond ±2^53 (and, with NeedMembers, the members they
	// are in).
	NeedStats
	// NeedSession fills the routing fields that make the session key
	// (Routing.SessionKey): SessionID, ASPSessionID and RunID.
	NeedSession
	// NeedRouting fills every routing field (NeedSession's included).
	NeedRouting

	// NeedAll is what Decode works out.
	NeedAll = NeedMembers | NeedStats | NeedSession | NeedRouting
)

// MaxDepth is the nesting depth up to which values are scanned by
// recursion and measured; the top-level container counts 1. It is
// encoding/json's limit: a document nested deeper is Valid, with
// Stats.TooDeep set (see the package documentation).
const MaxDepth = 10000

// SyntaxError says where and why a payload is not JSON.
type SyntaxError struct {
	// Offset is the byte offset in the payload as given (a byte-order mark
	// included) where the scan stopped.
	Offset int
	// Msg says what is wrong, e.g. "unterminated string".
	Msg string
}

// Error returns the message and the offset, e.g. "unterminated string at
// byte 17".
func (e *SyntaxError) Error() string { return e.Msg + " at byte " + strconv.Itoa(e.Offset) }

// Member is one top-level member of an object.
type Member struct {
	// Name is the member's name, unescaped. It aliases the payload when
	// the name has no escapes.
	Name []byte
	// Value is the member's value.
	Value Value
}

// Stats are what the scan measured for the size and range rules.
type Stats struct {
	// Depth is the deepest container nesting (the top-level container
	// counts 1; 0 for a scalar), up to MaxDepth.
	Depth int
	// TooDeep is set when nesting went past MaxDepth.
	TooDeep bool
	// LongString is the length of the longest string value (raw bytes
	// between the quotes; member names are not counted), LongStringAt the
	// offset of its opening quote in the payload, LongStringMember the
	// index in Members of the top-level member it is in (-1: none).
	LongString, LongStringAt, LongStringMember int
	// BigInt is the first integer written without fraction or exponent
	// whose magnitude is beyond 2^53 (nil if none), BigIntMember the index
	// of the top-level member it is in (-1: none).
	BigInt       Value
	BigIntMember int
	// NonASCII is set when a string holds a byte of 0x80 or above.
	NonASCII bool
	// Dup is the index in Members of the first member whose name repeats
	// an earlier member's (-1: none).
	Dup int
}

// Doc is one decoded payload. The zero Doc is an empty, invalid payload;
// Decode fills it. See the package documentation for reuse.
type Doc struct {
	// Routing are the routing fields (see Routing) the decoding filled:
	// all of them after Decode, as Need asks after DecodeOnly.
	Routing Routing

	raw     []byte
	start   int // offset of the first byte after the BOM and white space
	kind    Kind
	bom     bool
	utf8    bool
	err     SyntaxError
	invalid bool
	members []Member
	stats   Stats
	// index is an open-addressing hash table of the member names once an
	// object has indexMin members: each slot holds 1 + the index in members
	// of the last member of a name, 0 when empty (kept, cleared, on reuse).
	index   []int32
	indexed bool
	// names is a summary of the names of a small object (see addMember).
	names uint64
	// need is what the decoding works out.
	need Need
	// reused is set once d was decoded: a Doc decoded once (Decode's)
	// makes no table of interned strings.
	reused bool
	// rv is where the last value of each routing field is (see route).
	rv [numFields]span
	// scratch holds the unique routing strings while they are made.
	scratch []byte
	// interned holds the routing strings seen before (session keys, types,
	// urgencies, performatives, events), so that they are not allocated
	// again for every message.
	interned *internTable
}

// indexMin is the member count from which names are indexed by a hash
// table rather than searched.
const indexMin = 16

// seed keys the hash of member names.
var seed = maphash.MakeSeed()

// Decode returns a new Doc of raw. Reusing a Doc with its Decode method
// spares the allocations.
func Decode(raw []byte) *Doc {
	d := new(Doc)
	d.Decode(raw)
	return d
}

// Decode scans raw and sets d to what it found, reusing d's buffers: it
// works out everything (NeedAll).
func (d *Doc) Decode(raw []byte) { d.DecodeOnly(raw, NeedAll) }

// DecodeOnly is Decode working out only what need asks for beyond what
// every decoding gives (see Need); the rest is left zero.
func (d *Doc) DecodeOnly(raw []byte, need Need) {
	// The members of the previous payload are overwritten as the new ones
	// are read, not cleared first: clearing costs a write barrier per
	// pointer on every message while the collector runs.
	members, index, interned, scratch := d.members[:0], d.index, d.interned, d.scratch
	if d.indexed {
		clear(index)
	}
	if need&NeedRouting != 0 {
		need |= NeedSession
	}
	*d = Doc{raw: raw, members: members, index: index, interned: interned, scratch: scratch, need: need, reused: d.reused || d.raw != nil || d.need != 0}
	d.stats.LongStringMember, d.stats.BigIntMember, d.stats.Dup = -1, -1, -1
	off := 0
	if len(raw) >= 3 && raw[0] == 0xEF && raw[1] == 0xBB && raw[2] == 0xBF {
		off, d.bom = 3, true
	}
	s := scanner{b: raw, i: off, d: d, top: -1, stats: need&NeedStats != 0}
	if err := s.document(); err != nil {
		d.invalid, d.err = true, *err
	}
	if need&(NeedSession|NeedRouting) != 0 {
		d.fillRouting()
	}
	d.stats.NonASCII = s.nonASCII
	d.utf8 = true
	if d.invalid || s.nonASCII {
		d.utf8 = utf8.Valid(raw[off:])
	}
}

// Raw returns the payload as given to Decode.
func (d *Doc) Raw() []byte { return d.raw }

// Decoded returns what the last decoding worked out: NeedAll after Decode,
// the need given to DecodeOnly (with NeedSession when it had NeedRouting).
func (d *Doc) Decoded() Need { return d.need }

// Valid reports whether the payload (after a byte-order mark) is exactly
// one JSON value, with optional white space around it.
func (d *Doc) Valid() bool { return !d.invalid }

// JSONValid reports whether the payload is a JSON text as encoding/json
// (json.Valid) accepts one: Valid, without a byte-order mark, and nested
// within MaxDepth.
func (d *Doc) JSONValid() bool { return !d.invalid && !d.bom && !d.stats.TooDeep }

// Err returns the first syntax error, or nil when the payload is Valid.
func (d *Doc) Err() *SyntaxError {
	if !d.invalid {
		return nil
	}
	return &d.err
}

// Kind returns the kind of the top-level value, judged by its first byte
// (so an invalid payload starting with '{' is of kind Object: see
// IsObject). An empty or blank payload is Absent.
func (d *Doc) Kind() Kind { return d.kind }

// IsObject reports whether the payload is a valid JSON object.
func (d *Doc) IsObject() bool { return !d.invalid && d.kind == Object }

// Start returns the offset of the top-level value in the payload (after a
// byte-order mark and white space).
func (d *Doc) Start() int { return d.start }

// BOM reports whether the payload starts with a UTF-8 byte-order mark
// (which RFC 8259 does not allow; the rest is decoded).
func (d *Doc) BOM() bool { return d.bom }

// UTF8 reports whether the payload after a byte-order mark is valid UTF-8.
func (d *Doc) UTF8() bool { return d.utf8 }

// Members returns the top-level members of an object in order, repeated
// names included; on an invalid payload, those read before the error. The
// slice is d's: valid until the next Decode.
func (d *Doc) Members() []Member { return d.members }

// Stats returns what the scan measured.
func (d *Doc) Stats() *Stats { return &d.stats }

// Get returns the value of the last top-level member named name, or nil
// when there is none.
func (d *Doc) Get(name string) Value {
	if i := d.Lookup(name); i >= 0 {
		return d.members[i].Value
	}
	return nil
}

// Lookup returns the index in Members of the last member named name, or -1.
func (d *Doc) Lookup(name string) int {
	if d.indexed {
		mask := len(d.index) - 1
		for h := int(maphash.String(seed, name)) & mask; d.index[h] != 0; h = (h + 1) & mask {
			if i := d.index[h] - 1; string(d.members[i].Name) == name {
				return int(i)
			}
		}
		return -1
	}
	for i := len(d.members) - 1; i >= 0; i-- {
		if string(d.members[i].Name) == name {
			return i
		}
	}
	return -1
}

// addMember appends a member, notes a repeated name and indexes the names
// once there are many.
func (d *Doc) addMember(name []byte, val Value) {
	n := len(d.members)
	d.members = append(d.members, Member{Name: name, Value: val})
	switch {
	case d.indexed:
		if 2*(n+1) > len(d.index) {
			d.reindex(2 * len(d.index))
		} else {
			d.insert(n)
		}
	case n+1 == indexMin:
		d.reindex(4 * indexMin)
	default:
		// names sums up the names so far by length and first byte: only a
		// name that matches the summary is compared with the others.
		h := uint64(1) << ((uint(len(name))*7 + uint(firstByte(name))) & 63)
		seen := d.names&h != 0
		d.names |= h
		if seen && d.stats.Dup < 0 {
			for i := range n {
				if string(d.members[i].Name) == string(name) {
					d.stats.Dup = n
					break
				}
			}
		}
	}
}

func firstByte(b []byte) byte {
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

// reindex rebuilds the hash table with size slots (a power of two).
func (d *Doc) reindex(size int) {
	if cap(d.index) >= size {
		d.index = d.index[:size]
		clear(d.index)
	} else {
		d.index = make([]int32, size)
	}
	d.indexed = true
	for i := range d.members {
		d.insert(i)
	}
}

// insert indexes member i, the last of its name so far, noting a repeat.
func (d *Doc) insert(i int) {
	name := d.members[i].Name
	mask := len(d.index) - 1
	h := int(maphash.Bytes(seed, name)) & mask
	for ; d.index[h] != 0; h = (h + 1) & mask {
		if string(d.members[d.index[h]-1].Name) == string(name) {
			if d.stats.Dup < 0 || d.stats.Dup > i {
				d.stats.Dup = i
			}
			break
		}
	}
	d.index[h] = int32(i + 1)
}
