package capedit

import (
	"context"
	"fmt"
	"os"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/inputs"
	"github.com/aaep-tools/aaepkit/objstore"
)

// OpenCapture opens name for reading through its index: a capture file, an
// object (s3://BUCKET/KEY, read through ranged GETs once package objinput
// has registered the scheme), or a prefix (s3://BUCKET/PREFIX/), whose
// captures are read as if merged: Merge with JoinSources writes them, in
// time order, to a temporary file that is unlinked once open.
func OpenCapture(ctx context.Context, name string) (*capfile.Reader, error) {
	if !objstore.IsURL(name) {
		return openCapture(name)
	}
	srcs, err := inputs.Expand(ctx, []string{name}, inputs.Options{})
	if err != nil {
		return nil, err
	}
	if len(srcs) == 1 {
		// An object handle holds no file descriptor: the reader's Close
		// is all the closing it needs.
		r, _, err := inputs.OpenCapture(ctx, srcs[0])
		return r, err
	}
	tmp, err := os.CreateTemp("", "aaep-merged-*.aaep")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	path := tmp.Name()
	tmp.Close()
	defer os.Remove(path)
	if _, err := Merge(ctx, inputs.Names(srcs), path, MergeOptions{JoinSources: true}); err != nil {
		return nil, fmt.Errorf("%s: reading its %d captures as one: %w", name, len(srcs), err)
	}
	return capfile.Open(path)
}

// expandURLs replaces each prefix URL among names with the URLs of the
// objects under it, in key order.
func expandURLs(ctx context.Context, names []string) ([]string, error) {
	var out []string
	for _, n := range names {
		if !objstore.IsURL(n) {
			out = append(out, n)
			continue
		}
		srcs, err := inputs.Expand(ctx, []string{n}, inputs.Options{})
		if err != nil {
			return nil, err
		}
		out = append(out, inputs.Names(srcs)...)
	}
	return out, nil
}
