package serve

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/timing"
)

func TestNegotiate(t *testing.T) {
	producer := json.RawMessage(`{"agent_id":"p"}`)
	tests := []struct {
		name     string
		req      string
		rejected string
		honored  map[string]any // fields checked in honored_capabilities
		terms    *subscriptionTerms
	}{
		{
			name:    "empty capabilities take the defaults",
			req:     `{"type":"subscription.request","aaep_version":"1.0.0","subscriber_id":"s","capabilities":{}}`,
			honored: map[string]any{"languages": []any{"en-US"}, "supports_confirmation_reply": false, "supported_conformance_levels": []any{1.0}},
			terms:   &subscriptionTerms{Negotiated: true, Include: []string{"aaep:agent.*"}, Exclude: []string{}},
		},
		{
			name: "everything honoured",
			req: `{"type":"subscription.request","aaep_version":"1.0.0","subscriber_id":"s","capabilities":{"max_events_per_second":3,"preferred_verbosity":"terse","languages":["yo-NG"],
				"supports_confirmation_reply":true,"supports_clarification_reply":true,"coalesce_boundaries":["none"],
				"event_filters":{"include":["aaep:agent.tool.*"],"exclude":["aaep:agent.tool.completed"]},"supported_conformance_levels":[1,2,3],"haptic":{"x":1}}}`,
			honored: map[string]any{"max_events_per_second": 3.0, "preferred_verbosity": "terse", "languages": []any{"yo-NG"},
				"coalesce_boundaries": []any{"none"}, "supported_conformance_levels": []any{1.0, 2.0}},
			terms: &subscriptionTerms{Negotiated: true, Include: []string{"aaep:agent.tool.*"}, Exclude: []string{"aaep:agent.tool.completed"}, MaxRate: 3, Confirmations: true, Clarifications: true},
		},
		{name: "version 2", req: `{"type":"subscription.request","aaep_version":"2.0.0","capabilities":{}}`, rejected: "version_unsupported"},
		{name: "later minor version", req: `{"type":"subscription.request","aaep_version":"1.2.0","capabilities":{}}`,
			terms: &subscriptionTerms{Negotiated: true, Include: []string{"aaep:agent.*"}, Exclude: []string{}}},
		// The replay speaks 1.0.0, above a pre-release of it (semantic
		// versions, §3.4.4), and "1" is no version (MSG-REQ-SCHEMA): both
		// were accepted before the replay and the checker shared package
		// vocab, and the checker would report the first (NEG-VERSION).
		{name: "pre-release below ours", req: `{"type":"subscription.request","aaep_version":"1.0.0-draft","capabilities":{}}`, rejected: "version_unsupported"},
		{name: "version not semver", req: `{"type":"subscription.request","aaep_version":"1","capabilities":{}}`, rejected: "version_unsupported"},
		{name: "no capabilities", req: `{"type":"subscription.request","aaep_version":"1.0.0"}`, rejected: "capabilities_incompatible"},
		{name: "rate zero", req: `{"type":"subscription.request","aaep_version":"1.0.0","capabilities":{"max_events_per_second":0}}`, rejected: "capabilities_incompatible"},
		{name: "rate not a number", req: `{"type":"subscription.request","aaep_version":"1.0.0","capabilities":{"max_events_per_second":"fast"}}`, rejected: "capabilities_incompatible"},
		{name: "bad verbosity", req: `{"type":"subscription.request","aaep_version":"1.0.0","capabilities":{"preferred_verbosity":"loud"}}`, rejected: "capabilities_incompatible"},
		{name: "level 3 only", req: `{"type":"subscription.request","aaep_version":"1.0.0","capabilities":{"supported_conformance_levels":[3]}}`, rejected: "capabilities_incompatible"},
		{name: "signed manifests", req: `{"type":"subscription.request","aaep_version":"1.0.0","capabilities":{"accept_signed_manifests_only":true}}`, rejected: "manifest_signature_required"},
		{name: "not json", req: `{"type":`, rejected: "unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := negotiate([]byte(tt.req), "sub_1", producer, nil)
			var msg map[string]any
			if err := json.Unmarshal(n.Response, &msg); err != nil {
				t.Fatalf("response %q: %v", n.Response, err)
			}
			if tt.rejected != "" {
				if n.Rejected == nil || msg["type"] != "subscription.rejected" || msg["reason_code"] != tt.rejected || msg["reason_message"] == "" {
					t.Fatalf("response %s, want rejected %s", n.Response, tt.rejected)
				}
				return
			}
			if n.Rejected != nil || msg["type"] != "subscription.accepted" || msg["subscription_id"] != "sub_1" || msg["aaep_version"] != "1.0.0" {
				t.Fatalf("response %s", n.Response)
			}
			h := msg["honored_capabilities"].(map[string]any)
			for k, v := range tt.honored {
				if !reflect.DeepEqual(h[k], v) {
					t.Errorf("honored %s = %#v, want %#v", k, h[k], v)
				}
			}
			if !reflect.DeepEqual(n.Terms, tt.terms) {
				t.Errorf("terms %+v, want %+v", n.Terms, tt.terms)
			}
		})
	}
}

func TestRenegotiateOverlays(t *testing.T) {
	n := negotiate([]byte(`{"type":"subscription.request","aaep_version":"1.0.0","capabilities":{"max_events_per_second":5,"supports_confirmation_reply":true}}`), "sub_1", nil, nil)
	r := negotiate([]byte(`{"type":"subscription.renegotiate","subscription_id":"sub_1","capabilities":{"max_events_per_second":1}}`), "sub_1", nil, n.Caps)
	if r.Rejected != nil || r.Terms.MaxRate != 1 || !r.Terms.Confirmations {
		t.Fatalf("renegotiated terms %+v (%s)", r.Terms, r.Response)
	}
	if !strings.Contains(string(r.Response), `"agent_id":"aaep-replay"`) {
		t.Errorf("default producer missing: %s", r.Response)
	}
}

func TestTermsAllows(t *testing.T) {
	terms := &subscriptionTerms{Negotiated: true, Include: []string{"aaep:agent.tool.*", "aaep:agent.session.started"}, Exclude: []string{"aaep:agent.tool.completed"}, Clarifications: true}
	tests := []struct {
		ev   event
		want bool
	}{
		{event{Type: "aaep:agent.tool.invoked"}, true},
		{event{Type: "https://aaep-protocol.org/types/agent.tool.invoked"}, true},
		{event{Type: "aaep:agent.tool.completed"}, false},
		{event{Type: "aaep:agent.session.started"}, true},
		{event{Type: "aaep:agent.session.completed"}, false},
		{event{Type: "aaep:agent.session.errored", Urgency: "critical"}, true},
		{event{Type: "aaep:agent.tool.completed", Urgency: "critical"}, true},
		{event{Type: "aaep:agent.awaiting.confirmation", Urgency: "critical"}, false},
		{event{Type: "aaep:agent.awaiting.clarification", Urgency: "critical"}, true},
		{event{Type: "medai:patient.consulted"}, false},
		{event{Control: true}, true},
	}
	for _, tt := range tests {
		if got := terms.Allows(&tt.ev); got != tt.want {
			t.Errorf("Allows(%s %s) = %v, want %v", tt.ev.Type, tt.ev.Urgency, got, tt.want)
		}
	}
	var none *subscriptionTerms
	if !none.Allows(&event{Type: "anything"}) || !(&subscriptionTerms{}).Allows(&event{Type: "aaep:agent.awaiting.confirmation"}) {
		t.Error("unnegotiated terms must allow everything")
	}
}

// TestAwaitingTypes: an awaiting event is one of the two spellings of its
// core type (§3.2.2: compact or full URI), as the checker reads it; an
// extension type that merely ends like one is an ordinary event (serve
// matched a suffix before it shared package vocab with the checker).
func TestAwaitingTypes(t *testing.T) {
	terms := &subscriptionTerms{Negotiated: true, Include: []string{"*"}}
	const body = `,"reply_token":"rpl_1"}`
	tests := []struct {
		typ      string
		blocking string // Kind of the decoded blocking event, "" for none
	}{
		{"aaep:agent.awaiting.confirmation", "confirmation"},
		{"https://aaep-protocol.org/types/agent.awaiting.confirmation", "confirmation"},
		{"aaep:agent.awaiting.clarification", "clarification"},
		{"https://aaep-protocol.org/types/agent.awaiting.clarification", "clarification"},
		{"medai:agent.awaiting.confirmation", ""},
		{"xagent.awaiting.clarification", ""},
		{"aaep:agent.awaiting.confirmation.v2", ""},
	}
	for _, tt := range tests {
		var ev event
		fillEvent(&ev, &capfile.Record{Payload: []byte(`{"type":"` + tt.typ + `"` + body)}, 0, nil)
		got := ""
		if ev.Blocking != nil {
			got = ev.Blocking.Kind
		}
		if got != tt.blocking {
			t.Errorf("%s: blocking %q, want %q", tt.typ, got, tt.blocking)
		}
		// Without reply support, awaiting events are withheld; others pass.
		if allowed := terms.Allows(&ev); allowed != (tt.blocking == "") {
			t.Errorf("%s: Allows = %v, want %v", tt.typ, allowed, tt.blocking == "")
		}
	}
}

func TestDecodeBlocking(t *testing.T) {
	tests := []struct {
		payload string
		want    *blocking
	}{
		{`{"reply_token":"rpl_1","allowed_replies":["accept"]}`, &blocking{Kind: "confirmation", Token: "rpl_1", AllowedReplies: []string{"accept"}}},
		{`{"payload":{"reply_token":"rpl_2","accepted_response_kinds":["multiple_choice"],"choices":[{"value":"a"},{"value":3}]}}`,
			&blocking{Kind: "confirmation", Token: "rpl_2", ResponseKinds: []string{"multiple_choice"}, Choices: []string{"a", "3"}}},
		{`{"action":"x"}`, nil},
		{`not json`, nil},
	}
	for _, tt := range tests {
		if got := decodeBlocking([]byte(tt.payload), "confirmation"); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("decodeBlocking(%s) = %+v, want %+v", tt.payload, got, tt.want)
		}
	}
}

func TestFormatNotice(t *testing.T) {
	at := time.Date(2026, 5, 24, 14, 22, 24, 812e6, time.UTC)
	tests := []struct {
		n    Notice
		want string
	}{
		{Notice{Time: at, Kind: NoticeSubscribed, Subscription: "sub_1", Transport: "websocket", Remote: "127.0.0.1:5000"},
			"14:22:24.812 sub_1 websocket subscribed from 127.0.0.1:5000"},
		{Notice{Time: at, Kind: NoticeReply, Subscription: "sub_1", Transport: "http", MessageType: "confirmation.reply", Token: "rpl_1", Decision: "accept", Verdict: "accepted"},
			"14:22:24.812 sub_1 http confirmation.reply rpl_1 decision=accept: accepted"},
		{Notice{Time: at, Kind: NoticeReply, Transport: "http", MessageType: "clarification.reply", Token: "rpl_9", Response: json.RawMessage(`"67"`), Verdict: "ignored", Reason: "unknown reply_token"},
			`14:22:24.812 - http clarification.reply rpl_9 response="67": ignored (unknown reply_token)`},
		{Notice{Time: at, Kind: NoticeClosed, Subscription: "sub_1", Transport: "sse", Stats: &SubscriberStats{Sent: 12, Dropped: 3,
			Close: &CloseInfo{Code: 4004, Reason: "stalled"}}},
			"14:22:24.812 sub_1 sse closed (4004 stalled): 12 events, 3 dropped"},
		{Notice{Time: at, Kind: NoticeClosed, Subscription: "sub_2", Transport: "websocket", Stats: &SubscriberStats{Sent: 1500, Complete: true,
			Lateness: timing.Summary{Count: 1500, P50: 130 * time.Microsecond, P99: 310 * time.Microsecond, P999: 520 * time.Microsecond, Max: 922 * time.Microsecond, Drift: 59 * time.Microsecond},
			Write:    timing.Summary{Count: 1500, P99: 88 * time.Microsecond},
			Close:    &CloseInfo{Code: 4000, Reason: "replay finished"}}},
			"14:22:24.812 sub_2 websocket closed (4000 replay finished): 1500 events (the whole replay); lateness p50 130.0µs p99 310.0µs p99.9 520.0µs max 922.0µs; drift 59.0µs; writes p99 88.0µs"},
	}
	for _, tt := range tests {
		if got := FormatNotice(tt.n); got != tt.want {
			t.Errorf("FormatNotice:\n got %q\nwant %q", got, tt.want)
		}
	}
	var b strings.Builder
	p := NewPrinter(&b, true)
	p.Notify(tests[1].n)
	var back Notice
	if err := json.Unmarshal([]byte(b.String()), &back); err != nil || back.Token != "rpl_1" || !strings.HasSuffix(b.String(), "}\n") {
		t.Errorf("JSON line %q: %v", b.String(), err)
	}
}

func TestTermsNeedFields(t *testing.T) {
	tests := []struct {
		terms *subscriptionTerms
		want  bool
	}{
		{nil, false},
		{&subscriptionTerms{}, false},
		{&subscriptionTerms{Negotiated: true, Include: []string{"*"}}, false},
		{&subscriptionTerms{Negotiated: true, Include: []string{"aaep:agent.*"}}, true},
		{&subscriptionTerms{Negotiated: true, Include: []string{"*"}, Exclude: []string{"x"}}, true},
		{&subscriptionTerms{Negotiated: true, Include: []string{"*"}, MaxRate: 1}, true},
	}
	for _, tt := range tests {
		if got := tt.terms.needsFields(); got != tt.want {
			t.Errorf("%+v needsFields() = %v, want %v", tt.terms, got, tt.want)
		}
		// Whatever needsFields says, an event without fields must be
		// judged as Allows judges it with them, when fields are not needed.
		if !tt.want {
			full := &event{Type: "aaep:agent.tool.invoked", Urgency: "normal"}
			bare := &event{}
			if tt.terms.Allows(full) != tt.terms.Allows(bare) {
				t.Errorf("%+v: Allows differs without fields", tt.terms)
			}
		}
	}
}

// TestKeepaliveBounds: a keepalive under MinKeepalive is refused; 0 takes
// the default, a negative value turns keepalives off.
func TestKeepaliveBounds(t *testing.T) {
	open := memOpener(nil)
	for _, tt := range []struct {
		keepalive time.Duration
		ok        bool
	}{{time.Nanosecond, false}, {time.Millisecond, false}, {MinKeepalive - 1, false}, {MinKeepalive, true}, {0, true}, {-1, true}} {
		_, err := New(Options{Open: open, Keepalive: tt.keepalive})
		if (err == nil) != tt.ok {
			t.Errorf("keepalive %v: error %v", tt.keepalive, err)
		}
	}
}

// TestHonorMaxRate: Options.HonorMaxRate lowers the rate a subscription is
// honoured at, in its terms and in the honored_capabilities it is told,
// where it asked for more or for no limit; a lower rate asked for stands,
// and a renegotiation is capped as the handshake is.
func TestHonorMaxRate(t *testing.T) {
	s := &Server{opts: Options{HonorMaxRate: 2}}
	for _, tc := range []struct {
		caps     string
		want     int
		noteSays string
	}{
		{`{"max_events_per_second":10}`, 2, "max_events_per_second 2 honoured where 10 was asked"},
		{`{}`, 2, "max_events_per_second 2 honoured where no limit was asked"},
		{`{"max_events_per_second":1}`, 1, ""},
	} {
		n := s.negotiate([]byte(`{"type":"subscription.request","aaep_version":"1.0.0","capabilities":`+tc.caps+`}`), "sub_1")
		var a accepted
		if err := json.Unmarshal(n.Response, &a); err != nil || n.Rejected != nil {
			t.Fatalf("%s: %s", tc.caps, n.Response)
		}
		if n.Terms.MaxRate != tc.want || a.HonoredCapabilities.MaxEventsPerSecond == nil || *a.HonoredCapabilities.MaxEventsPerSecond != tc.want ||
			!strings.Contains(a.NegotiationNotes, tc.noteSays) {
			t.Errorf("%s: terms %d, honoured %s, want %d", tc.caps, n.Terms.MaxRate, n.Response, tc.want)
		}
	}
	prev := map[string]json.RawMessage{"max_events_per_second": json.RawMessage("1")}
	n := s.capRate(negotiate([]byte(`{"type":"subscription.renegotiate","subscription_id":"sub_1","capabilities":{"max_events_per_second":50}}`), "sub_1", nil, prev))
	if n.Terms.MaxRate != 2 || !strings.Contains(string(n.Response), `"max_events_per_second":2`) {
		t.Errorf("renegotiation: terms %d, %s", n.Terms.MaxRate, n.Response)
	}
}
