package subtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/capedit"
	"github.com/aaep-tools/aaepkit/recording"
)

// eventRef is one event of the capture: its record number and event_id.
type eventRef struct {
	Index int64
	ID    string
}

// prepareCapture returns the capture to serve: the scenario's own, or one
// imported from JSON Lines (a built-in's, or a .jsonl file) into dir.
func prepareCapture(ctx context.Context, sc *Scenario, dir string) (string, error) {
	src := sc.Capture
	if sc.jsonl != nil {
		src = filepath.Join(dir, sc.Name+".jsonl")
		if err := os.WriteFile(src, sc.jsonl, 0o600); err != nil {
			return "", err
		}
	} else if isCapture(src) {
		return src, nil
	}
	out := filepath.Join(dir, sc.Name+".aaep")
	if _, err := capedit.Import(ctx, src, out, capedit.ImportOptions{}); err != nil {
		return "", fmt.Errorf("%s: capture %s: %w", sc.File, src, err)
	}
	return out, nil
}

// isCapture reports whether path starts like a capture file.
func isCapture(path string) bool {
	r, err := capfile.Open(path)
	if err != nil {
		return false
	}
	r.Close()
	return true
}

// readEvents lists the events a replay of the capture sends, and says on
// warn what damage the replay will skip (as serve does).
func readEvents(path string, warn io.Writer) ([]eventRef, capfile.Header, error) {
	r, err := capfile.Open(path)
	if err != nil {
		return nil, capfile.Header{}, err
	}
	defer r.Close()
	var out []eventRef
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			d, rerr := r.Resume()
			if rerr != nil && !errors.Is(rerr, io.EOF) {
				return nil, r.Header(), fmt.Errorf("%s: %w", path, err)
			}
			fmt.Fprintf(warn, "aaep-replay: warning: %s: %s\n", path, recording.SkipWarning(err, recording.Gap{Part: path, DroppedRange: d}))
			if rerr != nil {
				break
			}
			continue
		}
		if rec.Kind == capfile.KindReceived {
			out = append(out, eventRef{Index: r.Index(), ID: eventID(rec.Payload)})
		}
	}
	if len(out) == 0 {
		return nil, r.Header(), fmt.Errorf("%s: the capture holds no event to play", path)
	}
	return out, r.Header(), nil
}

// eventID reads a payload's event_id (empty when it has none).
func eventID(p []byte) string {
	var v struct {
		ID string `json:"event_id"`
	}
	_ = json.Unmarshal(p, &v)
	return v.ID
}
