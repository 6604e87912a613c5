package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/capedit"
	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/outfile"
	"github.com/aaep-tools/aaepkit/internal/progress"
)

// fileopsError says what an edit's error is: what it is already when that
// is a usage error, a refused output or what could not be read (an
// outfile error, a damaged capture, an empty selection), else an input that
// could not be read (a network error reading an object, an interrupted read).
func fileopsError(err error) error {
	switch k := cli.KindOf(err); {
	case err == nil:
		return nil
	case errors.Is(err, capedit.ErrEmptySelection):
		return cli.Usage(err)
	case k.Code() == cli.ExitUsage:
		return cli.Of(k, err)
	}
	return cli.Input(err)
}

// summaryTo is where an edit says what it wrote: standard output, unless the
// output itself went there ("-o -").
func (a *app) summaryTo(out string) io.Writer {
	if out == "-" {
		return a.Err
	}
	return a.Out
}

// quoteNames names files in messages, separated by spaces.
func quoteNames(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = cli.Quote(n)
	}
	return strings.Join(q, " ")
}

// outName names an output in messages.
func outName(out string) string {
	if out == "-" {
		return "standard output"
	}
	return cli.Quote(out)
}

// addReadingFlags adds --allow-incomplete and --strict, which say how a
// verb that reads captures judges the way a read ended (capfile.ReadPolicy).
func addReadingFlags(f *pflag.FlagSet, p *capfile.ReadPolicy) {
	f.BoolVar(&p.AllowIncomplete, "allow-incomplete", false, "go on with what could be read of a damaged capture, or of one that yields no record, with a warning, instead of exiting 2")
	f.BoolVar(&p.Strict, "strict", false, "a torn tail (a capture its recorder did not close) exits 2 too, after the records before it")
}

// judgeReads prints the warnings of how the reads of a verb ended (the
// torn inputs it worked around, ws, and the damage err that stopped it)
// and returns what fails the verb under p: err unless p allows it, else the
// first torn input p does not let pass (--strict). ok reports that the
// verb's output holds what was read (a summary of it may be printed): err
// is nil, or damage after which the records before it were kept.
func (a *app) judgeReads(p capfile.ReadPolicy, ws []capedit.Warning, err error) (fail error, ok bool) {
	return judgeReadsTo(a.Err, nil, p, ws, err)
}

// judgeReadsTo is judgeReads printing to w through meter (which may be
// nil), so that a progress line is erased first.
func judgeReadsTo(w io.Writer, meter *progress.Meter, p capfile.ReadPolicy, ws []capedit.Warning, err error) (fail error, ok bool) {
	ok = err == nil || outfile.IsPartial(err)
	if err != nil {
		// An error that kept no output (not a partial one) came before any
		// record was written: a torn tail there is a capture of which no
		// record could be read (exit 2 unless --allow-incomplete), not a
		// tail to warn about.
		read := int64(0)
		if ok {
			read = 1
		}
		var warn error
		if err, warn = p.Judge(err, read); warn != nil {
			why := "a torn tail"
			if p.AllowIncomplete {
				why = "--allow-incomplete"
			}
			meter.Printf(w, "aaep-replay: warning: %v (%s: going on with what was read)\n", warn, why)
		}
		fail = err
	}
	for _, x := range ws {
		f, warn := p.Judge(x.Err, x.Records)
		if warn != nil {
			meter.Printf(w, "aaep-replay: warning: %s: %v; used the %d intact records before it\n", x.File, warn, x.Records)
		}
		if f != nil && fail == nil {
			fail = fmt.Errorf("%s: %w", x.File, f)
		}
	}
	return fail, ok
}

// fileopsDone ends an edit: the reads are judged under p (judgeReads);
// when the output holds what was read (success, damage after which what
// was read before it is kept, or what p allows) the summary is printed;
// then what fails the edit is reported (exit 2).
func (a *app) fileopsDone(p capfile.ReadPolicy, ws []capedit.Warning, err error, summary func()) error {
	fail, ok := a.judgeReads(p, ws, err)
	if ok {
		summary()
	}
	return fileopsError(fail)
}

// fileopsCount writes n with the singular or plural words that follow it.
func fileopsCount(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
