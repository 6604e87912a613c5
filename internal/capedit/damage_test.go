package capedit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/msgfilter"
	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/timing"
)

// op runs one operation from in to out and returns its torn-input warnings.
type op struct {
	name string
	run  func(in, out string) ([]Warning, error)
}

func ops() []op {
	return []op{
		{"export", func(in, out string) ([]Warning, error) {
			var st *ExportStats
			err := WriteFile(out, []string{in}, func(w io.Writer) error {
				var err error
				st, err = Export(ctx, in, w, ExportOptions{WithMeta: true})
				return err
			})
			if st == nil {
				return nil, err
			}
			return st.Warnings, err
		}},
		{"cut", func(in, out string) ([]Warning, error) {
			res, err := Cut(ctx, []string{in}, out, CutOptions{From: timing.Position{Set: true, ByIndex: true, Index: 0}})
			if res == nil {
				return nil, err
			}
			return res.Warnings, err
		}},
		{"filter", func(in, out string) ([]Warning, error) {
			res, err := Filter(ctx, []string{in}, out, FilterOptions{Match: msgfilter.Filter{Types: []string{"aaep:agent.state.changed"}}})
			if res == nil {
				return nil, err
			}
			return res.Warnings, err
		}},
		{"merge", func(in, out string) ([]Warning, error) {
			res, err := Merge(ctx, []string{in}, out, MergeOptions{})
			if res == nil {
				return nil, err
			}
			return res.Warnings, err
		}},
	}
}

func TestTornInput(t *testing.T) {
	dir := t.TempDir()
	src := writeCapture(t, dir, "src.aaep", testHeader(), sampleRecords())
	torn, intact := tornCopy(t, src, "torn.aaep")
	before := fileHash(t, torn)
	for _, o := range ops() {
		t.Run(o.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			ws, err := o.run(torn, out)
			if err != nil {
				t.Fatalf("%s on a torn capture: %v", o.name, err)
			}
			if len(ws) != 1 || ws[0].File != torn || !capfile.IsTorn(ws[0].Err) || ws[0].Records < intact {
				t.Fatalf("warnings = %v, want one torn warning for %s with at least %d records", ws, torn, intact)
			}
			if !strings.Contains(ws[0].String(), "torn.aaep") || !strings.Contains(ws[0].String(), "at byte") {
				t.Errorf("warning text %q lacks the file or offset", ws[0])
			}
			if _, err := os.Stat(out); err != nil {
				t.Errorf("no output: %v", err)
			}
			if o.name == "merge" {
				_, recs := readCapture(t, out)
				if int64(len(recs)) != ws[0].Records {
					t.Errorf("merge of torn input kept %d records, warning says %d intact", len(recs), ws[0].Records)
				}
			}
		})
	}
	if fileHash(t, torn) != before {
		t.Error("an operation modified its torn input")
	}
	t.Run("info", func(t *testing.T) {
		s, err := Info(ctx, torn, InfoOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if s.Status != "torn" || s.Records < intact || !strings.Contains(s.Problem, "torn") {
			t.Errorf("info status %q, problem %q, records %d (intact >= %d)", s.Status, s.Problem, s.Records, intact)
		}
	})
}

func TestCorruptInput(t *testing.T) {
	dir := t.TempDir()
	src := writeCapture(t, dir, "src.aaep", testHeader(), sampleRecords())
	bad, off := corruptCopy(t, src, "bad.aaep")
	before := fileHash(t, bad)
	wantAt := fmt.Sprintf("at byte %d", off)
	for _, o := range ops() {
		t.Run(o.name, func(t *testing.T) {
			outDir := t.TempDir()
			out := filepath.Join(outDir, "out")
			_, err := o.run(bad, out)
			var ce *capfile.CorruptionError
			if err == nil || !errors.As(err, &ce) || capfile.IsTorn(err) {
				t.Fatalf("error = %v, want a corruption error", err)
			}
			wantRec := fmt.Sprintf("record %d", ce.Index)
			if msg := err.Error(); !strings.Contains(msg, bad) || !strings.Contains(msg, wantAt) || !strings.Contains(msg, wantRec) {
				t.Errorf("error %q does not name %s, %q and %q", msg, bad, wantAt, wantRec)
			}
			if ce.Index <= 0 {
				t.Fatalf("damage at record %d: the test wants intact records before it", ce.Index)
			}
			// Every record read before the damage is in the output, which
			// ends on a record (or line) boundary.
			switch o.name {
			case "export":
				data := readFile(t, out)
				if len(data) == 0 || data[len(data)-1] != '\n' {
					t.Fatalf("export does not end with a whole line")
				}
				if lines := int64(bytes.Count(data, []byte("\n"))); lines != ce.Index+1 {
					t.Errorf("export wrote %d lines, want the header and the %d records before the damage", lines, ce.Index)
				}
			case "filter":
				_, got := readCapture(t, out)
				want := 0
				for _, r := range sampleRecords()[:ce.Index] {
					if keep(&r, &FilterOptions{Match: msgfilter.Filter{Types: []string{"aaep:agent.state.changed"}}}, new(payload.Doc)) {
						want++
					}
				}
				if len(got) != want {
					t.Errorf("filter kept %d records, want the %d matching ones before the damage", len(got), want)
				}
			default:
				_, got := readCapture(t, out)
				want := sampleRecords()[:ce.Index]
				if int64(len(got)) != ce.Index {
					t.Fatalf("%s wrote %d records, want the %d before the damage", o.name, len(got), ce.Index)
				}
				for i := range got {
					if !bytes.Equal(got[i].Payload, want[i].Payload) {
						t.Fatalf("record %d differs", i)
					}
				}
			}
			noTemp(t, outDir)
		})
	}
	t.Run("info", func(t *testing.T) {
		s, err := Info(ctx, bad, InfoOptions{})
		if err == nil || !strings.Contains(err.Error(), wantAt) || !strings.Contains(err.Error(), bad) {
			t.Fatalf("error = %v", err)
		}
		if s == nil || s.Status != "damaged" || s.Records == 0 {
			t.Errorf("summary %+v, want damaged with the records before the damage", s)
		}
	})
	if fileHash(t, bad) != before {
		t.Error("an operation modified its corrupt input")
	}
}

func TestNotACapture(t *testing.T) {
	dir := t.TempDir()
	in := writeText(t, dir, "events.jsonl", `{"type": "x"}`+"\n")
	for _, o := range ops() {
		_, err := o.run(in, filepath.Join(dir, "out-"+o.name))
		if err == nil || !errors.Is(err, capfile.ErrNotCapture) || !strings.Contains(err.Error(), in) {
			t.Errorf("%s: error = %v, want ErrNotCapture naming %s", o.name, err, in)
		}
	}
	if _, err := Info(ctx, in, InfoOptions{}); err == nil || !errors.Is(err, capfile.ErrNotCapture) {
		t.Errorf("info: error = %v", err)
	}
	if _, err := Info(ctx, filepath.Join(dir, "missing.aaep"), InfoOptions{}); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("info on a missing file: %v", err)
	}
}

func TestRefuseToOverwriteInput(t *testing.T) {
	dir := t.TempDir()
	src := writeCapture(t, dir, "src.aaep", testHeader(), sampleRecords())
	hard := filepath.Join(dir, "hard.aaep")
	if err := os.Link(src, hard); err != nil {
		t.Fatal(err)
	}
	sym := filepath.Join(dir, "sym.aaep")
	if err := os.Symlink("src.aaep", sym); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "sub", "..", "src.aaep")
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	before := fileHash(t, src)
	for _, o := range ops() {
		for _, out := range []string{src, hard, sym, other} {
			_, err := o.run(src, out)
			if !errors.Is(err, ErrSameFile) {
				t.Errorf("%s to %s: error = %v, want ErrSameFile", o.name, out, err)
			}
		}
	}
	jsonl := writeText(t, dir, "in.jsonl", `{"type": "x"}`+"\n")
	if _, err := Import(ctx, jsonl, jsonl, ImportOptions{}); !errors.Is(err, ErrSameFile) {
		t.Errorf("import onto its input: %v", err)
	}
	if _, err := Merge(ctx, []string{hard, src}, filepath.Join(dir, "fine.aaep"), MergeOptions{}); err != nil {
		t.Errorf("merge to a new file: %v", err)
	}
	if _, err := Merge(ctx, []string{filepath.Join(dir, "fine.aaep"), src}, sym, MergeOptions{}); !errors.Is(err, ErrSameFile) {
		t.Errorf("merge onto its second input: %v", err)
	}
	if fileHash(t, src) != before {
		t.Error("input modified")
	}
	noTemp(t, dir)
}

// TestFailedOutputKeepsOldFile checks that an error leaves an existing
// output untouched, and that a success replaces it.
func TestFailedOutputKeepsOldFile(t *testing.T) {
	dir := t.TempDir()
	src := writeCapture(t, dir, "src.aaep", testHeader(), sampleRecords())
	out := filepath.Join(dir, "out.aaep")
	writeFileBytes(t, out, []byte("old content"))
	if err := os.Chmod(out, 0o600); err != nil {
		t.Fatal(err)
	}
	big := writeCapture(t, dir, "big.aaep", testHeader(), manyRecords(5000))
	cctx, cancel := contextWithCancel()
	cancel()
	if _, err := Cut(cctx, []string{big}, out, CutOptions{}); err == nil {
		t.Fatal("a cancelled cut succeeded")
	}
	if got := readFile(t, out); !bytes.Equal(got, []byte("old content")) {
		t.Errorf("failed cut changed the existing output to %q", got)
	}
	noTemp(t, dir)
	if _, err := Cut(ctx, []string{src}, out, CutOptions{}); err != nil {
		t.Fatal(err)
	}
	readCapture(t, out)
	if st, err := os.Stat(out); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("replaced output mode = %v, %v; want the old 0600 kept", st.Mode(), err)
	}
}

func TestWriteFileAbortsOnError(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.out")
	boom := errors.New("boom")
	err := WriteFile(out, nil, func(w io.Writer) error {
		if _, err := w.Write(bytes.Repeat([]byte("partial "), 1000)); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("error = %v", err)
	}
	if names := dirNames(t, dir); len(names) != 0 {
		t.Errorf("files left after an error: %v", names)
	}
	if err := WriteFile(filepath.Join(dir, "missing", "x"), nil, func(io.Writer) error { return nil }); err == nil {
		t.Error("WriteFile into a missing directory succeeded")
	}
	if err := WriteFile(dir, nil, func(io.Writer) error { return nil }); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("WriteFile onto a directory: %v", err)
	}
}

func TestContextCancelled(t *testing.T) {
	dir := t.TempDir()
	src := writeCapture(t, dir, "src.aaep", testHeader(), manyRecords(5000))
	cctx, cancel := contextWithCancel()
	cancel()
	out := filepath.Join(dir, "out.aaep")
	if _, err := Filter(cctx, []string{src}, out, FilterOptions{MessagesOnly: true}); !errors.Is(err, errCanceled) {
		t.Errorf("error = %v, want context.Canceled", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("output exists after cancel")
	}
}

// manyRecords returns n small received messages, enough for an operation to
// check its context.
func manyRecords(n int) []capfile.Record {
	recs := make([]capfile.Record, n)
	for i := range recs {
		recs[i] = capfile.Record{Kind: capfile.KindReceived, Time: int64(i), Payload: []byte(`{"type":"x"}`)}
	}
	return recs
}
