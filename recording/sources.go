package recording

import (
	"fmt"

	"github.com/aaep-tools/aaepkit/capfile"
)

// SourceMap gives the sources of several captures read as one stream (the
// parts of a recording, or joined recordings) their ids in that stream. Sources with the same transport, endpoint and
// subprotocol are one source (the parts of a rotated capture, or captures
// of one endpoint); others keep their ids where they are free and take the
// lowest free id otherwise. The first input keeps all its ids.
type SourceMap struct {
	// Sources is the joint source table, in the order ids were given.
	Sources []capfile.Origin
	taken   map[uint16]bool
	joined  map[sourceKey]uint16
	ids     []map[uint16]uint16
	next    uint32
	// replay holds the joint ids of sources that recorded a replay (their
	// capture's header has capfile.MetaReplayOf); replayFile the inputs that did.
	replay     map[uint16]bool
	replayFile map[int]bool
}

type sourceKey struct {
	transport, endpoint, subprotocol string
	file                             int // for a source missing from its table
	unlisted                         int // old id + 1 for a source missing from its table
}

// NewSourceMap returns an empty map.
func NewSourceMap() *SourceMap {
	return &SourceMap{taken: map[uint16]bool{}, joined: map[sourceKey]uint16{}, replay: map[uint16]bool{}, replayFile: map[int]bool{}}
}

// Add maps the sources of input number file's header (inputs are numbered
// from 0 in the order they are added).
func (m *SourceMap) Add(file int, h capfile.Header) {
	for len(m.ids) <= file {
		m.ids = append(m.ids, map[uint16]uint16{})
	}
	replay := h.Meta[capfile.MetaReplayOf] != ""
	if replay {
		m.replayFile[file] = true
	}
	for _, s := range h.Origins {
		id := m.assign(file, s.ID, sourceKey{transport: s.Transport, endpoint: s.Endpoint, subprotocol: s.Subprotocol}, s)
		if replay {
			m.replay[id] = true
		}
	}
}

// ID returns the joint id of source old of input file. A source missing
// from its input's table gets an id of its own and an entry of transport
// "unlisted".
func (m *SourceMap) ID(file int, old uint16) uint16 {
	for len(m.ids) <= file {
		m.ids = append(m.ids, map[uint16]uint16{})
	}
	if id, ok := m.ids[file][old]; ok {
		return id
	}
	k := sourceKey{file: file, unlisted: int(old) + 1}
	id := m.assign(file, old, k, capfile.Origin{Transport: "unlisted", Endpoint: fmt.Sprintf("input %d source %d", file+1, old)})
	if m.replayFile[file] {
		m.replay[id] = true
	}
	return id
}

func (m *SourceMap) assign(file int, old uint16, k sourceKey, s capfile.Origin) uint16 {
	if id, ok := m.joined[k]; ok {
		m.ids[file][old] = id
		return id
	}
	id := old
	if m.taken[id] {
		for m.next < 1<<16 && m.taken[uint16(m.next)] {
			m.next++
		}
		// More than 65536 distinct sources: the last id is shared.
		id = uint16(min(m.next, 1<<16-1))
	}
	m.taken[id] = true
	m.joined[k] = id
	m.ids[file][old] = id
	s.ID = id
	m.Sources = append(m.Sources, s)
	return id
}
