package subtest

import (
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
