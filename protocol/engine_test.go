package protocol_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/report"
)

// toyModel is a tiny protocol for testing the engine: messages with a "toy"
// field; "open" starts a session, "close" ends it, anything else is a step;
// a step named "bad" breaks rule TOY-BAD.
type toyModel struct{}

func (toyModel) Name() string { return "toy" }

// The toy model's rules, declared as values.
var (
	toyBad  = &protocol.Rule{ID: "TOY-BAD", Level: protocol.Must, Party: protocol.Producer, Summary: "no bad steps"}
	toyOpen = &protocol.Rule{ID: "TOY-OPEN", Level: protocol.Should, StrictLevel: protocol.Must, Party: protocol.Subscriber, Summary: "sessions are closed",
		Profiles: protocol.Profiles{Lenient: "a warning", Strict: "an error"}}
	toyNotJSON = &protocol.Rule{ID: "TOY-NOT-JSON", Level: protocol.Must, Party: protocol.Either, Summary: "toy messages are JSON"}
)

func (toyModel) Rules() []protocol.Rule {
	return protocol.Values([]*protocol.Rule{toyBad, toyOpen, toyNotJSON})
}
func (toyModel) Machine() protocol.Machine { return protocol.Machine{} }
func (toyModel) Recognize(m *protocol.Message) bool {
	return bytes.Contains(m.Raw, []byte(`"toy"`))
}
func (toyModel) NewChecker(r protocol.Reporter, _ *protocol.Options) protocol.Checker {
	return &toyChecker{r: r, sessions: protocol.NewSessions[int](2)}
}

type toyChecker struct {
	r        protocol.Reporter
	sessions *protocol.Sessions[int]
}

func (c *toyChecker) Handle(m *protocol.Message) {
	if !m.Doc.IsObject() {
		c.r.Report(toyNotJSON, "", m, "not JSON", "message %d is not JSON", m.Index)
		return
	}
	var v struct{ Toy, Session string }
	_ = json.Unmarshal(m.Raw, &v)
	switch v.Toy {
	case "open":
		n := 1
		c.sessions.Open(v.Session, &n)
	case "close":
		n := c.sessions.Get(v.Session)
		if n != nil {
			c.r.SessionDone(protocol.SessionSummary{Session: v.Session, Messages: *n + 1, State: "closed", Complete: true})
		}
		c.sessions.Close(v.Session)
	default:
		if n := c.sessions.Get(v.Session); n != nil {
			*n++
		}
		if v.Toy == "bad" {
			c.r.Report(toyBad, v.Session, m, "bad step", "step %q is bad", v.Toy)
		}
		c.r.Step(protocol.Step{Session: v.Session, Index: m.Index, From: "a", To: "b", Label: v.Toy})
	}
}

func (c *toyChecker) Finish() {
	for _, id := range c.sessions.Keys() {
		c.r.Report(toyOpen, id, nil, "still open", "session %s was never closed", id)
		c.r.SessionDone(protocol.SessionSummary{Session: id, Messages: *c.sessions.Get(id), State: "open"})
	}
}

func run(t *testing.T, force string, opts *protocol.Options, lines ...string) (*report.Report, []protocol.Step) {
	t.Helper()
	rep := report.New("toy.jsonl")
	var steps []protocol.Step
	e, err := protocol.NewEngine([]protocol.Model{toyModel{}}, force, opts, protocol.StreamInfo{}, rep.Sink(func(s protocol.Step) { steps = append(steps, s) }))
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range lines {
		e.Feed(&protocol.Message{Index: int64(i), Raw: []byte(l)})
	}
	e.Finish()
	rep.Stats = e.Stats()
	return rep, steps
}

func rules(rep *report.Report) []string {
	var ids []string
	for _, s := range rep.Sessions() {
		for _, f := range s.Findings {
			ids = append(ids, fmt.Sprintf("%s/%s@%d", f.Protocol, f.RuleID, f.Index))
		}
	}
	return ids
}

func TestEngineRouting(t *testing.T) {
	tests := []struct {
		name  string
		force string
		opts  *protocol.Options
		lines []string
		want  []string
	}{
		{"clean", "", nil, []string{`{"toy":"open","session":"s1"}`, `{"toy":"go","session":"s1"}`, `{"toy":"close","session":"s1"}`}, nil},
		{"violation and open session", "", nil, []string{`{"toy":"open","session":"s1"}`, `{"toy":"bad","session":"s1"}`}, []string{"toy/TOY-BAD@1", "toy/TOY-OPEN@-1"}},
		{"unknown protocol", "", nil, []string{`{"other":1}`}, []string{"stream/STREAM-UNKNOWN-PROTOCOL@0"}},
		{"not json, no protocol yet", "", nil, []string{`nope`}, []string{"stream/STREAM-NOT-JSON@0"}},
		{"an object with a broken value is not JSON", "", nil, []string{`{"a": @@@}`}, []string{"stream/STREAM-NOT-JSON@0"}},
		{"a truncated object is not JSON", "", nil, []string{`{"other":1`}, []string{"stream/STREAM-NOT-JSON@0"}},
		{"a JSON array is not an object", "", nil, []string{`[{"toy":"open"}]`}, []string{"stream/STREAM-NOT-JSON@0"}},
		{"a broken object its members place in a protocol goes to it", "", nil, []string{`{"toy":"open","session":"s1","x":tru}`}, []string{"toy/TOY-NOT-JSON@0"}},
		{"not json in a single-protocol stream goes to that protocol", "", nil, []string{`{"toy":"open","session":"s1"}`, `nope`, `{"toy":"close","session":"s1"}`}, []string{"toy/TOY-NOT-JSON@1"}},
		{"forced protocol takes unknown messages", "toy", nil, []string{`{"other":1}`}, nil},
		{"disabled rule", "", &protocol.Options{Disabled: []string{"TOY-OPEN"}}, []string{`{"toy":"open","session":"s1"}`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, _ := run(t, tt.force, tt.opts, tt.lines...)
			got := rules(rep)
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("findings = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestEngineLevelsAndThreshold(t *testing.T) {
	rep, steps := run(t, "", nil, `{"toy":"open","session":"s1"}`, `{"toy":"bad","session":"s1"}`)
	if rep.Count(protocol.Must) != 1 || rep.Count(protocol.Should) != 1 {
		t.Fatalf("counts MUST=%d SHOULD=%d, want 1 and 1", rep.Count(protocol.Must), rep.Count(protocol.Should))
	}
	if !rep.Failed(protocol.Must) || !rep.Failed(protocol.Info) {
		t.Error("report with a MUST finding did not fail")
	}
	if len(steps) != 1 || steps[0].Protocol != "toy" || steps[0].Label != "bad" {
		t.Errorf("steps = %+v, want one toy step labelled bad", steps)
	}
	clean, _ := run(t, "", nil, `{"toy":"open","session":"s1"}`, `{"toy":"x","session":"s1"}`)
	if !clean.Failed(protocol.Should) || clean.Failed(protocol.Must) {
		t.Error("a SHOULD-only report must fail at should and pass at must")
	}
}

// TestEngineParties: a finding is reported against its rule's party, at
// the rule's level in the run's profile, and the report counts findings
// per party and level.
func TestEngineParties(t *testing.T) {
	lines := []string{`{"toy":"open","session":"s1"}`, `{"toy":"bad","session":"s1"}`, `{"x":1}`}
	for _, tt := range []struct {
		profile  string
		openWant protocol.Level
	}{{"", protocol.Should}, {"lenient", protocol.Should}, {"strict", protocol.Must}} {
		rep, _ := run(t, "", &protocol.Options{Profile: protocol.Profile(tt.profile)}, lines...)
		got := map[string]protocol.Finding{}
		for _, s := range rep.Sessions() {
			for _, f := range s.Findings {
				got[f.RuleID] = f
			}
		}
		for id, want := range map[string]struct {
			party protocol.Party
			level protocol.Level
		}{
			"TOY-BAD":                 {protocol.Producer, protocol.Must},
			"TOY-OPEN":                {protocol.Subscriber, tt.openWant},
			"STREAM-UNKNOWN-PROTOCOL": {protocol.Either, protocol.Should},
		} {
			if f := got[id]; f.Party != want.party || f.Level != want.level {
				t.Errorf("profile %q: %s reported against %v at %v, want %v at %v", tt.profile, id, f.Party, f.Level, want.party, want.level)
			}
		}
		if n := rep.PartyCount(protocol.Producer, protocol.Must); n != 1 {
			t.Errorf("profile %q: PartyCount(producer, MUST) = %d, want 1", tt.profile, n)
		}
		if n := rep.PartyCount(protocol.Subscriber, tt.openWant); n != 1 {
			t.Errorf("profile %q: PartyCount(subscriber, %v) = %d, want 1", tt.profile, tt.openWant, n)
		}
		if n := rep.PartyCount(protocol.Either, protocol.Should); n != 1 {
			t.Errorf("profile %q: PartyCount(either, SHOULD) = %d, want 1", tt.profile, n)
		}
		if n := rep.PartyCount(protocol.Producer, protocol.Should); n != 0 {
			t.Errorf("profile %q: PartyCount(producer, SHOULD) = %d, want 0", tt.profile, n)
		}
		pc := rep.PartyCounts()
		wantLine := fmt.Sprintf("by party: producer 1 MUST, 0 SHOULD, 0 INFO; subscriber %s; either 0 MUST, 1 SHOULD, 0 INFO",
			map[protocol.Level]string{protocol.Should: "0 MUST, 1 SHOULD, 0 INFO", protocol.Must: "1 MUST, 0 SHOULD, 0 INFO"}[tt.openWant])
		if got := pc.Line(); got != wantLine {
			t.Errorf("profile %q: PartyCounts().Line() = %q, want %q", tt.profile, got, wantLine)
		}
		b, err := json.Marshal(pc)
		var back map[string]map[string]int64
		if err != nil || json.Unmarshal(b, &back) != nil || back["producer"]["MUST"] != 1 || back["either"]["SHOULD"] != 1 || len(back) != 3 {
			t.Errorf("profile %q: PartyCounts as JSON = %s (%v)", tt.profile, b, err)
		}
	}
}

func TestPartyCountsEmpty(t *testing.T) {
	if got := (report.PartyCounts{}).Line(); got != "" {
		t.Errorf("no findings: Line() = %q, want none", got)
	}
}

func TestParseParty(t *testing.T) {
	for _, p := range protocol.Parties {
		q, err := protocol.ParseParty(strings.ToUpper(p.String()))
		if err != nil || q != p {
			t.Errorf("ParseParty(%q) = %v, %v", p, q, err)
		}
		b, _ := p.MarshalText()
		var back protocol.Party
		if err := back.UnmarshalText(b); err != nil || back != p {
			t.Errorf("%v does not survive MarshalText/UnmarshalText: %v, %v", p, back, err)
		}
	}
	if _, err := protocol.ParseParty("agent"); err == nil {
		t.Error(`ParseParty("agent") did not fail`)
	}
}

func TestEngineBadOptions(t *testing.T) {
	for _, tt := range []struct {
		force string
		opts  *protocol.Options
		want  string
	}{
		{"nope", nil, `unknown protocol "nope"`},
		{"", &protocol.Options{Disabled: []string{"X-1"}}, `unknown rule "X-1"`},
		{"", &protocol.Options{Profile: "loose"}, `unknown profile "loose"`},
	} {
		_, err := protocol.NewEngine([]protocol.Model{toyModel{}}, tt.force, tt.opts, protocol.StreamInfo{}, protocol.Sink{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("NewEngine(%q, %+v) error = %v, want it to mention %s", tt.force, tt.opts, err, tt.want)
		}
	}
}

// rulesModel is the toy model with other rules declared.
type rulesModel struct {
	toyModel
	name  string
	rules []protocol.Rule
}

func (m rulesModel) Name() string           { return m.name }
func (m rulesModel) Rules() []protocol.Rule { return m.rules }

// TestEngineChecksRulesWhenMade: a model's declared rules are checked
// when the engine is made (each rule usable, every ID one declaration), so
// that a finding needs no look-up at run time.
func TestEngineChecksRulesWhenMade(t *testing.T) {
	ok := protocol.Rule{ID: "R-1", Level: protocol.Should, Party: protocol.Producer, Summary: "one"}
	with := func(edit func(r *protocol.Rule)) []protocol.Rule {
		r := ok
		edit(&r)
		return []protocol.Rule{r}
	}
	for _, tt := range []struct {
		name   string
		models []protocol.Model
		want   string
	}{
		{"no ID", []protocol.Model{rulesModel{name: "m", rules: with(func(r *protocol.Rule) { r.ID = "" })}}, `the m model's rule "": no ID`},
		{"no level", []protocol.Model{rulesModel{name: "m", rules: with(func(r *protocol.Rule) { r.Level = 0 })}}, `rule "R-1": level Level(0) is none of MUST, SHOULD, INFO`},
		{"level never", []protocol.Model{rulesModel{name: "m", rules: with(func(r *protocol.Rule) { r.Level = protocol.Never })}}, `level NEVER is none`},
		{"strict level never", []protocol.Model{rulesModel{name: "m", rules: with(func(r *protocol.Rule) { r.StrictLevel = protocol.Never })}}, `strict level NEVER is none`},
		{"no party", []protocol.Model{rulesModel{name: "m", rules: with(func(r *protocol.Rule) { r.Party = 0 })}}, `is none of producer, subscriber, either`},
		{"no summary", []protocol.Model{rulesModel{name: "m", rules: with(func(r *protocol.Rule) { r.Summary = "" })}}, `rule "R-1": no summary`},
		{"twice in a model", []protocol.Model{rulesModel{name: "m", rules: append(with(func(r *protocol.Rule) { r.Level = protocol.Must }), ok)}}, "rule R-1 is declared twice, differently (m and m)"},
		{"in two models", []protocol.Model{rulesModel{name: "m", rules: []protocol.Rule{ok}}, rulesModel{name: "n", rules: with(func(r *protocol.Rule) { r.Summary = "two" })}}, "rule R-1 is declared twice, differently (m and n)"},
		{"a stream rule's ID", []protocol.Model{rulesModel{name: "m", rules: with(func(r *protocol.Rule) { r.ID = "STREAM-NOT-JSON" })}}, "rule STREAM-NOT-JSON is declared twice, differently (stream and m)"},
	} {
		_, err := protocol.NewEngine(tt.models, "", nil, protocol.StreamInfo{}, protocol.Sink{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: NewEngine error = %v, want it to mention %s", tt.name, err, tt.want)
		}
		if err := protocol.CheckOptions(tt.models, "", nil); err == nil {
			t.Errorf("%s: CheckOptions accepted the rules", tt.name)
		}
	}
	// A model listed twice declares its rules twice alike: one rule each.
	twice := rulesModel{name: "m", rules: []protocol.Rule{ok}}
	if _, err := protocol.NewEngine([]protocol.Model{twice, twice}, "", nil, protocol.StreamInfo{}, protocol.Sink{}); err != nil {
		t.Errorf("usable rules refused: %v", err)
	}
}

// TestFindingTakesItsRulesLevel: a finding's level and party are those
// of the rule reported, in the run's profile.
func TestFindingTakesItsRulesLevel(t *testing.T) {
	for _, tt := range []struct {
		profile protocol.Profile
		want    protocol.Level
	}{{protocol.Lenient, protocol.Should}, {protocol.Strict, protocol.Must}} {
		rep, _ := run(t, "", &protocol.Options{Profile: tt.profile}, `{"toy":"open","session":"s1"}`)
		fs := rep.Sessions()
		if len(fs) != 1 || len(fs[0].Findings) != 1 {
			t.Fatalf("%s: sessions %+v, want one with one finding", tt.profile, fs)
		}
		if f := fs[0].Findings[0]; f.RuleID != toyOpen.ID || f.Level != tt.want || f.Party != protocol.Subscriber {
			t.Errorf("%s: finding %s %v %v, want %s %v subscriber", tt.profile, f.RuleID, f.Level, f.Party, toyOpen.ID, tt.want)
		}
	}
}

func TestReportText(t *testing.T) {
	rep, _ := run(t, "", nil, `{"toy":"open","session":"s1"}`, `{"toy":"bad","session":"s1"}`, `{"toy":"open","session":"s2"}`, `{"toy":"close","session":"s2"}`, `{"x":1}`)
	var buf bytes.Buffer
	if err := rep.WriteText(&buf, protocol.Must); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"toy.jsonl: 5 messages (toy 4), 2 sessions; 1 MUST, 2 SHOULD, 0 INFO",
		"toy session s1: 2 messages",
		"MUST    TOY-BAD",
		"toy session s2: 2 messages",
		": clean",
		"stream (messages no protocol could take)",
		"FAIL: 1 finding at or above MUST",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q:\n%s", want, out)
		}
	}
	buf.Reset()
	if err := rep.WriteJSON(&buf, protocol.Must); err != nil {
		t.Fatal(err)
	}
	var whole struct {
		SchemaVersion int `json:"schema_version"`
		Recordings    []struct {
			Failed   bool
			Counts   map[string]int
			Sessions []struct {
				Session  string
				Findings []struct{ Rule, Level string }
			}
			Streams []struct {
				Stream   string
				Findings []struct{ Protocol, Rule string }
			}
		}
	}
	if err := json.Unmarshal(buf.Bytes(), &whole); err != nil {
		t.Fatalf("JSON report does not parse: %v\n%s", err, buf.String())
	}
	if whole.SchemaVersion != report.SchemaVersion || len(whole.Recordings) != 1 {
		t.Fatalf("JSON report = %+v, want schema %d and one recording", whole, report.SchemaVersion)
	}
	doc := whole.Recordings[0]
	// The finding about the stream is in "streams", not a session.
	if !doc.Failed || doc.Counts["MUST"] != 1 || len(doc.Sessions) != 2 || doc.Sessions[0].Findings[0].Level != "MUST" ||
		len(doc.Streams) != 1 || len(doc.Streams[0].Findings) != 1 || doc.Streams[0].Findings[0].Protocol != protocol.StreamProtocol {
		t.Errorf("JSON report = %+v", doc)
	}
}

func TestSessionsBoundedClosedMemory(t *testing.T) {
	s := protocol.NewSessions[int](2)
	for _, id := range []string{"a", "b", "c"} {
		n := 0
		s.Open(id, &n)
		s.Close(id)
	}
	if s.WasClosed("a") {
		t.Error("oldest closed id should have been forgotten with a memory of 2")
	}
	if !s.WasClosed("b") || !s.WasClosed("c") {
		t.Error("recent closed ids forgotten")
	}
	if s.Len() != 0 {
		t.Errorf("Len = %d, want 0", s.Len())
	}
}

// docModel is toyModel that logs which decoding its recognition and its
// checker are handed.
type docModel struct {
	toyModel
	log *[]string
	// docs names the Docs it has seen, by pointer.
	docs map[*payload.Doc]string
}

func (m docModel) name(d *payload.Doc) string {
	if _, ok := m.docs[d]; !ok {
		m.docs[d] = fmt.Sprintf("doc%d", len(m.docs))
	}
	return m.docs[d]
}

func (m docModel) Recognize(msg *protocol.Message) bool {
	*m.log = append(*m.log, fmt.Sprintf("recognize %d %s %s", msg.Index, m.name(msg.Doc), msg.Doc.Routing.Type))
	return m.toyModel.Recognize(msg)
}

func (m docModel) NewChecker(r protocol.Reporter, opts *protocol.Options) protocol.Checker {
	return docChecker{m.toyModel.NewChecker(r, opts).(*toyChecker), m}
}

type docChecker struct {
	*toyChecker
	m docModel
}

func (c docChecker) Handle(msg *protocol.Message) {
	d := msg.Doc
	same := &d.Raw()[0] == &msg.Raw[0] && len(d.Raw()) == len(msg.Raw)
	*c.m.log = append(*c.m.log, fmt.Sprintf("handle %d %s %v", msg.Index, c.m.name(d), same))
	c.toyChecker.Handle(msg)
}

// TestEngineDecodesOnce: the engine decodes each message once and hands
// the same decoding to every model's recognition and to the checker; a
// message the caller decoded (Message.Decode) keeps its decoding, and one
// whose Doc holds other bytes is decoded again.
func TestEngineDecodesOnce(t *testing.T) {
	var log []string
	dm := docModel{log: &log, docs: map[*payload.Doc]string{}}
	e, err := protocol.NewEngine([]protocol.Model{dm, docModel{log: &log, docs: dm.docs}}, "", nil, protocol.StreamInfo{}, protocol.Sink{})
	if err != nil {
		t.Fatal(err)
	}
	var ahead, stale payload.Doc
	stale.Decode([]byte(`{"toy":"stale","type":"old"}`))
	dm.name(&ahead)
	dm.name(&stale)
	for i, l := range []string{`{"toy":"open","session":"s1","type":"a"}`, `{"toy":"go","session":"s1","type":"b"}`, `{"toy":"go","session":"s1","type":"c"}`} {
		m := protocol.Message{Index: int64(i), Raw: []byte(l)}
		switch i {
		case 1:
			m.Decode(&ahead)
		case 2:
			m.Doc = &stale
		}
		e.Feed(&m)
	}
	// Both models recognise each message, so it is ambiguous and handled by
	// neither; the log shows which decoding each call saw.
	want := "recognize 0 doc2 a|recognize 0 doc2 a|recognize 0 doc2 a|recognize 0 doc2 a|" +
		"recognize 1 doc0 b|recognize 1 doc0 b|recognize 1 doc0 b|recognize 1 doc0 b|" +
		"recognize 2 doc2 c|recognize 2 doc2 c|recognize 2 doc2 c|recognize 2 doc2 c"
	if got := strings.Join(log, "|"); got != want {
		t.Errorf("calls\n got %s\nwant %s", got, want)
	}
	log = nil
	e, err = protocol.NewEngine([]protocol.Model{dm}, "", nil, protocol.StreamInfo{}, protocol.Sink{})
	if err != nil {
		t.Fatal(err)
	}
	m := protocol.Message{Index: 3, Raw: []byte(`{"toy":"open","session":"s2","type":"d"}`)}
	m.Decode(&ahead)
	e.Feed(&m)
	if got, want := strings.Join(log, "|"), "recognize 3 doc0 d|handle 3 doc0 true"; got != want {
		t.Errorf("calls\n got %s\nwant %s", got, want)
	}
}

// TestStreamingReport: a streaming report writes each session when it is
// done and keeps only open ones, and its output carries the same content as
// a collected report.
func TestStreamingReport(t *testing.T) {
	lines := []string{`{"toy":"open","session":"s1"}`, `{"toy":"bad","session":"s1"}`, `{"toy":"close","session":"s1"}`,
		`{"toy":"open","session":"s2"}`, `{"x":1}`}
	for _, asJSON := range []bool{false, true} {
		var out bytes.Buffer
		rep := report.New("toy.jsonl")
		rep.Stream(&out, asJSON, protocol.Must)
		e, err := protocol.NewEngine([]protocol.Model{toyModel{}}, "", nil, protocol.StreamInfo{}, rep.Sink(nil))
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range lines[:3] {
			e.Feed(&protocol.Message{Index: int64(i), Raw: []byte(l)})
		}
		// s1 is done: it is written out and no longer held.
		if n := len(rep.Sessions()); n != 0 {
			t.Errorf("json=%v: %d sessions held after s1 ended, want 0", asJSON, n)
		}
		if !strings.Contains(out.String(), "TOY-BAD") {
			t.Errorf("json=%v: s1's finding not written when s1 ended:\n%s", asJSON, out.String())
		}
		for i, l := range lines[3:] {
			e.Feed(&protocol.Message{Index: int64(3 + i), Raw: []byte(l)})
		}
		e.Finish()
		rep.Stats = e.Stats()
		if err := rep.Close(); err != nil {
			t.Fatal(err)
		}
		if !asJSON {
			for _, want := range []string{"toy session s1: 3 messages", "toy session s2: 1 message", "stream (messages no protocol", "toy.jsonl: 5 messages (toy 4), 2 sessions; 1 MUST, 2 SHOULD, 0 INFO", "FAIL: 1 finding at or above MUST"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("text lacks %q:\n%s", want, out.String())
				}
			}
			continue
		}
		var whole struct {
			Recordings []struct {
				Recording string
				Messages  int
				Failed    bool
				Counts    map[string]int
				Sessions  []struct {
					Session  string
					Findings []struct{ Rule string }
				}
				Streams []struct{ Findings []struct{ Protocol string } }
			}
		}
		if err := json.Unmarshal(out.Bytes(), &whole); err != nil || len(whole.Recordings) != 1 {
			t.Fatalf("streamed JSON does not parse as one recording: %v\n%s", err, out.String())
		}
		doc := whole.Recordings[0]
		if doc.Recording != "toy.jsonl" || doc.Messages != 5 || !doc.Failed || doc.Counts["MUST"] != 1 || len(doc.Sessions) != 2 ||
			doc.Sessions[0].Session != "s1" || doc.Sessions[0].Findings[0].Rule != "TOY-BAD" ||
			len(doc.Streams) != 1 || len(doc.Streams[0].Findings) != 1 || doc.Streams[0].Findings[0].Protocol != protocol.StreamProtocol {
			t.Errorf("streamed JSON = %+v", doc)
		}
	}
}

// claimModel is toyModel whose checker claims unrecognised messages that
// follow a toy "ask" step.
type claimModel struct{ toyModel }

func (m claimModel) NewChecker(r protocol.Reporter, opts *protocol.Options) protocol.Checker {
	return &claimChecker{toyChecker: m.toyModel.NewChecker(r, opts).(*toyChecker)}
}

type claimChecker struct {
	*toyChecker
	asked bool
}

func (c *claimChecker) Claim(m *protocol.Message) bool {
	return c.asked && bytes.Contains(m.Raw, []byte(`"answer"`))
}

func (c *claimChecker) Handle(m *protocol.Message) {
	c.asked = bytes.Contains(m.Raw, []byte(`"ask"`))
	c.toyChecker.Handle(m)
}

// TestEngineClaimer: a message no model recognises goes to a checker that
// claims it, and is otherwise of unknown protocol.
func TestEngineClaimer(t *testing.T) {
	rep := report.New("claim")
	e, err := protocol.NewEngine([]protocol.Model{claimModel{}}, "", nil, protocol.StreamInfo{}, rep.Sink(nil))
	if err != nil {
		t.Fatal(err)
	}
	lines := []string{`{"toy":"open","session":"s1"}`, `{"toy":"ask","session":"s1"}`, `{"answer":1}`, `{"answer":2}`, `{"toy":"close","session":"s1"}`}
	for i, l := range lines {
		e.Feed(&protocol.Message{Index: int64(i), Raw: []byte(l)})
	}
	e.Finish()
	rep.Stats = e.Stats()
	if got := strings.Join(rules(rep), " "); got != "stream/STREAM-UNKNOWN-PROTOCOL@3" {
		t.Errorf("findings %s, want only the unclaimed answer as of unknown protocol", got)
	}
	if n := rep.Stats.ByProtocol["toy"]; n != 4 {
		t.Errorf("%d toy messages, want 4 (the claimed answer included)", n)
	}
}
