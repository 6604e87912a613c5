package recorder

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/payload"
)

func TestRedact(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		fields         []string
	}{
		{"top level", `{"type":"x","request_text":"my SSN is 123"}`, `{"type":"x","request_text":"[REDACTED]"}`, []string{"request_text"}},
		{"nested and in arrays", `{"a":{"secret":1},"b":[{"secret":[1,{"x":"}"}]},{"secret":null}],"secret" : true}`,
			`{"a":{"secret":"[REDACTED]"},"b":[{"secret":"[REDACTED]"},{"secret":"[REDACTED]"}],"secret" : "[REDACTED]"}`, []string{"secret"}},
		{"value that is an object", `{"args":{"k":"v","n":{"m":[]}},"t":1}`, `{"args":"[REDACTED]","t":1}`, []string{"args"}},
		{"a string value equal to the field name is not a key", `{"a":"secret","b":["secret"]}`, `{"a":"secret","b":["secret"]}`, []string{"secret"}},
		{"escaped key", `{"s\u0065cret":"x","t":"y"}`, `{"s\u0065cret":"[REDACTED]","t":"y"}`, []string{"secret"}},
		{"quotes inside strings", `{"q":"a\"secret\":b","secret":"x\"y"}`, `{"q":"a\"secret\":b","secret":"[REDACTED]"}`, []string{"secret"}},
		{"several fields", `{"a":1,"b":2,"c":3}`, `{"a":"[REDACTED]","b":2,"c":"[REDACTED]"}`, []string{"a", "c"}},
		{"whitespace kept", "{ \"a\" :\n 12 ,\"b\":2}", "{ \"a\" :\n \"[REDACTED]\" ,\"b\":2}", []string{"a"}},
		{"invalid JSON: truncated value", `{"type":"x","token":"abc`, `{"type":"x","token":"[REDACTED]"`, []string{"token"}},
		{"invalid JSON: truncated object", `{"token":{"a":1`, `{"token":"[REDACTED]"`, []string{"token"}},
		{"absent field", `{"a":1}`, `{"a":1}`, []string{"zzz"}},
		{"invalid JSON: damage after a nested field", `{"a":{"secret":"x","b":`, `{"a":{"secret":"[REDACTED]","b":`, []string{"secret"}},
		{"invalid JSON: damage in an array", `{"l":[{"secret":1},{"secret":"ab`, `{"l":[{"secret":"[REDACTED]"},{"secret":"[REDACTED]"`, []string{"secret"}},
		{"invalid JSON: damage after the member", `{"secret":[1,2],"x":}`, `{"secret":"[REDACTED]","x":}`, []string{"secret"}},
		{"byte-order mark", "\xef\xbb\xbf{\"secret\":1}", "\xef\xbb\xbf{\"secret\":\"[REDACTED]\"}", []string{"secret"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRedactor(tc.fields)
			in := []byte(tc.in)
			got, changed := r.apply(in, payload.Decode(in))
			if string(got) != tc.want {
				t.Fatalf("apply(%s) =\n %s\nwant\n %s", tc.in, got, tc.want)
			}
			if changed != (tc.in != tc.want) {
				t.Errorf("changed = %v", changed)
			}
			if json.Valid([]byte(tc.in)) && !json.Valid(got) {
				t.Errorf("valid input became invalid: %s", got)
			}
		})
	}
}

// TestRedactDeep: nesting past maxRedactDepth is not walked; a container
// there that may hold a redacted field is replaced whole, and no value of
// the field survives.
func TestRedactDeep(t *testing.T) {
	for _, depth := range []int{maxRedactDepth - 2, maxRedactDepth + 10, 5000} {
		in := []byte(`{"keep":1,"d":` + strings.Repeat(`[`, depth) + `{"secret":"s3cr3t"}` + strings.Repeat(`]`, depth) + `}`)
		got, changed := newRedactor([]string{"secret"}).apply(in, payload.Decode(in))
		if !changed || !json.Valid(got) || strings.Contains(string(got), "s3cr3t") || !strings.HasPrefix(string(got), `{"keep":1,"d":`) {
			t.Errorf("depth %d: changed %v, got %.80s...", depth, changed, got)
		}
		if shallow := depth < maxRedactDepth; shallow != strings.Contains(string(got), `{"secret":"[REDACTED]"}`) {
			t.Errorf("depth %d: field redacted in place %v, want %v", depth, !shallow, shallow)
		}
	}
}

// FuzzRedact: redaction never panics, keeps valid JSON valid, and no value
// of a redacted field survives in a valid document.
func FuzzRedact(f *testing.F) {
	f.Add([]byte(`{"secret":"s3","a":[{"secret":{"b":"c"}}],"n":1}`))
	f.Add([]byte(`{"a":"\"secret\":","secret":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := newRedactor([]string{"secret"})
		got, _ := r.apply(b, payload.Decode(b))
		if !json.Valid(b) {
			return
		}
		if !json.Valid(got) {
			t.Fatalf("apply(%q) = %q is not valid JSON", b, got)
		}
		var walk func(v any)
		walk = func(v any) {
			switch v := v.(type) {
			case map[string]any:
				for k, x := range v {
					if k == "secret" && x != "[REDACTED]" {
						t.Fatalf("apply(%q) = %q keeps secret = %v", b, got, x)
					}
					walk(x)
				}
			case []any:
				for _, x := range v {
					walk(x)
				}
			}
		}
		var v any
		if err := json.Unmarshal(got, &v); err == nil {
			walk(v)
		}
	})
}
