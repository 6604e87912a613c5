package otlpexport

import (
	"crypto/sha256"
	"encoding/binary"
	"path/filepath"
	"strconv"

	"github.com/aaep-tools/aaepkit/recording"
)

// idVersion is mixed into every id: a change of how ids are derived
// changes it, so that old and new exports of a recording never share ids
// that mean different things.
const idVersion = "aaep-otlp/1"

// recordingKey identifies a recording for the ids of its traces: its
// header's start and recording tool, which a rename, a copy or an upload
// keep. A recording without a start (JSON Lines) is named by its file's
// base name instead.
func recordingKey(rec *recording.Recording) string {
	h := rec.Header()
	key := h.Tool + "\x00"
	if h.Start.IsZero() {
		return key + filepath.Base(rec.Name)
	}
	return key + strconv.FormatInt(h.Start.UnixNano(), 10)
}

// traceID derives the trace id of a session: the recording, the stream
// (a subscription of a replay's recording), the session id and how many
// sessions of that id ended before it in the stream.
func (b *builder) traceID(stream, session string, occ int) []byte {
	in := b.idBuf[:0]
	for _, s := range [...]string{idVersion, b.recKey, stream, session} {
		in = append(in, s...)
		in = append(in, 0)
	}
	in = strconv.AppendInt(in, int64(occ), 10)
	in = append(in, 0)
	b.idBuf = in
	sum := sha256.Sum256(in)
	id := b.ids(16)
	copy(id, sum[:])
	if allZero(id) {
		id[15] = 1 // an all-zero id is invalid
	}
	return id
}

// spanID derives a span id within a trace: the root is span 0, every
// other span is named by its kind and the index of the message that
// opened it.
func (b *builder) spanID(trace []byte, kind byte, index int64) []byte {
	var in [16 + 1 + 8]byte
	copy(in[:], trace)
	in[16] = kind
	binary.BigEndian.PutUint64(in[17:], uint64(index))
	sum := sha256.Sum256(in[:])
	id := b.ids(8)
	copy(id, sum[:])
	if allZero(id) {
		id[7] = 1
	}
	return id
}

// ids returns room for an id of n bytes, cut from memory allocated for
// many (a full slice, as attrList's).
func (b *builder) ids(n int) []byte {
	if len(b.idSlab) < n {
		b.idSlab = make([]byte, idSlab)
	}
	id := b.idSlab[:n:n]
	b.idSlab = b.idSlab[n:]
	return id
}

// idSlab is how many bytes of ids are allocated at once.
const idSlab = 4096

// Span kinds of spanID.
const (
	kindRoot byte = iota
	kindTool
	kindWait
)

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
