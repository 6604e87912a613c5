// Package objinput makes objects in object storage inputs of the commands
// that read captures: Register hands s3://BUCKET/KEY and
// s3://BUCKET/PREFIX/ arguments to package inputs, which then reads them
// like local files. An object is read through ranged GETs (objstore.Remote),
// so a capture reader uses its index and reads only the frames it needs; a
// prefix names every capture and JSON Lines object under it, in key order
// (the time order of a rotated recording's parts).
package objinput

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/aaep-tools/aaepkit/inputs"
	"github.com/aaep-tools/aaepkit/objstore"
)

var (
	mu   sync.Mutex
	opts *objstore.Options
)

// Register makes inputs.Expand read s3:// arguments, reaching the server as
// *o says when an argument is resolved (so o may be filled by flags parsed
// later). Calling it again replaces the options.
func Register(o *objstore.Options) {
	mu.Lock()
	opts = o
	mu.Unlock()
	inputs.Register("s3", resolve)
}

func resolve(ctx context.Context, arg string) ([]inputs.Source, error) {
	u, err := objstore.Parse(arg)
	if err != nil {
		return nil, err
	}
	var o objstore.Options
	mu.Lock()
	if opts != nil {
		o = *opts
	}
	mu.Unlock()
	store, err := objstore.Open(ctx, u, o)
	if err != nil {
		return nil, err
	}
	if !u.IsPrefix() {
		return []inputs.Source{&Source{store: store, key: u.Key}}, nil
	}
	list, err := store.List(ctx, u.Key)
	if err != nil {
		return nil, err
	}
	var out []inputs.Source
	for _, obj := range list {
		for _, ext := range inputs.Extensions {
			if strings.HasSuffix(obj.Key, ext) {
				out = append(out, &Source{store: store, key: obj.Key})
				break
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w %s: no %s object under it", inputs.ErrNoMatch, arg, strings.Join(inputs.Extensions, ", "))
	}
	return out, nil
}

// Source is one object as an input.
type Source struct {
	store  objstore.Store
	key    string
	mu     sync.Mutex
	remote *objstore.Remote // the last one opened, for Stats
}

// Name is the object's URL.
func (s *Source) Name() string { return s.store.Describe(s.key) }

// Open starts reading the object: one ranged GET of its head, which also
// gives its size.
func (s *Source) Open(ctx context.Context) (inputs.Handle, error) {
	r, err := objstore.OpenRemote(ctx, s.store, s.key)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.remote = r
	s.mu.Unlock()
	return &handle{Remote: r, sr: io.NewSectionReader(r, 0, r.Size())}, nil
}

// Stats returns what the last Open fetched so far.
func (s *Source) Stats() objstore.RemoteStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.remote == nil {
		return objstore.RemoteStats{}
	}
	return s.remote.Stats()
}

// handle reads the object as a stream (Read) and at any offset (ReadAt,
// Size: inputs.Random), so that capture readers use the index.
type handle struct {
	*objstore.Remote
	sr *io.SectionReader
}

func (h *handle) Read(p []byte) (int, error) { return h.sr.Read(p) }
