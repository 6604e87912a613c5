// Package capmetrics serves a recorder's health in the Prometheus text
// exposition format (version 0.0.4) at /metrics: a list of named values,
// collected afresh at every scrape. The format is written directly (a few
// dozen lines here) rather than through client_golang, which costs the
// recorder memory it is not allowed (docs/fleet.md has the
// figures; build with -tags promclient for the client_golang handler that
// was measured against it).
package capmetrics

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Type is a metric's type.
type Type string

// Metric types.
const (
	Counter Type = "counter"
	Gauge   Type = "gauge"
)

// Metric is one value at the time of a scrape.
type Metric struct {
	Name  string
	Help  string
	Type  Type
	Value float64
	// Labels are constant labels (a build_info's version), in order; none
	// for most.
	Labels []Label
}

// Label is a label's name and value.
type Label struct{ Name, Value string }

// ContentType is the media type of the text format.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// WriteText writes ms in the text exposition format.
func WriteText(w io.Writer, ms []Metric) error {
	bw := bufio.NewWriter(w)
	for _, m := range ms {
		fmt.Fprintf(bw, "# HELP %s %s\n# TYPE %s %s\n%s", m.Name, helpEscaper.Replace(m.Help), m.Name, m.Type, m.Name)
		for i, l := range m.Labels {
			sep := ","
			if i == 0 {
				sep = "{"
			}
			fmt.Fprintf(bw, `%s%s="%s"`, sep, l.Name, labelEscaper.Replace(l.Value))
		}
		if len(m.Labels) > 0 {
			bw.WriteByte('}')
		}
		fmt.Fprintf(bw, " %s\n", formatValue(m.Value))
	}
	return bw.Flush()
}

// The text format's escapes: a help text's backslashes and line feeds, and
// a label value's double quotes too.
var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

func formatValue(v float64) string {
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// Server serves /metrics.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	done chan struct{}
}

// Listen starts serving the metrics that collect returns at
// http://addr/metrics. The address is bound before it returns, so a taken
// or malformed address is an error here.
func Listen(addr string, collect func() []Metric) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", Handler(collect))
	s := &Server{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, ln: ln, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = err // the listener failed; scrapes fail and say so
		}
	}()
	return s, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the server, waiting a moment for a scrape under way.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if err != nil {
		err = s.srv.Close()
	}
	<-s.done
	return err
}
