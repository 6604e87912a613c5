package viewer

import (
	"context"
	"math"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/payload"
)

// Narrowing a list: what the indexes answer without reading (a record
// range, a session's records), then a read of what is left, shared by the
// requests that ask for the same list, reporting how far it has read
// (/api/progress) and stopped when no request waits for it any more.

// indexPlan is what the indexes answer of a filter expression: the
// conjuncts index < > <= >= == N (a record range [lo, hi)) and one
// session == X; rest is set when other conjuncts are left to read.
type indexPlan struct {
	lo, hi  int64
	session string
	rest    bool
}

// planIndex splits e, a conjunction at its top, into what the indexes
// answer and the rest, for a capture of n records.
func planIndex(e filterExpr, n int64) indexPlan {
	p := indexPlan{hi: n}
	var walk func(e filterExpr)
	walk = func(e filterExpr) {
		switch x := e.(type) {
		case andExpr:
			walk(x.l)
			walk(x.r)
		case *cmpExpr:
			switch {
			case x.field == "index" && x.isNum && x.op != "~" && x.op != "!=":
				p.bound(x.op, x.num)
			case x.field == "session" && x.op == "==" && p.session == "":
				p.session = x.value
			default:
				p.rest = true
			}
		default:
			p.rest = true
		}
	}
	if e != nil {
		walk(e)
	}
	p.lo, p.hi = min(max(p.lo, 0), n), min(max(p.hi, 0), n)
	p.hi = max(p.hi, p.lo)
	return p
}

// bound narrows the range by index op v.
func (p *indexPlan) bound(op string, v float64) {
	const big = math.MaxInt64 / 2
	clamp := func(f float64) int64 { return int64(min(max(f, -1), big)) }
	switch op {
	case "==":
		if v != math.Trunc(v) {
			p.hi = p.lo
			return
		}
		p.lo, p.hi = max(p.lo, clamp(v)), min(p.hi, clamp(v)+1)
	case ">":
		p.lo = max(p.lo, clamp(math.Floor(v))+1)
	case ">=":
		p.lo = max(p.lo, clamp(math.Ceil(v)))
	case "<":
		p.hi = min(p.hi, clamp(math.Ceil(v)))
	case "<=":
		p.hi = min(p.hi, clamp(math.Floor(v))+1)
	}
}

// within returns the part of ids (ascending) in [lo, hi).
func within(ids []uint32, lo, hi int64) []uint32 {
	a, _ := slices.BinarySearch(ids, uint32(min(lo, math.MaxUint32)))
	b, _ := slices.BinarySearch(ids, uint32(min(hi, math.MaxUint32)))
	if hi > math.MaxUint32 {
		b = len(ids)
	}
	return ids[a:max(a, b)]
}

// recordsOfSession returns the records of the messages whose session is id,
// from the check's record lists, when the check is done and has filed at
// least as many records of id as the capture's index counts (a check that
// described maxSessions sessions describes no later one, and files none of
// its records: those are read); exact reports that they are those records
// and no other (no reply without a session of its own filed with them: the
// capture's index counts as many records of id).
func (s *Server) recordsOfSession(id string) (ids []uint32, exact, ok bool) {
	sn := s.analysis().snap.Load()
	if !sn.done || sn.err != "" {
		return nil, false, false
	}
	views := sn.byID(id)
	var n int64
	for _, v := range views {
		n += int64(len(v.Records))
	}
	want := int64(0)
	if x, found := s.sessionIndex()[id]; found {
		want = x.Records
	}
	if n < want {
		return nil, false, false // the check filed fewer: read everything
	}
	switch len(views) {
	case 0:
		ids = []uint32{}
	case 1:
		ids = views[0].Records
	default:
		ids = make([]uint32, 0, n)
		for _, v := range views {
			ids = append(ids, v.Records...)
		}
		slices.Sort(ids)
	}
	return ids, n == want, true
}

// candidates returns the rows of base that the plan's index part keeps,
// and whether they are the answer (nothing left to read).
func (s *Server) candidates(base *rowList, p indexPlan, textSearch bool) (*rowList, bool) {
	out := &rowList{partial: base.partial}
	exact := !p.rest && !textSearch
	switch {
	case base.ids != nil:
		out.ids = within(base.ids, p.lo, p.hi)
		exact = exact && p.session == ""
	case p.session != "":
		ids, sessionExact, ok := s.recordsOfSession(p.session)
		if !ok {
			out.lo, out.n = p.lo, p.hi-p.lo
			return out, false
		}
		out.ids = within(ids, p.lo, p.hi)
		exact = exact && sessionExact
	default:
		out.lo, out.n = p.lo, p.hi-p.lo
	}
	if out.ids != nil {
		out.n = int64(len(out.ids))
	}
	return out, exact
}

// narrowJob is one list being read, shared by the requests waiting for it.
type narrowJob struct {
	done        chan struct{}
	l           *rowList
	err         error
	read, total atomic.Int64
	waiters     int
	cancel      context.CancelFunc
}

type narrowJobs struct {
	mu sync.Mutex
	m  map[listKey]*narrowJob
}

// narrowShared answers list k: the rows of base that expr and the text q
// keep. A read already running for k is joined; a read no request waits
// for any more (the page cancelled it, or asked for another) stops.
func (s *Server) narrowShared(ctx context.Context, k listKey, base *rowList, expr filterExpr) (*rowList, error) {
	p := planIndex(expr, s.index().Records)
	cand, exact := s.candidates(base, p, k.q != "")
	if exact {
		return cand, nil
	}
	js := &s.jobs
	js.mu.Lock()
	if js.m == nil {
		js.m = map[listKey]*narrowJob{}
	}
	j := js.m[k]
	if j == nil {
		jctx, cancel := context.WithCancel(s.ctx)
		j = &narrowJob{done: make(chan struct{}), cancel: cancel}
		j.total.Store(cand.n)
		js.m[k] = j
		go func() {
			l, err := s.narrow(jctx, cand, expr, []byte(k.q), &j.read)
			cancel()
			if err == nil && !l.partial {
				s.lists.put(k, l)
			}
			js.mu.Lock()
			if js.m[k] == j {
				delete(js.m, k)
			}
			js.mu.Unlock()
			j.l, j.err = l, err
			close(j.done)
		}()
	}
	j.waiters++
	js.mu.Unlock()
	select {
	case <-j.done:
		js.mu.Lock()
		j.waiters--
		js.mu.Unlock()
		return j.l, j.err
	case <-ctx.Done():
		js.mu.Lock()
		if j.waiters--; j.waiters == 0 {
			j.cancel()
			if js.m[k] == j {
				delete(js.m, k)
			}
		}
		js.mu.Unlock()
		return nil, context.Cause(ctx)
	}
}

// narrow reads the rows of base and keeps those that expr and the text q
// match, counting the rows read in read; it stops when ctx ends.
func (s *Server) narrow(ctx context.Context, base *rowList, expr filterExpr, q []byte, read *atomic.Int64) (*rowList, error) {
	out := &rowList{ids: []uint32{}, partial: base.partial}
	var doc payload.Doc
	err := s.eachRecord(base, 0, base.n, func(i, idx int64, rec *capfile.Record, _ int) bool {
		if i%4096 == 0 {
			read.Store(i)
			if ctx.Err() != nil {
				return false
			}
		}
		if len(q) > 0 && !textMatch(rec.Payload, q) {
			return true
		}
		if expr != nil {
			fr := s.filterRecord(idx, rec, &doc)
			if !expr.eval(&fr) {
				return true
			}
		}
		out.ids = append(out.ids, uint32(idx))
		return true
	})
	if err == nil {
		err = context.Cause(ctx)
	}
	read.Store(base.n)
	out.n = int64(len(out.ids))
	return out, err
}

// serveProgress says how far the read of a list has got:
// /api/progress?session&filter&q answers {running, read, total}.
func (s *Server) serveProgress(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	k := listKey{session: q.Get("session"), filter: q.Get("filter"), q: q.Get("q")}
	s.jobs.mu.Lock()
	j := s.jobs.m[k]
	s.jobs.mu.Unlock()
	if j == nil {
		writeJSON(w, http.StatusOK, map[string]any{"running": false, "ready": s.lists.get(k) != nil})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"running": true, "read": j.read.Load(), "total": j.total.Load()})
}
