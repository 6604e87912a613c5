package protocol

import "testing"

func TestRecentForgetsOldestFirst(t *testing.T) {
	r := NewRecent[int](2)
	r.Put("a", 1)
	r.Put("b", 2)
	r.Put("a", 10) // an update, not a new key: nothing is pushed out
	if v, ok := r.Get("a"); !ok || v != 10 || r.Len() != 2 {
		t.Fatalf("a = %d, %v; len %d", v, ok, r.Len())
	}
	r.Put("c", 3) // pushes out the oldest key, a
	if _, ok := r.Get("a"); ok {
		t.Error("oldest key kept past the limit")
	}
	for k, want := range map[string]int{"b": 2, "c": 3} {
		if v, ok := r.Get(k); !ok || v != want {
			t.Errorf("%s = %d, %v; want %d", k, v, ok, want)
		}
	}
	if r.Len() != 2 {
		t.Errorf("Len = %d, want 2", r.Len())
	}
	if z := NewRecent[bool](0); z.max != 1 {
		t.Errorf("a zero limit gives %d, want 1", z.max)
	}
}

func TestClip(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdefgh", 3, "abc…"},
		{"héllo", 2, "h…"}, // never cuts inside the two bytes of é
		{"", 0, ""},
	} {
		if got := Clip(tt.in, tt.n); got != tt.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}
