package kahn

import (
	"fmt"
	"testing"

	"github.com/aaep-tools/aaepkit/protocol/protocoltest"
)

// TestMemoryBounded: agents and runs are dropped when they end; the memory
// of ended agents stops at its bound.
func TestMemoryBounded(t *testing.T) {
	rep := &protocoltest.SessionCounter{}
	const bound = 500
	c := newCheckerSized(rep, false, bound)
	feed := func(line string) { protocoltest.Handle(c, 0, line) }
	const n = 3 * bound
	for i := 0; i < n; i++ {
		feed(fmt.Sprintf(`{"ts":"2026-05-05T09:00:00.000Z","run_id":"r%d","event":"agent_run_start","agent_id":"a","task":"t"}`, i))
		feed(fmt.Sprintf(`{"ts":"2026-05-05T09:00:00.000Z","run_id":"r%d","event":"audit_checkpoint","agent_id":null,"checkpoint_id":"c","result":"pass","duration_s":1}`, i))
		feed(fmt.Sprintf(`{"ts":"2026-05-05T09:00:01.000Z","run_id":"r%d","event":"agent_run_end","agent_id":"a","outcome":"aborted","total_steps":0,"total_tool_calls":0,"total_audit_checkpoints":0,"audits_passed":0,"audits_failed":0,"total_duration_s":1}`, i))
		if c.agents.Len() != 0 || len(c.runs) != 0 {
			t.Fatalf("after run %d: %d agents, %d runs kept", i, c.agents.Len(), len(c.runs))
		}
	}
	if rep.Done != 2*n {
		t.Errorf("%d sessions done, want %d (agent and lane per run)", rep.Done, 2*n)
	}
	if c.ended.Len() != bound {
		t.Errorf("ended memory grew to %d", c.ended.Len())
	}
}
