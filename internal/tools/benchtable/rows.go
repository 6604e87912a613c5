package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// row is one line of the table a rows file asks for.
type row struct {
	section string // a section heading instead of a figure
	label   string
	key     string // package/Benchmark/sub, as series.key
	metric  string // unit as the benchmark reports it
	unit    string // unit as printed
	scale   float64
	target  string
	line    int
}

// readRows reads a rows file. Blank lines and lines starting with "#" are
// ignored; "## Title" starts a section; every other line has six fields
// separated by "|":
//
//	label | package/Benchmark/sub | metric | shown unit | scale | target
//
// The figure is the metric's value times scale (empty scale: 1), printed
// with the shown unit. The target is free text (may be empty).
func readRows(r io.Reader, name string) ([]row, error) {
	var rows []row
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "# ") || line == "#":
			continue
		case strings.HasPrefix(line, "## "):
			rows = append(rows, row{section: strings.TrimSpace(line[3:]), line: n})
			continue
		}
		f := strings.Split(line, "|")
		if len(f) != 6 {
			return nil, fmt.Errorf("%s:%d: %d fields, want 6: label | package/Benchmark | metric | unit | scale | target", name, n, len(f))
		}
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		rw := row{label: f[0], key: f[1], metric: f[2], unit: f[3], scale: 1, target: f[5], line: n}
		if rw.label == "" || rw.key == "" || rw.metric == "" {
			return nil, fmt.Errorf("%s:%d: label, benchmark and metric must not be empty", name, n)
		}
		if f[4] != "" {
			v, err := strconv.ParseFloat(f[4], 64)
			if err != nil || v == 0 {
				return nil, fmt.Errorf("%s:%d: scale %q: want a non-zero number", name, n, f[4])
			}
			rw.scale = v
		}
		rows = append(rows, rw)
	}
	return rows, sc.Err()
}

func runRows(rowsFile string, in io.Reader, out, errOut io.Writer) error {
	f, err := os.Open(rowsFile)
	if err != nil {
		return err
	}
	defer f.Close()
	rows, err := readRows(f, rowsFile)
	if err != nil {
		return err
	}
	all, err := parse(in)
	if err != nil {
		return err
	}
	writeRows(rows, all, out, errOut)
	return nil
}

// writeRows prints the table of rows from the parsed series; missing
// figures are listed on errOut.
func writeRows(rows []row, all []*series, out, errOut io.Writer) {
	byKey := map[string]*series{}
	for _, s := range all {
		byKey[s.key()] = s
	}
	fmt.Fprintln(out, "| measurement | median | spread (min – max) | runs | target |")
	fmt.Fprintln(out, "|---|---:|---:|---:|---|")
	for _, r := range rows {
		if r.section != "" {
			fmt.Fprintf(out, "| **%s** | | | | |\n", r.section)
			continue
		}
		var vals []float64
		if s := byKey[r.key]; s != nil {
			vals = s.metrics[r.metric]
		}
		if len(vals) == 0 {
			fmt.Fprintf(errOut, "benchtable: no figure for %q (%s %s)\n", r.label, r.key, r.metric)
			fmt.Fprintf(out, "| %s | missing | | 0 | %s |\n", r.label, r.target)
			continue
		}
		v := sorted(vals)
		for i := range v {
			v[i] *= r.scale
		}
		if r.scale < 0 {
			v = sorted(v)
		}
		unit := ""
		if r.unit != "" {
			unit = " " + r.unit
		}
		fmt.Fprintf(out, "| %s | %s%s | %s – %s | %d | %s |\n", r.label, format(median(v)), unit, format(v[0]), format(v[len(v)-1]), len(v), r.target)
	}
}
