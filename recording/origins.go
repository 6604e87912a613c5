package recording

import (
	"fmt"

	"github.com/aaep-tools/aaepkit/capfile"
)

// OriginMap gives the origins of several captures read as one stream (the
// parts of a recording, or joined recordings) their ids in that stream.
// Origins with the same transport, endpoint and subprotocol are one (the
// parts of a rotated capture, or captures of one endpoint); others keep
// their ids where they are free and take the lowest free id otherwise. The
// first input keeps all its ids.
type OriginMap struct {
	// Origins is the joint origin table, in the order ids were given.
	Origins []capfile.Origin
	taken   map[uint16]bool
	joined  map[originKey]uint16
	ids     []map[uint16]uint16
	next    uint32
	// replay holds the joint ids of origins that recorded a replay (their
	// capture's header has capfile.MetaReplayOf); replayFile the inputs that did.
	replay     map[uint16]bool
	replayFile map[int]bool
}

type originKey struct {
	transport, endpoint, subprotocol string
	file                             int // for an origin missing from its table
	unlisted                         int // old id + 1 for an origin missing from its table
}

// NewOriginMap returns an empty map.
func NewOriginMap() *OriginMap {
	return &OriginMap{taken: map[uint16]bool{}, joined: map[originKey]uint16{}, replay: map[uint16]bool{}, replayFile: map[int]bool{}}
}

// Add maps the origins of input number file's header (inputs are numbered
// from 0 in the order they are added).
func (m *OriginMap) Add(file int, h capfile.Header) {
	for len(m.ids) <= file {
		m.ids = append(m.ids, map[uint16]uint16{})
	}
	replay := h.Meta[capfile.MetaReplayOf] != ""
	if replay {
		m.replayFile[file] = true
	}
	for _, s := range h.Origins {
		id := m.assign(file, s.ID, originKey{transport: s.Transport, endpoint: s.Endpoint, subprotocol: s.Subprotocol}, s)
		if replay {
			m.replay[id] = true
		}
	}
}

// ID returns the joint id of origin old of input file. An origin missing
// from its input's table gets an id of its own and an entry of transport
// "unlisted".
func (m *OriginMap) ID(file int, old uint16) uint16 {
	for len(m.ids) <= file {
		m.ids = append(m.ids, map[uint16]uint16{})
	}
	if id, ok := m.ids[file][old]; ok {
		return id
	}
	k := originKey{file: file, unlisted: int(old) + 1}
	id := m.assign(file, old, k, capfile.Origin{Transport: "unlisted", Endpoint: fmt.Sprintf("input %d source %d", file+1, old)})
	if m.replayFile[file] {
		m.replay[id] = true
	}
	return id
}

func (m *OriginMap) assign(file int, old uint16, k originKey, s capfile.Origin) uint16 {
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
	m.Origins = append(m.Origins, s)
	return id
}
