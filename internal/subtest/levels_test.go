package subtest

import (
	"slices"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/internal/testdeps"
)

// TestLevelsAskWhatTheSpecAsks: each level asks what the specification's
// level asks (§9.3–9.5) of the subscriber's transport, no more. A passive
// subscriber that only reads the stream (no handshake, no reply: §9.3.3)
// passes every Level 1 scenario; a correct SSE-only and a correct
// WebSocket-only subscriber pass Level 3, the other transport's handshake
// being not applicable (never failed).
func TestLevelsAskWhatTheSpecAsks(t *testing.T) {
	t.Parallel()
	if names := levelNames(1); slices.Contains(names, "redelivery") {
		t.Errorf("level 1 scenarios %v: redelivery needs a reply and deduplication (§9.5.2(6))", names)
	}
	// The three groups play side by side, and beside the package's other
	// tests (their runs take turns: main_test.go), not one group after
	// the other.
	t.Run("passive level 1", func(t *testing.T) {
		t.Parallel()
		testdeps.Command(t, "curl", "curl")
		for _, sc := range BuiltinsAt(1) {
			t.Run(sc.Name, func(t *testing.T) {
				t.Parallel()
				res, _ := run(t, sc, Options{Exec: "curl -sN {url}/events -o /dev/null"})
				if res.Verdict() != VerdictPass {
					t.Errorf("%s: %s %s %+v %s", sc.Name, res.Verdict(), res.NotRun, res.Outcomes, ruleIDs(res))
				}
			})
		}
	})
	na := map[string]string{TransportSSE: "handshake-websocket", TransportWebSocket: "handshake-sse"}
	for _, tr := range []string{TransportSSE, TransportWebSocket} {
		t.Run(tr+"-only level 3", func(t *testing.T) {
			t.Parallel()
			for _, sc := range BuiltinsAt(3) {
				t.Run(sc.Name, func(t *testing.T) {
					t.Parallel()
					o := Options{Exec: subPy(t, "good")}
					var ws *wsSubscriber
					if tr == TransportWebSocket {
						ws = newWSSubscriber(sc)
						o = Options{Listen: "127.0.0.1:0", Announce: func(_ *Scenario, base string) { ws.attach(t, base) }}
					}
					res, _ := run(t, sc, o)
					if ws != nil {
						ws.wg.Wait()
					}
					want := VerdictPass
					if sc.Name == na[tr] {
						want = VerdictNotApplicable
					}
					if res.Verdict() != want || res.Transport != tr {
						t.Errorf("%s over %s: %s, want %s (%s) %+v %s", sc.Name, res.Transport, res.Verdict(), want, res.NotApplicable, res.Outcomes, ruleIDs(res))
					}
				})
			}
		})
	}
	// --transport says it before anything is played: no subscriber is
	// needed for a scenario that does not apply. (Parallel, it does not
	// hold the groups back while its run waits for a turn.)
	t.Run("transport chosen", func(t *testing.T) {
		t.Parallel()
		res, _ := run(t, builtinT(t, "handshake-sse"), Options{Listen: "127.0.0.1:0", Transport: TransportWebSocket, AttachTimeout: 100 * time.Millisecond})
		if want := "the subscriber uses websocket; this scenario tests sse only"; res.NotApplicable != want || !res.Passed() {
			t.Errorf("not applicable %q, want %q; passed %v", res.NotApplicable, want, res.Passed())
		}
	})
}

func levelNames(l int) []string {
	var out []string
	for _, sc := range BuiltinsAt(l) {
		out = append(out, sc.Name)
	}
	return out
}
