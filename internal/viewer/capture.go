package viewer

import (
	"net/http"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
)

type captureInfo struct {
	File    string         `json:"file"`
	Header  capfile.Header `json:"header"`
	Records int64          `json:"records"`
	First   time.Duration  `json:"first_ns"`
	Last    time.Duration  `json:"last_ns"`
	Rebuilt bool           `json:"index_rebuilt"`
	// Follow is set when the capture is followed as it grows (view --follow).
	Follow bool `json:"follow,omitempty"`
	// Writing is set while the capture is being written: its recorder
	// holds it open (capfile.BeingWritten); its end is "not yet", not torn.
	Writing  bool           `json:"being_written,omitempty"`
	Sessions []indexSession `json:"sessions"`
	// SessionsCut is set when Sessions lists only the first
	// maxIndexSessions (/api/sessions pages through all of them).
	SessionsCut bool             `json:"sessions_cut,omitempty"`
	IndexCount  int              `json:"index_sessions"`
	Check       checkProgress    `json:"check"`
	Counts      map[string]int64 `json:"findings"`
	// Recordings are, when several recordings are viewed, each one's name,
	// findings (each judged on its own, as check judges it), sessions and
	// messages, the first maxIndexSessions of them (RecordingsCut is then
	// set; RecordingsTotal counts them all); /api/sessions?recording=NAME
	// lists one's sessions.
	Recordings      []recordingCounts `json:"recordings,omitempty"`
	RecordingsCut   bool              `json:"recordings_cut,omitempty"`
	RecordingsTotal int               `json:"recordings_total,omitempty"`
}

type indexSession struct {
	ID string `json:"id"`
	// Key is the session's key (sessionRow.Key) and Recording its
	// recording when several recordings are viewed (no key for a recording
	// of a replay: its index does not tell the subscriptions apart).
	Key       string        `json:"key,omitempty"`
	Recording string        `json:"recording,omitempty"`
	Records   int64         `json:"records"`
	First     time.Duration `json:"first_ns"`
	Last      time.Duration `json:"last_ns"`
}

type checkProgress struct {
	Done    bool   `json:"done"`
	Read    int64  `json:"read"`
	Error   string `json:"error,omitempty"`
	Dropped int64  `json:"findings_not_kept,omitempty"`
	// Truncated is set when the capture has more sessions than the check
	// describes one by one (see maxSessions).
	Truncated bool  `json:"sessions_truncated,omitempty"`
	Messages  int64 `json:"messages"`
	Sessions  int   `json:"sessions"`
}

// beingWritten reports whether the capture viewed is one local file its
// recorder is writing (capfile.BeingWritten).
func (s *Server) beingWritten() bool {
	if len(s.rec.Parts) != 1 || s.rec.Parts[0].Path() == "" {
		return false
	}
	return capfile.BeingWritten(s.rec.Parts[0].Path())
}

func (s *Server) serveCapture(w http.ResponseWriter, r *http.Request) {
	ci := s.cur.Load()
	info := captureInfo{
		File: s.title(), Header: s.hdr, Records: s.index().Records, Rebuilt: s.index().Rebuilt,
		First: time.Duration(s.index().FirstTime()), Last: time.Duration(s.index().LastTime()),
		Sessions: make([]indexSession, min(ci.sessionCount(), maxIndexSessions+1)), IndexCount: ci.sessionCount(), Follow: s.opts.Follow,
		// A stored index was written by Close: the capture is complete.
		Writing: s.index().Rebuilt && s.beingWritten(),
	}
	for i := range info.Sessions {
		info.Sessions[i] = ci.session(i)
	}
	sn := s.analysis().snap.Load()
	if s.replayRecording() && len(sn.sessions) > 0 {
		// A recording of a replay holds each subscriber's copy of the
		// sessions, which its index does not tell apart (one entry per
		// id): its sessions are the check's, each with its key, as
		// /api/sessions lists them.
		info.Sessions = info.Sessions[:0:0]
		for _, v := range sn.sessions {
			info.Sessions = append(info.Sessions, indexSession{ID: v.ID, Key: v.Key, Recording: v.Facts.Recording,
				Records: v.Facts.Messages, First: v.Facts.First, Last: v.Facts.Last})
		}
		info.IndexCount = len(info.Sessions)
	}
	info.Check = checkProgress{Done: sn.done, Read: sn.read, Error: sn.err, Dropped: sn.dropped, Truncated: sn.truncated, Messages: sn.messages(), Sessions: len(sn.sessions)}
	info.Counts = map[string]int64{"must": sn.counts.Must, "should": sn.counts.Should, "info": sn.counts.Info}
	info.Recordings = sn.recordings
	if info.Recordings == nil {
		// Before the check's first snapshot: the names, nothing counted yet.
		for _, r := range s.rec.Joined() {
			info.Recordings = append(info.Recordings, recordingCounts{Name: r.Name})
		}
	}
	info.RecordingsTotal = len(info.Recordings)
	if len(info.Recordings) > maxIndexSessions {
		info.Recordings, info.RecordingsCut = info.Recordings[:maxIndexSessions], true
	}
	if len(info.Sessions) > maxIndexSessions {
		info.Sessions = info.Sessions[:maxIndexSessions]
		info.SessionsCut = true
	}
	writeJSON(w, http.StatusOK, info)
}

// replayRecording reports whether a recording viewed is one of a replay
// (serve --record), whose subscriptions are streams of their own.
func (s *Server) replayRecording() bool {
	if s.rec.Replay() {
		return true
	}
	for _, r := range s.rec.Joined() {
		if r.Replay() {
			return true
		}
	}
	return false
}
