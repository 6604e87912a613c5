package otlpexport

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestKeyed: sets, finds and takes in a random order, past the entries
// searched in order and back, agree with a map's.
func TestKeyed(t *testing.T) {
	for _, keys := range []int{3, keyedList, 4 * keyedList} {
		r := rand.New(rand.NewPCG(1, uint64(keys)))
		var m keyed[int]
		want := map[string]int{}
		for step := range 5000 {
			k := strconv.Itoa(r.IntN(keys))
			switch r.IntN(3) {
			case 0:
				m.set(k, step)
				want[k] = step
			case 1:
				i := m.find([]byte(k))
				w, ok := want[k]
				if (i >= 0) != ok || ok && m.list[i].val != w {
					t.Fatalf("%d keys, step %d: find(%s) = %d, want %d (%v)", keys, step, k, i, w, ok)
				}
				if v, got := m.get([]byte(k)); got != ok || v != w {
					t.Fatalf("%d keys, step %d: get(%s) = %d, %v, want %d, %v", keys, step, k, v, got, w, ok)
				}
			case 2:
				i := m.findString(k)
				w, ok := want[k]
				if (i >= 0) != ok {
					t.Fatalf("%d keys, step %d: findString(%s) = %d, want found %v", keys, step, k, i, ok)
				}
				if ok {
					if v := m.take(i); v != w {
						t.Fatalf("%d keys, step %d: take(%s) = %d, want %d", keys, step, k, v, w)
					}
					delete(want, k)
				}
			}
			if len(m.list) != len(want) {
				t.Fatalf("%d keys, step %d: %d entries, want %d", keys, step, len(m.list), len(want))
			}
		}
		if keys > keyedList && m.at == nil {
			t.Errorf("%d keys: never indexed by a map", keys)
		}
	}
}
