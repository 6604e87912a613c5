package report

import (
	"bytes"
	"fmt"
	"sort"
	"text/tabwriter"

	"github.com/aaep-tools/aaepkit/protocol"
)

// View chooses how a text report shows its findings. JSON reports always
// hold every listed finding.
type View int

const (
	// ViewAll lists every session and finding (the zero value).
	ViewAll View = iota
	// ViewAuto lists everything when the listing fits in Report.Screen
	// lines, and otherwise shows the summary instead.
	ViewAuto
	// ViewSummary shows counts per rule and level, the worst sessions and
	// the first occurrence of each rule instead of the listing.
	ViewSummary
)

// DefaultScreen is the screen height ViewAuto assumes when Report.Screen is 0.
const DefaultScreen = 50

// worstListed is how many sessions the summary names as the worst.
const worstListed = 10

// ruleStat counts one rule's findings (dropped ones included) and keeps the
// first.
type ruleStat struct {
	count int64
	first protocol.Finding
}

// noteRule counts f for the summary.
func (r *Report) noteRule(f *protocol.Finding) {
	if r.rules == nil {
		r.rules = map[string]*ruleStat{}
	}
	st := r.rules[f.RuleID]
	if st == nil {
		st = &ruleStat{first: *f}
		r.rules[f.RuleID] = st
	}
	st.count++
}

// sessionRank is a session's findings by level, for the worst-sessions list.
type sessionRank struct {
	s      protocol.SessionSummary
	levels [3]int64 // Info, Should, Must
	total  int64
}

func (a *sessionRank) worse(b *sessionRank) bool {
	for l := 2; l >= 0; l-- {
		if a.levels[l] != b.levels[l] {
			return a.levels[l] > b.levels[l]
		}
	}
	if a.s.First != b.s.First {
		return a.s.First < b.s.First
	}
	return a.s.Session < b.s.Session
}

// summaryView holds what the summary shows about the sessions written so
// far, in bounded memory.
type summaryView struct {
	withFindings int64
	worst        []sessionRank
}

func (v *summaryView) add(s *Session) {
	if len(s.Findings) == 0 {
		return
	}
	if !lateBlock(s) {
		v.withFindings++ // a late block's session was counted with its summary
	}
	rk := sessionRank{s: s.SessionSummary, total: int64(len(s.Findings))}
	for _, f := range s.Findings {
		if f.Level >= protocol.Info && f.Level <= protocol.Must {
			rk.levels[levelSlot(f.Level)]++
		}
	}
	i := sort.Search(len(v.worst), func(i int) bool { return rk.worse(&v.worst[i]) })
	if i >= worstListed {
		return
	}
	v.worst = append(v.worst, sessionRank{})
	copy(v.worst[i+1:], v.worst[i:])
	v.worst[i] = rk
	if len(v.worst) > worstListed {
		v.worst = v.worst[:worstListed]
	}
}

func levelSlot(l protocol.Level) int {
	switch l {
	case protocol.Must:
		return 2
	case protocol.Should:
		return 1
	}
	return 0
}

// textSession writes a session's text block, or, for the summary views,
// notes it and decides whether the listing still fits.
func (rw *reportWriter) textSession(s *Session, write func()) {
	if rw.view != ViewAll {
		rw.summary.add(s)
	}
	rw.textBlock(int64(2+len(s.Findings)), write) // blank line, heading, findings
}

// textBlock writes a block of lines of the text listing, or, for the
// summary views, decides whether the listing still fits.
func (rw *reportWriter) textBlock(lines int64, write func()) {
	if rw.view == ViewAll {
		write()
		return
	}
	if rw.view == ViewSummary {
		return
	}
	// ViewAuto: hold the listing back until it is known to fit.
	out := rw.w
	rw.w = &rw.held
	write()
	rw.w = out
	rw.heldLines += lines
	if rw.heldLines > int64(rw.screen()) {
		rw.view = ViewSummary
		rw.held = bytes.Buffer{}
	}
}

func (rw *reportWriter) screen() int {
	if rw.r.Screen > 0 {
		return rw.r.Screen
	}
	return DefaultScreen
}

// flushHeld writes a listing held back by ViewAuto that turned out to fit.
func (rw *reportWriter) flushHeld() {
	if rw.view == ViewAuto && rw.held.Len() > 0 {
		if rw.err == nil {
			_, rw.err = rw.w.Write(rw.held.Bytes())
		}
		rw.held = bytes.Buffer{}
	}
}

// writeSummary writes the summary view: counts per rule and level, the
// worst sessions, the first occurrence of each rule.
func (rw *reportWriter) writeSummary() {
	r := rw.r
	var total int64
	for _, n := range r.counts {
		total += n
	}
	var streamN int64
	for _, s := range rw.streamBlocks {
		streamN += int64(len(s.Findings))
	}
	if streamN == 0 {
		rw.printf("\nsummary: %s in %d of %s (--all lists every finding)\n",
			plural(total, "finding", "findings"), rw.summary.withFindings, plural(rw.sessions, "session", "sessions"))
	} else {
		// Counts count sessions: findings about the stream are no session's.
		rw.printf("\nsummary: %s: %d in %d of %s, %d about the stream (--all lists every finding)\n",
			plural(total, "finding", "findings"), max(total-streamN, 0), rw.summary.withFindings, plural(rw.sessions, "session", "sessions"), streamN)
	}
	if total == 0 || rw.err != nil {
		return
	}
	rules := make([]string, 0, len(r.rules))
	for id := range r.rules {
		rules = append(rules, id)
	}
	sort.Slice(rules, func(i, j int) bool {
		a, b := r.rules[rules[i]], r.rules[rules[j]]
		if a.first.Level != b.first.Level {
			return a.first.Level > b.first.Level
		}
		if a.count != b.count {
			return a.count > b.count
		}
		return rules[i] < rules[j]
	})
	rw.printf("\nfindings by rule:\n")
	tw := tabwriter.NewWriter(rw.w, 0, 0, 2, ' ', 0)
	for _, id := range rules {
		st := r.rules[id]
		fmt.Fprintf(tw, "  %s\t%s\t%d\n", st.first.Level, id, st.count)
	}
	if rw.err = tw.Flush(); rw.err != nil {
		return
	}
	if len(rw.summary.worst) > 0 {
		rw.printf("\nworst sessions:\n")
		tw = tabwriter.NewWriter(rw.w, 0, 0, 2, ' ', 0)
		for _, w := range rw.summary.worst {
			fmt.Fprintf(tw, "  %s%s %s\t%d MUST, %d SHOULD, %d INFO\t%s, %s to %s\n", streamTag(w.s.Stream), w.s.Protocol, sessionName(w.s.Session),
				w.levels[2], w.levels[1], w.levels[0], plural(int64(w.s.Messages), "message", "messages"),
				protocol.FormatOffset(max(w.s.First, 0)), protocol.FormatOffset(w.s.Last))
		}
		if rw.err = tw.Flush(); rw.err != nil {
			return
		}
	}
	if len(rw.streamBlocks) > 0 {
		rw.printf("\n%s\n", streamHeading)
		tw = tabwriter.NewWriter(rw.w, 0, 0, 2, ' ', 0)
		for _, s := range rw.streamBlocks {
			var lv [3]int64
			for _, f := range s.Findings {
				if f.Level >= protocol.Info && f.Level <= protocol.Must {
					lv[levelSlot(f.Level)]++
				}
			}
			fmt.Fprintf(tw, "  %s\t%d MUST, %d SHOULD, %d INFO\n", blockName(s), lv[2], lv[1], lv[0])
		}
		if rw.err = tw.Flush(); rw.err != nil {
			return
		}
	}
	// A finding of a block about the stream is named as the block is.
	blocks := make(map[sessionKey]*Session, len(rw.streamBlocks))
	for _, s := range rw.streamBlocks {
		blocks[sessionKey{s.Stream, s.Protocol, s.Session}] = s
	}
	rw.printf("\nfirst occurrence of each rule:\n")
	tw = tabwriter.NewWriter(rw.w, 0, 0, 2, ' ', 0)
	for _, id := range rules {
		f := r.rules[id].first
		where := "end"
		if f.Index >= 0 {
			where = fmt.Sprintf("#%d +%s", f.Index, protocol.FormatOffset(f.Offset))
		}
		name := f.Protocol + " " + sessionName(f.Session)
		switch b := blocks[sessionKey{f.Stream, f.Protocol, f.Session}]; {
		case f.Protocol == protocol.StreamProtocol:
			name = "stream (messages no protocol could take)"
		case b != nil && b.Handshake:
			name = f.Protocol + " " + f.Session + " (subscription handshake)"
		}
		fmt.Fprintf(tw, "  %s\t%s%s\t%s\t%s\n", id, streamTag(f.Stream), name, where, f.Message)
	}
	rw.err = tw.Flush()
}

// streamTag is how the text report names a session's stream before it
// ("[sub_…] "), or "" in a recording of one stream: a replay's recording
// holds each subscriber's copy of the same sessions.
func streamTag(stream string) string {
	if stream == "" {
		return ""
	}
	return "[" + stream + "] "
}
