package recording

import (
	"context"
	"testing"
)

// readSources reads parts as one stream, as Read does for joined
// recordings of one part each (the reading the tests of the read-ahead
// pipeline exercise).
func readSources(ctx context.Context, parts []*Part, opts ReadOptions, h Handler) (Summary, error) {
	var recs []*Recording
	for _, p := range parts {
		if err := p.peek(ctx); err != nil {
			return Summary{}, err
		}
		recs = append(recs, p.Recording())
	}
	return Join(recs).Read(ctx, opts, h)
}

// expandParts expands names as Open does, without linking parts.
func expandParts(t testing.TB, names ...string) []*Part {
	t.Helper()
	parts, err := expand(context.Background(), names, &Options{})
	if err != nil {
		t.Fatal(err)
	}
	return parts
}
