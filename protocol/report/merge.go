package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/aaep-tools/aaepkit/protocol"
)

// Merged is the outcome of MergeJSON: the merged document's verdict.
type Merged struct {
	Recordings int
	Failed     bool
	Complete   bool
	Verdict    string
}

// mergedRecording is what MergeJSON reads of a recording's object; the
// object itself is copied as it was written.
type mergedRecording struct {
	raw        json.RawMessage
	Recording  string                      `json:"recording"`
	Parts      []string                    `json:"parts"`
	Messages   int64                       `json:"messages"`
	Sessions   int64                       `json:"session_count"`
	Counts     map[string]int64            `json:"counts"`
	ByParty    map[string]map[string]int64 `json:"counts_by_party"`
	Failed     bool                        `json:"failed"`
	Complete   bool                        `json:"complete"`
	Incomplete []string                    `json:"incomplete"`
}

// MergeJSON writes one JSON report (schema SchemaVersion) of the
// recordings of several: the reports of shards of one check (check
// --shard), each recording in exactly one of them. The recordings are
// ordered by the name of their first part, as a check of one prefix,
// directory or glob lists them, and each recording's object is copied byte
// for byte; the total and the verdict are worked out again. The document is
// then the one a single check of all the recordings writes. names name the
// documents in errors. Reports of another schema, of different --fail-on
// levels, or naming a recording twice are refused.
func MergeJSON(w io.Writer, names []string, docs [][]byte) (Merged, error) {
	var recs []*mergedRecording
	failOn := ""
	seen := map[string]string{}
	for i, data := range docs {
		var doc struct {
			Schema     *int              `json:"schema_version"`
			FailOn     string            `json:"fail_on"`
			Recordings []json.RawMessage `json:"recordings"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			return Merged{}, fmt.Errorf("%s: not a JSON report of check: %w", names[i], err)
		}
		switch {
		case doc.Schema == nil || doc.Recordings == nil:
			return Merged{}, fmt.Errorf("%s: not a JSON report of check (no schema_version or recordings)", names[i])
		case *doc.Schema != SchemaVersion:
			return Merged{}, fmt.Errorf("%s: report of schema version %d, this aaep-replay merges version %d", names[i], *doc.Schema, SchemaVersion)
		case i > 0 && doc.FailOn != failOn:
			return Merged{}, fmt.Errorf("%s: checked with --fail-on %s, %s with --fail-on %s: the verdicts cannot be merged", names[i], doc.FailOn, names[0], failOn)
		}
		failOn = doc.FailOn
		for _, raw := range doc.Recordings {
			r := &mergedRecording{raw: raw}
			if err := json.Unmarshal(raw, r); err != nil {
				return Merged{}, fmt.Errorf("%s: a recording's report: %w", names[i], err)
			}
			if prev, ok := seen[r.Recording]; ok {
				return Merged{}, fmt.Errorf("%s: recording %s is in %s too: the reports are not of disjoint shards", names[i], r.Recording, prev)
			}
			seen[r.Recording] = names[i]
			recs = append(recs, r)
		}
	}
	threshold, err := protocol.ParseThreshold(failOn)
	if err != nil {
		return Merged{}, fmt.Errorf("%s: fail_on: %w", names[0], err)
	}
	slices.SortStableFunc(recs, func(a, b *mergedRecording) int { return strings.Compare(a.first(), b.first()) })

	t := newTotal()
	for _, r := range recs {
		if err := t.addJSON(r, threshold); err != nil {
			return Merged{}, fmt.Errorf("recording %s: %w", r.Recording, err)
		}
	}
	t.settle(threshold)
	var b bytes.Buffer
	b.Write(appendDocumentStart(nil, threshold))
	for i, r := range recs {
		if i > 0 {
			b.WriteString(",\n")
		}
		b.WriteString("    ")
		b.Write(r.raw)
	}
	b.Write(t.appendDocumentEnd(nil, threshold))
	if _, err := w.Write(b.Bytes()); err != nil {
		return Merged{}, err
	}
	return Merged{Recordings: len(recs), Failed: t.Failed, Complete: t.Complete, Verdict: t.Verdict}, nil
}

// first is the name of the recording's first part (its name when it
// lists none).
func (r *mergedRecording) first() string {
	if len(r.Parts) > 0 {
		return r.Parts[0]
	}
	return r.Recording
}

// addJSON adds a recording read back from a JSON report, as add adds a
// Report.
func (t *total) addJSON(r *mergedRecording, threshold protocol.Level) error {
	t.Recordings++
	t.Messages += r.Messages
	t.Sessions += r.Sessions
	for _, l := range []string{"MUST", "SHOULD", "INFO"} {
		t.Counts[l] += r.Counts[l]
	}
	for party, levels := range r.ByParty {
		p, err := protocol.ParseParty(party)
		if err != nil {
			return fmt.Errorf("counts_by_party: %w", err)
		}
		for level, n := range levels {
			l, err := protocol.ParseLevel(level)
			if err != nil {
				return fmt.Errorf("counts_by_party: %w", err)
			}
			t.CountsByParty[partyLevel{p, l}] += n
		}
	}
	if r.Failed {
		t.Failed = true
		t.failedN++
	}
	if !r.Complete {
		t.Complete = false
		t.Incomplete++
	}
	return nil
}

// settle sets the total's verdict from its counts, as add does after each
// report and Close for a batch of none.
func (t *total) settle(threshold protocol.Level) {
	switch {
	case !t.Complete:
		t.Verdict = VerdictIncomplete
	case threshold >= protocol.Never:
		t.Verdict = VerdictNotGated
	case t.Failed:
		t.Verdict = VerdictFail
	default:
		t.Verdict = VerdictPass
	}
}
