package viewer

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol"
)

// A filter expression selects records, as Wireshark's display filters do:
//
//	type == "tool.invoked" && level >= MUST
//	session == sess_1 || urgency == critical
//	!(direction == recv) && rule ~ SEQ-
//	tool_name == search_flights        (any top-level JSON field)
//	producer.agent_id ~ travel         (a nested one, dotted)
//
// Fields: type (matched on its last part too: "tool.invoked" finds
// "aaep:agent.tool.invoked"), session, source, direction (recv, sent, conn,
// mark), urgency, rule (any rule of the record's findings), level (the worst
// of its findings: none < INFO < SHOULD < MUST), index, and any other name is
// a JSON field of the payload; time is the record's time in seconds since
// the capture's start, as the lists show it. Operators: == != < <= > >= and ~ (contains);
// && || ! and parentheses. Values are bare words or "quoted strings"; a
// field compared to nothing that it has is false (but != is true).
type filterExpr interface {
	eval(r *filterRecord) bool
}

// filterRecord is what an expression looks at.
type filterRecord struct {
	index   int64
	offset  time.Duration
	kind    string
	source  int
	session string
	doc     *payload.Doc
	rules   []string
	worst   protocol.Level
}

type andExpr struct{ l, r filterExpr }
type orExpr struct{ l, r filterExpr }
type notExpr struct{ e filterExpr }
type cmpExpr struct {
	field, op, value string
	num              float64
	isNum            bool
	path             []string
}

func (e andExpr) eval(r *filterRecord) bool { return e.l.eval(r) && e.r.eval(r) }
func (e orExpr) eval(r *filterRecord) bool  { return e.l.eval(r) || e.r.eval(r) }
func (e notExpr) eval(r *filterRecord) bool { return !e.e.eval(r) }

var levelNames = map[string]float64{"NONE": 0, "INFO": 1, "SHOULD": 2, "MUST": 3}

func (e *cmpExpr) eval(r *filterRecord) bool {
	switch e.field {
	case "type":
		t := r.doc.Routing.TypeName()
		if e.op == "==" || e.op == "!=" {
			eq := t == e.value || strings.HasSuffix(t, "."+e.value) || strings.HasSuffix(t, ":"+e.value)
			return eq == (e.op == "==")
		}
		return cmpString(t, e.op, e.value)
	case "session":
		return cmpString(r.session, e.op, e.value)
	case "direction", "dir":
		return cmpString(r.kind, e.op, e.value)
	case "urgency":
		u := r.doc.Routing.Urgency
		if u == "" && r.doc.Routing.Type != "" {
			u = "normal"
		}
		return cmpString(u, e.op, e.value)
	case "source":
		return cmpNumber(float64(r.source), e.op, e.num)
	case "index":
		return cmpNumber(float64(r.index), e.op, e.num)
	case "time":
		return cmpNumber(r.offset.Seconds(), e.op, e.num)
	case "level":
		return cmpNumber(float64(r.worst), e.op, e.num)
	case "rule":
		any := false
		for _, id := range r.rules {
			if cmpString(id, e.op, e.value) {
				any = true
				if e.op != "!=" {
					return true
				}
			} else if e.op == "!=" {
				return false
			}
		}
		return any || e.op == "!=" && len(r.rules) == 0
	}
	v := r.doc.Get(e.path[0])
	for _, p := range e.path[1:] {
		if v == nil {
			break
		}
		v = v.Get(p)
	}
	if v == nil {
		return e.op == "!="
	}
	if s, ok := v.Str(); ok {
		return cmpString(s, e.op, e.value)
	}
	if n, ok := v.Number(); ok && e.isNum {
		return cmpNumber(n, e.op, e.num)
	}
	return cmpString(string(v), e.op, e.value)
}

func cmpString(s, op, v string) bool {
	switch op {
	case "==":
		return s == v
	case "!=":
		return s != v
	case "~":
		return strings.Contains(strings.ToLower(s), strings.ToLower(v))
	case "<":
		return s < v
	case "<=":
		return s <= v
	case ">":
		return s > v
	case ">=":
		return s >= v
	}
	return false
}

func cmpNumber(n float64, op string, v float64) bool {
	switch op {
	case "==":
		return n == v
	case "!=":
		return n != v
	case "<":
		return n < v
	case "<=":
		return n <= v
	case ">":
		return n > v
	case ">=":
		return n >= v
	case "~":
		return n == v
	}
	return false
}

// parseFilter parses a filter expression; "" is nil (everything).
func parseFilterExpr(src string) (filterExpr, error) {
	if strings.TrimSpace(src) == "" {
		return nil, nil
	}
	p := &exprParser{src: src}
	p.lex()
	if p.err != nil {
		return nil, p.err
	}
	e := p.or()
	if p.err == nil && p.pos < len(p.toks) {
		p.fail("unexpected %q", p.toks[p.pos].text)
	}
	if p.err != nil {
		return nil, p.err
	}
	return e, nil
}

type token struct {
	text   string
	quoted bool
	at     int
}

type exprParser struct {
	src  string
	toks []token
	pos  int
	err  error
}

func (p *exprParser) fail(format string, args ...any) {
	if p.err != nil {
		return
	}
	at := len(p.src)
	if p.pos < len(p.toks) {
		at = p.toks[p.pos].at
	}
	p.err = fmt.Errorf("filter: %s at character %d", fmt.Sprintf(format, args...), at+1)
}

func (p *exprParser) lex() {
	s := p.src
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			i++
		case c == '"':
			j := i + 1
			var b strings.Builder
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' && j+1 < len(s) {
					j++
				}
				b.WriteByte(s[j])
				j++
			}
			if j >= len(s) {
				p.pos = len(p.toks)
				p.err = fmt.Errorf("filter: unterminated string at character %d", i+1)
				return
			}
			p.toks = append(p.toks, token{text: b.String(), quoted: true, at: i})
			i = j + 1
		case strings.HasPrefix(s[i:], "&&") || strings.HasPrefix(s[i:], "||") || strings.HasPrefix(s[i:], "==") ||
			strings.HasPrefix(s[i:], "!=") || strings.HasPrefix(s[i:], "<=") || strings.HasPrefix(s[i:], ">="):
			p.toks = append(p.toks, token{text: s[i : i+2], at: i})
			i += 2
		case strings.ContainsRune("()!<>~", rune(c)):
			p.toks = append(p.toks, token{text: s[i : i+1], at: i})
			i++
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\n\"()!<>~=&|", rune(s[j])) {
				j++
			}
			if j == i {
				p.err = fmt.Errorf("filter: unexpected %q at character %d", s[i:i+1], i+1)
				return
			}
			p.toks = append(p.toks, token{text: s[i:j], at: i})
			i = j
		}
	}
}

func (p *exprParser) peek() string {
	if p.pos < len(p.toks) && !p.toks[p.pos].quoted {
		return p.toks[p.pos].text
	}
	return ""
}

func (p *exprParser) or() filterExpr {
	e := p.and()
	for p.err == nil && p.peek() == "||" {
		p.pos++
		e = orExpr{e, p.and()}
	}
	return e
}

func (p *exprParser) and() filterExpr {
	e := p.unary()
	for p.err == nil && p.peek() == "&&" {
		p.pos++
		e = andExpr{e, p.unary()}
	}
	return e
}

func (p *exprParser) unary() filterExpr {
	switch p.peek() {
	case "!":
		p.pos++
		return notExpr{p.unary()}
	case "(":
		p.pos++
		e := p.or()
		if p.peek() != ")" {
			p.fail("missing )")
			return e
		}
		p.pos++
		return e
	}
	return p.cmp()
}

func (p *exprParser) cmp() filterExpr {
	if p.pos >= len(p.toks) {
		p.fail("a comparison is missing")
		return nil
	}
	field := p.toks[p.pos]
	if !field.quoted && strings.ContainsAny(field.text, "()!<>~=&|") {
		p.fail("want a field name, got %q", field.text)
		return nil
	}
	p.pos++
	op := p.peek()
	switch op {
	case "==", "!=", "<", "<=", ">", ">=", "~":
	default:
		p.fail("want an operator (== != < <= > >= ~) after %s", field.text)
		return nil
	}
	p.pos++
	if p.pos >= len(p.toks) {
		p.fail("a value is missing after %s %s", field.text, op)
		return nil
	}
	val := p.toks[p.pos]
	p.pos++
	e := &cmpExpr{field: strings.ToLower(field.text), op: op, value: val.text}
	if field.quoted {
		e.field = field.text
	}
	switch e.field {
	case "type", "session", "direction", "dir", "urgency", "rule":
	case "level":
		n, ok := levelNames[strings.ToUpper(val.text)]
		if !ok {
			p.fail("level: want NONE, INFO, SHOULD or MUST, got %q", val.text)
		}
		e.num, e.isNum = n, true
	case "source", "index", "time":
		n, err := strconv.ParseFloat(val.text, 64)
		if err != nil {
			p.fail("%s: want a number, got %q", e.field, val.text)
		}
		e.num, e.isNum = n, true
	default:
		e.field = field.text
		e.path = strings.Split(field.text, ".")
		if n, err := strconv.ParseFloat(val.text, 64); err == nil && !val.quoted {
			e.num, e.isNum = n, true
		}
	}
	return e
}

// textMatch reports whether raw contains q, ignoring ASCII case: only the
// places where q's first byte (either case) occurs are compared.
func textMatch(raw []byte, q []byte) bool {
	if len(q) == 0 {
		return true
	}
	if bytes.Contains(raw, q) {
		return true
	}
	last := len(raw) - len(q) // the last place q may start
	lo, up := lowerASCII(q[0]), upperASCII(q[0])
	nextLo, nextUp := -1, -1 // the next place of each case at or after i (len: none)
	for i := 0; i <= last; i++ {
		if nextLo < i {
			nextLo = indexFrom(raw, lo, i)
		}
		if nextUp < i {
			nextUp = indexFrom(raw, up, i)
		}
		i = min(nextLo, nextUp)
		if i > last {
			return false
		}
		if foldEq(raw[i:i+len(q)], q) {
			return true
		}
	}
	return false
}

// indexFrom is the index of c in b at or after i, or len(b).
func indexFrom(b []byte, c byte, i int) int {
	if j := bytes.IndexByte(b[i:], c); j >= 0 {
		return i + j
	}
	return len(b)
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func upperASCII(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

// foldEq reports whether a and b (of one length) are equal ignoring ASCII case.
func foldEq(a, b []byte) bool {
	for i := range a {
		if a[i] != b[i] && lowerASCII(a[i]) != lowerASCII(b[i]) {
			return false
		}
	}
	return true
}
