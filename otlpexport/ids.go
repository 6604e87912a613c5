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
func traceID(recKey, stream, session string, occ int) []byte {
	h := sha256.New()
	for _, s := range []string{idVersion, recKey, stream, session, strconv.Itoa(occ)} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	id := h.Sum(nil)[:16]
	if allZero(id) {
		id[15] = 1 // an all-zero id is invalid
	}
	return id
}

// spanID derives a span id within a trace: the root is span 0, every
// other span is named by its kind and the index of the message that
// opened it.
func spanID(trace []byte, kind byte, index int64) []byte {
	var b [16 + 1 + 8]byte
	copy(b[:], trace)
	b[16] = kind
	binary.BigEndian.PutUint64(b[17:], uint64(index))
	sum := sha256.Sum256(b[:])
	id := append([]byte(nil), sum[:8]...)
	if allZero(id) {
		id[7] = 1
	}
	return id
}

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
