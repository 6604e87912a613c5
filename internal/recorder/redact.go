package recorder

import (
	"bytes"
	"encoding/json"
	"unsafe"

	"github.com/aaep-tools/aaepkit/payload"
)

// RedactedValue replaces the value of a redacted field.
const RedactedValue = `"[REDACTED]"`

// redactor replaces the values of named JSON fields, at any depth: in the
// top-level object, in nested objects and in objects inside arrays. Only the
// value's bytes change; the key, the whitespace and everything else stay as
// received. A redacted value becomes the string "[REDACTED]" whatever its
// type (an object or array value is replaced whole).
//
// The members are found by the JSON front end (package payload), so a
// field is what the checker and the filters take for one. A message that is
// not valid JSON is redacted on a best-effort basis: the members before the
// damage are redacted as usual, a member "field": whose value holds the
// damage has the rest of the message replaced, and damage inside a
// container is followed into it.
//
// Objects and arrays nested deeper than maxRedactDepth are not walked: one
// that may hold a redacted field is replaced whole, so that hostile nesting
// neither costs time quadratic in its depth nor hides a value.
type redactor struct {
	fields map[string]bool
	quoted [][]byte // `"field"`, for the quick check
	short  bool     // a field name has a character JSON may escape briefly
	out    []byte
	spans  []span
}

// span is a byte range of the payload whose value is replaced.
type span struct{ from, to int }

// maxRedactDepth bounds the nesting the redactor walks (AAEP allows a
// payload depth of 8, §3.7).
const maxRedactDepth = 64

func newRedactor(fields []string) *redactor {
	if len(fields) == 0 {
		return nil
	}
	r := &redactor{fields: map[string]bool{}}
	for _, f := range fields {
		r.fields[f] = true
		q, _ := json.Marshal(f)
		r.quoted = append(r.quoted, q)
		if bytes.ContainsAny([]byte(f), "\"\\/\b\f\n\r\t") {
			r.short = true
		}
	}
	return r
}

// apply returns b with the redacted fields' values replaced. d holds b
// decoded with its members (it is decoded again when it holds something
// else). The result is b itself when nothing changed, else a buffer valid
// until the next call.
func (r *redactor) apply(b []byte, d *payload.Doc) ([]byte, bool) {
	if !r.mayContain(b) {
		return b, false
	}
	if raw := d.Raw(); len(raw) != len(b) || unsafe.SliceData(raw) != unsafe.SliceData(b) || d.Decoded()&payload.NeedMembers == 0 {
		d.DecodeOnly(b, payload.NeedMembers)
	}
	r.spans = r.spans[:0]
	if d.Valid() {
		for _, m := range d.Members() {
			r.member(b, m.Name, m.Value, 1)
		}
	} else if start := d.Start(); start < len(b) {
		r.damaged(b, start, 0)
	}
	if len(r.spans) == 0 {
		return b, false
	}
	out := r.out[:0]
	last := 0
	for _, s := range r.spans {
		out = append(out, b[last:s.from]...)
		out = append(out, RedactedValue...)
		last = s.to
	}
	out = append(out, b[last:]...)
	r.out = out
	return out, true
}

// mayContain is the quick check: a field name appears quoted, or an escape
// could hide one.
func (r *redactor) mayContain(b []byte) bool {
	for _, q := range r.quoted {
		if bytes.Contains(b, q) {
			return true
		}
	}
	return bytes.Contains(b, []byte(`\u`)) || r.short && bytes.IndexByte(b, '\\') >= 0
}

// member redacts member name: val of b (val is a slice of b), or the
// fields inside val.
func (r *redactor) member(b, name []byte, val payload.Value, depth int) {
	if r.fields[string(name)] {
		r.replace(b, val)
		return
	}
	r.value(b, val, depth)
}

// value redacts the fields inside val, a valid value at depth.
func (r *redactor) value(b []byte, val payload.Value, depth int) {
	k := val.Kind()
	if k != payload.Object && k != payload.Array || !r.mayContain(val) {
		return
	}
	if depth >= maxRedactDepth {
		r.replace(b, val)
		return
	}
	if k == payload.Object {
		val.Members(func(name []byte, v payload.Value) bool {
			r.member(b, name, v, depth+1)
			return true
		})
		return
	}
	val.Elements(func(_ int, v payload.Value) bool {
		r.value(b, v, depth+1)
		return true
	})
}

// replace notes that val, a slice of b, is replaced.
func (r *redactor) replace(b []byte, val payload.Value) {
	from := offset(b, val)
	r.spans = append(r.spans, span{from, from + len(val)})
}

// offset is where v, a slice of b (the front end's values alias the
// payload), starts in b.
func offset(b []byte, v payload.Value) int {
	return int(uintptr(unsafe.Pointer(unsafe.SliceData(v))) - uintptr(unsafe.Pointer(unsafe.SliceData(b))))
}

// damaged redacts the container that starts at b[i] and holds damage (it
// runs to the end of b): its complete members or elements as usual, then
// the one the damage is in.
func (r *redactor) damaged(b []byte, i, depth int) {
	c := payload.Value(b[i:])
	end := i + 1 // after the last complete member or element
	switch {
	case depth >= maxRedactDepth:
		if r.mayContain(b[i:]) {
			r.spans = append(r.spans, span{i, len(b)})
		}
		return
	case b[i] == '{':
		c.Members(func(name []byte, v payload.Value) bool {
			r.member(b, name, v, depth+1)
			end = offset(b, v) + len(v)
			return true
		})
		// The member after the last complete one: "name" : value...
		j := skipSep(b, end)
		name, after, ok := memberName(b, j)
		if !ok {
			return
		}
		v := skipWS(b, after)
		if v >= len(b) || b[v] != ':' {
			return
		}
		v = skipWS(b, v+1)
		if r.fields[name] {
			r.spans = append(r.spans, span{v, len(b)})
			return
		}
		if v < len(b) && (b[v] == '{' || b[v] == '[') {
			r.damaged(b, v, depth+1)
		}
	case b[i] == '[':
		c.Elements(func(_ int, v payload.Value) bool {
			r.value(b, v, depth+1)
			end = offset(b, v) + len(v)
			return true
		})
		if v := skipSep(b, end); v < len(b) && (b[v] == '{' || b[v] == '[') {
			r.damaged(b, v, depth+1)
		}
	}
}

// memberName reads the member name that starts at b[i] with the front end:
// it returns the name, unescaped, and the index after its closing quote.
func memberName(b []byte, i int) (string, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return "", 0, false
	}
	// The name is a JSON text followed by more: the front end stops right
	// after it (and any white space), which is where the name ends.
	d := payload.Decode(b[i:])
	e := d.Err()
	if d.Kind() != payload.String || e == nil {
		return "", 0, false
	}
	raw := bytes.TrimRight(b[i:i+e.Offset], " \t\r\n")
	if !payload.Decode(raw).Valid() {
		return "", 0, false // the name itself is damaged
	}
	s, _ := payload.Value(raw).Str()
	return s, i + len(raw), true
}

// skipSep skips white space and one comma after it, and white space again.
func skipSep(b []byte, i int) int {
	i = skipWS(b, i)
	if i < len(b) && b[i] == ',' {
		i = skipWS(b, i+1)
	}
	return i
}

// skipWS skips JSON white space.
func skipWS(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}
