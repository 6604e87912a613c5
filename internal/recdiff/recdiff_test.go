package recdiff

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/internal/golden"
	"github.com/aaep-tools/aaepkit/internal/sample"
	"github.com/aaep-tools/aaepkit/protocol/check"
	"github.com/aaep-tools/aaepkit/protocol/models"
	"github.com/aaep-tools/aaepkit/recording"
)

// The recordings of testdata/ (testdata/record.sh makes them with the
// project's tools): the demo producer recorded, recorded again with every
// id changed and at another speed, and with its first session's request and
// first tool call changed; a subscriber's replies recorded by aaep-replay
// test, behaving and flipping the user's decision.
const (
	v1      = "testdata/v1.aaep"
	v1Again = "testdata/v1-again.aaep"
	v2      = "testdata/v2.aaep"
	subGood = "testdata/sub-good.aaep"
	subFlip = "testdata/sub-flip.aaep"
	// subNoDeclare subscribed without declaring that it can reply.
	subNoDeclare = "testdata/sub-nodeclare.aaep"
)

func defaults() Options {
	return Options{TimeTolerance: 0.2, TimeFloor: 250 * time.Millisecond, Check: check.Config{Models: models.All}, KeepSame: true}
}

func openSide(t testing.TB, name string) Side {
	t.Helper()
	recs, err := recording.Open(context.Background(), []string{name}, recording.Options{Extensions: []string{".aaep"}})
	if err != nil {
		t.Fatal(err)
	}
	return Side{Name: name, Recordings: recs}
}

func diff(t *testing.T, a, b string, opts Options) *Result {
	t.Helper()
	res, err := Run(context.Background(), openSide(t, a), openSide(t, b), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Incomplete) > 0 {
		t.Fatalf("incomplete: %v", res.Incomplete)
	}
	return res
}

func different(res *Result) []*SessionDiff {
	var out []*SessionDiff
	for _, s := range res.Sessions {
		if s.Status != Same {
			out = append(out, s)
		}
	}
	return out
}

// A recording against itself is the same, session by session, whatever
// the way of matching.
func TestRecordingAgainstItself(t *testing.T) {
	for _, name := range []string{v1, v2, subGood, "../../testdata/demo.aaep"} {
		for _, match := range []string{"", MatchID, MatchOrder, MatchStart, "summary_normal"} {
			opts := defaults()
			opts.Match = match
			opts.TimeFloor = 0
			res := diff(t, name, name, opts)
			if !res.Same() || len(res.Sessions) < 2 {
				t.Errorf("%s against itself (--match %q): same=%v, %d sessions, differing: %+v", name, match, res.Same(), len(res.Sessions), different(res))
			}
		}
	}
}

// Two recordings of the same behaviour, with other ids and times, are the
// same: matched by what started each session, ids and times left out.
func TestSameBehaviourOtherIDs(t *testing.T) {
	res := diff(t, v1, v1Again, defaults())
	if !res.Same() {
		t.Fatalf("not the same: %+v", different(res))
	}
	// The handshake is the stream's messages of no session, counted
	// apart: no session.
	if c, sc := res.Counts(), res.StreamCounts(); c[Same] != 8 || res.Total() != 8 || sc[Same] != 1 || len(res.Sessions) != 9 {
		t.Errorf("counts %v, stream counts %v, %d compared; want 8 sessions the same and the handshake (9)", c, sc, len(res.Sessions))
	}
	for _, s := range res.Sessions {
		if s.A.Session != "" && s.A.Session == s.B.Session {
			t.Errorf("session %s matched one of the same id; the ids differ", s.A.Session)
		}
		if s.A.Session != "" && s.MatchedBy != MatchStart {
			t.Errorf("session %s matched by %q, want start", s.A.Session, s.MatchedBy)
		}
	}
	// By id nothing matches but the handshake; by order everything does.
	opts := defaults()
	opts.Match = MatchID
	res = diff(t, v1, v1Again, opts)
	if c := res.Counts(); c[OnlyA] != 8 || c[OnlyB] != 8 {
		t.Errorf("--match id: counts %v, want 8 only in a and 8 only in b", c)
	}
	opts.Match = MatchOrder
	if res = diff(t, v1, v1Again, opts); !res.Same() {
		t.Errorf("--match order: not the same: %+v", different(res))
	}
	// The ids are compared when asked.
	opts.Match, opts.Keep = "", []string{"event_id"}
	if res = diff(t, v1, v1Again, opts); res.Same() || len(different(res)) != 8 {
		t.Errorf("--keep event_id: %d sessions differ, want 8", len(different(res)))
	}
}

// A changed request and a lost tool call: exactly that session differs,
// and the tool call is named.
func TestChangedRequest(t *testing.T) {
	res := diff(t, v1, v2, defaults())
	d := different(res)
	if len(d) != 1 {
		t.Fatalf("%d sessions differ, want 1: %+v", len(d), d)
	}
	s := d[0]
	if s.A.Session != "sess_d0fd4a2cb8d12071" || s.B.Session != s.A.Session || s.MatchedBy != MatchID {
		t.Errorf("session %s ↔ %s matched by %s", s.A.Session, s.B.Session, s.MatchedBy)
	}
	if len(s.Tools) != 1 || s.Tools[0].Op != "-" || s.Tools[0].A.Name != "search_flights" {
		t.Errorf("tool calls %+v, want search_flights removed", s.Tools)
	}
	if s.Removed != 2 || s.Added != 0 || s.Changed != 1 {
		t.Errorf("events +%d -%d ~%d, want +0 -2 ~1", s.Added, s.Removed, s.Changed)
	}
	var changes []string
	for _, h := range s.Hunks {
		for _, l := range h.Lines {
			changes = append(changes, l.Changes...)
		}
	}
	if len(changes) != 1 || !strings.HasPrefix(changes[0], "summary_normal: ") || !strings.Contains(changes[0], "one-way") {
		t.Errorf("member changes %q, want the request's summary_normal", changes)
	}
	// Without KeepSame only what differs is kept; all is counted.
	opts := defaults()
	opts.KeepSame = false
	res = diff(t, v1, v2, opts)
	if c := res.Counts(); len(res.Sessions) != 1 || res.Sessions[0].A.Session != s.A.Session || c[Same] != 7 || c[Different] != 1 || res.Total() != 8 || res.StreamCounts()[Same] != 1 {
		t.Errorf("without KeepSame: %d sessions kept, counts %v", len(res.Sessions), c)
	}
	// Left out, the request no longer differs; the tool call still does.
	opts = defaults()
	opts.Ignore = []string{"summary_normal"}
	res = diff(t, v1, v2, opts)
	if d := different(res); len(d) != 1 || d[0].Changed != 0 || len(d[0].Tools) != 1 {
		t.Errorf("--ignore summary_normal: %+v", d)
	}
}

// A subscriber that answers accept where the user rejected: the reply and
// the decision differ.
func TestSubscriberReplies(t *testing.T) {
	res := diff(t, subGood, subFlip, defaults())
	d := different(res)
	if len(d) != 1 {
		t.Fatalf("%d sessions differ, want 1", len(d))
	}
	s := d[0]
	if len(s.Asks) != 1 || s.Asks[0].Op != "~" || s.Asks[0].A.Decision != "reject" || s.Asks[0].B.Decision != "accept" {
		t.Errorf("asks %+v, want the decision reject → accept", s.Asks)
	}
	var removed, added []string
	for _, h := range s.Hunks {
		for _, l := range h.Lines {
			switch l.Op {
			case "-":
				removed = append(removed, l.Text)
			case "+":
				added = append(added, l.Text)
			}
		}
	}
	if strings.Join(removed, "|") != "subscriber confirmation.reply reject" || strings.Join(added, "|") != "subscriber confirmation.reply accept" {
		t.Errorf("events -%q +%q", removed, added)
	}
}

// A subscriber whose subscription request changed: the stream's messages
// of no session differ, the request's capability named.
func TestSubscriberRequests(t *testing.T) {
	res := diff(t, subGood, subNoDeclare, defaults())
	var stream *SessionDiff
	for _, s := range different(res) {
		if s.A != nil && s.A.Session == "" {
			stream = s
		}
	}
	if stream == nil {
		t.Fatalf("the handshake does not differ: %+v", different(res))
	}
	var got []string
	for _, h := range stream.Hunks {
		for _, l := range h.Lines {
			if l.Op == "+" && l.Text == "subscriber subscription.request" {
				got = append(got, l.Changes...)
			}
		}
	}
	if len(got) != 1 || got[0] != "capabilities.supports_confirmation_reply: true → (none)" {
		t.Errorf("the request's changes: %q", got)
	}
}

// Timing counts beyond both the tolerance and the floor: v1-again was
// recorded at 30x, v1 at 20x.
func TestTiming(t *testing.T) {
	opts := defaults()
	opts.TimeFloor = 0
	res := diff(t, v1, v1Again, opts)
	d := different(res)
	if len(d) == 0 {
		t.Fatal("no timing difference without a floor")
	}
	for _, s := range d {
		if s.Summary() != "timing" {
			t.Errorf("%s: %q, want timing only", s.A.Session, s.Summary())
		}
	}
	// At 30x instead of 20x each session lasts a third less: within 90%.
	opts.TimeTolerance = 0.9
	res = diff(t, v1, v1Again, opts)
	for _, s := range res.Sessions {
		for _, tm := range s.Timing {
			if tm.Name == "duration" && (tm.Over || tm.B >= tm.A) {
				t.Errorf("%s: duration %v → %v, over 90%%: %v", s.A.Session, tm.A, tm.B, tm.Over)
			}
		}
	}
	opts.TimeTolerance = -1
	if res = diff(t, v1, v1Again, opts); !res.Same() {
		t.Errorf("timing off: %+v", different(res))
	}
}

func TestGolden(t *testing.T) {
	for _, tc := range []struct{ name, a, b string }{
		{"v1-v2", v1, v2},
		{"sub-good-flip", subGood, subFlip},
		{"v1-again", v1, v1Again},
	} {
		res := diff(t, tc.a, tc.b, defaults())
		var text, stat, color, js bytes.Buffer
		if err := res.WriteText(&text, TextOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := res.WriteText(&stat, TextOptions{Stat: true}); err != nil {
			t.Fatal(err)
		}
		if err := res.WriteText(&color, TextOptions{Color: true}); err != nil {
			t.Fatal(err)
		}
		if err := res.WriteJSON(&js); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, filepath.Join("testdata", tc.name+".txt"), text.Bytes())
		golden.Check(t, filepath.Join("testdata", tc.name+".stat.txt"), stat.Bytes())
		golden.Check(t, filepath.Join("testdata", tc.name+".json"), js.Bytes())
		if plain := strings.NewReplacer(ansiBold, "", ansiRed, "", ansiGreen, "", ansiCyan, "", ansiReset, "").Replace(color.String()); plain != text.String() {
			t.Errorf("%s: the coloured text is not the text with colours", tc.name)
		}
		if !res.Same() && !strings.Contains(color.String(), ansiRed) {
			t.Errorf("%s: no colour", tc.name)
		}
		var doc struct {
			SchemaVersion int  `json:"schema_version"`
			Same          bool `json:"same"`
			Sessions      []json.RawMessage
		}
		if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		if doc.SchemaVersion != SchemaVersion || doc.Same != res.Same() || len(doc.Sessions) != len(res.Sessions) {
			t.Errorf("%s: JSON schema %d, same %v, %d sessions", tc.name, doc.SchemaVersion, doc.Same, len(doc.Sessions))
		}
	}
}

// The edit script is minimal: as long as the longest common subsequence
// allows, and it turns A into B.
func TestEditScriptMinimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		a, b := randSeq(rng), randSeq(rng)
		ops := editScript(len(a), len(b), func(i, j int) bool { return a[i] == b[j] })
		var got []byte
		common := 0
		ai, bi := 0, 0
		for _, op := range ops {
			switch op.Kind {
			case ' ':
				if op.A != ai || op.B != bi || a[ai] != b[bi] {
					t.Fatalf("%q → %q: bad keep %+v", a, b, op)
				}
				got = append(got, b[bi])
				ai, bi, common = ai+1, bi+1, common+1
			case '-':
				if op.A != ai {
					t.Fatalf("%q → %q: bad delete %+v", a, b, op)
				}
				ai++
			case '+':
				if op.B != bi {
					t.Fatalf("%q → %q: bad insert %+v", a, b, op)
				}
				got = append(got, b[bi])
				bi++
			}
		}
		if string(got) != string(b) || ai != len(a) {
			t.Fatalf("%q → %q: script gives %q", a, b, got)
		}
		if want := lcs(a, b); common != want {
			t.Fatalf("%q → %q: keeps %d, the longest common subsequence is %d", a, b, common, want)
		}
	}
}

func randSeq(rng *rand.Rand) []byte {
	b := make([]byte, rng.IntN(12))
	for i := range b {
		b[i] = "abc"[rng.IntN(3)]
	}
	return b
}

func lcs(a, b []byte) int {
	t := make([][]int, len(a)+1)
	for i := range t {
		t[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				t[i][j] = t[i+1][j+1] + 1
			} else {
				t[i][j] = max(t[i+1][j], t[i][j+1])
			}
		}
	}
	return t[0][0]
}

// Hunks show three lines of context and join changes closer than that, as
// diff -u does.
func TestHunks(t *testing.T) {
	a := strings.Split("1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20", " ")
	b := append([]string(nil), a...)
	b[1] = "two"                  // a change near the top
	b = append(b[:10], b[11:]...) // a deletion in the middle
	b[len(b)-1] = "twenty"        // a change at the end
	got := textHunks(strings.Join(a, "\n"), strings.Join(b, "\n"))
	want := []struct{ as, al, bs, bl int }{{1, 5, 1, 5}, {8, 7, 8, 6}, {17, 4, 16, 4}}
	if len(got) != len(want) {
		t.Fatalf("%d hunks, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		h := got[i]
		if h.AStart != w.as || h.ALen != w.al || h.BStart != w.bs || h.BLen != w.bl {
			t.Errorf("hunk %d: -%d,%d +%d,%d, want -%d,%d +%d,%d", i, h.AStart, h.ALen, h.BStart, h.BLen, w.as, w.al, w.bs, w.bl)
		}
	}
}

// Memory: the sessions waiting for their match stay few when both sides
// hold the same sessions, however many there are.
func TestWaitingBounded(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "many.aaep")
	opts := sample.Options{Sessions: 600, Seed: 7, Gap: time.Millisecond, Stagger: 3 * time.Millisecond}
	if err := sample.WriteCapture(path, sample.Stream(opts), opts.Start0(), "aaep-capture/test"); err != nil {
		t.Fatal(err)
	}
	defer func(l int) { aheadLimit = l }(aheadLimit)
	aheadLimit = 64 << 10 // about 8 sessions of 17 events
	res, peak := runPeak(t, path, path)
	if !res.Same() || len(res.Sessions) != 600 {
		t.Fatalf("same=%v, %d sessions", res.Same(), len(res.Sessions))
	}
	// The two sides are read at the same time; one that runs ahead stops
	// once it holds aheadLimit, not with the recording.
	if limit := 2*(8+1) + 2*autoWindow; peak > limit || peak == 0 {
		t.Errorf("%d sessions waited at once, of 600 (limit %d)", peak, limit)
	}
}

func runPeak(t *testing.T, a, b string) (*Result, int) {
	t.Helper()
	peak := 0
	testHookWaiting = func(n int) { peak = max(peak, n) }
	defer func() { testHookWaiting = nil }()
	return diff(t, a, b, defaults()), peak
}

func TestBadOptions(t *testing.T) {
	for _, o := range []Options{
		{Ignore: []string{""}},
		{Ignore: []string{"a..b"}},
		{Keep: []string{"a.**.b"}},
		{Match: "a.b"},
	} {
		o.Check = check.Config{Models: models.All}
		if err := o.Validate(); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

// The JSON form of a comparison that kept no session is a document with
// an empty list, and its counts.
func TestJSONNoSessionKept(t *testing.T) {
	opts := defaults()
	opts.KeepSame = false
	res := diff(t, v1, v1Again, opts)
	var b bytes.Buffer
	if err := res.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Same         bool
		Counts       map[string]int
		StreamCounts map[string]int `json:"stream_counts"`
		Sessions     []json.RawMessage
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	// The handshake is counted apart: no session.
	if !doc.Same || doc.Sessions == nil || len(doc.Sessions) != 0 || doc.Counts["same"] != 8 || doc.StreamCounts["same"] != 1 {
		t.Errorf("same %v, sessions %v, counts %v, stream counts %v", doc.Same, doc.Sessions, doc.Counts, doc.StreamCounts)
	}
}

// A session that ends otherwise: its final state differs, and the event
// that ended it.
func TestFinalState(t *testing.T) {
	dir := t.TempDir()
	opts := sample.Options{Sessions: 4, Seed: 5}
	msgs := sample.Stream(opts)
	a := filepath.Join(dir, "a.aaep")
	if err := sample.WriteCapture(a, msgs, opts.Start0(), "aaep-capture/test"); err != nil {
		t.Fatal(err)
	}
	first := msgs[0].Session
	changed := 0
	for i, m := range msgs {
		if m.Session == first && m.Type == "aaep:agent.session.completed" {
			msgs[i].JSON = bytes.Replace(m.JSON, []byte(`"aaep:agent.session.completed"`), []byte(`"aaep:agent.session.cancelled"`), 1)
			changed++
		}
	}
	if changed != 1 {
		t.Fatalf("%d terminal events of %s changed", changed, first)
	}
	b := filepath.Join(dir, "b.aaep")
	if err := sample.WriteCapture(b, msgs, opts.Start0(), "aaep-capture/test"); err != nil {
		t.Fatal(err)
	}
	d := different(diff(t, a, b, defaults()))
	if len(d) != 1 || d[0].A.Session != first {
		t.Fatalf("%d sessions differ: %+v", len(d), d)
	}
	if f := d[0].Final; f == nil || f[0].State != "completed" || f[1].State != "cancelled" || !f[0].Complete || !f[1].Complete {
		t.Errorf("final state %+v, want completed → cancelled", f)
	}
	if d[0].Added != 1 || d[0].Removed != 1 {
		t.Errorf("events +%d -%d, want the terminal event replaced", d[0].Added, d[0].Removed)
	}
}

// Two sides with no session in common each hold everything until the end:
// a side that is ahead waits for the other, and the two never wait for
// each other at once, however small the limit.
func TestNothingMatchesNoDeadlock(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for _, seed := range []uint64{8, 9} {
		path := filepath.Join(dir, fmt.Sprintf("s%d.aaep", seed))
		opts := sample.Options{Sessions: 300, Seed: seed, Gap: time.Millisecond, Stagger: 3 * time.Millisecond}
		if err := sample.WriteCapture(path, sample.Stream(opts), opts.Start0(), "aaep-capture/test"); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	defer func(l int) { aheadLimit = l }(aheadLimit)
	aheadLimit = 1 << 10
	for _, match := range []string{MatchID, ""} {
		opts := defaults()
		opts.Match = match
		done := make(chan *Result, 1)
		go func() {
			res, err := Run(context.Background(), openSide(t, paths[0]), openSide(t, paths[1]), opts)
			if err != nil {
				t.Error(err)
			}
			done <- res
		}()
		select {
		case res := <-done:
			c := res.Counts()
			if match == MatchID && (c[OnlyA] != 300 || c[OnlyB] != 300) {
				t.Errorf("--match id: counts %v, want 300 only in a and 300 only in b", c)
			}
			if match == "" && c[Same] != 300 {
				t.Errorf("matched by what started them: counts %v, want 300 same", c)
			}
		case <-time.After(2 * time.Minute):
			t.Fatalf("--match %q: no result after 2 minutes: the sides wait for each other", match)
		}
	}
}

// The streams' messages of no session (a handshake) are no session: not in
// the sessions' counts, said apart in the totals, and a difference there
// still makes the comparison different.
func TestStreamEntriesAreNoSession(t *testing.T) {
	r := &Result{counts: map[Status]int{Same: 8}}
	r.add(&SessionDiff{Status: Different, MatchedBy: "stream", A: &SessionRef{}, B: &SessionRef{}})
	r.add(&SessionDiff{Status: Same, MatchedBy: MatchID, A: &SessionRef{Session: "sess_a"}, B: &SessionRef{Session: "sess_a"}})
	if r.Same() || r.Total() != 9 || r.StreamCounts()[Different] != 1 || r.Counts()[Different] != 0 {
		t.Errorf("same %v, total %d, counts %v, stream counts %v", r.Same(), r.Total(), r.Counts(), r.StreamCounts())
	}
	if got, want := r.totals(), "different: 9 sessions: 9 same, 0 different, 0 only in a, 0 only in b; messages of no session: 0 same, 1 different, 0 only in a, 0 only in b"; got != want {
		t.Errorf("totals %q, want %q", got, want)
	}
}
