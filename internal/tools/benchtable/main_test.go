package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestTableMedianAndSpread(t *testing.T) {
	in := `goos: linux
pkg: github.com/aaep-tools/aaepkit/capfile
BenchmarkWrite-2   	     100	  3000 ns/op	 250000 events/s	 12 B/op
BenchmarkWrite-2   	     100	  1000 ns/op	 210000 events/s	 12 B/op
BenchmarkWrite-2   	     100	  2000 ns/op	 230000 events/s	 12 B/op
PASS
pkg: github.com/aaep-tools/aaepkit/serve
BenchmarkFanout/subs=10-2 	 1	 5.5 ms/op
ok
`
	var out bytes.Buffer
	if err := run(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"| capfile | Write | ns/op | 2,000 | 1,000 – 3,000 | 3 |",
		"| capfile | Write | events/s | 230,000 | 210,000 – 250,000 | 3 |",
		"| capfile | Write | B/op | 12.0 | 12.0 – 12.0 | 3 |",
		"| serve | Fanout/subs=10 | ms/op | 5.50 | 5.50 – 5.50 | 1 |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
}

func TestMedianEven(t *testing.T) {
	if m := median([]float64{1, 2, 3, 10}); m != 2.5 {
		t.Errorf("median = %v, want 2.5", m)
	}
}
