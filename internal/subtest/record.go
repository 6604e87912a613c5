package subtest

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/serve"
)

// Recorder receives a run's exchange as serve records it, and is closed
// when the run ends; Path is where the recording can then be read.
type Recorder interface {
	serve.RecordWriter
	Close() error
	Path() string
}

// fileRecording is the default Recorder: a capture file.
type fileRecording struct {
	*capfile.Writer
	path string
}

func createRecording(path string, h capfile.Header) (*fileRecording, error) {
	w, err := capfile.Create(path, h, &capfile.WriterOptions{HeaderReserve: 16 << 10})
	if err != nil {
		return nil, err
	}
	return &fileRecording{Writer: w, path: path}, nil
}

func (f *fileRecording) Path() string { return f.path }

func (r *runner) openRecord(capture string, hdr capfile.Header, dir string) (Recorder, error) {
	meta := map[string]string{
		capfile.MetaReplayOf: filepath.Base(capture),
		"replay_of_start":    hdr.Start.Format(time.RFC3339Nano),
		"replay_speed":       fmt.Sprint(r.speed()),
		"test_scenario":      r.sc.Name,
		"view":               "subscriber: received = sent by aaep-replay test, sent = sent by the subscriber; source N = Nth subscription, attribute subscription = its id",
	}
	h := capfile.Header{Start: time.Now(), Tool: "aaep-replay-test", Meta: meta,
		Origins: []capfile.Origin{{ID: 0, Transport: "replay", Subprotocol: serve.Subprotocol}}}
	if r.o.Record != nil {
		return r.o.Record(r.sc, capture, h)
	}
	return createRecording(filepath.Join(dir, "run.aaep"), h)
}
