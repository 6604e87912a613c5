package recording

import (
	"context"

	"github.com/aaep-tools/aaepkit/capfile"
)

// ReadIndex reads a capture part's header and the index stored at its end,
// and nothing else (for an object, ranged reads of its head and its tail).
// ok is false, and no record was read, when the part has no intact index
// (a capture that was not closed cleanly, JSON Lines, standard input): the
// caller then reads its records. The handle is closed before it returns.
func (p *Part) ReadIndex(ctx context.Context) (h capfile.Header, x *capfile.Index, ok bool, err error) {
	if p.stdin != nil || p.Format == FormatJSONL {
		return h, nil, false, nil
	}
	hd, err := p.openHandle(ctx)
	if err != nil {
		return h, nil, false, named(p.Name, err)
	}
	defer hd.Close()
	ra, random := hd.(random)
	if !random {
		return h, nil, false, nil
	}
	r, err := p.readerAt(ra)
	if err != nil {
		return h, nil, false, named(p.Name, err)
	}
	defer r.Close()
	if !r.Clean() {
		return r.Header(), nil, false, nil
	}
	x, err = r.FileIndex() // the stored one: r.Clean() says it is intact
	if err != nil {
		return h, nil, false, named(p.Name, err)
	}
	p.size = ra.Size()
	return r.Header(), x, true, nil
}
