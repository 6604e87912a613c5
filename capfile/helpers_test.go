package capfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// testStart is the fixed wall-clock start of generated captures.
var testStart = time.Date(2026, 5, 24, 14, 22, 11, 342000000, time.UTC)

func testHeader() Header {
	return Header{
		Start: testStart,
		Tool:  "capfile-test/1",
		Origins: []Origin{
			{ID: 0, Transport: "sse", Endpoint: "https://agent.example/aaep/events"},
			{ID: 1, Transport: "websocket", Endpoint: "wss://agent.example/aaep", Subprotocol: "aaep.v1"},
		},
	}
}

var (
	eventTypes = []string{
		"agent.state.changed", "agent.progress.updated", "agent.tool.invoked", "agent.tool.completed",
		"agent.output.streaming", "agent.output.streaming", "agent.output.streaming", "agent.state.changed",
	}
	states  = []string{"idle", "thinking", "deciding", "acting", "waiting", "responding"}
	tools   = []string{"fetch_balance", "search_documents", "send_email", "create_calendar_event", "lookup_customer"}
	phrases = []string{
		"Analyzing your retirement planning question.", "Retrieving your checking account balance.",
		"Calculating retirement projections, 60 percent complete.", "Drafting a reply to the support ticket.",
		"Searching the knowledge base for matching articles.", "Comparing three insurance offers.",
	}
)

// aaepEvent returns a realistic AAEP event of about 430 bytes.
func aaepEvent(rng *rand.Rand, session string, seq int, ts time.Time) []byte {
	typ := eventTypes[rng.IntN(len(eventTypes))]
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"@context":"https://aaep-protocol.org/context/v1","type":"aaep:%s","event_id":"evt_%016x%016x",`, typ, rng.Uint64(), rng.Uint64())
	fmt.Fprintf(&b, `"session_id":"%s","timestamp":"%s","producer":{"agent_id":"retirement-planner","agent_version":"1.4.2"},"sequence":%d,`,
		session, ts.UTC().Format("2006-01-02T15:04:05.000Z"), seq)
	switch typ {
	case "agent.state.changed":
		fmt.Fprintf(&b, `"urgency":"background","from_state":"%s","to_state":"%s","summary_terse":"Thinking.","summary_normal":"%s","expected_duration_ms":%d}`,
			states[rng.IntN(len(states))], states[rng.IntN(len(states))], phrases[rng.IntN(len(phrases))], 500+rng.IntN(8000))
	case "agent.progress.updated":
		p := rng.IntN(101)
		fmt.Fprintf(&b, `"urgency":"background","progress":{"percent":%d,"step":%d,"total_steps":5,"description":"Calculating retirement projections"},"summary_terse":"%d percent.","eta_ms":%d}`,
			p, 1+p/25, p, rng.IntN(20000))
	case "agent.tool.invoked":
		fmt.Fprintf(&b, `"urgency":"normal","tool":"%s","tool_call_id":"call_%08x","args_summary":"account_id: checking-%04d","summary_normal":"%s","risk_level":"low","irreversible":false}`,
			tools[rng.IntN(len(tools))], rng.Uint32(), rng.IntN(10000), phrases[rng.IntN(len(phrases))])
	case "agent.tool.completed":
		fmt.Fprintf(&b, `"urgency":"normal","tool":"%s","tool_call_id":"call_%08x","status":"success","duration_ms":%d,"summary_normal":"%s"}`,
			tools[rng.IntN(len(tools))], rng.Uint32(), rng.IntN(5000), phrases[rng.IntN(len(phrases))])
	default:
		fmt.Fprintf(&b, `"urgency":"normal","stream_id":"str_%08x","chunk_index":%d,"delta":"%s %s","final":false}`,
			rng.Uint32(), seq, phrases[rng.IntN(len(phrases))], phrases[rng.IntN(len(phrases))])
	}
	return b.Bytes()
}

// recGen generates a deterministic stream of realistic records spread over
// a number of sessions, with a mean gap between records.
type recGen struct {
	rng      *rand.Rand
	seed     uint64
	sessions int
	gap      time.Duration
	i        int
	t        int64
}

func newRecGen(seed uint64, sessions int, gap time.Duration) *recGen {
	return &recGen{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), seed: seed, sessions: sessions, gap: gap}
}

func (g *recGen) next() Record {
	rng, i := g.rng, g.i
	g.i++
	g.t += int64(g.gap/2) + rng.Int64N(int64(g.gap)+1)
	s := rng.IntN(g.sessions)
	sess := fmt.Sprintf("sess_%016x", uint64(s)*0x2c91a7b4d23f1e88+g.seed)
	rec := Record{Kind: KindReceived, Origin: uint16(s % 2), Time: g.t, Session: sess}
	switch {
	case i%97 == 0:
		rec.Kind = KindConn
		rec.Payload = []byte(`{"event":"connected","status":200}`)
	case i%211 == 5:
		rec.Kind = KindMarker
		rec.Payload = []byte(`{"note":"user pressed the skip key"}`)
	case i%53 == 7:
		rec.Kind = KindSent
		rec.Payload = []byte(`{"type":"aaep:subscriber.confirmation.reply","decision":"accept"}`)
	default:
		rec.Payload = aaepEvent(rng, sess, i, testStart.Add(time.Duration(g.t)))
		if rec.Origin == 0 {
			rec.Attrs = []Attr{{Key: "event", Value: "aaep"}, {Key: "id", Value: fmt.Sprint(i)}}
		}
	}
	return rec
}

// genRecords returns the first n records of newRecGen(seed, sessions, gap).
func genRecords(seed uint64, n, sessions int, gap time.Duration) []Record {
	g := newRecGen(seed, sessions, gap)
	recs := make([]Record, n)
	for i := range recs {
		recs[i] = g.next()
	}
	return recs
}

// writeFile writes recs to a new capture under dir and returns its path.
func writeFile(t testing.TB, dir string, recs []Record, opts *WriterOptions) string {
	t.Helper()
	path := filepath.Join(dir, "c.aaep")
	w, err := Create(path, testHeader(), opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		if err := w.Append(&recs[i]); err != nil {
			t.Fatalf("Append(%d): %v", i, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return path
}

// cloneRecord deep-copies a record returned by Next.
func cloneRecord(r *Record) Record {
	c := *r
	c.Payload = bytes.Clone(r.Payload)
	if r.Attrs != nil {
		c.Attrs = append([]Attr(nil), r.Attrs...)
	}
	return c
}

// readAll reads records until an error and returns them with the error
// (nil for io.EOF).
func readAll(r *Reader) ([]Record, error) {
	var out []Record
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, cloneRecord(rec))
	}
}

// openers lists both reader kinds, so tables run against each.
var openers = map[string]func(t testing.TB, path string) *Reader{
	"file": func(t testing.TB, path string) *Reader {
		r, err := Open(path)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	},
	"stream": func(t testing.TB, path string) *Reader {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		r, err := NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("NewReader: %v", err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	},
}

func equalRecords(t testing.TB, got, want []Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := &got[i], &want[i]
		if g.Kind != w.Kind || g.Flags != w.Flags || g.Origin != w.Origin || g.Time != w.Time || g.Session != w.Session ||
			!bytes.Equal(g.Payload, w.Payload) || !equalAttrs(g.Attrs, w.Attrs) {
			t.Fatalf("record %d differs:\n got %+v\nwant %+v", i, *g, *w)
		}
	}
}

func equalAttrs(a, b []Attr) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func asCorruption(t testing.TB, err error) *CorruptionError {
	t.Helper()
	var ce *CorruptionError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T) is not a *CorruptionError", err, err)
	}
	return ce
}

// Repair is RepairTo into the file dst, which is left absent when the
// repair fails (what the commands' output policy does, without its checks).
func Repair(src, dst string) (RepairReport, error) {
	f, err := os.Create(dst)
	if err != nil {
		return RepairReport{}, err
	}
	rep, err := RepairTo(src, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst)
	}
	return rep, err
}
