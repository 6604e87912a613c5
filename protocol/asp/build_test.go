package asp_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/aaep-tools/aaepkit/protocol/protocoltest"
)

// This file builds ASP streams for the tests: envelopes with a valid hash
// chain, UUIDv7 ids, per-sender sequence numbers and timestamps, and small
// edits that break one rule at a time.

var base = time.Date(2026, 3, 7, 14, 0, 0, 0, time.UTC)

type party struct {
	id, org string
	trust   float64
}

var (
	alpha = party{"agent://acme.com/procurement/alpha", "org_acme", 72.5}
	beta  = party{"agent://widgets.co/sales/beta", "org_widgets", 81}
	gamma = party{"agent://acme.com/legal/gamma", "org_acme", 64}
)

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

func (o obj) get(k string) any {
	for _, m := range o {
		if m.k == k {
			return m.v
		}
	}
	return nil
}

// set replaces or appends member k.
func (o *obj) set(k string, v any) {
	for i := range *o {
		if (*o)[i].k == k {
			(*o)[i].v = v
			return
		}
	}
	*o = append(*o, kv{k, v})
}

func (o *obj) del(k string) {
	for i := range *o {
		if (*o)[i].k == k {
			*o = append((*o)[:i], (*o)[i+1:]...)
			return
		}
	}
}

// edit changes an envelope before it is written.
type edit func(env *obj)

// set edits a member at a dotted path ("content.body.code", "integrity.hash").
func set(path string, v any) edit {
	return func(env *obj) { walk(env, path, func(o *obj, k string) { o.set(k, v) }) }
}

// del removes a member at a dotted path.
func del(path string) edit {
	return func(env *obj) { walk(env, path, func(o *obj, k string) { o.del(k) }) }
}

func walk(o *obj, path string, fn func(*obj, string)) {
	for i := 0; i < len(path); i++ {
		if path[i] == '.' {
			child, ok := o.get(path[:i]).(obj)
			if !ok {
				child = obj{}
			}
			walk(&child, path[i+1:], fn)
			o.set(path[:i], child)
			return
		}
	}
	fn(o, path)
}

// uuid7 makes a deterministic UUIDv7 for time t and counter n.
func uuid7(t time.Time, n uint64) string {
	ms := uint64(t.UnixMilli())
	return fmt.Sprintf("%08x-%04x-7%03x-8%03x-%012x", ms>>16, ms&0xffff, (n>>36)&0xfff, (n>>48)&0xfff, n&0xffffffffffff)
}

func hashOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(h[:])
}

const genesis = "sha256:0000000000000000000000000000000000000000000000000000000000000000"

// conv builds the messages of one session.
type conv struct {
	sid     string
	version string
	n       uint64
	prev    string
	seq     map[string]int
}

var convCount uint64

func newConv() *conv {
	convCount++
	return &conv{sid: uuid7(base, 0xC0000+convCount), version: "asp/0.1", prev: genesis, seq: map[string]int{}}
}

// msg returns one envelope, sent by p at base+at.
func (c *conv) msg(p party, at time.Duration, perf string, body obj, edits ...edit) string {
	c.n++
	ts := base.Add(at)
	tag := fnv.New32a()
	tag.Write([]byte(c.sid))
	id := uuid7(ts, uint64(tag.Sum32()&0xfffff)<<20|c.n)
	seq := c.seq[p.id]
	c.seq[p.id] = seq + 1
	h := hashOf(id)
	env := obj{
		{"version", c.version},
		{"messageId", id},
		{"sessionId", c.sid},
		{"sequenceNumber", seq},
		{"timestamp", ts.Format("2006-01-02T15:04:05.000Z")},
		{"sender", obj{{"agentId", p.id}, {"orgId", p.org}, {"trustScore", p.trust}, {"dpopProof", "eyJhbGciOiJFUzI1NiIsInR5cCI6ImRwb3Arand0In0.e30.sig"}}},
		{"performative", perf},
		{"content", obj{{"mimeType", "application/asp+json"}, {"body", body}}},
		{"integrity", obj{{"hash", h}, {"previousHash", c.prev}, {"signature", "ed25519:" + hex.EncodeToString([]byte(id))[:64]}}},
	}
	for _, e := range edits {
		e(&env)
	}
	if ig, ok := env.get("integrity").(obj); ok {
		if hv, ok := ig.get("hash").(string); ok {
			c.prev = hv
		}
	}
	b, err := json.Marshal(env)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// invite is the session-invitation PROPOSE from p to q.
func (c *conv) invite(p, q party, at time.Duration, edits ...edit) string {
	body := obj{{"proposalId", "inv_" + c.sid[:8]}, {"type", "session-invitation"}, {"subject", "Widget procurement"},
		{"terms", obj{{"schemas", []string{"asp/procurement/v1"}}, {"proposedDuration", 1800000}}},
		{"validUntil", base.Add(at + 30*time.Second).Format("2006-01-02T15:04:05.000Z")}}
	edits = append([]edit{set("recipient", q.id)}, edits...)
	return c.msg(p, at, "PROPOSE", body, edits...)
}

// intro returns the invitation, the ACCEPT and both identities: the session
// is INTRODUCED after them, at base+at+4s.
func (c *conv) intro(p, q party, at time.Duration) []string {
	return []string{
		c.invite(p, q, at),
		c.msg(q, at+1*time.Second, "ACCEPT", obj{{"proposalId", "inv_" + c.sid[:8]}}),
		c.msg(q, at+2*time.Second, "INFORM", obj{{"informType", "identity"}, {"agentCard", "https://widgets.co/.well-known/agent-card.json"}}),
		c.msg(p, at+3*time.Second, "INFORM", obj{{"informType", "identity"}, {"agentCard", "https://acme.com/.well-known/agent-card.json"}}),
	}
}

// conversing returns a stream prefix that leaves the session CONVERSING at base+at+5s.
func (c *conv) conversing(p, q party, at time.Duration) []string {
	return append(c.intro(p, q, at), c.msg(p, at+5*time.Second, "QUERY", obj{{"queryId", "qry_1"}, {"queryType", "pricing"}}))
}

// agreeing leaves the session AGREEING with commitment "cmt_1" by q at base+at+6s.
func (c *conv) agreeing(p, q party, at time.Duration) []string {
	return append(c.conversing(p, q, at), c.msg(q, at+6*time.Second, "COMMIT", commitBody("cmt_1")))
}

// executing leaves the session EXECUTING at base+at+7s.
func (c *conv) executing(p, q party, at time.Duration) []string {
	return append(c.agreeing(p, q, at), c.msg(p, at+7*time.Second, "ACCEPT", obj{{"commitmentId", "cmt_1"}}))
}

func commitBody(id string) obj {
	return obj{{"commitmentId", id}, {"terms", obj{{"obligations", []obj{
		{{"party", beta.id}, {"action", "deliver 4000 widgets"}, {"deadline", "2026-03-20T00:00:00.000Z"}, {"verificationMethod", "delivery-receipt"}},
		{{"party", alpha.id}, {"action", "pay 48000 USD"}, {"deadline", "2026-03-27T00:00:00.000Z"}, {"verificationMethod", "escrow-release"}},
	}}}}, {"deadline", "2026-03-27T00:00:00.000Z"}}
}

func reason(r string) obj { return obj{{"reason", r}} }

// wsFrame wraps an envelope as a WebSocket frame of type typ.
func wsFrame(typ, env string) string {
	return `{"type":"` + typ + `","envelope":` + env + `}`
}

func cat(parts ...any) []string {
	var out []string
	for _, p := range parts {
		switch v := p.(type) {
		case string:
			out = append(out, v)
		case []string:
			out = append(out, v...)
		default:
			panic(fmt.Sprintf("cat: %T", p))
		}
	}
	return out
}
