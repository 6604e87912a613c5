package serve

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/payload"
)

// handleInbound handles one message a subscriber sent over its connection
// (sub set) or by POST (sub nil). It returns the HTTP status and body for a
// POST.
func (s *Server) handleInbound(sub *subscriber, raw []byte, via string) (int, []byte) {
	d := payload.Decode(raw)
	f := &d.Routing
	if !d.IsObject() {
		s.recordMessage(sub, raw, "")
		s.notifyMessage(sub, via, raw, "", "not a JSON object")
		return http.StatusBadRequest, errorBody("malformed", "the message is not a JSON object")
	}
	switch f.Type {
	case "confirmation.reply", "clarification.reply":
		return s.handleReply(sub, raw, via)
	case "subscription.renegotiate", "subscription.request":
		target := sub
		if target == nil {
			var rq request
			_ = json.Unmarshal(raw, &rq)
			target = s.lookup(rq.SubscriptionID)
			if target == nil {
				s.recordMessage(nil, raw, "")
				s.notifyMessage(nil, via, raw, f.Type, "unknown subscription_id")
				return http.StatusNotFound, errorBody("unknown_subscription", "no active subscription with that subscription_id")
			}
		}
		s.recordMessage(target, raw, "")
		n := target.renegotiate(raw, f.Type == "subscription.request")
		if target.transport == TransportSSE {
			// The answer goes back in the POST's response, not on the
			// stream: record it there, as the subscriber received it.
			s.record(target, capfile.KindReceived, &event{Index: -1, Control: true, Payload: n.Response})
		}
		s.notifyMessage(target, via, raw, f.Type, "")
		return http.StatusOK, n.Response
	case "subscription.close":
		target := sub
		if target == nil {
			var rq request
			_ = json.Unmarshal(raw, &rq)
			target = s.lookup(rq.SubscriptionID)
		}
		s.recordMessage(target, raw, "")
		s.notifyMessage(target, via, raw, f.Type, "")
		if target == nil {
			return http.StatusNotFound, errorBody("unknown_subscription", "no active subscription with that subscription_id")
		}
		target.stop(CloseSubscriber, "closed by subscriber", CauseSubscriber)
		return http.StatusNoContent, nil
	default:
		s.recordMessage(sub, raw, f.SessionKey())
		s.notifyMessage(sub, via, raw, f.Type, "unexpected message type")
		return http.StatusBadRequest, errorBody("unsupported_message", "expected confirmation.reply, clarification.reply, subscription.renegotiate or subscription.close")
	}
}

// handleReply validates and records a reply.
func (s *Server) handleReply(sub *subscriber, raw []byte, via string) (int, []byte) {
	var rp reply
	_ = json.Unmarshal(raw, &rp)
	target := sub
	if target == nil && rp.SubscriptionID != "" {
		target = s.lookup(rp.SubscriptionID)
	}
	if target == nil {
		target = s.findByToken(rp.ReplyToken)
	}
	verdict, reason, session := VerdictIgnored, "no active subscription sent that reply_token", ""
	if target != nil {
		verdict, reason, session = target.reg.settle(&rp)
		target.replies.Add(1)
	} else if s.opts.Shared {
		verdict, reason, session = s.reg.settle(&rp)
	}
	owner := target
	if owner == nil {
		// No active subscription: an SSE subscriber's POST while its
		// stream is cut, before it is back. It is still that
		// subscriber's: the closed subscription it names, or else the one
		// its token was written to.
		owner = s.recentlyClosed(rp.SubscriptionID, rp.ReplyToken)
	}
	s.recordMessageFor(owner, rp.SubscriptionID, raw, session, capfile.Attr{Key: "verdict", Value: verdict})
	n := Notice{Kind: NoticeReply, Transport: via, MessageType: rp.Type, Token: rp.ReplyToken, Decision: rp.Decision,
		Response: rp.Response, Verdict: verdict, Reason: reason, Payload: json.RawMessage(raw)}
	if target != nil {
		n.Subscription, n.Remote = target.id, target.remote
	}
	s.notify(n)
	if verdict == VerdictAccepted {
		s.accepted.Add(1)
		return http.StatusNoContent, nil
	}
	s.ignored.Add(1)
	// §6.3.4: never tell the sender why.
	return http.StatusBadRequest, errorBody("invalid_reply", "the reply does not match an outstanding request")
}

func (s *Server) notifyMessage(sub *subscriber, via string, raw []byte, typ, problem string) {
	n := Notice{Kind: NoticeMessage, Transport: via, MessageType: typ, Reason: problem}
	if json.Valid(raw) {
		n.Payload = json.RawMessage(raw)
	} else {
		n.Raw = string(raw)
	}
	if sub != nil {
		n.Subscription, n.Remote = sub.id, sub.remote
	}
	s.notify(n)
}

// renegotiate answers a subscription.renegotiate, or a subscription.request
// (fresh: negotiated from the defaults, as the handshake is, whether it
// comes within the grace period or later). The answer goes out at the next
// frame boundary, ahead of every event not yet written, and its terms
// govern every event after it (see writer.go); a rejection closes the
// subscription after it (§5.7).
func (sub *subscriber) renegotiate(raw []byte, fresh bool) *negotiation {
	sub.mu.Lock()
	var n *negotiation
	if fresh {
		n = sub.srv.negotiate(raw, sub.id)
	} else {
		n = sub.srv.capRate(negotiate(raw, sub.id, sub.srv.producer, sub.caps))
	}
	if n.Rejected == nil {
		sub.caps = n.Caps
		if fresh {
			sub.subscriber = n.SubscriberID
		}
	}
	sub.mu.Unlock()
	a := &answer{terms: n.Terms}
	if sub.transport != TransportSSE {
		// SSE subscribers get their answer in the POST response.
		a.msg = &event{Index: -1, Control: true, Payload: n.Response}
	}
	if n.Rejected != nil {
		a.rejected = "renegotiation rejected: " + n.Rejected.Code
		if fresh {
			a.rejected = "subscription rejected: " + n.Rejected.Code
		}
	}
	sub.q.pushAnswer(a)
	return n
}

func errorBody(code, msg string) []byte {
	b, _ := json.Marshal(map[string]string{"error": code, "message": msg})
	return b
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	if body == nil {
		w.WriteHeader(status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
	if len(body) > 0 && body[len(body)-1] != '\n' {
		_, _ = io.WriteString(w, "\n")
	}
}

// readBody reads a POST body of at most MaxMessage bytes.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxMessage))
	if err != nil {
		writeJSON(w, http.StatusRequestEntityTooLarge, errorBody("too_large", fmt.Sprintf("the body exceeds %d bytes or could not be read", MaxMessage)))
		return nil, false
	}
	return body, true
}

// serveMessage handles POST /aaep/v1/replies and POST /messages.
func (s *Server) serveMessage(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	status, resp := s.handleInbound(nil, body, TransportHTTP)
	writeJSON(w, status, resp)
}

// serveSubscribe handles POST /aaep/v1/subscriptions: the handshake for an
// SSE stream.
func (s *Server) serveSubscribe(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	if d := payload.Decode(body); !d.IsObject() || d.Routing.Type != "subscription.request" {
		writeJSON(w, http.StatusBadRequest, errorBody("malformed", "expected a subscription.request JSON object"))
		return
	}
	id := newSubscriptionID()
	n := s.negotiate(body, id)
	s.recordHandshake(id, body, n.Response)
	notice := Notice{Kind: NoticeHandshake, Subscription: id, Transport: TransportHTTP, Remote: r.RemoteAddr,
		MessageType: "subscription.request", Verdict: VerdictAccepted, Payload: body}
	if n.Rejected != nil {
		notice.Verdict, notice.Reason = "rejected", n.Rejected.Error()
		s.notify(notice)
		writeJSON(w, http.StatusForbidden, n.Response)
		return
	}
	s.notify(notice)
	s.mu.Lock()
	now := time.Now()
	for k, p := range s.pending {
		if !p.active && now.Sub(p.created) > pendingTTL {
			delete(s.pending, k)
		}
	}
	if len(s.pending) >= maxPending {
		s.mu.Unlock()
		rej := reject(id, &rejection{"rate_limit", "too many subscriptions waiting for their stream"}, nil)
		writeJSON(w, http.StatusServiceUnavailable, rej.Response)
		return
	}
	s.pending[id] = &pendingSub{id: id, terms: n.Terms, caps: n.Caps, subscriber: n.SubscriberID, created: now}
	s.mu.Unlock()
	w.Header().Set("Location", "/aaep/v1/events?subscription_id="+id)
	writeJSON(w, http.StatusCreated, n.Response)
}

func (s *Server) serveHealth(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, []byte(`{"status":"ok"}`))
}

func (s *Server) serveStats(w http.ResponseWriter, _ *http.Request) {
	b, err := json.MarshalIndent(s.Stats(), "", "  ")
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, errorBody("internal", err.Error()))
		return
	}
	writeJSON(w, http.StatusOK, b)
}
