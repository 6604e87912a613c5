package capedit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/aaep-tools/aaepkit/capfile"
)

// Errors of SniffJSONL, matched with errors.Is.
var (
	// ErrIsCapture: the file is already a capture.
	ErrIsCapture = errors.New("already a capture: use it directly, or cut/merge it")
	// ErrDamagedCapture: the file starts like a capture whose first bytes
	// are damaged (capfile.Detect).
	ErrDamagedCapture = errors.New("a capture whose first bytes are damaged, not JSON Lines (aaep-replay repair rebuilds its header)")
	// ErrCompressed: the file is zstd-compressed.
	ErrCompressed = errors.New("a zstd-compressed file, not JSON Lines (decompress it first: zstd -d)")
	// ErrJSONArray: the file is a JSON array (its first line starts one).
	ErrJSONArray = errors.New("a JSON array, not JSON Lines: one message per line is read, so split the array into one event per line (e.g. jq -c '.[]')")
	// ErrGzip: the file is gzip-compressed.
	ErrGzip = errors.New("a gzip-compressed file, not JSON Lines (decompress it first: gunzip)")
	// ErrNotJSONL: no line of the file is JSON.
	ErrNotJSONL = errors.New("not JSON Lines: no line is JSON")
)

// SniffJSONL checks that the file at path can be read as JSON Lines before
// anything is written from it: a capture (ErrIsCapture), another zstd stream
// (ErrCompressed) and a file with lines none of which is JSON (ErrNotJSONL)
// are refused. It reads up to the first line that is a JSON value, usually
// the first one. A file with no lines at all (or only blank ones) passes:
// there is nothing to mistake.
func SniffJSONL(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	head, _ := br.Peek(capfile.SniffLen)
	if len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b {
		return fmt.Errorf("%s: %w", path, ErrGzip)
	}
	switch capfile.Detect(head) {
	case capfile.Capture:
		return fmt.Errorf("%s: %w", path, ErrIsCapture)
	case capfile.DamagedCapture:
		return fmt.Errorf("%s: %w", path, ErrDamagedCapture)
	case capfile.OtherZstd:
		return fmt.Errorf("%s: %w", path, ErrCompressed)
	}
	lr := newLineReader(br, capfile.MaxPayload)
	lines := 0
	for {
		line, err := lr.read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		lines++
		if lines == 1 && line[0] == '[' {
			return fmt.Errorf("%s: %w", path, ErrJSONArray)
		}
		if json.Valid(line) {
			return nil
		}
	}
	if lines > 0 {
		return fmt.Errorf("%s: %w (%d lines read, not one is a JSON value)", path, ErrNotJSONL, lines)
	}
	return nil
}
