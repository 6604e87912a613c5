package serve

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/timing"
)

func TestSSEStream(t *testing.T) {
	recs := standardRecords()
	path := writeCapture(t, recs)
	srv, ts := startServer(t, Options{CloseAtEnd: true, Open: OpenFile(path), Timing: timing.Config{NoDelay: true}})
	for _, p := range []string{"/events", "/aaep/v1/events"} {
		t.Run(p, func(t *testing.T) {
			resp := getSSE(t, ts.URL+p, nil)
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("status %d content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			events := readSSE(t, resp.Body)
			want := received(recs)
			var got [][]byte
			for _, e := range events {
				if e.event != "aaep.event" {
					t.Errorf("event name %q", e.event)
				}
				var v struct {
					EventID string `json:"event_id"`
				}
				if err := json.Unmarshal(e.data, &v); err != nil {
					t.Fatalf("data %q: %v", e.data, err)
				}
				if e.id != v.EventID {
					t.Errorf("id %q, event_id %q", e.id, v.EventID)
				}
				got = append(got, e.data)
			}
			// Multi-line payloads come back joined with "\n": byte-exact here
			// because the capture uses "\n" only.
			sameFrames(t, got, want)
		})
	}
	waitIdle(t, srv)
	if st := srv.Stats(); st.Closes[CauseFinished] != 2 || st.Total != 2 {
		t.Fatalf("stats closes %v total %d", st.Closes, st.Total)
	}
}

func TestSSEMultiLineData(t *testing.T) {
	tests := []struct {
		payload string
		lines   []string
	}{
		{`{"a":1}`, []string{`data: {"a":1}`}},
		{"{\n\"a\":1\n}", []string{"data: {", `data: "a":1`, "data: }"}},
		{"{\r\n}", []string{"data: {", "data: }"}},
		{"{}\n", []string{"data: {}", "data: "}},
		{"a\rb", []string{"data: a", "data: b"}},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		w := &sseWire{srv: &Server{}, bw: bufioWriter(&buf)}
		if err := w.write(&event{Payload: []byte(tt.payload), ID: "evt_1"}); err != nil {
			t.Fatal(err)
		}
		w.bw.Flush()
		want := "event: aaep.event\nid: evt_1\n" + strings.Join(tt.lines, "\n") + "\n\n"
		if buf.String() != want {
			t.Errorf("payload %q:\n got %q\nwant %q", tt.payload, buf.String(), want)
		}
	}
}

func TestSSELastEventID(t *testing.T) {
	recs := standardRecords()
	path := writeCapture(t, recs)
	_, ts := startServer(t, Options{CloseAtEnd: true, Open: OpenFile(path), Timing: timing.Config{NoDelay: true}})
	all := received(recs)
	tests := []struct {
		name   string
		header string
		query  string
		status int
		want   [][]byte
	}{
		{"resume mid", "evt_0004", "", http.StatusOK, all[4:]},
		{"resume by query", "", "?lastEventId=evt_0008", http.StatusOK, all[8:]},
		{"resume after last", "evt_0010", "", http.StatusNoContent, nil},
		{"unknown id starts over", "evt_9999", "", http.StatusOK, all},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			if tt.header != "" {
				h.Set("Last-Event-ID", tt.header)
			}
			resp := getSSE(t, ts.URL+"/aaep/v1/events"+tt.query, h)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.status)
			}
			var got [][]byte
			for _, e := range readSSE(t, resp.Body) {
				got = append(got, e.data)
			}
			sameFrames(t, got, tt.want)
		})
	}
}

func TestSSESubscriptionHandshake(t *testing.T) {
	recs := standardRecords()
	path := writeCapture(t, recs)
	_, ts := startServer(t, Options{CloseAtEnd: true, Open: OpenFile(path), Timing: timing.Config{NoDelay: true}})
	req := `{"type":"subscription.request","aaep_version":"1.0.0","subscriber_id":"sse-sub","capabilities":{"supports_clarification_reply":true,"event_filters":{"include":["aaep:agent.session.*"]}}}`
	resp, err := http.Post(ts.URL+"/aaep/v1/subscriptions", "application/json", strings.NewReader(req))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	var acc struct {
		Type           string `json:"type"`
		SubscriptionID string `json:"subscription_id"`
	}
	if err := json.Unmarshal(body, &acc); err != nil || acc.Type != "subscription.accepted" {
		t.Fatalf("body %s: %v", body, err)
	}
	loc := resp.Header.Get("Location")
	if loc != "/aaep/v1/events?subscription_id="+acc.SubscriptionID {
		t.Fatalf("Location %q", loc)
	}
	stream := getSSE(t, ts.URL+loc, nil)
	var got [][]byte
	for _, e := range readSSE(t, stream.Body) {
		got = append(got, e.data)
	}
	all := received(recs)
	// Session events, plus the clarification (answerable); the confirmation
	// is withheld (not answerable), as is everything else.
	sameFrames(t, got, [][]byte{all[0], all[2], all[6], all[8], all[9]})

	t.Run("unknown subscription", func(t *testing.T) {
		r := getSSE(t, ts.URL+"/aaep/v1/events?subscription_id=sub_nope", nil)
		if r.StatusCode != http.StatusNotFound {
			t.Fatalf("status %d", r.StatusCode)
		}
	})
	t.Run("rejected", func(t *testing.T) {
		r, err := http.Post(ts.URL+"/aaep/v1/subscriptions", "application/json",
			strings.NewReader(`{"type":"subscription.request","aaep_version":"9.0.0","subscriber_id":"x","capabilities":{}}`))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if r.StatusCode != http.StatusForbidden || !bytes.Contains(b, []byte(`"reason_code":"version_unsupported"`)) {
			t.Fatalf("status %d body %s", r.StatusCode, b)
		}
	})
	t.Run("malformed", func(t *testing.T) {
		r, err := http.Post(ts.URL+"/aaep/v1/subscriptions", "application/json", strings.NewReader(`not json`))
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != http.StatusBadRequest {
			t.Fatalf("status %d", r.StatusCode)
		}
	})
}
