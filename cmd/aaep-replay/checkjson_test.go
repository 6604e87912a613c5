package main

import (
	"encoding/json"
	"testing"
)

// recordingJSON returns the report of the one recording a check --json
// document (schema_version 3) holds, as a JSON object of its own with the
// document's fail_on added, for tests that read one recording's report.
func recordingJSON(t *testing.T, out string) []byte {
	t.Helper()
	var doc struct {
		SchemaVersion int             `json:"schema_version"`
		FailOn        json.RawMessage `json:"fail_on"`
		Recordings    []json.RawMessage
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("check --json does not parse: %v\n%s", err, out)
	}
	if doc.SchemaVersion != 3 || len(doc.Recordings) != 1 {
		t.Fatalf("check --json: schema_version %d, %d recordings; want 3 and one\n%s", doc.SchemaVersion, len(doc.Recordings), out)
	}
	var rec map[string]json.RawMessage
	if err := json.Unmarshal(doc.Recordings[0], &rec); err != nil {
		t.Fatal(err)
	}
	rec["fail_on"] = doc.FailOn
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
