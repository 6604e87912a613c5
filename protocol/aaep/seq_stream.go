package aaep

// Streaming output: SEQ-STREAM-*.
//
// Outputs are keyed by (session_id, output_id); chunks without output_id
// form one implicit output per session. Positions count Unicode code points
// (prose §4.3.3 says "character offset" without defining character; Python,
// the reference implementation's language, counts code points, while the
// TypeScript example counts UTF-16 units, which differ on astral
// characters). Position is the chunk's start offset: the first chunk is at
// 0 and each next one at the previous position plus the previous chunk's
// length. "Increase monotonically" (A.6) is read as strictly increasing,
// with equality allowed only after an empty chunk.
//
// Which "character": a position that matches the previous chunk's length
// in code points is right in both profiles. One that matches it in UTF-16
// code units instead (the TypeScript example's chunk.length; they differ
// only on astral characters) follows another reading of the undefined word:
// the lenient profile accepts it, the strict profile reports
// SEQ-STREAM-POSITION-CONTIGUOUS. One that matches the length in UTF-8
// bytes where bytes differ from both is no reading of "character" at all:
// that is certain, so SEQ-STREAM-POSITION-BYTES (MUST), once per output.
//
// A position past the end of the previous chunk in both readings of
// "character" loses text: SEQ-STREAM-POSITION-JUMP (MUST), unless it is the
// session-total offset (the field table's reading) or a gap recorded in the
// capture (a lost connection, a message not recorded, a sequence_number
// that skips) lies between the two chunks.

import (
	"unicode/utf16"
	"unicode/utf8"

	"github.com/aaep-tools/aaepkit/protocol"
)

type output struct {
	id        string
	chunks    int
	last      int64 // position of the previous chunk
	next      int64 // position the next chunk should have (code points)
	next16    int64 // the same counted in UTF-16 code units
	nextBytes int64 // the same counted in UTF-8 bytes
	lastEmpty bool
	bytesSeen bool // SEQ-STREAM-POSITION-BYTES reported
	complete  bool
	gaps      int64 // seqChecker.gaps at the previous chunk
	at        ref   // first chunk
}

func (s *seqChecker) onOutput(ss *session, m *protocol.Message, ev *Event) string {
	idb, _ := ev.text(kOutputID)
	pos, hasPos := ev.vals[kPosition].Int()
	chunk, _ := ev.text(kChunk)
	complete, _ := ev.vals[kComplete].Bool()
	ss.prevComplete = complete
	ss.sawOS = true
	ss.state = impliedState(ev.Core)
	if ss.outputs == nil {
		ss.outputs = map[string]*output{}
	}
	o := ss.outputs[string(idb)]
	if o == nil {
		o = &output{id: string(idb), at: refOf(m)}
		ss.outputs[o.id] = o
	}
	id := o.id
	ss.prevOutput = id
	name := id
	if name == "" {
		name = "the implicit output"
	}
	detail := id
	if complete {
		detail += " complete"
	}
	if o.complete {
		s.report(seqStreamAfterComplete, ss.id, m, "chunk after complete",
			"%s already sent its chunk with complete:true, yet another chunk follows; no chunk of an output may follow its completion", name)
		return detail
	}
	if hasPos {
		switch {
		case o.chunks > 0 && (pos < o.last || (pos == o.last && !o.lastEmpty)):
			s.report(seqStreamPositionMonotonic, ss.id, m, "position does not increase",
				"chunk position %d of %s does not increase past the previous chunk's position %d; positions must increase monotonically", pos, name, o.last)
		case pos != o.next && o.chunks > 0 && pos == o.nextBytes && o.nextBytes != o.next16:
			if !o.bytesSeen {
				o.bytesSeen = true
				s.report(seqStreamPositionBytes, ss.id, m, "position counts bytes",
					"chunk position %d of %s is the previous position %d plus the previous chunk's length in UTF-8 bytes; positions are character offsets (§4.3.3), %d in code points (%d in UTF-16 units), and bytes are no reading of character (reported once per output)",
					pos, name, o.last, o.next, o.next16)
			}
		case pos != o.next && o.chunks > 0 && pos == o.next16 && !s.strict:
			// UTF-16 code units: the TypeScript reading of "character".
		case o.chunks > 0 && pos > o.next16 && pos != ss.outTotal && pos != ss.outTotal16 && o.gaps == s.gaps:
			// next16 >= next: past the end of the previous chunk in both
			// readings of "character", not the session-total offset of the
			// field table's reading, and no gap recorded since: text lost.
			s.report(seqStreamPositionJump, ss.id, m, "position jumps",
				"chunk position %d of %s jumps past %d, where the previous chunk (at %d, %d characters) ended: %d characters of the output were never sent, and no gap in the capture explains it; position is the total character offset since the start of the output (§4.3.3)",
				pos, name, o.next, o.last, o.next-o.last, pos-o.next)
		case pos != o.next:
			if o.chunks == 0 {
				s.report(seqStreamPositionContiguous, ss.id, m, "first position ≠ 0",
					"the first chunk of %s is at position %d; positions are zero-based offsets, so the first chunk starts at 0", name, pos)
			} else {
				s.report(seqStreamPositionContiguous, ss.id, m, "position skips",
					"chunk position %d of %s should be %d: the previous chunk started at %d and was %d characters (code points) long", pos, name, o.next, o.last, o.next-o.last)
			}
		}
		o.last = pos
		o.next, o.next16, o.nextBytes = pos, pos, pos
	}
	runes := utf8.RuneCount(chunk)
	prev16 := o.next16
	o.next += int64(runes)
	if runes == len(chunk) {
		o.next16 += int64(runes) // ASCII: every count agrees
	} else {
		o.next16 += int64(utf16Len(chunk))
	}
	o.nextBytes += int64(len(chunk))
	ss.outTotal += int64(runes)
	ss.outTotal16 += o.next16 - prev16
	o.gaps = s.gaps
	o.lastEmpty = len(chunk) == 0
	o.chunks++
	if complete {
		o.complete = true
		ss.outDone = append(ss.outDone, id)
		if len(ss.outDone) > maxOutputsPerSession {
			delete(ss.outputs, ss.outDone[0])
			ss.outDone = ss.outDone[1:]
		}
	}
	return detail
}

// utf16Len is the length of b in UTF-16 code units.
func utf16Len(b []byte) int {
	n := 0
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		if utf16.RuneLen(r) == 2 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// finalizeOutputs: SEQ-STREAM-ONE-COMPLETE at the terminal event.
func (s *seqChecker) finalizeOutputs(ss *session, m *protocol.Message) {
	var open []string
	for id, o := range ss.outputs {
		if !o.complete {
			open = append(open, id)
		}
	}
	sortByFirst(open, ss.outputs)
	for _, id := range open {
		name := id
		if name == "" {
			name = "the implicit output"
		}
		s.report(seqStreamOneComplete, ss.id, m, "output never completed",
			"%s (first chunk at message %d) never sent a chunk with complete:true before the session ended; each output ends with exactly one complete:true chunk",
			name, ss.outputs[id].at.related())
	}
}

func sortByFirst(ids []string, outs map[string]*output) {
	for i := 1; i < len(ids); i++ {
		for j := i; j > 0 && outs[ids[j]].at.index < outs[ids[j-1]].at.index; j-- {
			ids[j], ids[j-1] = ids[j-1], ids[j]
		}
	}
}
