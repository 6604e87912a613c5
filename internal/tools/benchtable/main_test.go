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

func TestRowsTable(t *testing.T) {
	in := `pkg: github.com/aaep-tools/aaepkit/capfile
BenchmarkWrite/default-2   	 100	  3000 ns/op	 250000 events/s
BenchmarkWrite/default-2   	 100	  1000 ns/op	 210000 events/s
BenchmarkWrite/default-2   	 100	  2000 ns/op	 230000 events/s
pkg: e2e
BenchmarkSeek/1024MiB	1	12.5 open+middle-ms
BenchmarkSeek/1024MiB	1	10.5 open+middle-ms
`
	spec := `# comment
## Capture files
capfile write | capfile/Write/default | events/s | events/s | | ≥ 200,000 events/s
write time | capfile/Write/default | ns/op | µs | 0.001 |
## Seek
open and seek | e2e/Seek/1024MiB | open+middle-ms | ms | | < 50 ms
absent | e2e/Nothing | x | s | |
`
	rows, err := readRows(strings.NewReader(spec), "spec")
	if err != nil {
		t.Fatal(err)
	}
	all, err := parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	writeRows(rows, all, &out, &errOut)
	want := `| measurement | median | spread (min – max) | runs | target |
|---|---:|---:|---:|---|
| **Capture files** | | | | |
| capfile write | 230,000 events/s | 210,000 – 250,000 | 3 | ≥ 200,000 events/s |
| write time | 2.00 µs | 1.00 – 3.00 | 3 |  |
| **Seek** | | | | |
| open and seek | 11.5 ms | 10.5 – 12.5 | 2 | < 50 ms |
| absent | missing | | 0 |  |
`
	if out.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", out.String(), want)
	}
	if !strings.Contains(errOut.String(), `no figure for "absent"`) {
		t.Errorf("stderr %q does not name the missing row", errOut.String())
	}
}

func TestRowsErrors(t *testing.T) {
	for _, tc := range []struct{ name, spec, want string }{
		{"too few fields", "a | b | c\n", "spec:1: 3 fields, want 6"},
		{"bad scale", "\na | b | c | d | x | t\n", `spec:2: scale "x"`},
		{"empty metric", "a | b |  | d | | t\n", "must not be empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readRows(strings.NewReader(tc.spec), "spec")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}
