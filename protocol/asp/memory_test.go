package asp

import (
	"fmt"
	"testing"

	"github.com/aaep-tools/aaepkit/protocol/protocoltest"
)

// TestMemoryBounded: the checker keeps state for open sessions only, and
// its stream-wide memories stop growing at their bounds.
func TestMemoryBounded(t *testing.T) {
	rep := &protocoltest.SessionCounter{}
	const bound = 500
	c := newCheckerSized(New().(*model), rep, false, bound)
	feed := func(i int, line string) { protocoltest.Handle(c, int64(i), line) }
	const n = 3 * bound
	for i := 0; i < n; i++ {
		sid := fmt.Sprintf("s-%d", i)
		feed(2*i, fmt.Sprintf(`{"messageId":"a-%d","sessionId":%q,"performative":"PROPOSE","timestamp":"2026-03-07T14:00:00.000Z","sender":{"agentId":"agent://a/x"},"content":{"body":{"type":"session-invitation"}},"integrity":{"hash":"h-a-%d"}}`, i, sid, i))
		feed(2*i+1, fmt.Sprintf(`{"messageId":"b-%d","sessionId":%q,"performative":"REJECT","timestamp":"2026-03-07T14:00:01.000Z","sender":{"agentId":"agent://b/y"},"content":{"body":{"reason":"busy"}},"integrity":{"hash":"h-b-%d","previousHash":"h-a-%d"}}`, i, sid, i, i))
		if c.sessions.Len() != 0 {
			t.Fatalf("after session %d: %d sessions open, want 0", i, c.sessions.Len())
		}
	}
	if rep.Done != n {
		t.Errorf("%d sessions reported done, want %d", rep.Done, n)
	}
	if c.ended.Len() != bound || c.ids.Len() != bound || c.hashes.Len() != bound {
		t.Errorf("memories should stop at %d: ended %d, ids %d, hashes %d", bound, c.ended.Len(), c.ids.Len(), c.hashes.Len())
	}
}
