package main

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/objstore"
)

// check of a prefix of small parts (below objstore.WholeBelow, their size
// known from the listing) fetches each in one GET, the whole object, header
// and index from the same bytes: one request per part and each byte once,
// whatever --s3-concurrency, with the same report. Larger parts are read
// as before (the head, then the rest).
func TestS3SmallPartsOneGet(t *testing.T) {
	srv, dir, data, recs, store := fleetBucket(t)
	sizes := map[string]int64{}
	put := func(key string, b []byte) {
		t.Helper()
		store(key, b)
		sizes[key] = int64(len(b))
	}
	for i := 0; i < 6; i++ {
		put(fmt.Sprintf("fleet/host-%d.aaep", i), data)
	}
	put("fleet/rot-1.aaep", rotatedPart(t, dir, "rot-1.aaep", 1, "", recs[:20]))
	put("fleet/rot-2.aaep", rotatedPart(t, dir, "rot-2.aaep", 2, "rot-1.aaep", recs[20:]))
	// Between the head a first read takes (64 KiB) and WholeBelow.
	mid := incompressibleRecords(t, filepath.Join(dir, "mid.aaep"), 150)
	if n := len(mid); n <= 64<<10 || n >= objstore.WholeBelow {
		t.Fatalf("the middle-sized part is %d bytes", n)
	}
	put("fleet/mid.aaep", mid)
	// Past WholeBelow: the head, then the records and index.
	big := incompressibleRecords(t, filepath.Join(dir, "big.aaep"), 700)
	if len(big) < objstore.WholeBelow {
		t.Fatalf("the large part is %d bytes", len(big))
	}
	put("fleet/zbig.aaep", big)

	var reports []string
	for _, conc := range []string{"1", "4"} {
		from := len(srv.Settled())
		code, out, errs := replay(t, "check", "--json", "--s3-concurrency", conc, "s3://caps/fleet/")
		if code != 1 { // the sample breaks MUST rules
			t.Fatalf("--s3-concurrency %s: exit %d: %s", conc, code, errs)
		}
		reports = append(reports, out)
		gets, bytes := map[string]int{}, map[string]int64{}
		var objBytes, readBytes int64
		for _, r := range srv.Settled()[from:] {
			p, _, _ := strings.Cut(r.Path, "?")
			key, ok := strings.CutPrefix(p, "/caps/")
			if !ok || key == "" || r.Method != http.MethodGet {
				continue
			}
			gets[key]++
			bytes[key] += r.Bytes
		}
		small := 0
		for key, size := range sizes {
			if size >= objstore.WholeBelow {
				if gets[key] < 2 {
					t.Errorf("--s3-concurrency %s: %s (%d bytes): %d GETs, want the head and then the rest", conc, key, size, gets[key])
				}
				continue
			}
			small++
			objBytes += size
			readBytes += bytes[key]
			if gets[key] != 1 || bytes[key] != size {
				t.Errorf("--s3-concurrency %s: %s (%d bytes): %d GETs, %d bytes; want 1 GET of the whole object", conc, key, size, gets[key], bytes[key])
			}
		}
		t.Logf("--s3-concurrency %s: %d small parts, %.2f GETs per part, bytes read / object bytes %.2f", conc, small,
			float64(sumInts(gets)-gets["fleet/zbig.aaep"])/float64(small), float64(readBytes)/float64(objBytes))
	}
	if reports[0] != reports[1] {
		t.Errorf("the report depends on --s3-concurrency:\n%s\n----\n%s", reports[0], reports[1])
	}
	if code, _, errs := replay(t, "check", "--s3-concurrency", "0", "s3://caps/fleet/"); code != 2 || !strings.Contains(errs, "--s3-concurrency") {
		t.Errorf("--s3-concurrency 0: exit %d: %s", code, errs)
	}
}

func sumInts(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
