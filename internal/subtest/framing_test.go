package subtest

import (
	"bufio"
	"cmp"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/internal/testdeps"
	"github.com/aaep-tools/aaepkit/serve"
	"github.com/aaep-tools/aaepkit/timing"
)

// sseFrames reads an SSE stream's frames as "event|id|data" lines,
// comments (keepalives) left out.
func sseFrames(t *testing.T, text string) []string {
	t.Helper()
	var out []string
	var event, id string
	var data []string
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "event:"):
			event = strings.TrimSpace(line[len("event:"):])
		case strings.HasPrefix(line, "id:"):
			id = strings.TrimSpace(line[len("id:"):])
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(line[len("data:"):], " "))
		case line == "" && data != nil:
			out = append(out, event+"|"+id+"|"+strings.Join(data, "\n"))
			event, id, data = "", "", nil
		}
	}
	return out
}

// serveFrames is the stream serve sends a subscriber of the scenario's
// capture with sseEvent (its --sse-event).
func serveFrames(t *testing.T, sc *Scenario, sseEvent string) []string {
	t.Helper()
	path, err := prepareCapture(context.Background(), sc, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := serve.New(serve.Options{Open: serve.OpenFile(path), Timing: timing.Config{NoDelay: true}, CloseAtEnd: true, SSEEvent: sseEvent})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	defer srv.Shutdown(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, hs.URL+"/aaep/v1/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	if _, err := bufio.NewReader(resp.Body).WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	return sseFrames(t, b.String())
}

// TestSSEFramingAsServe: test sends an SSE subscriber the stream serve
// sends it, frame for frame (event: and id: lines and data), by default
// (as recorded: aaep.event, B.1.3) and with --sse-event none (unnamed); a
// subscriber that hears only unnamed events (EventSource's onmessage)
// hears nothing of the first, and the verdict says so plainly, citing
// B.1.3, where it failed; under --sse-event none it passes.
func TestSSEFramingAsServe(t *testing.T) {
	t.Parallel()
	testdeps.Command(t, "curl", "curl")
	for _, sseEvent := range []string{"", serve.SSEEventNone} {
		t.Run("frames/"+cmp.Or(sseEvent, "recorded"), func(t *testing.T) {
			t.Parallel()
			sc := builtinT(t, "unknown-extensions")
			dump := filepath.Join(t.TempDir(), "stream.txt")
			res, _ := run(t, sc, Options{Exec: "curl -sN {url}/aaep/v1/events -o " + dump, SSEEvent: sseEvent})
			if res.NotRun != "" {
				t.Fatal(res.NotRun)
			}
			got, err := os.ReadFile(dump)
			if err != nil {
				t.Fatal(err)
			}
			frames, want := sseFrames(t, string(got)), serveFrames(t, sc, sseEvent)
			if len(want) < 5 || !slices.Equal(frames, want) {
				t.Errorf("test sent %d frames, serve %d; test:\n%s\nserve:\n%s", len(frames), len(want), strings.Join(frames, "\n"), strings.Join(want, "\n"))
			}
			named := strings.HasPrefix(want[0], "aaep.event|")
			if named != (sseEvent == "") {
				t.Errorf("first frame %q: named %v", want[0], named)
			}
		})
	}
	t.Run("unnamed-listener", func(t *testing.T) {
		t.Parallel()
		sc := builtinT(t, "confirmation-reject")
		sc.Expect[0].Within = 3 * time.Second // no reply is coming: wait no longer
		res, _ := run(t, sc, Options{Exec: subPy(t, "unnamed")})
		if res.Passed() || outcome(t, res, ExpectReply).Passed {
			t.Errorf("passed: %+v", res.Outcomes)
		}
		for _, says := range []string{"the subscriber sent nothing after its subscription", `"event: aaep.event"`, "B.1.3", "EventSource's onmessage", "--sse-event none"} {
			if !strings.Contains(res.Silence, says) {
				t.Errorf("silence %q does not say %q", res.Silence, says)
			}
		}
		var text, junit strings.Builder
		_ = WriteText(&text, []*Result{res})
		_ = WriteJUnit(&junit, []*Result{res})
		if !strings.Contains(text.String(), "  note  "+res.Silence) || !strings.Contains(junit.String(), "B.1.3") {
			t.Errorf("text or JUnit lacks the note:\n%s\n%s", text.String(), junit.String())
		}
	})
	t.Run("unnamed-listener/sse-event-none", func(t *testing.T) {
		t.Parallel()
		res, _ := run(t, builtinT(t, "confirmation-reject"), Options{Exec: subPy(t, "unnamed"), SSEEvent: serve.SSEEventNone})
		if !res.Passed() || res.Silence != "" {
			t.Errorf("passed=%v silence %q: %+v", res.Passed(), res.Silence, res.Outcomes)
		}
	})
}
