package capturecmd

import (
	"runtime"
	"sync"
	"time"

	"github.com/aaep-tools/aaepkit/internal/capmetrics"
	"github.com/aaep-tools/aaepkit/internal/recorder"
)

// captureMetrics are what --metrics serves: the recorder's totals and,
// for an s3:// output, the uploader's. Its parts are set as the run
// starts them; a scrape before that sees what exists.
type captureMetrics struct {
	start   time.Time
	sources int

	mu     sync.Mutex
	rec    *recorder.Recorder
	remote *remoteOutput
}

func (m *captureMetrics) set(rec *recorder.Recorder, remote *remoteOutput) {
	m.mu.Lock()
	m.rec, m.remote = rec, remote
	m.mu.Unlock()
}

// collect returns the metrics at this moment.
func (m *captureMetrics) collect() []capmetrics.Metric {
	m.mu.Lock()
	rec, remote := m.rec, m.remote
	m.mu.Unlock()
	c := func(name, help string, v float64) capmetrics.Metric {
		return capmetrics.Metric{Name: "aaep_capture_" + name, Help: help, Type: capmetrics.Counter, Value: v}
	}
	g := func(name, help string, v float64) capmetrics.Metric {
		return capmetrics.Metric{Name: "aaep_capture_" + name, Help: help, Type: capmetrics.Gauge, Value: v}
	}
	ms := []capmetrics.Metric{
		g("start_time_seconds", "Unix time the recorder started.", unixSeconds(m.start)),
		{Name: "aaep_capture_build_info", Help: "Always 1; its labels name the recorder's version and the Go release that built it.", Type: capmetrics.Gauge, Value: 1,
			Labels: []capmetrics.Label{{Name: "version", Value: version}, {Name: "goversion", Value: runtime.Version()}}},
		g("sources", "Sources (producer endpoints) this recorder records.", float64(m.sources)),
	}
	if rec != nil {
		st := rec.Stats()
		ms = append(ms,
			g("sources_connected", "Sources connected now (of aaep_capture_sources): connected, and not disconnected, closed or given up since.", float64(st.Connected)),
			c("events_total", "Events received and recorded (handshake messages and filtered events excluded).", float64(st.Events)),
			c("event_bytes_total", "Payload bytes of the events recorded.", float64(st.EventBytes)),
			c("file_bytes_total", "Bytes written to capture files (compressed).", float64(st.FileBytes)),
			c("reconnects_total", "Connections to a source after its first.", float64(st.Reconnects)),
			c("disconnects_total", "Connections to a source that were lost.", float64(st.Disconnects)),
		)
	}
	if remote != nil {
		us := remote.up.Stats()
		oldest := 0.0
		if !us.OldestWaiting.IsZero() {
			oldest = time.Since(us.OldestWaiting).Seconds()
		}
		ms = append(ms,
			c("parts_closed_total", "Parts closed by this run and queued for upload.", float64(us.Added)),
			c("parts_uploaded_total", "Parts stored in the bucket and removed from the spool.", float64(us.Uploaded)),
			c("uploaded_bytes_total", "Bytes of the parts uploaded.", float64(us.Bytes)),
			g("parts_waiting", "Parts in the spool waiting for upload (from earlier runs included).", float64(us.Pending)),
			g("oldest_waiting_part_age_seconds", "How long the oldest part waiting has waited; 0 when none waits.", oldest),
			g("last_upload_time_seconds", "Unix time of the last successful upload; 0 before the first.", unixSeconds(us.LastUpload)),
			c("upload_errors_total", "Failed upload attempts.", float64(us.Errors)),
			c("upload_retries_total", "Upload attempts started again after a failure.", float64(us.Retries)),
			g("spool_bytes", "Bytes of this recorder's capture files in the spool directory (the part being written included; other recorders' parts in a shared spool excluded).", float64(remote.up.Bytes())),
			g("spool_limit_bytes", "The limit of spool_bytes (--spool-max-size); 0: none.", float64(remote.maxSize)),
			g("spool_over_limit", "1 while this recorder's parts break --spool-max-size or --spool-min-free with none that may be dropped (none failed to upload): recording goes on.", b2f(us.OverLimit)),
			c("parts_dropped_total", "Parts deleted unuploaded to keep the spool within --spool-max-size and --spool-min-free.", float64(us.Dropped)),
			c("dropped_bytes_total", "Bytes of the parts dropped.", float64(us.DroppedBytes)),
			g("leftover_parts", "Parts of other destinations found waiting under the spool root at start, with no recorder (--drain-spool uploads them).", float64(remote.leftovers)),
			g("recovered_parts", "Parts of this destination found in the spool at start (an earlier run's), uploaded first.", float64(us.Recovered)),
		)
	}
	return ms
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func unixSeconds(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.UnixNano()) / 1e9
}
