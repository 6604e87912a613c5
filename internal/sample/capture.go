package sample

import (
	"fmt"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
)

// WriteCapture writes msgs to a new capture file at path as a subscriber
// recording them would: producer events as received records, subscriber
// replies as sent records, each at its offset, from one WebSocket source.
func WriteCapture(path string, msgs []Msg, start time.Time, tool string) error {
	w, err := capfile.Create(path, capfile.Header{
		Start:   start,
		Tool:    tool,
		Origins: []capfile.Origin{{ID: 0, Transport: "websocket", Endpoint: "ws://127.0.0.1:8765/aaep/v1/ws", Subprotocol: "aaep.v1"}},
	}, nil)
	if err != nil {
		return err
	}
	for i, m := range msgs {
		kind := capfile.KindReceived
		if m.FromSubscriber {
			kind = capfile.KindSent
		}
		// Replies carry no session_id; the generator knows their session.
		rec := capfile.Record{Kind: kind, Time: int64(m.Offset), Session: m.Session, Payload: m.JSON}
		if err := w.Append(&rec); err != nil {
			w.Close()
			return fmt.Errorf("writing message %d: %w", i, err)
		}
	}
	return w.Close()
}
