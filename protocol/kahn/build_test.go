package kahn_test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/aaep-tools/aaepkit/protocol/protocoltest"
)

// Builders for KAHN JSONL streams.

var base = time.Date(2026, 5, 5, 9, 0, 0, 0, time.UTC)

// kv is one member of an ordered JSON object.
type kv struct {
	k string
	v any
}

// obj is a JSON object that keeps its member order.
type obj []kv

func (o obj) MarshalJSON() ([]byte, error) {
	return protocoltest.MarshalObject(len(o), func(i int) (string, any) { return o[i].k, o[i].v })
}

// raw is a JSON value written as is (e.g. 1.0, which json.Marshal would
// write as 1).
type raw string

func (r raw) MarshalJSON() ([]byte, error) { return []byte(r), nil }

// without drops members; with replaces or appends them.
func without(o obj, keys ...string) obj {
	var out obj
	for _, m := range o {
		drop := false
		for _, k := range keys {
			drop = drop || m.k == k
		}
		if !drop {
			out = append(out, m)
		}
	}
	return out
}

func with(o obj, members ...kv) obj {
	out := append(obj(nil), o...)
	for _, m := range members {
		found := false
		for i := range out {
			if out[i].k == m.k {
				out[i].v, found = m.v, true
			}
		}
		if !found {
			out = append(out, m)
		}
	}
	return out
}

func line(o obj) string {
	b, err := json.Marshal(o)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// run builds the events of one run.
type runB struct{ id string }

func (r runB) ev(at time.Duration, event string, fields ...kv) obj {
	return append(obj{{"ts", base.Add(at).Format("2006-01-02T15:04:05.000Z")}, {"run_id", r.id}, {"event", event}}, fields...)
}

func (r runB) start(at time.Duration, agent, task string) obj {
	return r.ev(at, "agent_run_start", kv{"agent_id", agent}, kv{"task", task})
}

func (r runB) trans(at time.Duration, agent string, step int, from, to, reason string) obj {
	o := r.ev(at, "agent_transition", kv{"agent_id", agent}, kv{"step", step}, kv{"from", from}, kv{"to", to})
	if reason != "" {
		o = append(o, kv{"reason", reason})
	}
	return o
}

func (r runB) tool(at time.Duration, agent string, step int, name string, ok bool) obj {
	return r.ev(at, "tool_invocation", kv{"agent_id", agent}, kv{"step", step}, kv{"tool_name", name}, kv{"duration_s", 0.25}, kv{"ok", ok})
}

func (r runB) audit(at time.Duration, agent any, id, result string) obj {
	return r.ev(at, "audit_checkpoint", kv{"agent_id", agent}, kv{"checkpoint_id", id}, kv{"result", result}, kv{"duration_s", 0.8})
}

func (r runB) end(at time.Duration, agent, outcome string, steps, tools, audits, passed, failed int, score any) obj {
	o := r.ev(at, "agent_run_end", kv{"agent_id", agent}, kv{"outcome", outcome}, kv{"total_steps", steps}, kv{"total_tool_calls", tools},
		kv{"total_audit_checkpoints", audits}, kv{"audits_passed", passed}, kv{"audits_failed", failed}, kv{"total_duration_s", at.Seconds()})
	if score != nil {
		o = append(o, kv{"convergence_score", score})
	}
	return o
}

// loop is one thinking → tool_call → tool_result → response → reflect
// cycle at steps n…n+3 using tool, ending at reflect (at base+at+4s).
func (r runB) loop(at time.Duration, agent string, n int, tool string) []obj {
	s := time.Second
	return []obj{
		r.trans(at, agent, n, "thinking", "tool_call", "tool_call:"+tool),
		r.tool(at+s/2, agent, n, tool, true),
		r.trans(at+s, agent, n+1, "tool_call", "tool_result", "tool_result:"+tool),
		r.trans(at+2*s, agent, n+2, "tool_result", "response", ""),
		r.trans(at+3*s, agent, n+3, "response", "reflect", ""),
	}
}

func lines(parts ...any) []string {
	var out []string
	for _, p := range parts {
		switch v := p.(type) {
		case obj:
			out = append(out, line(v))
		case []obj:
			for _, o := range v {
				out = append(out, line(o))
			}
		case string:
			out = append(out, v)
		case []string:
			out = append(out, v...)
		default:
			panic(fmt.Sprintf("lines: %T", p))
		}
	}
	return out
}
