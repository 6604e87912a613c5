//go:build !promclient

package capmetrics

import "net/http"

// Handler serves the metrics that collect returns, in the text format.
func Handler(collect func() []Metric) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ContentType)
		_ = WriteText(w, collect())
	})
}
