package capfile

import (
	"slices"
	"testing"
	"time"
)

func TestHeaderJoin(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		headers  []Header
		start    time.Time
		tool     string
		redacted []string
		version  int
	}{
		{name: "none"},
		{
			name: "earliest start, each tool and field once, in order met",
			headers: []Header{
				{Version: 1, Start: t0.Add(time.Hour), Tool: "aaep-capture/1", Redacted: []string{"a", "b"}},
				{Version: 1, Start: t0, Tool: "aaep-replay/1", Redacted: []string{"b", "c"}},
				{Version: 1, Start: t0.Add(time.Minute), Tool: "aaep-capture/1"},
			},
			start: t0, tool: "aaep-capture/1, aaep-replay/1", redacted: []string{"a", "b", "c"}, version: 1,
		},
		{
			name: "a header without start or tool claims neither",
			headers: []Header{
				{Version: 1},
				{Version: 1, Start: t0.Add(time.Hour), Tool: "aaep-capture/1"},
				{Version: 1},
			},
			start: t0.Add(time.Hour), tool: "aaep-capture/1", version: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var j HeaderJoin
			for _, h := range tt.headers {
				j.Add(h, h.Start)
			}
			if !j.Start.Equal(tt.start) || j.Tool() != tt.tool || !slices.Equal(j.Redacted, tt.redacted) || j.Version != tt.version {
				t.Errorf("got start %v, tool %q, redacted %q, version %d; want %v, %q, %q, %d",
					j.Start, j.Tool(), j.Redacted, j.Version, tt.start, tt.tool, tt.redacted, tt.version)
			}
		})
	}
}
