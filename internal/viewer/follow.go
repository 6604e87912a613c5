package viewer

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/recording"
)

// captureIndex is the capture's index as read once, its sessions by id
// (those of several recordings sharing an id as one), and its sessions as
// the page lists them (sessionCount, session): of one recording the
// index's, of several each recording's apart (joined).
type captureIndex struct {
	idx    *capfile.Index
	byID   map[string]*capfile.SessionInfo
	joined []indexSession
}

// sessionCount is how many sessions the index lists.
func (c *captureIndex) sessionCount() int {
	if c.joined != nil {
		return len(c.joined)
	}
	return len(c.idx.Sessions)
}

// session is the i-th session the index lists. Of one recording it is made
// from the index when asked for, not kept beside it (14 MB at 174,000
// sessions).
func (c *captureIndex) session(i int) indexSession {
	if c.joined != nil {
		return c.joined[i]
	}
	x := &c.idx.Sessions[i]
	return indexSession{ID: x.ID, Records: x.Records, First: time.Duration(x.FirstTime), Last: time.Duration(x.LastTime)}
}

// newCaptureIndex makes the captureIndex of idx, the index of rec;
// joined are, of several recordings, each one's sessions
// (recording.Reader.JoinedSessions).
func newCaptureIndex(idx *capfile.Index, rec *recording.Recording, joined [][]capfile.SessionInfo) *captureIndex {
	c := &captureIndex{idx: idx, byID: make(map[string]*capfile.SessionInfo, len(idx.Sessions))}
	for i := range idx.Sessions {
		x := &idx.Sessions[i]
		c.byID[x.ID] = x
	}
	if joined != nil {
		c.joined = []indexSession{}
	}
	for k, list := range joined {
		j := rec.Joined()[k]
		for _, x := range list {
			is := indexSession{ID: x.ID, Recording: j.Name, Records: x.Records, First: time.Duration(x.FirstTime), Last: time.Duration(x.LastTime)}
			if !j.Replay() {
				// The recording is one stream, named by it (of a replay,
				// the index does not tell the subscriptions apart).
				is.Key = sessionKey(j.Name, x.ID)
			}
			c.joined = append(c.joined, is)
		}
	}
	slices.SortStableFunc(c.joined, func(a, b indexSession) int { return cmp.Compare(a.First, b.First) })
	return c
}

// readIndex reads the index of the recording rd reads.
func readIndex(rd *recording.Reader, rec *recording.Recording) (*captureIndex, error) {
	idx, err := rd.FileIndex()
	if err != nil {
		return nil, err
	}
	joined, err := rd.JoinedSessions()
	if err != nil {
		return nil, err
	}
	return newCaptureIndex(idx, rec, joined), nil
}

func (s *Server) index() *capfile.Index                         { return s.cur.Load().idx }
func (s *Server) sessionIndex() map[string]*capfile.SessionInfo { return s.cur.Load().byID }
func (s *Server) analysis() *analysis                           { return s.an.Load() }

// caughtUp runs each time the check following the capture has caught up
// with its recorder: the index is read again (the follower's, extended as
// records arrived: nothing is read twice), the lists are made again from
// it and the check's snapshot, and the pages listening (/api/live) hear of
// it.
func (s *Server) caughtUp() {
	rd, err := s.rec.Records(s.ctx)
	if err == nil {
		ci, err := readIndex(rd, s.rec)
		rd.Close()
		if err == nil && ci.idx.Records >= s.index().Records {
			s.cur.Store(ci)
		}
	}
	s.lists.clear()
	s.traces.clear()
	s.live.notify()
}

// liveFeed tells the pages listening that the followed capture has grown.
type liveFeed struct {
	mu    sync.Mutex
	grown chan struct{} // closed at the next growth
	ended bool
}

func newLiveFeed() *liveFeed { return &liveFeed{grown: make(chan struct{})} }

// notify wakes every listener.
func (f *liveFeed) notify() {
	f.mu.Lock()
	close(f.grown)
	f.grown = make(chan struct{})
	f.mu.Unlock()
}

// end wakes every listener a last time: the recorder is done.
func (f *liveFeed) end() {
	f.mu.Lock()
	f.ended = true
	f.mu.Unlock()
	f.notify()
}

// next returns what closes at the next growth, and whether the capture is
// done growing.
func (f *liveFeed) next() (<-chan struct{}, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.grown, f.ended
}

// liveState is what each event of /api/live says: the counts the page's
// heading shows, current.
type liveState struct {
	Records int64            `json:"records"`
	Last    time.Duration    `json:"last_ns"`
	Writing bool             `json:"being_written"`
	Ended   bool             `json:"ended"`
	Check   checkProgress    `json:"check"`
	Counts  map[string]int64 `json:"findings"`
}

func (s *Server) liveState(ended bool) liveState {
	x := s.index()
	sn := s.analysis().snap.Load()
	return liveState{
		Records: x.Records, Last: time.Duration(x.LastTime()), Writing: !ended && s.beingWritten(), Ended: ended,
		Check:  checkProgress{Done: sn.done, Read: sn.read, Error: sn.err, Messages: sn.messages(), Sessions: len(sn.sessions)},
		Counts: map[string]int64{"must": sn.counts.Must, "should": sn.counts.Should, "info": sn.counts.Info},
	}
}

// serveLive pushes an event (Server-Sent Events) each time the followed
// capture has grown and been checked, its data the counts of liveState,
// so that the page fetches the new rows at once instead of polling; the
// first event comes at once, and the last says "ended" when the recorder
// has closed the capture (or is gone). Without --follow it answers 404.
func (s *Server) serveLive(w http.ResponseWriter, r *http.Request) {
	if !s.opts.Follow {
		apiError(w, http.StatusNotFound, "the capture is not followed (view --follow)")
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		apiError(w, http.StatusInternalServerError, "streaming not supported")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	for {
		grown, ended := s.live.next()
		b, err := json.Marshal(s.liveState(ended))
		if err != nil {
			return
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return
		}
		fl.Flush()
		if ended {
			return
		}
		select {
		case <-grown:
		case <-r.Context().Done():
			return
		case <-s.ctx.Done():
			return
		}
	}
}
