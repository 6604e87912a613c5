package viewer

import (
	"fmt"
	"strings"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/protocol"
)

// A session's identity is its stream and its id (sessionKey): two
// recordings viewed together, a capture and the recording of its replay,
// the hosts of a fleet replaying one script, hold the same session ids, and
// so do the subscriptions of a recording of a replay; each is judged on its
// own, as check judges it, and a session of one is never read as the
// continuation of another's. Every session parameter of the API takes a
// session's key, or its id alone when that names one session.

// ambiguousError says that a session id names several sessions.
type ambiguousError string

func (e ambiguousError) Error() string { return string(e) }

// lookup finds the session name names: the one of that key, else the only
// one of that id. It returns nil when there is none (yet), and an
// ambiguousError when the id is several sessions'.
func (sn *snapshot) lookup(name string) (*sessionView, error) {
	if v := sn.byKey(name); v != nil {
		return v, nil
	}
	switch vs := sn.byID(name); len(vs) {
	case 0:
		return nil, nil
	case 1:
		return vs[0], nil
	default:
		keys := make([]string, 0, 4)
		for _, v := range vs[:min(len(vs), 4)] {
			keys = append(keys, fmt.Sprintf("%q", v.Key))
		}
		if len(vs) > 4 {
			keys = append(keys, "…")
		}
		return nil, ambiguousError(fmt.Sprintf("session %q is %d sessions (of several recordings or subscriptions): name one by its key, %s", name, len(vs), strings.Join(keys, ", ")))
	}
}

// keyer tells the stream, and so the session key, of records read from
// the viewed recording (recording.Reader.Recording is a record's recording).
type keyer struct {
	s     *Server
	attrs map[string]string
	m     protocol.Message
}

// streamOf is the stream of record rec of recording ri: "" in a recording
// of one stream.
func (k *keyer) streamOf(ri int, rec *capfile.Record) string {
	if k.s.rec.Joined() == nil && !k.s.rec.Replay() {
		return ""
	}
	if k.attrs == nil {
		k.attrs = map[string]string{}
	}
	clear(k.attrs)
	for _, a := range rec.Attrs {
		k.attrs[a.Key] = a.Value
	}
	k.m = protocol.Message{Recording: ri, Source: int(rec.Origin), Attrs: k.attrs}
	return k.s.rec.StreamOf(&k.m)
}

// key is the session key of session id of record rec of recording ri.
func (k *keyer) key(ri int, rec *capfile.Record, id string) string {
	if id == "" {
		return ""
	}
	return sessionKey(k.streamOf(ri, rec), id)
}
