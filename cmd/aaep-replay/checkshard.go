package main

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"os"
	"strconv"
	"strings"

	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/protocol/report"
	"github.com/aaep-tools/aaepkit/recording"
)

// shard is check --shard I/N: this run judges the recordings whose key
// hashes to I modulo N.
type shard struct {
	I, N uint64
}

// parseShard parses --shard: "I/N" with N at least 1 and I from 0 to N-1,
// both decimal.
func parseShard(s string) (shard, error) {
	is, ns, ok := strings.Cut(s, "/")
	i, ierr := strconv.ParseUint(is, 10, 64)
	n, nerr := strconv.ParseUint(ns, 10, 64)
	switch {
	case !ok || ierr != nil || nerr != nil:
		return shard{}, cli.Usagef("--shard %q: want I/N, two whole numbers (0/4 is the first of 4 shards)", s)
	case n == 0:
		return shard{}, cli.Usagef("--shard %q: N is the number of shards, at least 1", s)
	case i >= n:
		return shard{}, cli.Usagef("--shard %q: I counts from 0 to N-1 (%d/%d is the last of %d shards)", s, n-1, n, n)
	}
	return shard{I: i, N: n}, nil
}

// shardKey is what a recording is sharded by: the name of its first part
// as it was listed (s3://bucket/key, or the path as given), which stays
// the same as a rotated recording grows.
func shardKey(r *recording.Recording) string { return r.Parts[0].Name }

// shardOf is the shard of key among n: FNV-1a (64 bits) of its bytes,
// modulo n.
func shardOf(key string, n uint64) uint64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	return h.Sum64() % n
}

// pick keeps the recordings of this shard, in order.
func (s shard) pick(recs []*recording.Recording) []*recording.Recording {
	var out []*recording.Recording
	for _, r := range recs {
		if shardOf(shardKey(r), s.N) == s.I {
			out = append(out, r)
		} else {
			r.DropFetched()
		}
	}
	return out
}

// mergeReports is check --merge-reports: the JSON reports named are merged
// into one, written to standard output; the exit status is the merged
// verdict's, as check's.
func mergeReports(opts *CheckOptions) error {
	a := opts.app
	docs := make([][]byte, len(opts.Inputs))
	for i, name := range opts.Inputs {
		var err error
		if name == "-" {
			return cli.Usagef("--merge-reports: name the report files (standard input is not one of them)")
		}
		if docs[i], err = os.ReadFile(name); err != nil {
			return cli.Input(fmt.Errorf("--merge-reports: %w", err))
		}
	}
	w := bufio.NewWriterSize(a.Out, 64<<10)
	m, err := report.MergeJSON(w, opts.Inputs, docs)
	if err != nil {
		return cli.Input(fmt.Errorf("--merge-reports: %w", err))
	}
	if err := w.Flush(); err != nil {
		return cli.Output(fmt.Errorf("writing report: %w", err))
	}
	switch {
	case !m.Complete && !opts.AllowIncomplete:
		fmt.Fprintf(a.Err, "aaep-replay: merged report INCOMPLETE (--allow-incomplete judges what was read)\n")
		return cli.Silent(cli.KindIncomplete)
	case m.Failed:
		return cli.Silent(cli.KindFindings)
	}
	return nil
}
