package recorder

import (
	"strings"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol/aaep/vocab"
)

// batch holds messages copied for the writer.
type batch struct {
	entries []entry
	data    []byte
	attrs   []capfile.Attr
	size    int
}

type entry struct {
	kind           capfile.Kind
	flags          capfile.Flags
	check          bool // JSON validity still to be checked
	scan           bool // session key still to be found
	src            uint16
	time           int64
	session        string
	off, n         int
	attrOff, attrN int
}

func (b *batch) add(kind capfile.Kind, flags capfile.Flags, check, scan bool, src uint16, t int64, session string, attrs []capfile.Attr, payload []byte) {
	b.entries = append(b.entries, entry{
		kind: kind, flags: flags, check: check, scan: scan, src: src, time: t, session: session,
		off: len(b.data), n: len(payload), attrOff: len(b.attrs), attrN: len(attrs),
	})
	b.data = append(b.data, payload...)
	b.attrs = append(b.attrs, attrs...)
	b.size += len(payload)
}

func (b *batch) reset() {
	clear(b.entries) // drop session strings for the collector
	b.entries = b.entries[:0]
	b.data = b.data[:0]
	clear(b.attrs)
	b.attrs = b.attrs[:0]
	b.size = 0
	if cap(b.data) > 4*maxPending {
		b.data = nil
	}
}

// isHandshake reports whether an AAEP message type belongs to the
// subscription handshake rather than to the event stream; so does the
// producer manifest a gRPC source records first (GetManifest), which is
// no event either.
func isHandshake(typ string) bool {
	return strings.HasPrefix(typ, "subscription.") || typ == vocab.TypeProducerManifest
}

// handshakeMarker is in the type of every subscription message (its value
// starts the string); a payload without it cannot be one.
var handshakeMarker = []byte(`"subscription.`)

// docFlags are the flags the decoding d gives its payload: not valid JSON
// (as encoding/json judges it), not valid UTF-8.
func docFlags(d *payload.Doc) capfile.Flags {
	var f capfile.Flags
	if !d.JSONValid() {
		f |= capfile.FlagInvalidJSON
	}
	if !d.UTF8() {
		f |= capfile.FlagInvalidUTF8
	}
	return f
}
