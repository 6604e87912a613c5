package viewer

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/recording"
)

// eventDetail is everything the inspector shows about one record.
type eventDetail struct {
	eventRow
	Received  time.Time         `json:"received"`
	Direction string            `json:"direction"`
	SourceOf  *capfile.Origin   `json:"source_info,omitempty"`
	Attrs     map[string]string `json:"attrs"`
	Flags     []string          `json:"flags"`
	// Raw is the payload as recorded (RawBase64 when it is not UTF-8).
	Raw       string    `json:"raw"`
	RawBase64 string    `json:"raw_base64,omitempty"`
	Bytes     int       `json:"bytes"`
	Pretty    string    `json:"pretty,omitempty"`
	Findings  []finding `json:"findings"`
	Checked   bool      `json:"checked"`
	// Recording names the record's recording when several are viewed.
	Recording string `json:"recording,omitempty"`
}

type finding struct {
	protocol.Finding
	Rule ruleDoc `json:"rule_doc"`
}

var flagNames = []struct {
	f    capfile.Flags
	name string
}{{capfile.FlagInvalidJSON, "invalid JSON"}, {capfile.FlagInvalidUTF8, "invalid UTF-8"}, {capfile.FlagRedacted, "redacted"}, {capfile.FlagNoRecvTime, "time from the payload's timestamp"}}

func (s *Server) serveEvent(w http.ResponseWriter, r *http.Request) {
	idx, err := strconv.ParseInt(r.PathValue("index"), 10, 64)
	if err != nil || idx < 0 || idx >= s.index().Records {
		apiError(w, http.StatusNotFound, "no record %s (the capture has %d)", r.PathValue("index"), s.index().Records)
		return
	}
	rd, ok := s.openAt(w, func(rd *recording.Reader) error { return rd.SeekRecord(idx) })
	if !ok {
		return
	}
	defer s.release(rd)
	rec, err := rd.Next()
	if err != nil {
		apiError(w, http.StatusInternalServerError, "%s: record %d: %v", s.title(), idx, err)
		return
	}
	row, _ := s.row(rec, idx, rd.Recording(), &rowFilter{})
	d := eventDetail{eventRow: row, Received: s.hdr.Start.Add(rec.Offset()), Attrs: map[string]string{}, Flags: []string{}, Bytes: len(rec.Payload), Findings: []finding{}}
	switch rec.Kind {
	case capfile.KindReceived:
		d.Direction = "received by the recorder (producer → subscriber)"
	case capfile.KindSent:
		d.Direction = "sent by the recorder's side (subscriber → producer)"
	case capfile.KindConn:
		d.Direction = "connection event"
	default:
		d.Direction = "annotation"
	}
	for i := range s.hdr.Origins {
		if int(s.hdr.Origins[i].ID) == int(rec.Origin) {
			src := s.hdr.Origins[i]
			d.SourceOf = &src
		}
	}
	for _, a := range rec.Attrs {
		d.Attrs[a.Key] = a.Value
	}
	for _, fl := range flagNames {
		if rec.Flags&fl.f != 0 {
			d.Flags = append(d.Flags, fl.name)
		}
	}
	if utf8.Valid(rec.Payload) {
		d.Raw = string(rec.Payload)
	} else {
		d.RawBase64 = base64.StdEncoding.EncodeToString(rec.Payload)
		d.Raw = strings.ToValidUTF8(string(rec.Payload), "\uFFFD")
	}
	var pretty bytes.Buffer
	if json.Valid(rec.Payload) && json.Indent(&pretty, rec.Payload, "", "  ") == nil {
		d.Pretty = pretty.String()
	}
	for _, f := range s.analysis().findingsAt(idx) {
		d.Findings = append(d.Findings, finding{Finding: f, Rule: s.rules[f.RuleID]})
	}
	// Checked: the check is done, or (following) has read this message.
	sn := s.analysis().snap.Load()
	d.Checked = sn.done || s.opts.Follow && idx <= sn.lastIndex
	if j := s.rec.Joined(); rd.Recording() < len(j) {
		d.Recording = j[rd.Recording()].Name
	}
	writeJSON(w, http.StatusOK, d)
}
