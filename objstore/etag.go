package objstore

import (
	"crypto/md5"
	"encoding/hex"
	"io"
	"strconv"
	"strings"
)

// ETagMatches reports whether etag, an S3 ETag, is the tag of the size
// bytes of r: the MD5 of the content for an object stored in one request,
// or the MD5 of its parts' MD5s followed by -N for one stored in N parts
// (with the part size of this package, 5 MiB, or the 8 and 16 MiB of
// other common clients). An ETag of another form
// (server-side encryption with KMS, another server's scheme) matches
// nothing.
func ETagMatches(etag string, r io.ReaderAt, size int64) bool {
	etag = strings.ToLower(strings.Trim(etag, `"`))
	sum, parts, multi := strings.Cut(etag, "-")
	if !multi {
		got, err := md5Of(r, 0, size)
		return err == nil && hex.EncodeToString(got) == sum
	}
	n, err := strconv.ParseInt(parts, 10, 64)
	if err != nil || n < 1 || n > 10000 {
		return false
	}
	for _, ps := range etagPartSizes {
		if (size+ps-1)/ps != n {
			continue
		}
		h := md5.New()
		for off := int64(0); off < size; off += ps {
			p, err := md5Of(r, off, min(ps, size-off))
			if err != nil {
				return false
			}
			h.Write(p)
		}
		if hex.EncodeToString(h.Sum(nil)) == sum {
			return true
		}
	}
	return false
}

// etagPartSizes are the part sizes ETagMatches tries.
var etagPartSizes = []int64{minPartSize, 8 << 20, 16 << 20}

func md5Of(r io.ReaderAt, off, n int64) ([]byte, error) {
	h := md5.New()
	if _, err := io.Copy(h, io.NewSectionReader(r, off, n)); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}
