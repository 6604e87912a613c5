package subtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/aaep-tools/aaepkit/protocol/aaep/vocab"
	"github.com/aaep-tools/aaepkit/serve"
)

// This file reads scenario files: YAML checked key by key, every error
// with its line.

// Load reads and validates the scenario file at path; its capture is
// resolved relative to the file and must exist.
func Load(path string) (*Scenario, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	sc, err := Parse(path, b)
	if err != nil {
		return nil, err
	}
	if sc.Capture == "" {
		return nil, &ScenarioError{File: path, Msg: "no capture: name the capture to play (capture: FILE)"}
	}
	if !filepath.IsAbs(sc.Capture) {
		sc.Capture = filepath.Join(filepath.Dir(path), sc.Capture)
	}
	if _, err := os.Stat(sc.Capture); err != nil {
		return nil, &ScenarioError{File: path, Line: sc.captureLine, Msg: fmt.Sprintf("capture: %v", err)}
	}
	return sc, nil
}

// Parse reads a scenario from b (file names it in errors). The capture is
// not opened.
func Parse(file string, b []byte) (*Scenario, error) {
	p := &parser{file: file}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, p.yamlError(err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, &ScenarioError{File: file, Msg: "empty scenario file"}
	}
	sc := &Scenario{File: file, Linger: DefaultLinger}
	root := doc.Content[0]
	if err := p.scenario(root, sc); err != nil {
		return nil, err
	}
	if sc.Name == "" {
		base := filepath.Base(file)
		for _, ext := range []string{".yaml", ".yml"} {
			base = strings.TrimSuffix(base, ext)
		}
		sc.Name = strings.TrimSuffix(base, ".scenario")
	}
	return sc, nil
}

type parser struct{ file string }

func (p *parser) errf(n *yaml.Node, format string, args ...any) error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return &ScenarioError{File: p.file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// yamlError turns the YAML library's error ("yaml: line 3: ...") into a
// ScenarioError with the line.
func (p *parser) yamlError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, tail, ok := strings.Cut(rest, ":"); ok {
			if n, err := strconv.Atoi(num); err == nil {
				return &ScenarioError{File: p.file, Line: n, Msg: "not valid YAML:" + tail}
			}
		}
	}
	return &ScenarioError{File: p.file, Msg: "not valid YAML: " + msg}
}

// fields walks a mapping node, calling fn for each key; unknown keys (fn
// returning errUnknownKey) are errors naming the keys allowed.
func (p *parser) fields(n *yaml.Node, what string, allowed []string, fn func(key string, v *yaml.Node) error) error {
	if n.Kind != yaml.MappingNode {
		return p.errf(n, "%s: want a mapping (key: value), got %s", what, kindName(n))
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if seen[k.Value] {
			return p.errf(k, "%s: %s given twice", what, k.Value)
		}
		seen[k.Value] = true
		known := false
		for _, a := range allowed {
			if a == k.Value {
				known = true
			}
		}
		if !known {
			return p.errf(k, "%s: unknown key %q (known: %s)", what, k.Value, strings.Join(allowed, ", "))
		}
		if err := fn(k.Value, v); err != nil {
			return err
		}
	}
	return nil
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "an alias"
}

func (p *parser) str(n *yaml.Node, what string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", p.errf(n, "%s: want a string, got %s", what, kindName(n))
	}
	return n.Value, nil
}

func (p *parser) dur(n *yaml.Node, what string) (time.Duration, error) {
	s, err := p.str(n, what)
	if err != nil {
		return 0, err
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, p.errf(n, "%s: want a positive duration such as 30s or 500ms, got %q", what, s)
	}
	return d, nil
}

func (p *parser) posInt(n *yaml.Node, what string) (int, error) {
	s, err := p.str(n, what)
	if err != nil {
		return 0, err
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 1 {
		return 0, p.errf(n, "%s: want a whole number from 1, got %q", what, s)
	}
	return v, nil
}

func (p *parser) float(n *yaml.Node, what string, lo, hi float64) (float64, error) {
	s, err := p.str(n, what)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v >= lo && v <= hi) {
		return 0, p.errf(n, "%s: want a number from %g to %g, got %q", what, lo, hi, s)
	}
	return v, nil
}

func (p *parser) boolean(n *yaml.Node, what string) (bool, error) {
	var v bool
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || n.Decode(&v) != nil {
		return false, p.errf(n, "%s: want true or false, got %s", what, kindName(n))
	}
	return v, nil
}

// jsonValue converts a YAML node into JSON (for fields compared with a
// message's members).
func (p *parser) jsonValue(n *yaml.Node, what string) (json.RawMessage, error) {
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, p.errf(n, "%s: %v", what, err)
	}
	b, err := json.Marshal(normalizeYAML(v))
	if err != nil {
		return nil, p.errf(n, "%s: cannot be JSON: %v", what, err)
	}
	return b, nil
}

// normalizeYAML turns the maps YAML decodes into map[string]any.
func normalizeYAML(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = normalizeYAML(x)
		}
		return t
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[fmt.Sprint(k)] = normalizeYAML(x)
		}
		return m
	case []any:
		for i, x := range t {
			t[i] = normalizeYAML(x)
		}
	}
	return v
}

var scenarioKeys = []string{"name", "level", "sections", "description", "user", "decisions", "capture", "speed", "no_delay", "keepalive", "linger", "reject", "honor_max_events_per_second", "faults", "expect"}

func (p *parser) scenario(root *yaml.Node, sc *Scenario) error {
	var levelSet bool
	err := p.fields(root, "scenario", scenarioKeys, func(key string, v *yaml.Node) error {
		var err error
		switch key {
		case "name":
			if sc.Name, err = p.str(v, key); err == nil && !validName(sc.Name) {
				err = p.errf(v, "name: %q: use letters, digits and - only", sc.Name)
			}
		case "level":
			var l int
			if l, err = p.posInt(v, key); err == nil && l > 3 {
				err = p.errf(v, "level: want 1, 2 or 3, got %d", l)
			}
			sc.Level, levelSet = l, true
		case "sections":
			if v.Kind != yaml.SequenceNode {
				return p.errf(v, "sections: want a list of sections such as [\"§6.4\"], got %s", kindName(v))
			}
			for _, s := range v.Content {
				str, err := p.str(s, "sections")
				if err != nil {
					return err
				}
				sc.Sections = append(sc.Sections, str)
			}
		case "description":
			sc.Description, err = p.str(v, key)
		case "user":
			sc.User, err = p.str(v, key)
		case "decisions":
			sc.Decisions, err = p.decisions(v)
		case "capture":
			sc.Capture, err = p.str(v, key)
			sc.captureLine = v.Line
		case "speed":
			sc.Speed, err = p.float(v, key, 0.01, 1000)
		case "no_delay":
			sc.NoDelay, err = p.boolean(v, key)
		case "keepalive":
			sc.Keepalive, err = p.dur(v, key)
			if err == nil && sc.Keepalive < serve.MinKeepalive {
				err = p.errf(v, "keepalive: %s is under the %s serve allows", sc.Keepalive, serve.MinKeepalive)
			}
		case "linger":
			sc.Linger, err = p.dur(v, key)
		case "reject":
			sc.Reject, err = p.str(v, key)
			if err == nil && !knownReason(sc.Reject) {
				err = p.errf(v, "reject: %q is not a subscription.rejected reason code (%s)", sc.Reject, strings.Join(vocab.ReasonCodes(), ", "))
			}
		case "honor_max_events_per_second":
			sc.HonorMaxRate, err = p.posInt(v, key)
		case "faults":
			sc.Faults, err = p.faults(v)
		case "expect":
			sc.Expect, err = p.expectations(v)
		}
		return err
	})
	if err != nil {
		return err
	}
	if !levelSet {
		return p.errf(root, "no level: say which conformance level the scenario tests (level: 1, 2 or 3)")
	}
	if len(sc.Expect) == 0 {
		return p.errf(root, "no expectations: list what the subscriber must do under expect:")
	}
	return nil
}

func knownReason(code string) bool {
	for _, c := range vocab.ReasonCodes() {
		if c == code {
			return true
		}
	}
	return false
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// list reads a sequence node.
func (p *parser) list(n *yaml.Node, what string) ([]*yaml.Node, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, p.errf(n, "%s: want a list, got %s", what, kindName(n))
	}
	return n.Content, nil
}

func (p *parser) decisions(n *yaml.Node) ([]Decision, error) {
	items, err := p.list(n, "decisions")
	if err != nil {
		return nil, err
	}
	var out []Decision
	for _, it := range items {
		d := Decision{Line: it.Line}
		err := p.fields(it, "decision", []string{"action", "token", "decision", "response", "after", "capabilities", "delay"}, func(key string, v *yaml.Node) error {
			var err error
			switch key {
			case "action":
				d.Action, err = p.str(v, "decisions.action")
				if err == nil && d.Action != ActionReply && d.Action != ActionRenegotiate && d.Action != ActionShutdown {
					err = p.errf(v, "decisions.action: want %s, %s or %s, got %q", ActionReply, ActionRenegotiate, ActionShutdown, d.Action)
				}
			case "after":
				d.After, err = p.str(v, "decisions.after")
			case "capabilities":
				d.Capabilities, err = p.jsonValue(v, "decisions.capabilities")
				if err == nil && !bytes.HasPrefix(bytes.TrimSpace(d.Capabilities), []byte("{")) {
					err = p.errf(v, "decisions.capabilities: want a capabilities object (§5.3)")
				}
			case "token":
				d.Token, err = p.str(v, "decisions.token")
			case "decision":
				d.Decision, err = p.str(v, "decisions.decision")
				if err == nil && d.Decision != "accept" && d.Decision != "reject" {
					err = p.errf(v, "decisions.decision: want accept or reject, got %q", d.Decision)
				}
			case "response":
				d.Response, err = p.jsonValue(v, "decisions.response")
			case "delay":
				d.Delay, err = p.dur(v, "decisions.delay")
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		if d.Action == "" {
			d.Action = ActionReply
		}
		switch {
		case d.Action == ActionReply && d.Token == "":
			return nil, p.errf(it, "decision: say which prompt (token: rpl_...)")
		case d.Action != ActionReply && (d.Token != "" || d.Decision != "" || len(d.Response) > 0):
			return nil, p.errf(it, "decision: a %s acts after an event (after: evt_...), on no prompt: no token, decision or response", d.Action)
		case d.Action != ActionReply && d.After == "":
			return nil, p.errf(it, "decision: say after which event the user does it (after: evt_...)")
		case d.Action == ActionRenegotiate && len(d.Capabilities) == 0:
			return nil, p.errf(it, "decision: say what the renegotiation asks for (capabilities: {...})")
		case d.Action != ActionRenegotiate && len(d.Capabilities) > 0:
			return nil, p.errf(it, "decision: capabilities are for a renegotiation (action: renegotiate)")
		}
		out = append(out, d)
	}
	return out, nil
}

var faultKinds = []string{string(FaultCut), string(FaultPause), string(FaultRedeliver), string(FaultSlow)}

func (p *parser) faults(n *yaml.Node) ([]Fault, error) {
	items, err := p.list(n, "faults")
	if err != nil {
		return nil, err
	}
	var out []Fault
	for _, it := range items {
		f := Fault{Line: it.Line}
		err := p.fields(it, "fault", append(faultKinds, "after"), func(key string, v *yaml.Node) error {
			if key != "after" {
				if f.Kind != "" {
					return p.errf(v, "fault: one of %s per item (%s and %s given)", strings.Join(faultKinds, ", "), f.Kind, key)
				}
				f.Kind = FaultKind(key)
			}
			var err error
			switch key {
			case "after":
				f.After, err = p.posInt(v, "after")
			case "cut", "redeliver":
				f.After, err = p.posInt(v, key+" (the event after which to cut)")
			case "pause":
				f.For, err = p.dur(v, key)
			case "slow":
				f.Speed, err = p.float(v, key+" (a speed factor)", 0.01, 1)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		switch {
		case f.Kind == "":
			return nil, p.errf(it, "fault: say which (%s)", strings.Join(faultKinds, ", "))
		case f.After == 0:
			return nil, p.errf(it, "fault %s: say after which event (after: N, counting events from 1)", f.Kind)
		}
		out = append(out, f)
	}
	return out, nil
}

var expectKinds = []string{string(ExpectReply), string(ExpectNoReply), string(ExpectRequest), string(ExpectSends), string(ExpectStaysConnected), string(ExpectResumes), string(ExpectAnnounce)}

func (p *parser) expectations(n *yaml.Node) ([]Expectation, error) {
	items, err := p.list(n, "expect")
	if err != nil {
		return nil, err
	}
	var out []Expectation
	for _, it := range items {
		e := Expectation{Line: it.Line}
		var body *yaml.Node
		var reqSet bool
		err := p.fields(it, "expectation", append(expectKinds, "required"), func(key string, v *yaml.Node) error {
			if key == "required" {
				var err error
				e.Required, err = p.boolean(v, key)
				reqSet = true
				return err
			}
			if e.Kind != "" {
				return p.errf(v, "expectation: one of %s per item (%s and %s given)", strings.Join(expectKinds, ", "), e.Kind, key)
			}
			e.Kind, body = ExpectKind(key), v
			return nil
		})
		if err != nil {
			return nil, err
		}
		if e.Kind == "" {
			return nil, p.errf(it, "expectation: say which (%s)", strings.Join(expectKinds, ", "))
		}
		if !reqSet {
			e.Required = defaultRequired[e.Kind]
		}
		if err := p.expectBody(&e, body); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// expectBody reads the mapping after an expectation's kind.
func (p *parser) expectBody(e *Expectation, v *yaml.Node) error {
	what := string(e.Kind)
	if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
		v = &yaml.Node{Kind: yaml.MappingNode, Line: v.Line}
	}
	if e.Kind == ExpectAnnounce {
		return p.announceBody(e, v)
	}
	var keys []string
	switch e.Kind {
	case ExpectReply:
		keys = []string{"token", "decision", "response", "within", "once"}
	case ExpectNoReply:
		keys = []string{"token"}
	case ExpectRequest:
		keys = []string{"capabilities", "transport"}
	case ExpectSends:
		keys = []string{"type", "fields"}
	case ExpectStaysConnected:
		keys = nil
	case ExpectResumes:
		keys = []string{"within"}
	}
	err := p.fields(v, what, keys, func(key string, n *yaml.Node) error {
		var err error
		switch key {
		case "token":
			e.Token, err = p.str(n, what+".token")
			if err == nil && !strings.HasPrefix(e.Token, "rpl_") {
				err = p.errf(n, "%s.token: a reply_token starts with rpl_ (§6.2.1), got %q", what, e.Token)
			}
		case "decision":
			e.Decision, err = p.str(n, what+".decision")
			if err == nil && e.Decision != "accept" && e.Decision != "reject" {
				err = p.errf(n, "%s.decision: want accept or reject, got %q", what, e.Decision)
			}
		case "response":
			e.Response, err = p.jsonValue(n, what+".response")
		case "within":
			e.Within, err = p.dur(n, what+".within")
		case "once":
			e.Once, err = p.boolean(n, what+".once")
		case "type":
			e.Type, err = p.str(n, what+".type")
		case "capabilities":
			if n.Kind != yaml.MappingNode {
				return p.errf(n, "request.capabilities: want a mapping of capabilities, got %s", kindName(n))
			}
			raw, err := p.jsonValue(n, "request.capabilities")
			if err != nil {
				return err
			}
			e.setFieldRaw("capabilities", raw)
		case "transport":
			var t string
			if t, err = p.str(n, "request.transport"); err == nil && t != "sse" && t != "websocket" && t != TransportGRPC {
				err = p.errf(n, "request.transport: want sse, websocket or grpc, got %q", t)
			}
			e.Transport = t
		case "fields":
			if n.Kind != yaml.MappingNode {
				return p.errf(n, "sends.fields: want a mapping of members, got %s", kindName(n))
			}
			for i := 0; i+1 < len(n.Content); i += 2 {
				raw, err := p.jsonValue(n.Content[i+1], "sends.fields."+n.Content[i].Value)
				if err != nil {
					return err
				}
				e.setFieldRaw(n.Content[i].Value, raw)
			}
		}
		return err
	})
	if err != nil {
		return err
	}
	switch e.Kind {
	case ExpectReply:
		if e.Token == "" {
			return p.errf(v, "reply: say which reply_token (token: rpl_...)")
		}
		if e.Decision != "" && len(e.Response) > 0 {
			return p.errf(v, "reply: a decision (confirmation) or a response (clarification), not both")
		}
		if e.Within == 0 {
			e.Within = DefaultWithin
		}
	case ExpectRequest:
		e.Type = "subscription.request"
	case ExpectSends:
		if e.Type == "" {
			return p.errf(v, "sends: say which message type (type: subscription.renegotiate, ...)")
		}
	case ExpectResumes:
		if e.Within == 0 {
			e.Within = DefaultWithin
		}
	}
	return nil
}

func (e *Expectation) setFieldRaw(k string, raw json.RawMessage) {
	if e.Fields == nil {
		e.Fields = map[string]json.RawMessage{}
	}
	e.Fields[k] = raw
}
