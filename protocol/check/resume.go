package check

import (
	"cmp"
	"maps"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/aaep-tools/aaepkit/protocol"
)

// SnapshotVersion is the version of Snapshot's encoding: a reader refuses
// (and a check then reads the recording whole) any other.
const SnapshotVersion = 1

// Snapshot is what a Pass needs to go on with a recording where an earlier
// run stopped reading it (check --state of a recording that grows a part
// at a time): the records that still matter to the engines, kept by that
// run and fed again, muted, before the new parts.
//
// The engines' state is not serialised: their models keep it in pointer
// graphs (a confirmation's token shared by its session and the stream's
// table), which would need an encoding of their own, model by model. What
// is kept instead is every record the state at the end came from that can
// still change a verdict: the messages of each session still open (in
// every protocol, by its session key: session_id, ASP session, KAHN run),
// and the records of no session (handshakes, connection records) of each
// source since its last connection began, or all of them while a session
// is open. Fed again in order, they rebuild the open sessions, tokens and
// per-source state as a full check has them at that point. What a full
// check also remembers of sessions that closed before the snapshot (their
// IDs, for a late message; the tokens they retired) is not kept: a
// message after the snapshot that names a session or token closed before
// it is judged as naming one never seen.
type Snapshot struct {
	Version int `json:"version"`
	// Next is the number of the first record the snapshot's run did not
	// read: the records of the parts it read.
	Next int64 `json:"next"`
	// Records are the records kept, in order.
	Records []SavedRecord `json:"records"`
}

// SavedRecord is a message or connection record a Snapshot keeps, as the
// driver was given it.
type SavedRecord struct {
	// Conn marks a connection record; otherwise a message.
	Conn     bool               `json:"conn,omitempty"`
	Index    int64              `json:"index"`
	Offset   time.Duration      `json:"offset_ns"`
	Received time.Time          `json:"received,omitzero"`
	Dir      protocol.Direction `json:"dir,omitempty"`
	Source   int                `json:"source"`
	// Text is the payload when it is valid UTF-8, Raw (base64) otherwise.
	Text  string            `json:"text,omitempty"`
	Raw   []byte            `json:"raw,omitempty"`
	Attrs map[string]string `json:"attrs,omitempty"`
}

// payload returns the record's payload.
func (r *SavedRecord) payload() []byte {
	if r.Raw == nil {
		return []byte(r.Text)
	}
	return r.Raw
}

// Resume is how a Run goes on from an earlier one (Observer.Resume).
type Resume struct {
	// From is the earlier run's Snapshot (nil: the recording is read from
	// its start). Its records are fed, muted, before Part is read.
	From *Snapshot
	// Part is the first part to read (recording.ReadOptions.From): the
	// parts before it were read by the run that made From.
	Part int
	// Keep makes the Run keep what a Snapshot needs and return one in
	// Result.Snapshot, taken after the last record read and before the
	// checkers' end-of-stream findings.
	Keep bool
}

// KeepBudget bounds the payload bytes a Pass keeps for a Snapshot: a
// recording whose open sessions hold more gets none (its next check reads
// it whole).
const KeepBudget = 8 << 20

// keeper holds the records a Snapshot would keep, as a Pass checks them.
type keeper struct {
	sessions map[streamKey][]SavedRecord // by stream and session key
	sources  map[streamSource][]SavedRecord
	// tokens are the reply tokens the sessions kept issued (their
	// messages' reply_token), by stream and token: a reply names its
	// session by them only.
	tokens map[streamKey]string
	issued map[streamKey][]string // each session's tokens
	bytes  int64
	over   bool
}

type streamKey struct{ stream, session string }

type streamSource struct {
	stream string
	source int
}

func newKeeper() *keeper {
	return &keeper{sessions: map[streamKey][]SavedRecord{}, sources: map[streamSource][]SavedRecord{},
		tokens: map[streamKey]string{}, issued: map[streamKey][]string{}}
}

func (k *keeper) add(s *SavedRecord) bool {
	if k.over {
		return false
	}
	k.bytes += int64(len(s.Raw))
	if k.bytes > KeepBudget {
		k.over = true
		clear(k.sessions)
		clear(k.sources)
		return false
	}
	s.Raw = append([]byte(nil), s.Raw...)
	if s.Attrs != nil {
		s.Attrs = maps.Clone(s.Attrs)
	}
	return true
}

// message keeps m, a message of stream, checked.
func (k *keeper) message(stream string, m *protocol.Message) {
	s := SavedRecord{Index: m.Index, Offset: m.Offset, Received: m.Received, Dir: m.Dir, Source: m.Source, Raw: m.Raw, Attrs: m.Attrs}
	if !k.add(&s) {
		return
	}
	key, token := "", ""
	if m.Doc != nil {
		key = m.Doc.Routing.SessionKey()
		token, _ = m.Doc.Get("reply_token").Str()
	}
	if key == "" && token != "" {
		// A reply: the session that issued its token, if open.
		key = k.tokens[streamKey{stream, token}]
		if _, open := k.sessions[streamKey{stream, key}]; !open {
			key = ""
		}
	} else if key != "" && token != "" {
		k.tokens[streamKey{stream, token}] = key
		sk := streamKey{stream, key}
		k.issued[sk] = append(k.issued[sk], token)
	}
	if key == "" {
		ss := streamSource{stream, m.Source}
		k.sources[ss] = append(k.sources[ss], s)
		return
	}
	sk := streamKey{stream, key}
	k.sessions[sk] = append(k.sessions[sk], s)
}

// conn keeps c, a connection record of stream, checked: a new connection
// forgets what its source kept before, but for the record of how the
// connection before it ended.
func (k *keeper) conn(stream string, c *protocol.Conn) {
	s := SavedRecord{Conn: true, Index: c.Index, Offset: c.Offset, Source: c.Source, Raw: c.Raw, Attrs: c.Attrs}
	if !k.add(&s) {
		return
	}
	ss := streamSource{stream, c.Source}
	if c.Event == "connected" {
		kept := k.sources[ss][:0]
		var end *SavedRecord
		for i, r := range k.sources[ss] {
			if r.Conn {
				end = &k.sources[ss][i]
			}
		}
		for _, r := range k.sources[ss] {
			if end != nil && r.Index == end.Index {
				kept = append(kept, r)
				continue
			}
			k.bytes -= int64(len(r.Raw))
		}
		k.sources[ss] = kept
	}
	k.sources[ss] = append(k.sources[ss], s)
}

// done forgets a session its checker is done with.
func (k *keeper) done(stream, session string) {
	sk := streamKey{stream, session}
	recs, ok := k.sessions[sk]
	if !ok {
		return
	}
	for _, r := range recs {
		k.bytes -= int64(len(r.Raw))
	}
	delete(k.sessions, sk)
	for _, t := range k.issued[sk] {
		delete(k.tokens, streamKey{stream, t})
	}
	delete(k.issued, sk)
}

// snapshot returns what is kept, in record order, or nil over the budget.
func (k *keeper) snapshot(next int64) *Snapshot {
	if k.over {
		return nil
	}
	s := &Snapshot{Version: SnapshotVersion, Next: next}
	for _, recs := range k.sessions {
		s.Records = append(s.Records, recs...)
	}
	for _, recs := range k.sources {
		s.Records = append(s.Records, recs...)
	}
	slices.SortFunc(s.Records, func(a, b SavedRecord) int { return cmp.Compare(a.Index, b.Index) })
	for i := range s.Records {
		if r := &s.Records[i]; utf8.Valid(r.Raw) {
			r.Text, r.Raw = string(r.Raw), nil
		}
	}
	return s
}

// restore feeds the records of snapshot s to the pass, muted: the engines
// rebuild their state, and nothing reaches the sink.
func (p *Pass) restore(s *Snapshot) {
	p.muted = true
	defer func() { p.muted = false }()
	for i := range s.Records {
		r := &s.Records[i]
		if r.Conn {
			p.Conn(&protocol.Conn{Index: r.Index, Offset: r.Offset, Source: r.Source, Raw: r.payload(), Attrs: r.Attrs})
			continue
		}
		p.Message(&protocol.Message{Index: r.Index, Offset: r.Offset, Received: r.Received, Dir: r.Dir, Source: r.Source, Raw: r.payload(), Attrs: r.Attrs})
	}
}

// muteSink returns sink, silent while the pass restores a snapshot, and
// telling the keeper of the sessions done.
func (p *Pass) muteSink(sink protocol.Sink) protocol.Sink {
	out := protocol.Sink{
		Finding: func(f protocol.Finding) {
			if !p.muted && sink.Finding != nil {
				sink.Finding(f)
			}
		},
		Step: func(s protocol.Step) {
			if !p.muted && sink.Step != nil {
				sink.Step(s)
			}
		},
		SessionDone: func(s protocol.SessionSummary) {
			if p.keep != nil {
				p.keep.done(s.Stream, s.Session)
			}
			if !p.muted && sink.SessionDone != nil {
				sink.SessionDone(s)
			}
		},
	}
	return out
}
