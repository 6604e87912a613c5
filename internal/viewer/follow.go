package viewer

import (
	"cmp"
	"context"
	"os"
	"slices"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/recording"
)

// captureIndex is the capture's index as read once, its sessions by id
// (those of several recordings sharing an id as one), and its sessions as
// the page lists them: of several recordings, each recording's apart.
type captureIndex struct {
	idx      *capfile.Index
	byID     map[string]*capfile.SessionInfo
	sessions []indexSession
}

// newCaptureIndex makes the captureIndex of idx, the index of rec;
// joined are, of several recordings, each one's sessions
// (recording.Reader.JoinedSessions).
func newCaptureIndex(idx *capfile.Index, rec *recording.Recording, joined [][]capfile.SessionInfo) *captureIndex {
	c := &captureIndex{idx: idx, byID: make(map[string]*capfile.SessionInfo, len(idx.Sessions))}
	for i := range idx.Sessions {
		x := &idx.Sessions[i]
		c.byID[x.ID] = x
		if joined == nil {
			c.sessions = append(c.sessions, indexSession{ID: x.ID, Records: x.Records, First: time.Duration(x.FirstTime), Last: time.Duration(x.LastTime)})
		}
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
			c.sessions = append(c.sessions, is)
		}
	}
	if joined != nil {
		slices.SortStableFunc(c.sessions, func(a, b indexSession) int { return cmp.Compare(a.First, b.First) })
	}
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

// follow looks at the capture every FollowPoll while ctx lasts; when it
// has grown, it reads the index again (the page's lists and timeline grow
// at once) and checks the whole capture again, replacing the verdicts when
// that check is done.
func (s *Server) follow(ctx context.Context) {
	poll := s.opts.FollowPoll
	if poll <= 0 {
		poll = time.Second
	}
	var size int64 = -1
	if fi, err := os.Stat(s.opts.Path); err == nil {
		size = fi.Size()
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		fi, err := os.Stat(s.opts.Path)
		if err != nil || fi.Size() == size {
			continue
		}
		rd, err := s.rec.Records(ctx)
		if err != nil {
			continue
		}
		ci, err := readIndex(rd, s.rec)
		rd.Close()
		if err != nil || ci.idx.Records == s.index().Records {
			continue
		}
		idx := ci.idx
		size = fi.Size()
		s.cur.Store(ci)
		s.lists.clear()
		s.traces.clear()
		an := newAnalysis(idx.FirstTime(), idx.LastTime())
		an.run(ctx, s.rec, s.config(), s.pause)
		if ctx.Err() == nil {
			s.an.Store(an)
			s.lists.clear()
		}
	}
}
