package subtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/check"
	"github.com/aaep-tools/aaepkit/protocol/models"
	"github.com/aaep-tools/aaepkit/recording"
)

// entry is one record of a run's recording, as the expectations read it.
type entry struct {
	Index  int64
	Offset time.Duration
	Kind   capfile.Kind
	Origin uint16
	// Sub is the subscription the record belongs to.
	Sub string
	// Type, EventID, Token, Decision and Response are read from a message.
	Type, EventID, Token, Decision string
	Response                       json.RawMessage
	Members                        map[string]json.RawMessage
	// Verdict is serve's verdict on a reply (accepted or ignored).
	Verdict string
	// SSEName is the SSE event: line an event went out with ("" when
	// unnamed, or not over SSE).
	SSEName string
	// Conn holds a connection record's fields (event, transport, cause,
	// last_event_id).
	Conn map[string]any
}

func (e *entry) connString(k string) string {
	s, _ := e.Conn[k].(string)
	return s
}

// isReply reports whether e is a reply the subscriber sent.
func (e *entry) isReply() bool {
	return e.Kind == capfile.KindSent && (e.Type == "confirmation.reply" || e.Type == "clarification.reply")
}

// isEvent reports whether e is an event the replay sent.
func (e *entry) isEvent() bool {
	return e.Kind == capfile.KindReceived && (strings.HasPrefix(e.Type, "aaep:") || e.EventID != "" || e.Members == nil)
}

// exchange is everything that went over the wire in one run.
type exchange struct {
	entries []entry
	// transports maps an origin to its transport (from its connection).
	transports map[uint16]string
	// end is the offset of the last record.
	end time.Duration
	// heard is what the subscriber announced, when it is observed
	// (--page, --announcements); nil when nothing of it is.
	heard *observation
}

// at is the offset of record i.
func (x *exchange) at(i int64) time.Duration {
	if i >= 0 && int(i) < len(x.entries) {
		return x.entries[i].Offset
	}
	return x.end
}

// readExchange reads the recording at path.
func readExchange(path string) (*exchange, error) {
	r, err := capfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	x := &exchange{transports: map[uint16]string{}}
	for i := int64(0); ; i++ {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return x, fmt.Errorf("%s: %w", path, err)
		}
		e := entry{Index: i, Offset: rec.Offset(), Kind: rec.Kind, Origin: rec.Origin, Sub: rec.Attr("subscription"), Verdict: rec.Attr("verdict"), SSEName: rec.Attr("event")}
		switch rec.Kind {
		case capfile.KindConn:
			_ = json.Unmarshal(rec.Payload, &e.Conn)
			if e.connString("event") == capfile.ConnConnected && e.Origin != 0 {
				x.transports[e.Origin] = e.connString("transport")
			}
		case capfile.KindReceived, capfile.KindSent:
			if json.Unmarshal(rec.Payload, &e.Members) == nil {
				str := func(k string) string {
					var s string
					_ = json.Unmarshal(e.Members[k], &s)
					return s
				}
				e.Type, e.EventID, e.Token, e.Decision = str("type"), str("event_id"), str("reply_token"), str("decision")
				e.Response = e.Members["response"]
			}
		}
		x.entries = append(x.entries, e)
		x.end = max(x.end, e.Offset)
	}
	return x, nil
}

// transport says how the message e came: "websocket" over a WebSocket,
// "sse" for a POST beside an SSE stream (origin 0, or an SSE origin).
func (x *exchange) transport(e *entry) string {
	switch t := x.transports[e.Origin]; t {
	case "", "sse", "http":
		return "sse"
	case "push":
		return "websocket"
	default:
		return t
	}
}

// subscriberTransport is the transport of the first subscription the
// subscriber opened, or else of the first message it sent (a refused
// subscription.request); "" when it did neither.
func (x *exchange) subscriberTransport() string {
	for i := range x.entries {
		e := &x.entries[i]
		if (e.Conn != nil && e.Origin != 0 && e.connString("event") == capfile.ConnConnected) || e.Kind == capfile.KindSent {
			return x.transport(e)
		}
	}
	return ""
}

// sent reports whether an event of type typ went to the subscriber.
func (x *exchange) sent(typ string) bool {
	return slices.ContainsFunc(x.entries, func(e entry) bool { return e.isEvent() && e.Type == typ })
}

// negotiated reports whether the subscriber sent a subscription.request.
func (x *exchange) negotiated() bool {
	return slices.ContainsFunc(x.entries, func(e entry) bool { return e.Kind == capfile.KindSent && e.Type == "subscription.request" })
}

// silence says plainly that the subscriber was heard from in no way that
// shows it took in an event (it sent nothing, or only its
// subscription.request), when a check failed or passed unverified for
// that; "" otherwise. For an SSE subscriber sent named events it adds why
// one that listens only for unnamed events (EventSource's onmessage)
// hears none: B.1.3 names every AAEP event.
func (x *exchange) silence(transport string, outcomes []Outcome) string {
	judged := false
	for _, o := range outcomes {
		judged = judged || (!o.Passed && !o.NotObservable) || o.Unverified
	}
	if !judged || x.announcedAny() {
		return ""
	}
	named, events := "", 0
	for i := range x.entries {
		e := &x.entries[i]
		if e.Kind == capfile.KindSent && e.Type != "subscription.request" {
			return ""
		}
		if e.isEvent() {
			events++
			if named == "" && e.SSEName != "" && e.SSEName != "message" {
				named = e.SSEName
			}
		}
	}
	msg := fmt.Sprintf("the subscriber sent nothing after its subscription (no reply, no message) while %d events reached it: nothing shows it heard any", events)
	if transport == TransportSSE && named != "" {
		msg += fmt.Sprintf(`; they went out as "event: %s", which B.1.3 says the event field "is always": a subscriber that listens only for unnamed events (EventSource's onmessage) hears none of them (--sse-event none sends them unnamed, as serve --sse-event none does)`, named)
	}
	return msg
}

// Finding is a finding of the checker about a message the subscriber sent.
type Finding struct {
	protocol.Finding
	// Required is set for a MUST (it fails the run); a SHOULD warns.
	Required bool `json:"required"`
}

// subscriberFindings runs the checker over the recording at path (the
// same models, options and stream information `check` uses) and keeps the
// findings that are the subscriber's: those of its rules (protocol.Party
// Subscriber, the one model of whose duty a rule is, shared with check),
// and those of rules binding either party at a message the subscriber
// sent. The producer's findings (a replay is the producer) are not its.
// A finding at failOn or above (0: MUST) is Required; INFO findings are
// kept only when failOn is INFO.
func subscriberFindings(ctx context.Context, path, profile string, failOn protocol.Level) ([]Finding, error) {
	if failOn == 0 {
		failOn = protocol.Must
	}
	var all []protocol.Finding
	recs, err := recording.Open(ctx, []string{path}, recording.Options{})
	if err != nil {
		return nil, err
	}
	fromSubscriber := map[int64]bool{}
	cfg := check.Config{Models: models.All, Options: protocol.Options{Profile: protocol.Profile(profile)}}
	res, err := check.Run(ctx, recording.Join(recs), cfg, protocol.Sink{Finding: func(f protocol.Finding) { all = append(all, f) }},
		&check.Observer{Message: func(_ string, m *protocol.Message) {
			if m.Dir == protocol.ToProducer {
				fromSubscriber[m.Index] = true
			}
		}})
	if err == nil {
		err = res.Err
	}
	if err != nil {
		return nil, fmt.Errorf("checking %s: %w", path, err)
	}
	var out []Finding
	for _, f := range all {
		mine := f.Party == protocol.Subscriber || (f.Party == protocol.Either && fromSubscriber[f.Index])
		if !mine || (f.Level == protocol.Info && failOn > protocol.Info) {
			continue
		}
		out = append(out, Finding{Finding: f, Required: f.Level >= failOn})
	}
	return out, nil
}
