package subtest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// This file judges what a subscriber told its user (§9.3.2(3)–(7)), which
// no wire shows: the announcements a web page makes in its ARIA live
// regions (--page, page.go) or a native subscriber reports on a
// descriptor (--announcements, heard.go), mapped to the events the replay
// sent.

// Politeness values: how an announcement claims the user's attention.
const (
	// Assertive interrupts what is being said (aria-live="assertive",
	// role="alert").
	Assertive = "assertive"
	// Polite waits until the user is idle (aria-live="polite",
	// role="status" or "log").
	Polite = "polite"
)

// Announcement is one thing the subscriber told the user.
type Announcement struct {
	// Offset is when it was made, from the start of the run's recording
	// (the clock of the records' offsets).
	Offset time.Duration `json:"offset_ns"`
	Text   string        `json:"text"`
	// Politeness is assertive or polite.
	Politeness string `json:"politeness"`
	// Urgency is the urgency a native subscriber wrote, as it wrote it.
	Urgency string `json:"urgency,omitempty"`
	// Modality is how it was told: "live region" for a page; speech,
	// braille, ... as a native subscriber says.
	Modality string `json:"modality"`
	// Region names the page's live region (its role or aria-live, its id).
	Region string `json:"region,omitempty"`
	// EventID and Record are the event it was mapped to (by its content,
	// else by time); Record is nil when it was mapped to none.
	EventID string `json:"event_id,omitempty"`
	Record  *int64 `json:"record,omitempty"`
	// By says how it was mapped: "content" or "time".
	By string `json:"mapped_by,omitempty"`
}

func (a *Announcement) String() string {
	how := a.Politeness
	if a.Region != "" {
		how += ", " + a.Region
	} else if a.Modality != "" {
		how += ", " + a.Modality
	}
	return fmt.Sprintf("%q (%s, at %s)", clipText(a.Text, 120), how, fmtDur(a.Offset))
}

func clipText(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// observation is what a run saw of the subscriber's announcements.
type observation struct {
	// From says where they were observed: "page" (live regions in
	// Chromium) or "announcements" (a native subscriber's descriptor).
	From string
	List []Announcement
	// Problems are lines of an --announcements descriptor that are not
	// announcements.
	Problems []string
	// Note says what the page's accessibility tree showed (its live
	// regions), for a page that announced nothing.
	Note string
}

// politenessOf reads an announcement's urgency as a politeness: assertive
// or polite, or the AAEP urgency a subscriber passed through (critical is
// assertive; normal and background polite). "" when it is neither.
func politenessOf(urgency string) string {
	switch strings.ToLower(strings.TrimSpace(urgency)) {
	case Assertive, "critical":
		return Assertive
	case Polite, "normal", "background":
		return Polite
	}
	return ""
}

// delivered is an event as the subscriber first got it.
type delivered struct {
	e *entry
	// texts are its summaries and its type's words, normalized, for
	// matching announcements by content.
	texts []string
}

func (x *exchange) str(e *entry, k string) string {
	var s string
	_ = json.Unmarshal(e.Members[k], &s)
	return s
}

// deliveredEvents lists the events that reached the subscriber, each at
// its first delivery.
func (x *exchange) deliveredEvents() []delivered {
	var out []delivered
	seen := map[string]bool{}
	for i := range x.entries {
		e := &x.entries[i]
		if !e.isEvent() || e.Members == nil || (e.EventID != "" && seen[e.EventID]) {
			continue
		}
		seen[e.EventID] = true
		d := delivered{e: e}
		for _, k := range []string{"summary_terse", "summary_normal", "summary_detailed"} {
			if s := normText(x.str(e, k)); len([]rune(s)) >= 3 {
				d.texts = append(d.texts, s)
			}
		}
		if tail := typeTail(e.Type); tail != "" {
			d.texts = append(d.texts, normText(tail), normText(strings.NewReplacer(".", " ", "_", " ").Replace(tail)))
		}
		out = append(out, d)
	}
	return out
}

// typeTail is an event type without its namespace: memory.compacted for
// aaep:agent.memory.compacted, custom_event for exampleext:custom_event.
func typeTail(t string) string {
	if rest, ok := strings.CutPrefix(t, "aaep:agent."); ok {
		return rest
	}
	if _, rest, ok := strings.Cut(t, ":"); ok {
		return rest
	}
	return t
}

// normText lowercases s, folds its white space and drops the final
// punctuation, so that "Summary written." is heard in "Done: summary
// written".
func normText(s string) string {
	s = strings.Join(strings.Fields(strings.ToLower(s)), " ")
	return strings.TrimRight(s, ".!?…:; ")
}

// clockSlack is how far an announcement may seem to come before the record
// of its event (the record is written as the event is sent; the
// announcement is timed by another clock: the browser's, or its arrival).
const clockSlack = 50 * time.Millisecond

// mapHeard maps each announcement to the event it tells of: the latest
// event delivered before it whose summary (or type) it holds, or else the
// latest delivered before it that no announcement told of yet.
func (x *exchange) mapHeard() {
	if x.heard == nil {
		return
	}
	evs := x.deliveredEvents()
	told := map[int64]bool{}
	list := x.heard.List
	slices.SortStableFunc(list, func(a, b Announcement) int { return int(a.Offset - b.Offset) })
	for i := range list {
		a := &list[i]
		text := normText(a.Text)
		n := 0
		for n < len(evs) && evs[n].e.Offset <= a.Offset+clockSlack {
			n++
		}
		pick, by := -1, ""
		for j := n - 1; j >= 0 && pick < 0; j-- {
			for _, t := range evs[j].texts {
				if strings.Contains(text, t) || (len([]rune(text)) >= 8 && strings.Contains(t, text)) {
					pick, by = j, "content"
					break
				}
			}
		}
		for j := n - 1; j >= 0 && pick < 0; j-- {
			if !told[evs[j].e.Index] {
				pick, by = j, "time"
			}
		}
		if pick < 0 && n > 0 {
			pick, by = n-1, "time"
		}
		if pick < 0 {
			continue
		}
		ev := evs[pick].e
		told[ev.Index] = true
		idx := ev.Index
		a.EventID, a.Record, a.By = ev.EventID, &idx, by
	}
}

// heardOf returns the announcements mapped to the event e.
func (x *exchange) heardOf(e *entry) []*Announcement {
	var out []*Announcement
	for i := range x.heard.List {
		if a := &x.heard.List[i]; a.Record != nil && *a.Record == e.Index {
			out = append(out, a)
		}
	}
	return out
}

// notObservable says why what the user was told cannot be judged.
const notObservable = "not observable: nothing shows what the subscriber told the user (--page opens a web subscriber in Chromium and hears its live regions; --announcements takes a native subscriber's announcements)"

// selects reports whether the event e is one the expectation is about.
func (want *Expectation) selects(x *exchange, e *entry) bool {
	if want.Event != "" {
		return e.EventID == want.Event
	}
	t := want.Type
	if !strings.Contains(t, ":") {
		t = "aaep:agent." + t
	}
	return e.Type == t && (want.Session == "" || x.str(e, "session_id") == want.Session)
}

// expectAnnounce judges an announce expectation: each event it names was
// announced, saying one of its words, as politely or assertively as asked.
// A critical event never announced is suppressed: a MUST (§9.3.2(7)),
// whatever the expectation says; one announced politely where it asks
// assertive is a SHOULD (our reading of "appropriate prominence").
func (x *exchange) expectAnnounce(o *Outcome, requireEvidence bool) {
	want := &o.Expectation
	defer failedBecause(o)
	if x.heard == nil {
		o.NotObservable = true
		o.Message = notObservable
		if requireEvidence {
			o.NotObservable = false
			o.Message = "not observable, and --require-evidence asks for evidence: " + strings.TrimPrefix(notObservable, "not observable: ")
		}
		return
	}
	var evs []delivered
	for _, d := range x.deliveredEvents() {
		if want.selects(x, d.e) {
			evs = append(evs, d)
		}
	}
	if len(evs) == 0 {
		o.Message = fmt.Sprintf("no event %s reached the subscriber", want.target())
		return
	}
	var oks []string
	for _, d := range evs {
		ev := d.e
		o.Records = append(o.Records, ev.Index)
		critical := x.str(ev, "urgency") == "critical"
		what := fmt.Sprintf("%s %s %q", at(ev), ev.Type, clipText(x.str(ev, "summary_normal"), 80))
		heard := x.heardOf(ev)
		if len(heard) == 0 {
			o.Message = fmt.Sprintf("%s was never announced (%d announcements %s)", what, len(x.heard.List), x.heardFrom())
			if critical {
				o.Required = true
				o.Message = "MUST (§9.3.2(7): never suppress a critical event): the critical event " + o.Message + ": suppressed"
			}
			if x.heard.Note != "" {
				o.Message += "; " + x.heard.Note
			}
			return
		}
		a := heard[0]
		if len(want.Contains) > 0 {
			a = nil
			for _, h := range heard {
				if containsAny(h.Text, want.Contains) {
					a = h
					break
				}
			}
			if a == nil {
				o.Message = fmt.Sprintf("%s was announced as %s, which says none of %s", what, heard[0], quoteList(want.Contains))
				return
			}
		}
		if want.Politeness != "" && a.Politeness != want.Politeness {
			o.Message = fmt.Sprintf("%s was announced as %s: %s, want %s", what, a, a.Politeness, want.Politeness)
			if critical && want.Politeness == Assertive {
				o.Required = false
				o.Message = "SHOULD (our reading of §9.3.2(7), \"appropriate prominence\"): the critical event " + o.Message + ": it waits behind whatever is being said instead of interrupting it"
			}
			return
		}
		oks = append(oks, fmt.Sprintf("%s announced %s", what, a))
	}
	o.Passed = true
	o.Message = strings.Join(oks, "; ")
}

// failedBecause adds to a failed announce check the duty it stands for.
func failedBecause(o *Outcome) {
	if !o.Passed && !o.NotObservable && o.Why != "" && o.Message != "" {
		o.Message += " (" + o.Why + ")"
	}
}

// target describes the events an expectation names.
func (want *Expectation) target() string {
	if want.Event != "" {
		return want.Event
	}
	s := want.Type
	if want.Session != "" {
		s += " in session " + want.Session
	}
	return s
}

func (x *exchange) heardFrom() string {
	if x.heard.From == "page" {
		return "heard in the page's live regions"
	}
	return "reported on --announcements"
}

func containsAny(text string, words []string) bool {
	t := strings.ToLower(text)
	for _, w := range words {
		if strings.Contains(t, strings.ToLower(w)) {
			return true
		}
	}
	return false
}

func quoteList(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = fmt.Sprintf("%q", w)
	}
	return strings.Join(q, ", ")
}

// announcedAny reports whether the subscriber's announcements are
// observed and one of them told of an event: it heard them.
func (x *exchange) announcedAny() bool {
	if x.heard == nil {
		return false
	}
	for _, a := range x.heard.List {
		if a.Record != nil {
			return true
		}
	}
	return false
}

// evidenced judges a check passed by absence (msg says what was absent)
// when the subscriber's announcements are observed: they show it took in
// the events, or, when it announced none of them, nothing does and the
// check fails.
func (x *exchange) evidenced(msg string) (bool, string) {
	evs := x.deliveredEvents()
	told := map[int64]bool{}
	for _, a := range x.heard.List {
		if a.Record != nil {
			told[*a.Record] = true
		}
	}
	if len(told) == 0 {
		why := fmt.Sprintf("the subscriber's announcements are observed (%s), and it announced none of the %d events it was sent: nothing shows it took them in", strings.TrimPrefix(x.heardFrom(), "heard in "), len(evs))
		if x.heard.Note != "" {
			why += "; " + x.heard.Note
		}
		return false, why + "; " + msg
	}
	return true, fmt.Sprintf("%s; evidence: the subscriber announced %d of the %d events it was sent", msg, len(told), len(evs))
}

func (e *Expectation) announceName(b *strings.Builder) {
	fmt.Fprintf(b, " %s", e.target())
	if len(e.Contains) > 0 {
		fmt.Fprintf(b, " saying %s", strings.Join(e.Contains, "|"))
	}
	if e.Politeness != "" {
		fmt.Fprintf(b, " %s", e.Politeness)
	}
}

// announceBody reads announce: {event | type [session], contains, politeness}.
func (p *parser) announceBody(e *Expectation, v *yaml.Node) error {
	keys := []string{"event", "type", "session", "contains", "politeness"}
	err := p.fields(v, "announce", keys, func(key string, n *yaml.Node) error {
		var err error
		switch key {
		case "event":
			e.Event, err = p.str(n, "announce.event")
		case "type":
			e.Type, err = p.str(n, "announce.type")
		case "session":
			e.Session, err = p.str(n, "announce.session")
		case "contains":
			if n.Kind == yaml.SequenceNode {
				for _, it := range n.Content {
					s, err := p.str(it, "announce.contains")
					if err != nil {
						return err
					}
					e.Contains = append(e.Contains, s)
				}
				if len(e.Contains) == 0 {
					return p.errf(n, "announce.contains: an empty list: give the words (one of which the announcement must hold)")
				}
				return nil
			}
			var s string
			s, err = p.str(n, "announce.contains")
			e.Contains = []string{s}
		case "politeness":
			e.Politeness, err = p.str(n, "announce.politeness")
			if err == nil && e.Politeness != Assertive && e.Politeness != Polite {
				err = p.errf(n, "announce.politeness: want assertive or polite, got %q", e.Politeness)
			}
		}
		return err
	})
	if err != nil {
		return err
	}
	switch {
	case e.Event == "" && e.Type == "":
		return p.errf(v, "announce: say which event (event: EVENT_ID, or type: session.started with an optional session:)")
	case e.Event != "" && (e.Type != "" || e.Session != ""):
		return p.errf(v, "announce: event names one event: not with type or session")
	}
	for _, w := range e.Contains {
		if strings.TrimSpace(w) == "" {
			return p.errf(v, "announce.contains: an empty word matches anything")
		}
	}
	return nil
}

// writeHeard writes what the subscriber announced, under its scenario in
// the text report: how many, how many were mapped to events, and what
// could not be read.
func writeHeard(b *strings.Builder, h *Heard) {
	if h == nil {
		return
	}
	mapped := 0
	for _, a := range h.Announcements {
		if a.Record != nil {
			mapped++
		}
	}
	from := "in the page's live regions"
	if h.From != "page" {
		from = "on --announcements"
	}
	fmt.Fprintf(b, "  heard %d announcements %s, %d mapped to events", len(h.Announcements), from, mapped)
	if h.Note != "" {
		fmt.Fprintf(b, "; %s", h.Note)
	}
	b.WriteString("\n")
	for _, p := range h.Problems {
		fmt.Fprintf(b, "  warn  announcements: %s\n", p)
	}
}
