package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/testdeps"
)

// TestSubscriberTestAnnouncements: aaep-replay test judges what a
// subscriber told its user. A native subscriber that never announces a
// critical event (--announcements, descriptor 3) exits 1 with the MUST in
// the text and the JUnit; a web page of our own in headless Chromium
// (--page) passes, its live regions heard.
func TestSubscriberTestAnnouncements(t *testing.T) {
	testdeps.Command(t, "python3", "python3")
	testdata, err := filepath.Abs("../../internal/subtest/testdata")
	if err != nil {
		t.Fatal(err)
	}
	junit := filepath.Join(t.TempDir(), "j.xml")
	code, out, stderr := replay(t, "test", "--scenario", "critical-urgency", "--exec", "python3 "+filepath.Join(testdata, "announcer.py")+" {url} suppress",
		"--announcements", "--junit", junit)
	if code != cli.ExitFailure {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, stderr)
	}
	const must = "FAIL  announce session.errored in session sess_a1 assertive (required): MUST (§9.3.2(7): never suppress a critical event): the critical event #"
	if !strings.Contains(out, must) || !strings.Contains(out, "  heard 5 announcements on --announcements, 5 mapped to events\n") {
		t.Errorf("report lacks %q or what was heard:\n%s", must, out)
	}
	doc := readJUnit(t, junit)
	if doc.Failures != 1 || len(doc.Suites) != 1 {
		t.Fatalf("JUnit %+v", doc)
	}
	for _, c := range doc.Suites[0].Cases {
		if c.Failure != nil && !strings.HasPrefix(c.Failure.Message, "MUST (§9.3.2(7)") {
			t.Errorf("JUnit failure %s: %s", c.Name, c.Failure.Message)
		}
	}

	pages := httptest.NewServer(http.FileServer(http.Dir(testdata)))
	defer pages.Close()
	_, port, _ := net.SplitHostPort(pages.Listener.Addr().String())
	code, out, stderr = replay(t, "test", "--scenario", "announce-lifecycle", "--page", "http://localhost:"+port+"/announce-page.html?base={url}")
	if code != 0 {
		t.Fatalf("exit %d, want 0\n%s%s", code, out, stderr)
	}
	for _, want := range []string{
		`  ok    announce tool.invoked in session sess_a1 (required): #`,
		`announced "Calling a tool: Renaming 212 photos by date." (polite, role=log #log, at `,
		"  heard 6 announcements in the page's live regions, 6 mapped to events\n",
		"evidence: the subscriber announced 6 of the 12 events",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// TestSubscriberTestPageWithoutChromium: test --page where no Chromium is
// there to launch says so once, naming what is missing and where it comes
// from, and exits 1 without playing a scenario.
func TestSubscriberTestPageWithoutChromium(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("AAEP_CHROMIUM", "")
	code, out, stderr := replay(t, "test", "--scenario", "announce-lifecycle", "--page", "http://localhost:1/?base={url}")
	if code != cli.ExitFailure {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, stderr)
	}
	const want = "--page: headless: no Chromium: $AAEP_CHROMIUM is not set and none of chromium, chromium-browser, google-chrome is on $PATH (install the Debian package chromium, or set AAEP_CHROMIUM to a Chromium binary)"
	if strings.Count(stderr, want) != 1 || out != "" {
		t.Errorf("want stderr to say %q once and no report; stdout:\n%s\nstderr:\n%s", want, out, stderr)
	}
}
