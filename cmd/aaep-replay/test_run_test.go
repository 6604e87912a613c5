package main

import (
	"encoding/json"
	"encoding/xml"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/testdeps"
)

// junitDoc is what a JUnit reader (Jenkins, GitLab) takes from the file.
type junitDoc struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Props    []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"properties>property"`
		Cases []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func readJUnit(t *testing.T, path string) junitDoc {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), xml.Header) {
		t.Errorf("%s does not start with the XML declaration", path)
	}
	var doc junitDoc
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s is not XML: %v\n%s", path, err, b)
	}
	return doc
}

// subscriberScript is the scripted SSE subscriber the subtest package's
// tests use (python3, standard library only).
func subscriberScript(t *testing.T) string {
	t.Helper()
	testdeps.Command(t, "python3", "python3")
	p, err := filepath.Abs("../../internal/subtest/testdata/sub.py")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSubscriberTestDoneWhen: aaep-replay test --scenario
// confirmation-default-reject --exec 'python3 sub.py {url}' gives a
// readable verdict and valid JUnit for a passing subscriber and for one
// that leaves subscription_id out of its reply; the failed run's record
// opens in view, the reply the verdict names among its messages.
func TestSubscriberTestDoneWhen(t *testing.T) {
	dir := t.TempDir()
	sub := subscriberScript(t)

	pass := filepath.Join(dir, "pass.xml")
	code, out, stderr := replay(t, "test", "--scenario", "confirmation-default-reject", "--exec", "python3 "+sub+" {url}", "--junit", pass)
	if code != 0 {
		t.Fatalf("exit %d, want 0\n%s%s", code, out, stderr)
	}
	for _, want := range []string{
		"confirmation-default-reject (level 2; §6.3, §6.4, §9.4.2(3), §9.4.2(4))\n",
		"  user: Reject the confirmation (reply_token rpl_refund1142).\n",
		"  ok    reply rpl_refund1142 decision=reject within 30s (required): #",
		"  ok    subscriber-side rules: no finding on the subscriber's messages\n",
		"PASS: 1 scenarios, 1 passed, 0 failed, 0 not applicable, 0 not run\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	doc := readJUnit(t, pass)
	if doc.Tests != 2 || doc.Failures != 0 || doc.Errors != 0 || len(doc.Suites) != 1 || doc.Suites[0].Name != "confirmation-default-reject" {
		t.Errorf("passing JUnit %+v", doc)
	}

	fail, rec := filepath.Join(dir, "fail.xml"), filepath.Join(dir, "fail.aaep")
	code, out, stderr = replay(t, "test", "--scenario", "confirmation-default-reject", "--exec", "python3 "+sub+" {url} nosubid",
		"--junit", fail, "--record", rec, "--json")
	if code != cli.ExitFailure {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, stderr)
	}
	var rep struct {
		Verdict   string `json:"verdict"`
		Scenarios []struct {
			Record   string `json:"record"`
			Findings []struct {
				Rule  string `json:"rule"`
				Level string `json:"level"`
				Index int64  `json:"index"`
			} `json:"findings"`
		} `json:"scenarios"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if rep.Verdict != "FAIL" || len(rep.Scenarios) != 1 || rep.Scenarios[0].Record != rec || len(rep.Scenarios[0].Findings) != 1 ||
		rep.Scenarios[0].Findings[0].Rule != "MSG-CONF-REPLY-SCHEMA" || rep.Scenarios[0].Findings[0].Level != "MUST" {
		t.Fatalf("JSON report %+v", rep)
	}
	doc = readJUnit(t, fail)
	if doc.Failures != 1 || len(doc.Suites) != 1 {
		t.Fatalf("failing JUnit %+v", doc)
	}
	var failure string
	for _, c := range doc.Suites[0].Cases {
		if c.Failure != nil {
			failure = c.Name + ": " + c.Failure.Message + " | " + c.Failure.Text
		}
	}
	if !strings.Contains(failure, "subscriber-side rules: MUST MSG-CONF-REPLY-SCHEMA #") || !strings.Contains(failure, "subscription_id") {
		t.Errorf("JUnit failure %q", failure)
	}

	// view opens the failed run's record.
	reply := rep.Scenarios[0].Findings[0].Index
	s := startServe(t, "view", rec, "--listen", "127.0.0.1:0")
	defer s.stop(t)
	resp, err := http.Get("http://" + s.addr + "/api/event/" + itoa(reply))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var ev struct {
		Kind string `json:"kind"`
		Type string `json:"type"`
		Raw  string `json:"raw"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &ev) != nil || ev.Type != "confirmation.reply" || strings.Contains(ev.Raw, "subscription_id") {
		t.Errorf("view /api/event/%d: %d %.400s", reply, resp.StatusCode, body)
	}
}

// TestReplyWithoutSubscriptionIDReadsAlike: a reply without
// subscription_id from a subscriber that never subscribed (so was issued
// none) is NEG-REPLY-SUBID-UNISSUED in test and in check of the run's
// recording alike: a SHOULD (exit 0) in the lenient profile, a MUST
// (exit 1) in the strict one.
func TestReplyWithoutSubscriptionIDReadsAlike(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "run.aaep")
	exec := "python3 " + subscriberScript(t) + " {url} nohandshake"
	code, out, stderr := replay(t, "test", "--scenario", "confirmation-default-reject", "--exec", exec, "--record", rec)
	if code != 0 || !strings.Contains(out, "  SHOULD NEG-REPLY-SUBID-UNISSUED #") {
		t.Fatalf("test: exit %d, want 0 and the SHOULD\n%s%s", code, out, stderr)
	}
	code, out, stderr = replay(t, "test", "--scenario", "confirmation-default-reject", "--exec", exec, "--profile", "strict")
	if code != cli.ExitFailure || !strings.Contains(out, "  MUST   NEG-REPLY-SUBID-UNISSUED #") {
		t.Errorf("test --profile strict: exit %d, want 1 and the MUST\n%s%s", code, out, stderr)
	}
	for _, tc := range []struct {
		profile, level string
		code           int
	}{{"lenient", "SHOULD", 0}, {"strict", "MUST", cli.ExitFailure}} {
		code, out, stderr := replay(t, "check", "--profile", tc.profile, "--json", rec)
		var rep struct {
			Recordings []struct {
				Sessions []struct {
					Findings []struct {
						Rule  string `json:"rule"`
						Level string `json:"level"`
					} `json:"findings"`
				} `json:"sessions"`
			} `json:"recordings"`
		}
		_ = json.Unmarshal([]byte(out), &rep)
		var got []string
		for _, r := range rep.Recordings {
			for _, s := range r.Sessions {
				for _, f := range s.Findings {
					if f.Rule == "NEG-REPLY-SUBID-UNISSUED" || strings.HasPrefix(f.Rule, "MSG-") {
						got = append(got, f.Level+" "+f.Rule)
					}
				}
			}
		}
		if code != tc.code || strings.Join(got, ", ") != tc.level+" NEG-REPLY-SUBID-UNISSUED" {
			t.Errorf("check --profile %s: exit %d, findings %q; want %d and %s NEG-REPLY-SUBID-UNISSUED\n%.2000s%s", tc.profile, code, got, tc.code, tc.level, out, stderr)
		}
	}
}

// TestSubscriberTestCannotRun: an invalid scenario file names its line and
// exits 2; no subscriber within --attach-timeout exits 2 and says so.
func TestSubscriberTestCannotRun(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("level: 2\ncapture: x.jsonl\nexpect:\n  - reply: {token: abc}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := replay(t, "test", bad)
	if want := bad + `:4: reply.token: a reply_token starts with rpl_ (§6.2.1), got "abc"`; code != cli.ExitUsage || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, want)
	}
	junit := filepath.Join(dir, "j.xml")
	code, out, stderr := replay(t, "test", "--scenario", "terminal-events", "--listen", "127.0.0.1:0", "--attach-timeout", "200ms", "--junit", junit)
	if code != cli.ExitUsage || !strings.Contains(out, "NOT RUN  no subscriber attached within 200ms (--attach-timeout)") ||
		!strings.Contains(stderr, "waiting for a subscriber on ws://127.0.0.1:") {
		t.Errorf("exit %d\n%s%s", code, out, stderr)
	}
	if doc := readJUnit(t, junit); doc.Errors != 1 || doc.Tests != 1 {
		t.Errorf("JUnit of a scenario not run: %+v", doc)
	}
	code, out, _ = replay(t, "test", "--list", "--level", "3")
	// Level 3's scenarios only, in name order: the listing starts with its
	// heading and holds both handshakes, and no other level's heading.
	if code != 0 || !strings.HasPrefix(out, "Level 3\n  ") || !strings.Contains(out, "\n  handshake-sse ") ||
		!strings.Contains(out, "\n  handshake-websocket ") || strings.Contains(out, "Level 2") || strings.Contains(out, "Level 1") {
		t.Errorf("--list --level 3: exit %d\n%s", code, out)
	}
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
