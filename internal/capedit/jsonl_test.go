package capedit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/msgfilter"
)

// referenceJSONL is written the way the reference Python aaep-capture writes
// its files: json.dumps with its default ", " and ": " separators and
// ensure_ascii=False (non-ASCII text as UTF-8), one event per line.
const referenceJSONL = `{"@context": "https://aaep-protocol.org/context/v1", "type": "aaep:agent.session.started", "event_id": "evt_01", "session_id": "sess_a", "timestamp": "2026-05-24T14:22:11.342Z", "producer": {"agent_id": "réservation-bot", "agent_version": "1.0"}, "summary_normal": "Session gestartet für Zoë"}
{"@context": "https://aaep-protocol.org/context/v1", "type": "aaep:agent.state.changed", "event_id": "evt_02", "session_id": "sess_a", "timestamp": "2026-05-24T14:22:11.842Z", "from_state": "idle", "to_state": "thinking", "summary_terse": "考えています", "urgency": "background"}
{"@context": "https://aaep-protocol.org/context/v1", "type": "aaep:agent.tool.invoked", "event_id": "evt_03", "session_id": "sess_b", "timestamp": "2026-05-24T14:22:12.100Z", "tool": "search", "args_summary": "query: \"naïve café\" \\ 🙂", "urgency": "normal"}
{"ts": "2026-05-24T14:22:12.250Z", "run_id": "run_7", "event": "state_transition", "from": "planning", "to": "executing"}
{"type": "aaep:agent.output.streaming", "session_id": "sess_a", "timestamp": "2026-05-24T14:22:12.300Z", "delta": "caf\u00e9 \ud83d\ude42 (ensure_ascii=True style)"}
{"@context": "https://aaep-protocol.org/context/v1", "type": "aaep:agent.tool.completed", "event_id": "evt_04", "session_id": "sess_b", "timestamp": "2026-05-24T14:22:13.000+00:00", "tool": "search", "status": "success", "result": null, "duration_ms": 900}
`

func writeText(t *testing.T, dir, name, s string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	writeFileBytes(t, p, []byte(s))
	return p
}

func exportString(t *testing.T, path string, opts ExportOptions) (string, *ExportStats) {
	t.Helper()
	var b bytes.Buffer
	st, err := Export(ctx, path, &b, opts)
	if err != nil {
		t.Fatalf("export %s: %v", path, err)
	}
	return b.String(), st
}

func TestImportExportReferenceJSONL(t *testing.T) {
	tests := []struct {
		name, in string
		// want is the export; empty means the input itself.
		want        string
		invalid     int64
		blank       int64
		wantRecords int
	}{
		{name: "reference", in: referenceJSONL, wantRecords: 6},
		{name: "invalid lines kept in place", in: "{\"type\": \"a\", \"timestamp\": \"2026-05-24T14:22:11.000Z\"}\nnot json at all\n{\"type\": \"b\"\n\xff\xfe{}\n[1, 2]\n", invalid: 3, wantRecords: 5},
		{name: "crlf and blank lines", in: "{\"type\": \"a\"}\r\n\r\n   \n{\"type\": \"b\"}", want: "{\"type\": \"a\"}\n{\"type\": \"b\"}\n", blank: 2, wantRecords: 2},
		{name: "empty file", in: "", wantRecords: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in := writeText(t, dir, "in.jsonl", tc.in)
			out := filepath.Join(dir, "out.aaep")
			st, err := Import(ctx, in, out, ImportOptions{Tool: "test"})
			if err != nil {
				t.Fatal(err)
			}
			if st.Invalid != tc.invalid || st.Blank != tc.blank || st.Records != int64(tc.wantRecords) || st.WithMeta {
				t.Errorf("Import stats = %+v, want invalid %d, blank %d, records %d", st, tc.invalid, tc.blank, tc.wantRecords)
			}
			got, _ := exportString(t, out, ExportOptions{})
			want := tc.want
			if want == "" {
				want = tc.in
			}
			if got != want {
				t.Errorf("export after import:\n got %q\nwant %q", got, want)
			}
			// Every exported line of valid input parses as JSON, as aaep-validate reads it.
			for i, line := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
				if tc.invalid == 0 && line != "" && !json.Valid([]byte(line)) {
					t.Errorf("line %d is not valid JSON: %q", i+1, line)
				}
			}
		})
	}
}

func TestImportTimesAndFlags(t *testing.T) {
	in := strings.Join([]string{
		`{"type": "x", "note": "no timestamp before the first one"}`,
		`{"type": "a", "session_id": "s1", "timestamp": "2026-05-24T14:22:11.000Z"}`,
		`{"type": "b", "session_id": "s1", "timestamp": "2026-05-24T14:22:12.500Z"}`,
		`{"type": "c", "session_id": "s1", "timestamp": "2026-05-24T14:22:12.000Z"}`,
		`broken {`,
		`{"ts": "2026-05-24T14:22:14.000Z", "run_id": "run_1", "event": "start"}`,
		`{"type": "d", "timestamp": "2026-05-24t14:22:15.25z"}`,
		`{"type": "e", "timestamp": "May 24, 2026"}`,
	}, "\n") + "\n"
	dir := t.TempDir()
	src := writeText(t, dir, "in.jsonl", in)
	out := filepath.Join(dir, "out.aaep")
	st, err := Import(ctx, src, out, ImportOptions{Tool: "test/1"})
	if err != nil {
		t.Fatal(err)
	}
	if st.Backwards != 1 || st.Invalid != 1 || st.Untimed != 3 || st.Records != 8 {
		t.Errorf("stats = %+v, want 1 backwards, 1 invalid, 3 untimed, 8 records", st)
	}
	h, recs := readCapture(t, out)
	if want := time.Date(2026, 5, 24, 14, 22, 11, 0, time.UTC); !h.Start.Equal(want) {
		t.Errorf("start = %v, want %v", h.Start, want)
	}
	if h.Tool != "test/1" || len(h.Origins) != 1 || h.Origins[0].Transport != "file" || h.Origins[0].Endpoint != "in.jsonl" {
		t.Errorf("header = %+v", h)
	}
	ms := func(d float64) int64 { return int64(d * float64(time.Millisecond)) }
	want := []struct {
		time    int64
		flags   capfile.Flags
		session string
		line    string
	}{
		{0, capfile.FlagNoRecvTime, "", ""},
		{0, capfile.FlagNoRecvTime, "s1", ""},
		{ms(1500), capfile.FlagNoRecvTime, "s1", ""},
		{ms(1500), capfile.FlagNoRecvTime, "s1", ""}, // backwards: clamped
		{ms(1500), capfile.FlagNoRecvTime | capfile.FlagInvalidJSON, "", "5"},
		{ms(3000), capfile.FlagNoRecvTime, "run_1", ""},
		{ms(4250), capfile.FlagNoRecvTime, "", ""},
		{ms(4250), capfile.FlagNoRecvTime, "", ""},
	}
	if len(recs) != len(want) {
		t.Fatalf("%d records, want %d", len(recs), len(want))
	}
	for i, w := range want {
		r := recs[i]
		if r.Time != w.time || r.Flags != w.flags || r.Session != w.session || r.Attr(LineAttr) != w.line || r.Kind != capfile.KindReceived {
			t.Errorf("record %d = time %d flags %v session %q line %q kind %v, want %+v", i, r.Time, r.Flags, r.Session, r.Attr(LineAttr), r.Kind, w)
		}
	}
}

func TestWithMetaRoundTrip(t *testing.T) {
	dir := t.TempDir()
	h := testHeader()
	h.Redacted = []string{"args_summary"}
	recs := sampleRecords()
	// Records a JSON line cannot hold verbatim.
	last := recs[len(recs)-1].Time
	recs = append(recs,
		capfile.Record{Kind: capfile.KindReceived, Time: last, Payload: []byte{}},
		capfile.Record{Kind: capfile.KindReceived, Time: last, Payload: []byte(` {"type":"padded"} `)},
		capfile.Record{Kind: capfile.KindReceived, Time: last, Flags: capfile.FlagInvalidUTF8 | capfile.FlagInvalidJSON | 1<<6, Payload: []byte("\x00\xff\xfe binary")},
		capfile.Record{Kind: capfile.Kind(9), Time: last + 5, Origin: 7, Session: "caf\xe9", Attrs: []capfile.Attr{{Key: "k\xff", Value: "v\n\"quoted\""}}, Payload: []byte(`"a string"`)},
		capfile.Record{Kind: capfile.KindMarker, Time: last + 6, Flags: capfile.FlagRedacted, Payload: []byte(`{"note":"<b>&amp;</b> \u2028"}`)},
	)
	src := writeCapture(t, dir, "src.aaep", h, recs)
	meta := filepath.Join(dir, "meta.jsonl")
	f, err := os.Create(meta)
	if err != nil {
		t.Fatal(err)
	}
	st, err := Export(ctx, src, f, ExportOptions{WithMeta: true})
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if st.Lines != int64(len(recs))+1 || st.Skipped != 0 {
		t.Errorf("export stats %+v, want %d lines", st, len(recs)+1)
	}
	back := filepath.Join(dir, "back.aaep")
	ist, err := Import(ctx, meta, back, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !ist.WithMeta || ist.Records != int64(len(recs)) {
		t.Errorf("import stats %+v", ist)
	}
	gh, got := readCapture(t, back)
	sameRecords(t, got, recs)
	if !gh.Start.Equal(h.Start) || gh.Tool != h.Tool || !equalJSON(gh.Origins, h.Origins) || !equalJSON(gh.Meta, h.Meta) || !equalJSON(gh.Redacted, h.Redacted) {
		t.Errorf("header after round trip = %+v, want %+v", gh, h)
	}
	// Every line is one JSON object, so line-oriented tools can read it.
	for i, line := range strings.Split(strings.TrimSuffix(string(readFile(t, meta)), "\n"), "\n") {
		if !json.Valid([]byte(line)) {
			t.Errorf("meta line %d is not JSON: %q", i+1, line)
		}
	}
	// A plain export leaves the empty message out and says so.
	if plain, pst := exportString(t, src, ExportOptions{}); pst.Empty != 1 || strings.Contains(plain, "\n\n") || strings.HasPrefix(plain, "\n") {
		t.Errorf("plain export: %d empty messages counted, want 1 and no blank line", pst.Empty)
	}
	// A second export of the re-imported capture is byte-identical.
	again, _ := exportString(t, back, ExportOptions{WithMeta: true})
	if again != string(readFile(t, meta)) {
		t.Error("exporting the re-imported capture gives different lines")
	}
}

func equalJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

func TestWithMetaShape(t *testing.T) {
	rec := capfile.Record{Kind: capfile.KindReceived, Flags: capfile.FlagNoRecvTime, Origin: 2, Time: 1500000, Session: "s1",
		Attrs: []capfile.Attr{{Key: "event", Value: "message"}}, Payload: []byte(`{"type": "aaep:agent.state.changed"}`)}
	tests := []struct {
		name string
		rec  capfile.Record
		want string
	}{
		{"message", rec, `{"recv_ns":1500000,"kind":"received","dir":"in","source":2,"session":"s1","flags":["no_recv_time"],"attrs":[["event","message"]],"message":{"type": "aaep:agent.state.changed"}}`},
		{"sent", capfile.Record{Kind: capfile.KindSent, Time: 7, Payload: []byte(`{"type":"subscription.request"}`)}, `{"recv_ns":7,"kind":"sent","dir":"out","source":0,"message":{"type":"subscription.request"}}`},
		{"conn", capfile.Record{Kind: capfile.KindConn, Payload: []byte(`{"event":"connected"}`)}, `{"recv_ns":0,"kind":"conn","source":0,"message":{"event":"connected"}}`},
		{"text", capfile.Record{Kind: capfile.KindReceived, Flags: capfile.FlagInvalidJSON, Payload: []byte("{\"a\":\n1")}, `{"recv_ns":0,"kind":"received","dir":"in","source":0,"flags":["invalid_json"],"message":null}`},
		{"base64", capfile.Record{Kind: capfile.KindReceived, Payload: []byte{0xff}}, `{"recv_ns":0,"kind":"received","dir":"in","source":0,"base64":"/w=="}`},
	}
	tests[3].want = `{"recv_ns":0,"kind":"received","dir":"in","source":0,"flags":["invalid_json"],"text":"{\"a\":\n1"}`
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := string(appendMetaRecord(nil, &tc.rec))
			if got != tc.want+"\n" {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			var back capfile.Record
			if err := parseMetaRecord([]byte(strings.TrimSuffix(got, "\n")), &back); err != nil {
				t.Fatal(err)
			}
			sameRecords(t, []capfile.Record{back}, []capfile.Record{tc.rec})
		})
	}
}

func TestImportBadMetaLines(t *testing.T) {
	head := `{"aaep_export":1,"header":{"version":1,"start":"2026-05-24T14:22:11Z","tool":"t","sources":[]}}` + "\n"
	tests := []struct{ name, body, want string }{
		{"not an object", "garbage\n", "line 2"},
		{"no payload", `{"recv_ns":1,"kind":"received","source":0}` + "\n", "exactly one of message"},
		{"two payloads", `{"recv_ns":1,"kind":"received","source":0,"message":1,"text":"1"}` + "\n", "found 2"},
		{"unknown kind", `{"recv_ns":1,"kind":"bogus","source":0,"message":1}` + "\n", `unknown kind "bogus"`},
		{"backwards", `{"recv_ns":5,"kind":"received","source":0,"message":1}` + "\n" + `{"recv_ns":4,"kind":"received","source":0,"message":1}` + "\n", "line 3"},
		{"unknown field", `{"recv_ns":1,"kind":"received","source":0,"message":1,"extra":2}` + "\n", "unknown field"},
		{"bad base64", `{"recv_ns":1,"kind":"received","source":0,"base64":"!!"}` + "\n", "base64"},
		{"wrong dir", `{"recv_ns":1,"kind":"received","dir":"out","source":0,"message":1}` + "\n", "does not fit"},
		// In the file's words, not Go's (issue 34): no "Go struct field
		// metaRecord.kind of type string".
		{"kind a number", `{"recv_ns":1,"kind":42,"source":0,"message":1}` + "\n", `field "kind" is a JSON number, want a string`},
		{"source a string", `{"recv_ns":1,"kind":"received","source":"0","message":1}` + "\n", `field "source" is a JSON string, want a whole number`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in := writeText(t, dir, "in.jsonl", head+tc.body)
			out := filepath.Join(dir, "out.aaep")
			_, err := Import(ctx, in, out, ImportOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), in) {
				t.Fatalf("Import error = %v, want one naming %s and %q", err, in, tc.want)
			}
			for _, goWord := range []string{"Go struct", "Go value", "metaRecord", "json: ", "UnmarshalJSON"} {
				if strings.Contains(err.Error(), goWord) {
					t.Errorf("Import error %q speaks Go (%q)", err, goWord)
				}
			}
			// Damage: every record before the bad line is kept.
			_, recs := readCapture(t, out)
			if want := strings.Count(tc.body, "\n") - 1; len(recs) != want {
				t.Errorf("output holds %d records, want the %d before the bad line", len(recs), want)
			}
			noTemp(t, dir)
		})
	}
	t.Run("header start not a time", func(t *testing.T) {
		dir := t.TempDir()
		in := writeText(t, dir, "in.jsonl", `{"aaep_export":1,"header":{"version":1,"start":5,"tool":"t","sources":[]}}`+"\n")
		_, err := Import(ctx, in, filepath.Join(dir, "o.aaep"), ImportOptions{})
		if err == nil || !strings.Contains(err.Error(), "RFC 3339") || strings.Contains(err.Error(), "UnmarshalJSON") {
			t.Errorf("error = %v, want one saying the time is not an RFC 3339 string, without Go's words", err)
		}
	})
	t.Run("future version", func(t *testing.T) {
		dir := t.TempDir()
		in := writeText(t, dir, "in.jsonl", `{"aaep_export":99,"header":{}}`+"\n")
		if _, err := Import(ctx, in, filepath.Join(dir, "o.aaep"), ImportOptions{}); err == nil || !strings.Contains(err.Error(), "version 99") {
			t.Errorf("error = %v", err)
		}
	})
	t.Run("plain forces messages", func(t *testing.T) {
		dir := t.TempDir()
		in := writeText(t, dir, "in.jsonl", head)
		out := filepath.Join(dir, "o.aaep")
		st, err := Import(ctx, in, out, ImportOptions{Plain: true})
		if err != nil || st.WithMeta || st.Records != 1 {
			t.Fatalf("Import --plain = %+v, %v", st, err)
		}
	})
}

func TestExportPlainKinds(t *testing.T) {
	dir := t.TempDir()
	recs := sampleRecords()
	src := writeCapture(t, dir, "src.aaep", testHeader(), recs)
	var received, sent, other, reflow int64
	for _, r := range recs {
		switch r.Kind {
		case capfile.KindReceived:
			received++
			if bytes.ContainsAny(r.Payload, "\n") {
				reflow++
			}
		case capfile.KindSent:
			sent++
		default:
			other++
		}
	}
	for _, withSent := range []bool{false, true} {
		out, st := exportString(t, src, ExportOptions{Sent: withSent})
		want := received
		if withSent {
			want += sent
		}
		if n := int64(strings.Count(out, "\n")); n != want || st.Lines != want || st.Read != int64(len(recs)) || st.Reflowed != reflow || st.Skipped != int64(len(recs))-want {
			t.Errorf("sent=%v: %d lines, stats %+v; want %d lines, %d reflowed", withSent, n, st, want, reflow)
		}
		if st.Empty != 0 {
			t.Errorf("%d empty messages counted, want 0", st.Empty)
		}
		if !strings.Contains(out, `{   "type": "aaep:agent.state.changed",   "session_id"`) {
			t.Errorf("pretty-printed message not reflowed onto one line")
		}
	}
}

// TestImportRefusesWhatIsNotJSONL: a capture, a zstd file and bytes in which
// no line is JSON are refused before anything is written.
func TestImportRefusesWhatIsNotJSONL(t *testing.T) {
	dir := t.TempDir()
	capture := writeCapture(t, dir, "cap.aaep", testHeader(), sampleRecords())
	zst := filepath.Join(dir, "events.jsonl.zst")
	// A zstd frame: magic, then a frame header of a tiny raw block.
	writeFileBytes(t, zst, []byte{0x28, 0xb5, 0x2f, 0xfd, 0x24, 0x05, 0x29, 0x00, 0x00, 'h', 'e', 'l', 'l', 'o'})
	rnd := make([]byte, 64<<10)
	for i := range rnd {
		rnd[i] = byte((i*7919 + i*i*31) % 251)
		if rnd[i] == '{' || rnd[i] == '[' || rnd[i] == '"' || (rnd[i] >= '0' && rnd[i] <= '9') {
			rnd[i] = 'x'
		}
	}
	random := filepath.Join(dir, "random.bin")
	writeFileBytes(t, random, rnd)
	text := writeText(t, dir, "notes.txt", "hello\nworld\n")
	for _, tc := range []struct {
		in   string
		want error
		msg  string
	}{
		{capture, ErrIsCapture, "already a capture"},
		{zst, ErrCompressed, "zstd"},
		{random, ErrNotJSONL, "no line is JSON"},
		{text, ErrNotJSONL, "2 lines read"},
	} {
		out := filepath.Join(dir, "out.aaep")
		_, err := Import(ctx, tc.in, out, ImportOptions{})
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) || !strings.Contains(err.Error(), tc.in) {
			t.Errorf("import %s: %v, want %v naming the file", tc.in, err, tc.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("import %s left an output", tc.in)
		}
	}
	// One JSON line among garbage is JSON Lines with invalid lines.
	mixed := writeText(t, dir, "mixed.jsonl", "garbage\n{\"type\":\"x\"}\nmore garbage\n")
	if err := SniffJSONL(mixed); err != nil {
		t.Errorf("mixed file refused: %v", err)
	}
	noTemp(t, dir)
}

func TestEmptySelections(t *testing.T) {
	dir := t.TempDir()
	recs := sampleRecords()
	src := writeCapture(t, dir, "src.aaep", testHeader(), recs)
	_, err := Filter(ctx, []string{src}, filepath.Join(dir, "f.aaep"), FilterOptions{Match: msgfilter.Filter{Sessions: []string{"sess_nope"}}})
	if !errors.Is(err, ErrEmptySelection) || !strings.Contains(err.Error(), "session=sess_nope") || !strings.Contains(err.Error(), firstSession(recs)) {
		t.Errorf("filter on an unknown session: %v", err)
	}
	for _, tc := range []struct {
		sel  Selection
		want string
	}{
		{Selection{Sessions: []string{"sess_nope", "sess_other"}}, "--session sess_nope,sess_other"},
		{Selection{From: pos(t, "#5"), To: pos(t, "#2"), ToFlag: "--until"}, "--until #2 ends before it starts"},
		{Selection{From: pos(t, "2h")}, "--from 2h0m0s is past the last record"},
	} {
		err := CheckSelection(context.Background(), src, tc.sel)
		if !errors.Is(err, ErrEmptySelection) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "the capture holds") {
			t.Errorf("%+v: %v, want %q", tc.sel, err, tc.want)
		}
	}
	if err := CheckSelection(context.Background(), src, Selection{Sessions: []string{"sess_nope", firstSession(recs)}, From: pos(t, "#3")}); err != nil {
		t.Errorf("a selection with one known session: %v", err)
	}
	noTemp(t, dir)
}
