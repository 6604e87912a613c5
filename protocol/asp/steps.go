// Trace steps of ASP sessions: the step each message draws and its label
// and detail text.

package asp

import (
	"strings"

	"github.com/aaep-tools/aaepkit/protocol"
)

// synthetic adds a step to FAILED that no message caused.
func (c *checker) synthetic(s *session, m *protocol.Message, kind protocol.StepKind, label, det string) {
	st := protocol.Step{Session: s.id, Index: -1, Offset: s.last, From: s.state, To: sFailed, Label: label, Detail: det, Kind: kind, Synthetic: true}
	if m != nil {
		st.Index, st.Offset = m.Index, m.Offset
	}
	c.r.Step(st)
	s.state, s.grace = sFailed, graceNone
}

func (c *checker) step(s *session, m *protocol.Message, e *envelope, from, to string, kind protocol.StepKind, note string) {
	c.r.Step(protocol.Step{Session: s.id, Index: m.Index, Offset: m.Offset, From: from, To: to,
		Label: stepLabel(e), Detail: detail(e, note), Kind: kind})
}

func stepLabel(e *envelope) string {
	if e.perf != "" {
		return e.perf
	}
	if e.rawPerf != "" {
		return protocol.Clip(e.rawPerf, 20)
	}
	return "?"
}

// detail is a step's salient argument: the sender's short name and what
// the message is about (invitation type, informType, code, commitment).
func detail(e *envelope, note string) string {
	var d string
	switch e.perf {
	case pPropose:
		d = e.str("type")
		if d == "" || d == "service-agreement" {
			if id := e.str("proposalId"); id != "" {
				d = id
			}
		}
	case pAccept:
		d = acceptRef(e)
	case pReject:
		if d = e.str("code"); d == "" {
			d = e.str("reason")
		}
	case pCounter:
		d = e.str("proposalId")
	case pInform:
		d = e.info
	case pQuery:
		d = e.str("queryType")
	case pCommit:
		d = e.str("commitmentId")
	case pClose, pWithdraw:
		d = e.str("reason")
	case pEscalate:
		d = e.str("urgency")
	}
	out := shortAgent(e.sender)
	if d != "" {
		if out != "" {
			out += ": "
		}
		out += protocol.Clip(d, 40)
	}
	if note != "" {
		if out != "" {
			out += " "
		}
		out += "(" + note + ")"
	}
	return out
}

// shortAgent returns the last path segment of an agent:// URI.
func shortAgent(id string) string {
	id = strings.TrimPrefix(id, "agent://")
	if i := strings.LastIndexByte(id, '/'); i >= 0 && i < len(id)-1 {
		id = id[i+1:]
	}
	return protocol.Clip(id, 30)
}
