// Package viewer serves a capture to a web browser: the page of
// `aaep-replay view` and the JSON API behind it. The page lists the
// sessions with their verdicts, draws them on one timeline, shows any
// message exactly as recorded with its findings and the rules they break,
// draws a session's path through its state machine, and steers the replay
// that package serve sends to attached subscribers.
//
// The page is plain HTML, CSS and JavaScript embedded in the binary
// (assets/): nothing is fetched from the network and nothing is built with
// Node.js. Its lists are virtual and every answer of the API is bounded: a
// page of rows, a timeline aggregated to the pixels asked for.
//
// The first answers come from the capture's index; the verdicts come from a
// check of the whole capture that runs in the background and publishes what
// it has learned every 200 ms as an immutable snapshot, so that no request
// waits on it. The check also files every session's messages (its
// subscriber's replies included) and counts them in 2,048 time buckets per
// session, from which the timeline of any window is drawn.
//
// API (all GET, JSON unless said otherwise; every list is paged):
//
//	/api/capture                  file, header, counts, check progress, the first sessions of the index;
//	                              of several recordings, each one's name, findings, sessions and
//	                              messages (recordings, recordings_total)
//	/api/sessions?sort&desc&findings&q&recording&key&from&limit
//	                              sessions sorted by any column (id, protocol, state, messages,
//	                              first, last, span, must, should, info, recording), only those
//	                              with findings, only those of one of several recordings
//	/api/rows?session&filter&q&from&limit
//	                              rows [from, from+limit) of a list: the capture's records or a
//	                              session's messages, narrowed by a filter expression and a text
//	/api/progress?session&filter&q
//	                              how far the read of that list has got (running, read, total)
//	/api/filter?filter=EXPR       whether EXPR parses (ok, error: what and at which character)
//	/api/fields                   field names for a filter: its own, and the payloads' (first messages)
//	/api/find?…list…&index=N      the row of record N in the list
//	/api/find?…list…&row&dir&level
//	                              the next (dir=1) or previous finding after row
//	/api/export?…list…&format     the list as JSON Lines or a capture (a download, not bounded)
//	/api/events?from=N&limit=M    a page of rows from record N on (filters: session, type,
//	                              urgency, source, rule)
//	/api/event/N                  one record: raw payload, pretty-printed JSON, times, source,
//	                              direction, transport attributes, findings with their rules,
//	                              of several recordings its recording
//	/api/timeline?from_ns&to_ns&px&lanes
//	                              the window at px columns: the whole capture (minimap), all
//	                              sessions, the lanes asked; events one by one and the spans of
//	                              tool calls and waits when few enough
//	/api/trace/SESSION/steps?from&limit&index
//	                              a page of the session's steps (index: the page of its step)
//	/api/trace/SESSION/svg        the session's state-machine drawing (image/svg+xml)
//	/api/rules                    every rule: id, level, summary, protocol, spec
//	/api/live                     view --follow: Server-Sent Events, one each time the capture
//	                              has grown and been checked (records, last_ns, being_written,
//	                              ended, check, findings), the first at once
//
// Several recordings (a prefix or glob holding several hosts' rotated
// recordings) are shown as one capture, their records interleaved by time,
// and judged each on its own, exactly as check judges them: each session
// names its recording ("recording").
//
// A session is its stream's (check's: the recording, and the subscription
// in a recording of a replay): recordings, and subscriptions, that hold the
// same session ids have each their own sessions. Each session has a key
// ("key"), unique in the capture: its id when the capture is one stream,
// else its stream, "|" and its id. Every session parameter (session=,
// lanes=, key=, /api/trace/SESSION/) takes a key, or an id that names one
// session; an id of several sessions is answered 400, naming their keys.
//
// Every other path goes to the replay server (its WebSocket, SSE, reply,
// statistics and /control endpoints).
package viewer

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/webguard"
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/check"
	"github.com/aaep-tools/aaepkit/protocol/models"
	"github.com/aaep-tools/aaepkit/recording"
	"github.com/aaep-tools/aaepkit/serve"
	"github.com/aaep-tools/aaepkit/visualize"
)

//go:embed assets
var assets embed.FS

// Options configure a Server.
type Options struct {
	// Recording is the recording to view: its parts are read through a
	// cursor over them (recording.Recording.Records), its findings come
	// from the analysis driver (protocol/check). Either it or Path is
	// required.
	Recording *recording.Recording
	// Path is a capture file to view when Recording is nil.
	Path string
	// Replay serves the replay endpoints on the same port (may be nil).
	Replay http.Handler
	// AllowOrigins are the browser origins whose pages may use the API
	// besides the viewer's own page (see package webguard: the API answers
	// no other web page, and only under a Host header that names the
	// server).
	AllowOrigins []string
	// Protocol forces a protocol model; Profile is lenient or strict.
	Protocol, Profile string
	// Renderer draws traces; nil uses the aaep-render helper found by
	// visualize.FindHelper.
	Renderer *visualize.Renderer
	// Follow reads a capture that is still being written as it grows,
	// with one tail reader (recording.Following): each record is checked
	// once, as it arrives, by the running check, the index grows with it,
	// and the page hears of each growth at once (/api/live). FollowPoll
	// is how often the end of the file is looked at while nothing new
	// has come (default capfile.DefaultLivePoll).
	Follow     bool
	FollowPoll time.Duration
	// TimelineScan is the most messages a timeline window may hold to be
	// read record by record (0: 20,000); wider windows are drawn from the
	// check's buckets.
	TimelineScan int64
	// Context bounds every read of the recording, New's included (an
	// object's index read from a server that stopped answering is
	// cancelled with it: Ctrl-C); nil is context.Background. Close ends
	// the reads too.
	Context context.Context
}

// Server is the viewer's HTTP handler.
type Server struct {
	opts Options
	hdr  capfile.Header
	mux  *http.ServeMux
	// cur is the capture's index as last read (a followed capture grows);
	// an is the check of the whole capture (a followed capture is checked
	// again when it has grown, and the new check replaces the old when done).
	cur    atomic.Pointer[captureIndex]
	an     atomic.Pointer[analysis]
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	rules  map[string]ruleDoc
	guard  *webguard.Guard
	traces *traceCache
	// pause holds the background check while a trace is being built.
	pause *pauser
	lists *listCache
	jobs  narrowJobs
	// live tells the pages of a followed capture that it has grown.
	live *liveFeed
	// fields are the payload's field names, for the filter's completion.
	fields fieldNames
	// readers are open readers of the capture, for the requests (none
	// when following: a reader knows the records it was opened with).
	readers chan *recording.Reader
	rec     *recording.Recording
}

// New opens the capture, reads its index (rebuilding it by a scan when the
// capture was not closed cleanly) and starts the background check.
func New(opts Options) (*Server, error) {
	base := opts.Context
	if base == nil {
		base = context.Background()
	}
	rec := opts.Recording
	if rec == nil {
		if opts.Path == "" {
			return nil, errors.New("viewer: no capture")
		}
		recs, err := recording.Open(base, []string{opts.Path}, recording.Options{})
		if err != nil {
			return nil, err
		}
		rec = recording.Join(recs)
	}
	if opts.Follow {
		if len(rec.Parts) != 1 || rec.Parts[0].Path() == "" {
			return nil, fmt.Errorf("%s: following reads one local capture being written, not %d files or an object", rec.Name, len(rec.Parts))
		}
		opts.Path = rec.Parts[0].Path()
	}
	rd, err := rec.Records(base)
	if err != nil {
		return nil, err
	}
	hdr := rd.Header()
	ci, err := readIndex(rd, rec)
	rd.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rec.Name, err)
	}
	idx := ci.idx
	if opts.TimelineScan <= 0 {
		opts.TimelineScan = maxTimelineScan
	}
	if opts.Profile == "" {
		opts.Profile = "lenient"
	}
	guard, err := webguard.New(opts.AllowOrigins)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(base)
	s := &Server{opts: opts, rec: rec, hdr: hdr, ctx: ctx, cancel: cancel, rules: ruleDocs(), guard: guard}
	s.cur.Store(ci)
	s.an.Store(newAnalysis(idx.FirstTime(), idx.LastTime()))
	if opts.Protocol != "" {
		if _, ok := knownProtocol(opts.Protocol); !ok {
			cancel()
			return nil, fmt.Errorf("unknown protocol %q", opts.Protocol)
		}
	}
	if err := s.config().Validate(); err != nil {
		cancel()
		return nil, err
	}
	s.traces = newTraceCache(s)
	s.pause = newPauser()
	s.lists = newListCache()
	s.live = newLiveFeed()
	if !opts.Follow {
		s.readers = make(chan *recording.Reader, pooledReaders)
	}
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		cancel()
		return nil, err
	}
	s.mux = http.NewServeMux()
	files := http.FileServerFS(sub)
	s.mux.Handle("GET /assets/", http.StripPrefix("/assets/", noStore(files)))
	s.mux.HandleFunc("GET /{$}", s.serveIndex)
	s.mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	s.mux.HandleFunc("GET /api/capture", s.serveCapture)
	s.mux.HandleFunc("GET /api/sessions", s.serveSessions)
	s.mux.HandleFunc("GET /api/events", s.serveEvents)
	s.mux.HandleFunc("GET /api/rows", s.serveRows)
	s.mux.HandleFunc("GET /api/find", s.serveFind)
	s.mux.HandleFunc("GET /api/progress", s.serveProgress)
	s.mux.HandleFunc("GET /api/filter", s.serveFilterCheck)
	s.mux.HandleFunc("GET /api/fields", s.serveFields)
	s.mux.HandleFunc("GET /api/export", s.serveExport)
	s.mux.HandleFunc("GET /api/event/{index}", s.serveEvent)
	s.mux.HandleFunc("GET /api/timeline", s.serveTimeline)
	s.mux.HandleFunc("GET /api/trace/{session}/steps", s.serveSteps)
	s.mux.HandleFunc("GET /api/trace/{session}/svg", s.serveSVG)
	s.mux.HandleFunc("GET /api/rules", s.serveRules)
	s.mux.HandleFunc("GET /api/live", s.serveLive)
	if opts.Replay != nil {
		s.mux.Handle("/", opts.Replay)
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		var live *liveCheck
		if opts.Follow {
			live = &liveCheck{poll: opts.FollowPoll, caughtUp: s.caughtUp}
		}
		s.analysis().run(ctx, rec, s.config(), s.pause, live)
		if opts.Follow && ctx.Err() == nil {
			// The recorder is done: the last records, the final index.
			s.caughtUp()
			s.live.end()
		}
	}()
	return s, nil
}

// ServeHTTP routes a request. The page and the API are for this machine's
// browser: no framing by other sites, no sniffing, and no other web page
// uses the API (the guard). The page and its assets may be opened from
// anywhere (a link), but only under a Host header that names the server.
// The subscriber endpoints go to the replay, which answers browsers of any
// origin (CORS) there.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	switch {
	case s.opts.Replay != nil && serve.IsSubscriberPath(r.URL.Path):
		s.opts.Replay.ServeHTTP(w, r)
		return
	case isPage(r.URL.Path):
		if err := s.guard.CheckHost(r); err != nil {
			apiError(w, http.StatusForbidden, "%v", err)
			return
		}
	default:
		if s.guard.Refuse(w, r) {
			return
		}
	}
	s.mux.ServeHTTP(w, r)
}

// isPage reports whether path is the page or one of its files (not the API).
func isPage(path string) bool {
	return path == "/" || path == "/favicon.ico" || strings.HasPrefix(path, "/assets/")
}

// Close stops the background check and waits for it.
func (s *Server) Close() error {
	s.cancel()
	s.wg.Wait()
	for {
		select {
		case rd := <-s.readers:
			rd.Close()
		default:
			return nil
		}
	}
}

// CheckDone reports whether the background check has finished.
func (s *Server) CheckDone() bool {
	return s.analysis().snap.Load().done
}

func (s *Server) serveIndex(w http.ResponseWriter, r *http.Request) {
	b, err := assets.ReadFile("assets/index.html")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'")
	w.Header().Set("X-Frame-Options", "DENY")
	_, _ = w.Write(b)
}

func noStore(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		h.ServeHTTP(w, r)
	})
}

// title is the capture's file name, for the page.
func (s *Server) title() string {
	if len(s.rec.Parts) == 1 {
		return filepath.Base(s.rec.Name)
	}
	return s.rec.Name
}

// config is the analysis driver's configuration the options ask for.
func (s *Server) config() check.Config {
	return check.Config{Models: models.All, Protocol: s.opts.Protocol, Options: protocol.Options{Profile: protocol.Profile(s.opts.Profile)}}
}
