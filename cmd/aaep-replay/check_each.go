package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/input"
	"github.com/aaep-tools/aaepkit/inputs"
	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/objstore"
	"github.com/aaep-tools/aaepkit/protocol"
)

// checkParallel bounds the captures of a prefix checked at once: reading
// them is mostly waiting on the network.
const checkParallel = 4

// isPrefixArg reports whether the check inputs are one object storage
// prefix (s3://BUCKET/PREFIX/), whose captures are checked each on its own.
func isPrefixArg(args []string) bool {
	if len(args) != 1 || !objstore.IsURL(args[0]) {
		return false
	}
	u, err := objstore.Parse(args[0])
	return err == nil && u.IsPrefix()
}

// eachResult is the check of one capture of a prefix.
type eachResult struct {
	Input    string `json:"input"`
	Verdict  string `json:"verdict"`
	Messages int64  `json:"messages"`
	Must     int64  `json:"must"`
	Should   int64  `json:"should"`
	Info     int64  `json:"info"`
	failed   bool
	complete bool
	report   bytes.Buffer
}

// checkEach checks every capture under a prefix on its own, at most
// checkParallel at once, and prints one report: each capture's sessions
// under its name, in key (time) order, then a summary line per capture.
func checkEach(opts *CheckOptions, srcs []inputs.Source) error {
	a := opts.app
	results := make([]*eachResult, len(srcs))
	sem := make(chan struct{}, checkParallel)
	var wg sync.WaitGroup
	for i, src := range srcs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			results[i] = checkOne(opts, src)
		}()
	}
	wg.Wait()
	if err := a.ctx.Err(); err != nil {
		return err
	}
	var failed, incomplete int
	for _, r := range results {
		if r.failed {
			failed++
		}
		if !r.complete {
			incomplete++
		}
	}
	if opts.JSON {
		doc := struct {
			Captures []json.RawMessage `json:"captures"`
			Summary  []*eachResult     `json:"summary"`
		}{Summary: results}
		for _, r := range results {
			doc.Captures = append(doc.Captures, json.RawMessage(bytes.TrimSpace(r.report.Bytes())))
		}
		if err := writeJSON(a.Out, doc); err != nil {
			return cli.WithCode(cli.ExitUsage, err)
		}
	} else {
		var b strings.Builder
		for _, r := range results {
			fmt.Fprintf(&b, "=== %s\n", r.Input)
			b.Write(r.report.Bytes())
			if !strings.HasSuffix(r.report.String(), "\n") {
				b.WriteByte('\n')
			}
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%d captures checked:\n", len(results))
		for _, r := range results {
			fmt.Fprintf(&b, "  %-10s %s: %d messages, %d MUST, %d SHOULD, %d INFO\n", r.Verdict, r.Input, r.Messages, r.Must, r.Should, r.Info)
		}
		if _, err := fmt.Fprint(a.Out, b.String()); err != nil {
			return cli.WithCode(cli.ExitUsage, fmt.Errorf("writing report: %w", err))
		}
	}
	switch {
	case incomplete > 0 && !opts.AllowIncomplete:
		fmt.Fprintf(a.Err, "aaep-replay: %d of %d captures INCOMPLETE (--allow-incomplete judges what was read)\n", incomplete, len(results))
		return cli.Silent(cli.ExitUsage)
	case failed > 0:
		return cli.Silent(cli.ExitFailure)
	}
	return nil
}

// checkOne checks one capture into its own report.
func checkOne(opts *CheckOptions, src inputs.Source) *eachResult {
	a, threshold := opts.app, opts.Threshold
	res := &eachResult{Input: src.Name()}
	rep := protocol.NewReport(src.Name())
	rep.MaxFindings = opts.MaxFindings
	rep.View = protocol.ViewAll
	if opts.Summary {
		rep.View = protocol.ViewSummary
	}
	rep.Stream(&res.report, opts.JSON, threshold)
	eng, err := opts.newEngine(rep.Sink(nil))
	if err != nil {
		rep.Incomplete(err.Error())
	} else {
		sum, rerr := input.ReadSources(a.ctx, []inputs.Source{src}, input.Options{Prepare: eng.Preparation()}, input.Handler{
			Header: func(_ input.Format, h capfile.Header) { eng.Begin(streamInfo(h)) },
			Message: func(m *protocol.Message) error {
				eng.Feed(m)
				return nil
			},
			Conn: eng.Connection,
		})
		eng.Finish()
		rep.Stats = eng.Stats()
		res.Messages = sum.Messages
		for _, reason := range unreadReasons(sum, rerr) {
			rep.Incomplete(reason)
		}
	}
	if werr := rep.Close(); werr != nil {
		rep.Incomplete(werr.Error())
	}
	res.Verdict = rep.Verdict(threshold)
	res.Must, res.Should, res.Info = rep.Count(protocol.Must), rep.Count(protocol.Should), rep.Count(protocol.Info)
	res.failed, res.complete = rep.Failed(threshold), rep.Complete()
	return res
}
