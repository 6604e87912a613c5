package viewer

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Page sizes: every answer of the page's API is bounded.
const (
	defaultLimit        = 200
	maxLimit            = 2000
	defaultSessionLimit = 200
	maxSessionLimit     = 1000
	// maxIndexSessions bounds the sessions /api/capture lists.
	maxIndexSessions = 100
	// maxScan bounds the records one events page reads while looking for
	// matches, so that a rare filter answers quickly (Next says where to go on).
	maxScan = 200000
)

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func apiError(w http.ResponseWriter, code int, format string, args ...any) {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	writeJSON(w, code, map[string]string{"error": msg})
}

func splitList(q []string) []string {
	var out []string
	for _, v := range q {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

func intQuery(r *http.Request, name string, def int64) (int64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, errors.New(name + ": not an integer: " + strconv.Quote(v))
	}
	return n, nil
}
