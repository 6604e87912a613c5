//go:build promclient

package capmetrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Handler serves the metrics that collect returns through client_golang:
// the build that docs/fleet.md's memory comparison measured against the text
// format written directly.
func Handler(collect func() []Metric) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collector(collect))
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}

type collector func() []Metric

func (c collector) Describe(chan<- *prometheus.Desc) {} // unchecked: the set is fixed per run

func (c collector) Collect(ch chan<- prometheus.Metric) {
	for _, m := range c() {
		t := prometheus.GaugeValue
		if m.Type == Counter {
			t = prometheus.CounterValue
		}
		var labels prometheus.Labels
		for _, l := range m.Labels {
			if labels == nil {
				labels = prometheus.Labels{}
			}
			labels[l.Name] = l.Value
		}
		ch <- prometheus.MustNewConstMetric(prometheus.NewDesc(m.Name, m.Help, nil, labels), t, m.Value)
	}
}
