package viewer

import (
	"net/http"
	"slices"
	"sync"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/payload"
)

// The filter box checks an expression as it is typed (/api/filter) and
// completes field names (/api/fields): the filter's own fields and the
// top-level JSON fields of the capture's first messages.

// builtinFields are the fields a filter expression knows by name.
var builtinFields = []string{"type", "session", "source", "direction", "urgency", "rule", "level", "index", "time"}

// fieldSample is how many records are read for the payload's field names.
const fieldSample = 2000

type fieldNames struct {
	once  sync.Once
	names []string
}

// serveFilterCheck parses /api/filter?filter=EXPR: {"ok": true}, or
// {"ok": false, "error": "filter: … at character N"}.
func (s *Server) serveFilterCheck(w http.ResponseWriter, r *http.Request) {
	if _, err := parseFilterExpr(r.URL.Query().Get("filter")); err != nil {
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true})
}

// serveFields lists the field names a filter may use: {"builtin": […],
// "payload": […]} (the payload's sorted, from the first messages).
func (s *Server) serveFields(w http.ResponseWriter, r *http.Request) {
	s.fields.once.Do(func() {
		seen := map[string]bool{}
		var doc payload.Doc
		all := &rowList{n: s.index().Records}
		_ = s.eachRecord(all, 0, min(all.n, fieldSample), func(_, _ int64, rec *capfile.Record, _ int) bool {
			if rec.Kind != capfile.KindReceived && rec.Kind != capfile.KindSent {
				return true
			}
			doc.Decode(rec.Payload)
			for _, m := range doc.Members() {
				if n := string(m.Name); !seen[n] && len(seen) < 500 {
					seen[n] = true
				}
			}
			return true
		})
		for n := range seen {
			if !slices.Contains(builtinFields, n) {
				s.fields.names = append(s.fields.names, n)
			}
		}
		slices.Sort(s.fields.names)
	})
	writeJSON(w, http.StatusOK, map[string]any{"builtin": builtinFields, "payload": s.fields.names})
}
