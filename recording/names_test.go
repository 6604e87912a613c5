package recording

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func touch(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestExpand(t *testing.T) {
	dir := t.TempDir()
	touch(t, dir, "run.aaep", "run-000002.aaep", "run-000001.aaep", "notes.txt", "b.jsonl", ".run.aaep.tmp-1")
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	j := func(names ...string) []string {
		out := make([]string, len(names))
		for i, n := range names {
			out[i] = filepath.Join(dir, n)
		}
		return out
	}
	cases := []struct {
		name    string
		args    []string
		want    []string
		wantErr string
	}{
		{"one file", j("run.aaep"), j("run.aaep"), ""},
		{"glob sorted", j("run-*.aaep"), j("run-000001.aaep", "run-000002.aaep"), ""},
		{"directory", []string{dir}, j("b.jsonl", "run-000001.aaep", "run-000002.aaep", "run.aaep"), ""},
		{"named twice read once", append(j("run.aaep"), j("run*.aaep")...), j("run.aaep", "run-000001.aaep", "run-000002.aaep"), ""},
		{"stdin", []string{"-"}, []string{"-"}, ""},
		{"stdin twice", []string{"-", "-"}, nil, "named twice"},
		{"missing file", j("nope.aaep"), nil, "no such file"},
		{"glob without match", j("x-*.aaep"), nil, "no input matches"},
		{"empty directory", []string{empty}, nil, "holds no .aaep"},
		{"unknown scheme", []string{"gopher://host/x.aaep"}, nil, "no reader for gopher://"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			parts, err := expand(context.Background(), c.args, &Options{Stdin: strings.NewReader("")})
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range parts {
				got = append(got, p.Name)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// seqStream yields fixed times.
type seqStream struct {
	at []int64
	i  int
}

func (s *seqStream) Next() (int64, bool, error) {
	if s.i >= len(s.at) {
		return 0, false, nil
	}
	s.i++
	return s.at[s.i-1], true, nil
}

func TestMergeOrder(t *testing.T) {
	a := &seqStream{at: []int64{1, 5, 5, 9}}
	b := &seqStream{at: []int64{0, 5, 6}}
	c := &seqStream{at: []int64{7, 3, 8}} // steps back: keeps its own order
	m := NewMerge([]Stream{a, b, c})
	type item struct {
		s  int
		at int64
	}
	var got []item
	for {
		s, at, ok, err := m.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		got = append(got, item{s, at})
	}
	want := []item{{1, 0}, {0, 1}, {0, 5}, {0, 5}, {1, 5}, {1, 6}, {2, 7}, {2, 7}, {2, 8}, {0, 9}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("merge order\n got %v\nwant %v", got, want)
	}
}
