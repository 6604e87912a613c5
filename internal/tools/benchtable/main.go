// Command benchtable reads `go test -bench` output (usually with -count N)
// from standard input and prints one Markdown table: for every benchmark and
// every metric it reports, the median of the runs and their spread (min to max).
//
//	go test -run '^$' -bench . -count 5 ./... | go run ./internal/tools/benchtable
//
// With -rows FILE the table has only the rows FILE lists, in its order, with
// its labels, units and targets (see readRows for the format); a row whose
// figure is absent from the input says "missing".
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/aaep-tools/aaepkit/internal/progress"
)

// benchLine matches "BenchmarkName-2   	     100	  12345 ns/op	  1.5 MB/s ...".
var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+(\d+)\s+(.*)$`)

type series struct {
	pkg     string
	name    string
	metrics map[string][]float64
	order   []string
}

func main() {
	rowsFile := flag.String("rows", "", "file listing the rows of the table (default: every benchmark and metric)")
	flag.Parse()
	var err error
	if *rowsFile != "" {
		err = runRows(*rowsFile, os.Stdin, os.Stdout, os.Stderr)
	} else {
		err = run(os.Stdin, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer) error {
	all, err := parse(in)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "| package | benchmark | metric | median | spread (min – max) | runs |")
	fmt.Fprintln(out, "|---|---|---|---:|---:|---:|")
	for _, s := range all {
		for _, unit := range s.order {
			vals := sorted(s.metrics[unit])
			fmt.Fprintf(out, "| %s | %s | %s | %s | %s – %s | %d |\n", s.short(), strings.TrimPrefix(s.name, "Benchmark"), unit,
				format(median(vals)), format(vals[0]), format(vals[len(vals)-1]), len(vals))
		}
	}
	return nil
}

// short is the last element of the package path ("capfile").
func (s *series) short() string { return s.pkg[strings.LastIndex(s.pkg, "/")+1:] }

// key names a series in a rows file: "capfile/Write/default".
func (s *series) key() string { return s.short() + "/" + strings.TrimPrefix(s.name, "Benchmark") }

func sorted(v []float64) []float64 {
	vals := append([]float64(nil), v...)
	sort.Float64s(vals)
	return vals
}

// parse reads benchmark result lines, grouped by package and name, in order
// of first appearance.
func parse(in io.Reader) ([]*series, error) {
	var (
		all  []*series
		byID = map[string]*series{}
		pkg  string
	)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = strings.TrimSpace(p)
			continue
		}
		m := benchLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		id := pkg + " " + m[1]
		s := byID[id]
		if s == nil {
			s = &series{pkg: pkg, name: m[1], metrics: map[string][]float64{}}
			byID[id] = s
			all = append(all, s)
		}
		fields := strings.Fields(m[3])
		for i := 0; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				continue
			}
			unit := fields[i+1]
			if _, ok := s.metrics[unit]; !ok {
				s.order = append(s.order, unit)
			}
			s.metrics[unit] = append(s.metrics[unit], v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return all, nil
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// format prints a figure with three significant digits and thousands separators.
func format(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v >= 1000 || v <= -1000:
		return progress.Count(int64(math.RoundToEven(v)))
	case v >= 100 || v <= -100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10 || v <= -10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case v >= 1 || v <= -1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	default:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
}
