// Package recordingtest writes recordings for tests: the parts of a
// rotated recording as the recorder's rotation writes them.
package recordingtest

import (
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/recording"
)

// WriteRotated writes recs as the recorder's rotation does, into dir as
// stem-000001.aaep, stem-000002.aaep, ...: part k (from 1) holds
// recs[cuts[k-2]:cuts[k-1]] (cuts are the indexes where a new part
// starts), starts at its first record's time (the first part at start) and
// names its number and the part before it in its header (recording.MetaPart,
// recording.MetaPrevious). Its one source is an SSE endpoint of stem. It
// returns the parts' paths, in order.
func WriteRotated(t testing.TB, dir, stem string, start time.Time, recs []capfile.Record, cuts []int) []string {
	t.Helper()
	bounds := append(append([]int{0}, cuts...), len(recs))
	var paths []string
	for k := 0; k+1 < len(bounds); k++ {
		part := recs[bounds[k]:bounds[k+1]]
		var shift int64
		if k > 0 && len(part) > 0 {
			shift = part[0].Time
		}
		meta := map[string]string{recording.MetaPart: strconv.Itoa(k + 1)}
		if k > 0 {
			meta[recording.MetaPrevious] = filepath.Base(paths[k-1])
		}
		p := filepath.Join(dir, fmt.Sprintf("%s-%06d.aaep", stem, k+1))
		w, err := capfile.Create(p, capfile.Header{Start: start.Add(time.Duration(shift)), Tool: "aaep-capture/test",
			Origins: []capfile.Origin{{ID: 0, Transport: "sse", Endpoint: "http://" + stem + "/events"}}, Meta: meta}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range part {
			r.Time -= shift
			if err := w.Append(&r); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}
