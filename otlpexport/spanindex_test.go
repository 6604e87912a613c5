package otlpexport

import (
	"testing"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// TestSpanIndex: the span filed last under a message number is found,
// one filed under no number is not, in order or not.
func TestSpanIndex(t *testing.T) {
	a, b, c, d := &tracepb.Span{Name: "a"}, &tracepb.Span{Name: "b"}, &tracepb.Span{Name: "c"}, &tracepb.Span{Name: "d"}
	var x spanIndex
	x.put(3, a)
	x.put(7, b)
	x.put(7, c) // the same message again: the later wins
	x.put(5, d) // out of order
	for _, tc := range []struct {
		index int64
		want  *tracepb.Span
	}{{3, a}, {7, c}, {5, d}, {0, nil}, {4, nil}, {6, nil}, {8, nil}, {-1, nil}} {
		if got := x.get(tc.index); got != tc.want {
			t.Errorf("get(%d) = %v, want %v", tc.index, got.GetName(), tc.want.GetName())
		}
	}
	if got := (spanIndex(nil)).get(1); got != nil {
		t.Errorf("empty index: %v", got)
	}
}
