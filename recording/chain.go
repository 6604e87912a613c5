package recording

import (
	"context"

	"github.com/aaep-tools/aaepkit/internal/progress"
)

// chain reads the parts of one recording one after the other, as one
// Stream: each part is opened when the one before it has ended, and closed
// once read.
type chain struct {
	parts []*Part
	first int // the number of the chain's first part among the recording's
	meter *progress.Meter
	ctx   context.Context
	k     int     // the current part
	cur   *reader // the current part's reader, nil before the first
	done  []*reader
	// start is the chain's start on the shared clock (its first part's).
	start    int64
	hasStart bool
}

var _ Stream = (*chain)(nil)

// openFirst opens the chain's first part.
func (c *chain) openFirst(ctx context.Context) error {
	c.ctx = ctx
	r, err := openReader(ctx, c.parts[0], c.meter)
	if err != nil {
		return err
	}
	c.cur, c.done = r, append(c.done, r)
	c.start, c.hasStart = r.start, r.hasStart
	return nil
}

// Next reads the next item of the current part, going on with the next
// part at the end of one; it implements Stream.
func (c *chain) Next() (int64, bool, error) {
	for {
		at, ok, err := c.cur.Next()
		if err != nil || ok {
			if ok && !c.hasStart && c.cur.hasStart {
				c.start, c.hasStart = c.cur.start, true
			}
			return at, ok, err
		}
		if c.k+1 >= len(c.parts) {
			return 0, false, nil
		}
		c.cur.close()
		c.k++
		r, err := openReader(c.ctx, c.parts[c.k], c.meter)
		if err != nil {
			return 0, false, err
		}
		c.cur, c.done = r, append(c.done, r)
	}
}

func (c *chain) close() {
	for _, r := range c.done {
		r.close()
	}
}
