package recording

import (
	"context"
	"fmt"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/progress"
)

// Follow says how a followed recording is read (Following).
type Follow struct {
	// Poll is how often the end of the file is looked at again while its
	// recorder has written nothing more (0: capfile.DefaultLivePoll).
	Poll time.Duration
	// Report, when set, is called on the reading goroutine each time
	// reading has caught up with the recorder, before it waits for more,
	// and every ten polls while it reads on without catching up
	// (capfile.LiveOptions.Report).
	Report func()
}

// Following returns rec read as its recorder writes it, as tail -f reads
// a log: a read of it (Read, Records) goes on past the end of the file for
// as long as the recorder holds it open (capfile.BeingWritten), record by
// record as they arrive, and ends at the clean end, at a torn tail once
// the recorder is gone without closing it, or with its context. Nothing is
// read twice. Only a recording of one local capture file can be followed.
//
// While it is followed, readers of rec itself (Records) seek with the
// index the follower has built so far (see capfile.Reader.UseIndex)
// instead of rebuilding one from the whole file each time they open it.
func (rec *Recording) Following(f Follow) (*Recording, error) {
	if len(rec.Parts) != 1 || rec.joined != nil || rec.Parts[0].path == "" {
		return nil, fmt.Errorf("%s: following reads one local capture being written, not %d files or an object", rec.Name, len(rec.Parts))
	}
	p := rec.Parts[0]
	if p.Format == FormatJSONL {
		return nil, fmt.Errorf("%s: following reads a capture, not JSON Lines", p.Name)
	}
	np := filePart(p.path)
	np.Name, np.Format, np.Header, np.Number, np.Previous = p.Name, p.Format, p.Header, p.Number, p.Previous
	np.follow, np.followOf = &f, p
	out := &Recording{Parts: []*Part{np}, Problems: rec.Problems}
	out.finish()
	return out, nil
}

// followed reports whether rec is read as it is written (Following).
func (rec *Recording) followed() bool {
	return len(rec.Parts) == 1 && rec.Parts[0].follow != nil
}

// openLive opens a followed part (Following) with a live reader; each time
// it reports, the part it follows learns its index.
func (p *Part) openLive(ctx context.Context) (*capfile.Reader, error) {
	var cr *capfile.Reader
	report := p.follow.Report
	cr, err := capfile.OpenLive(ctx, p.path, &capfile.LiveOptions{Poll: p.follow.Poll, Report: func() {
		if cr != nil {
			if x, err := cr.FileIndex(); err == nil {
				p.followOf.liveIndex.Store(x)
			}
		}
		if report != nil {
			report()
		}
	}})
	if err != nil {
		return nil, named(p.Name, err)
	}
	if p.Format == "" {
		p.setHeader(cr.Header())
	}
	return cr, nil
}

// openLiveReader is openReader for a followed part.
func openLiveReader(ctx context.Context, p *Part, meter *progress.Meter) (*reader, error) {
	cr, err := p.openLive(ctx)
	if err != nil {
		return nil, err
	}
	r := &reader{part: p, name: p.Name, meter: meter, format: FormatCapture, cap: cr, hdr: cr.Header()}
	if !r.hdr.Start.IsZero() {
		r.start, r.hasStart = r.hdr.Start.UnixNano(), true
	}
	return r, nil
}
