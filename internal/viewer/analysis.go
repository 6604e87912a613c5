package viewer

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/aaep-tools/aaepkit/input"
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/models"
)

// Bounds on what the background check keeps, so that a capture of any size
// fits in memory: findings beyond maxFindings are counted, not kept, and
// each session remembers at most maxValues types, urgencies and sources.
const (
	maxFindings = 200000
	maxValues   = 64
	// maxSessions bounds the sessions the check describes; later ones are
	// only counted in the totals.
	maxSessions = 100000
)

// Verdict counts a session's findings by level.
type Verdict struct {
	Must   int64 `json:"must"`
	Should int64 `json:"should"`
	Info   int64 `json:"info"`
}

func (v *Verdict) add(l protocol.Level) {
	switch l {
	case protocol.Must:
		v.Must++
	case protocol.Should:
		v.Should++
	default:
		v.Info++
	}
}

// sessionFacts is what the check learned about one session.
type sessionFacts struct {
	Protocol  string           `json:"protocol,omitempty"`
	Messages  int64            `json:"messages"`
	First     time.Duration    `json:"first_ns"`
	Last      time.Duration    `json:"last_ns"`
	State     string           `json:"state,omitempty"`
	Complete  bool             `json:"complete"`
	Verdict   Verdict          `json:"verdict"`
	Types     []string         `json:"types"`
	Urgencies []string         `json:"urgencies"`
	Sources   []int            `json:"sources"`
	Rules     map[string]int64 `json:"rules"`
	seen      bool
}

func addValue[T comparable](list []T, v T) []T {
	for _, x := range list {
		if x == v {
			return list
		}
	}
	if len(list) >= maxValues {
		return list
	}
	return append(list, v)
}

// analysis is the background check of the whole capture: findings by
// message, verdicts by session, progress. It is filled by run and read by
// the API under mu.
type analysis struct {
	mu        sync.Mutex
	done      bool
	err       string
	read      int64 // messages read so far
	findings  []protocol.Finding
	dropped   int64
	byIndex   map[int64][]int32 // message index -> positions in findings
	sessions  map[string]*sessionFacts
	order     []string // sessions in order of first message
	spare     sessionFacts
	truncated bool // more sessions than maxSessions
	counts    Verdict
	stats     protocol.Stats
}

func newAnalysis() *analysis {
	return &analysis{byIndex: map[int64][]int32{}, sessions: map[string]*sessionFacts{}}
}

func (a *analysis) session(id string) *sessionFacts {
	s := a.sessions[id]
	if s == nil {
		if len(a.sessions) >= maxSessions {
			// Counted in the totals, not described.
			a.truncated = true
			a.spare = sessionFacts{Rules: map[string]int64{}}
			return &a.spare
		}
		s = &sessionFacts{Rules: map[string]int64{}}
		a.sessions[id] = s
		a.order = append(a.order, id)
	}
	return s
}

// run checks the capture at path with every model (or the forced one).
func (a *analysis) run(ctx context.Context, path, force string, opts *protocol.Options) {
	sink := protocol.Sink{
		Finding: func(f protocol.Finding) {
			a.mu.Lock()
			defer a.mu.Unlock()
			a.counts.add(f.Level)
			if f.Session != "" {
				s := a.session(f.Session)
				s.Verdict.add(f.Level)
				s.Rules[f.RuleID]++
			}
			if len(a.findings) >= maxFindings {
				a.dropped++
				return
			}
			a.byIndex[f.Index] = append(a.byIndex[f.Index], int32(len(a.findings)))
			a.findings = append(a.findings, f)
		},
		SessionDone: func(sum protocol.SessionSummary) {
			a.mu.Lock()
			defer a.mu.Unlock()
			s := a.session(sum.Session)
			s.Protocol, s.State, s.Complete = sum.Protocol, sum.State, sum.Complete
		},
	}
	eng, err := protocol.NewEngine(models.All(), force, opts, sink)
	if err != nil {
		a.finish(err)
		return
	}
	_, err = input.Each(ctx, path, func(m *protocol.Message) error {
		eng.Feed(m)
		key := m.Doc.Routing.SessionKey()
		a.mu.Lock()
		a.read++
		if key != "" {
			s := a.session(key)
			if !s.seen {
				s.seen, s.First = true, m.Offset
			}
			s.Messages++
			s.Last = m.Offset
			if t := m.Doc.Routing.TypeName(); t != "" {
				s.Types = addValue(s.Types, t)
			}
			u := m.Doc.Routing.Urgency
			if u == "" && m.Doc.Routing.Type != "" {
				u = "normal"
			}
			if u != "" {
				s.Urgencies = addValue(s.Urgencies, u)
			}
			s.Sources = addValue(s.Sources, m.Source)
		}
		a.mu.Unlock()
		return nil
	})
	if err == nil {
		eng.Finish()
		a.mu.Lock()
		a.stats = eng.Stats()
		a.mu.Unlock()
	}
	a.finish(err)
}

func (a *analysis) finish(err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.done = true
	if err != nil {
		a.err = err.Error()
	}
	for _, s := range a.sessions {
		sort.Strings(s.Types)
		sort.Strings(s.Urgencies)
		sort.Ints(s.Sources)
	}
}

// findingsAt returns the findings about message index (a copy).
func (a *analysis) findingsAt(index int64) []protocol.Finding {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []protocol.Finding
	for _, i := range a.byIndex[index] {
		out = append(out, a.findings[i])
	}
	return out
}

// worstAt returns the worst level of the findings about index (0: none)
// and whether one of them is of rule (when rule is set).
func (a *analysis) worstAt(index int64, rule string) (protocol.Level, bool) {
	var worst protocol.Level
	hasRule := false
	for _, i := range a.byIndex[index] {
		f := &a.findings[i]
		worst = max(worst, f.Level)
		if f.RuleID == rule {
			hasRule = true
		}
	}
	return worst, hasRule
}
