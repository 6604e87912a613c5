package payload

import (
	"math"
	"testing"
)

// TestValueReaders: each reader on values of every kind, with the one
// integer semantics (whole numbers however written) and the token reading
// beside it.
func TestValueReaders(t *testing.T) {
	type want struct {
		kind     Kind
		str      string
		strOK    bool
		num      float64
		numOK    bool
		integer  int64
		intOK    bool
		token    int64
		tokenOK  bool
		boolean  bool
		booleanO bool
	}
	for in, w := range map[string]want{
		``:                      {kind: Absent},
		`null`:                  {kind: Null},
		`"abc"`:                 {kind: String, str: "abc", strOK: true},
		`"a\"b\\c\/\n\t\u00e9"`: {kind: String, str: "a\"b\\c/\n\té", strOK: true},
		`"\ud83d\ude00"`:        {kind: String, str: "😀", strOK: true},
		`"\ud83dx"`:             {kind: String, str: "\uFFFDx", strOK: true},
		`"\ude00\ud83d"`:        {kind: String, str: "\uFFFD\uFFFD", strOK: true},
		"\"caf\xe9\"":           {kind: String, str: "caf\xe9", strOK: true},
		`3`:                     {kind: Number, num: 3, numOK: true, integer: 3, intOK: true, token: 3, tokenOK: true},
		`-0`:                    {kind: Number, num: 0, numOK: true, integer: 0, intOK: true, token: 0, tokenOK: true},
		`3.0`:                   {kind: Number, num: 3, numOK: true, integer: 3, intOK: true},
		`3e2`:                   {kind: Number, num: 300, numOK: true, integer: 300, intOK: true},
		`3.5`:                   {kind: Number, num: 3.5, numOK: true},
		`9223372036854775807`:   {kind: Number, num: 9223372036854775807, numOK: true, integer: math.MaxInt64, intOK: true, token: math.MaxInt64, tokenOK: true},
		`-9223372036854775808`:  {kind: Number, num: -9223372036854775808, numOK: true, integer: math.MinInt64, intOK: true, token: math.MinInt64, tokenOK: true},
		`9223372036854775808`:   {kind: Number, num: 9223372036854775808, numOK: true},
		`1e400`:                 {kind: Number, num: math.Inf(1), numOK: true},
		`true`:                  {kind: Bool, boolean: true, booleanO: true},
		`false`:                 {kind: Bool, booleanO: true},
		`{"a":1}`:               {kind: Object},
		`[1]`:                   {kind: Array},
	} {
		v := Value(in)
		s, sok := v.Str()
		f, fok := v.Number()
		i, iok := v.Int()
		k, kok := v.IntToken()
		b, bok := v.Bool()
		got := want{v.Kind(), s, sok, f, fok, i, iok, k, kok, b, bok}
		if got != w {
			t.Errorf("%s: %+v, want %+v", in, got, w)
		}
		if v.IsNull() != (w.kind == Null) {
			t.Errorf("%s: IsNull %v", in, v.IsNull())
		}
	}
}

// TestValueContainers: members and elements in order, Get's last-wins, an
// escaped name, and false for the wrong kind.
func TestValueContainers(t *testing.T) {
	v := Value(`{"a": 1, "b\u0021" :[true, {"c":"d"}, []], "a":"two"}`)
	var names []string
	v.Members(func(name []byte, _ Value) bool { names = append(names, string(name)); return true })
	if len(names) != 3 || names[1] != "b!" {
		t.Errorf("members %q", names)
	}
	if s, _ := v.Get("a").Str(); s != "two" {
		t.Errorf("Get(a) = %q, want the last", s)
	}
	var elems []string
	if !v.Get("b!").Elements(func(i int, e Value) bool { elems = append(elems, string(e)); return true }) {
		t.Errorf("Elements of an array reported false")
	}
	if len(elems) != 3 || elems[1] != `{"c":"d"}` || elems[2] != `[]` {
		t.Errorf("elements %q", elems)
	}
	if c, _ := Value(elems[1]).Get("c").Str(); c != "d" {
		t.Errorf("nested Get = %q", c)
	}
	if m, ok := v.Object(); !ok || len(m) != 2 || string(m["a"]) != `"two"` {
		t.Errorf("Object = %v %v", m, ok)
	}
	if Value(`[1]`).Members(func([]byte, Value) bool { return true }) || Value(`{}`).Elements(func(int, Value) bool { return true }) {
		t.Errorf("a container of the wrong kind iterated")
	}
	if _, ok := Value(`[1]`).Object(); ok || Value(`"x"`).Get("a") != nil {
		t.Errorf("Object or Get of a non-object")
	}
	n := 0
	Value(`[1,2,3]`).Elements(func(int, Value) bool { n++; return n < 2 })
	if n != 2 {
		t.Errorf("Elements went on after false: %d calls", n)
	}
}
