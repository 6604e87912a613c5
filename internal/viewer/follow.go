package viewer

import (
	"context"
	"os"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
)

// captureIndex is the capture's index as read once, and its sessions by id.
type captureIndex struct {
	idx  *capfile.Index
	byID map[string]*capfile.SessionInfo
}

func newCaptureIndex(idx *capfile.Index) *captureIndex {
	c := &captureIndex{idx: idx, byID: make(map[string]*capfile.SessionInfo, len(idx.Sessions))}
	for i := range idx.Sessions {
		c.byID[idx.Sessions[i].ID] = &idx.Sessions[i]
	}
	return c
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
		idx, err := rd.FileIndex()
		rd.Close()
		if err != nil || idx.Records == s.index().Records {
			continue
		}
		size = fi.Size()
		s.cur.Store(newCaptureIndex(idx))
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
