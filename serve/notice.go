package serve

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Transports as named in notices, statistics and recordings.
const (
	TransportWebSocket = "websocket"
	TransportSSE       = "sse"
	TransportHTTP      = "http" // a POST to a reply endpoint
	TransportPush      = "push" // an outgoing WebSocket (Push)
)

// Notice kinds.
const (
	NoticeSubscribed = "subscribed" // a subscription started
	NoticeHandshake  = "handshake"  // a subscription.request was answered
	NoticeReply      = "reply"      // a confirmation.reply or clarification.reply
	NoticeMessage    = "message"    // any other message from a subscriber
	NoticeComplete   = "complete"   // a subscriber has received the whole replay
	NoticeWarning    = "warning"    // something the operator should know (Reason)
	NoticeClosed     = "closed"     // a subscription ended; Stats holds its figures
)

// Notice is something the operator should see. Fields that do not apply to
// a kind are empty.
type Notice struct {
	Time         time.Time `json:"time"`
	Kind         string    `json:"kind"`
	Subscription string    `json:"subscription,omitempty"`
	Transport    string    `json:"transport,omitempty"`
	Remote       string    `json:"remote,omitempty"`
	// MessageType is the type of the message a subscriber sent.
	MessageType string `json:"message_type,omitempty"`
	// Token, Decision and Response are read from a reply.
	Token    string          `json:"reply_token,omitempty"`
	Decision string          `json:"decision,omitempty"`
	Response json.RawMessage `json:"response,omitempty"`
	// Verdict is "accepted" or "ignored" for a reply; Reason says why a
	// reply was ignored or what was wrong with a message (never sent to the
	// subscriber).
	Verdict string `json:"verdict,omitempty"`
	Reason  string `json:"reason,omitempty"`
	// Payload is the message as received (Raw when it is not JSON).
	Payload json.RawMessage `json:"payload,omitempty"`
	Raw     string          `json:"raw,omitempty"`
	// Stats are the subscription's final figures (NoticeClosed).
	Stats *SubscriberStats `json:"stats,omitempty"`
}

// Printer writes notices for the operator: one line of text each, or one
// JSON object per line. It is safe for concurrent use.
type Printer struct {
	mu   sync.Mutex
	w    io.Writer
	json bool
}

// NewPrinter returns a Printer writing to w, as JSON lines when jsonLines.
func NewPrinter(w io.Writer, jsonLines bool) *Printer { return &Printer{w: w, json: jsonLines} }

// Notify prints n. Use it as Options.Notify.
func (p *Printer) Notify(n Notice) {
	var line string
	if p.json {
		b, err := json.Marshal(n)
		if err != nil {
			return
		}
		line = string(b) + "\n"
	} else {
		line = FormatNotice(n) + "\n"
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	_, _ = io.WriteString(p.w, line)
}

// FormatNotice renders n as one line of text.
func FormatNotice(n Notice) string {
	var b strings.Builder
	b.WriteString(n.Time.Format("15:04:05.000"))
	b.WriteByte(' ')
	who := n.Subscription
	if who == "" {
		who = "-"
	}
	fmt.Fprintf(&b, "%s %s ", who, n.Transport)
	switch n.Kind {
	case NoticeSubscribed:
		fmt.Fprintf(&b, "subscribed from %s", n.Remote)
	case NoticeHandshake:
		fmt.Fprintf(&b, "%s: %s", n.MessageType, n.Verdict)
		if n.Reason != "" {
			fmt.Fprintf(&b, " (%s)", n.Reason)
		}
	case NoticeReply:
		fmt.Fprintf(&b, "%s %s", n.MessageType, n.Token)
		if n.Decision != "" {
			fmt.Fprintf(&b, " decision=%s", n.Decision)
		}
		if len(n.Response) > 0 {
			fmt.Fprintf(&b, " response=%s", n.Response)
		}
		fmt.Fprintf(&b, ": %s", n.Verdict)
		if n.Reason != "" {
			fmt.Fprintf(&b, " (%s)", n.Reason)
		}
	case NoticeMessage:
		typ := n.MessageType
		if typ == "" {
			typ = "message"
		}
		b.WriteString(typ)
		if n.Reason != "" {
			fmt.Fprintf(&b, ": %s", n.Reason)
		}
	case NoticeWarning:
		b.WriteString("warning: " + n.Reason)
	case NoticeComplete:
		b.WriteString("received the whole replay")
		if st := n.Stats; st != nil {
			fmt.Fprintf(&b, ": %d events", st.Sent)
		}
		if n.Reason != "" {
			fmt.Fprintf(&b, "; %s", n.Reason)
		}
	case NoticeClosed:
		b.WriteString("closed")
		if st := n.Stats; st != nil {
			if c := st.Close; c != nil {
				fmt.Fprintf(&b, " (%d %s)", c.Code, c.Reason)
			}
			fmt.Fprintf(&b, ": %d events", st.Sent)
			if st.Dropped > 0 {
				fmt.Fprintf(&b, ", %d dropped", st.Dropped)
			}
			if st.Filtered > 0 {
				fmt.Fprintf(&b, ", %d filtered", st.Filtered)
			}
			if st.Complete {
				b.WriteString(" (the whole replay)")
			}
			if l := st.Lateness; l.Count > 0 {
				fmt.Fprintf(&b, "; lateness p50 %s p99 %s p99.9 %s max %s; drift %s",
					fmtDur(l.P50), fmtDur(l.P99), fmtDur(l.P999), fmtDur(l.Max), fmtDur(l.Drift))
				if w := st.Write; w.Count > 0 {
					fmt.Fprintf(&b, "; writes p99 %s", fmtDur(w.P99))
				}
			}
		}
	default:
		b.WriteString(n.Kind)
	}
	return b.String()
}

// fmtDur prints a duration with a precision that suits its size.
func fmtDur(d time.Duration) string {
	a := d
	if a < 0 {
		a = -a
	}
	switch {
	case a < time.Microsecond:
		return d.String()
	case a < time.Millisecond:
		return fmt.Sprintf("%.1fµs", float64(d)/1e3)
	case a < time.Second:
		return fmt.Sprintf("%.3fms", float64(d)/1e6)
	default:
		return d.Round(time.Millisecond).String()
	}
}
