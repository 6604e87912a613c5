package viewer

import (
	"net/http"

	"github.com/aaep-tools/aaepkit/recording"
)

// readers keeps a few open readers of the capture (its index read once),
// so that a request seeks one instead of opening the file again.
const pooledReaders = 4

// reader returns an open reader of the capture (positioned anywhere).
func (s *Server) reader() (*recording.Reader, error) {
	if s.readers == nil {
		return s.rec.Records(s.ctx)
	}
	select {
	case rd := <-s.readers:
		return rd, nil
	default:
		return s.rec.Records(s.ctx)
	}
}

// release gives a reader back to the pool (or closes it when the pool is full).
func (s *Server) release(rd *recording.Reader) {
	if s.readers == nil {
		rd.Close()
		return
	}
	select {
	case s.readers <- rd:
	default:
		rd.Close()
	}
}

// openAt opens the capture and positions it with seek; on failure it
// answers the request with the error and reports false.
func (s *Server) openAt(w http.ResponseWriter, seek func(*recording.Reader) error) (*recording.Reader, bool) {
	rd, err := s.reader()
	if err != nil {
		apiError(w, http.StatusInternalServerError, "%v", err)
		return nil, false
	}
	if err := seek(rd); err != nil {
		s.release(rd)
		apiError(w, http.StatusInternalServerError, "%s: %v", s.title(), err)
		return nil, false
	}
	return rd, true
}
