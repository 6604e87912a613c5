package serve

import (
	"sort"
	"time"

	"github.com/aaep-tools/aaepkit/timing"
)

// SubscriberStats are one subscription's figures.
type SubscriberStats struct {
	Subscription string `json:"subscription"`
	Source       uint16 `json:"source"`
	Transport    string `json:"transport"`
	Remote       string `json:"remote"`
	SubscriberID string `json:"subscriber_id,omitempty"`
	Negotiated   bool   `json:"negotiated"`
	// State is "active" or "closed".
	State   string    `json:"state"`
	Started time.Time `json:"started"`
	// Sent counts events written and flushed; Bytes their payload bytes.
	Sent  int64 `json:"sent"`
	Bytes int64 `json:"bytes"`
	// Filtered counts events the subscription's terms held back;
	// Dropped counts events queued but never delivered (the subscription closed).
	Filtered int64 `json:"filtered"`
	Dropped  int64 `json:"dropped"`
	Replies  int64 `json:"replies"`
	// Position is the record index and capture offset of the last event sent.
	PositionIndex  int64         `json:"position_index"`
	PositionOffset time.Duration `json:"position_offset_ns"`
	// Pass is the current pass through the range (1-based) on this
	// subscriber's own timeline; 0 on a shared timeline.
	Pass       int64 `json:"pass"`
	QueueDepth int   `json:"queue_depth"`
	QueueLimit int   `json:"queue_limit"`
	// Lateness is how late each event's write returned against its
	// deadline (time held back by the subscription's rate limit excluded).
	Lateness timing.Summary `json:"lateness"`
	// Write is how long each flush to the connection took (the system
	// calls that hand the frames to the kernel), one figure per flush;
	// lateness includes it. Its first, last and drift fields carry no
	// meaning.
	Write timing.Summary `json:"write"`
	// ScheduleStart is when the first event of the subscriber's own
	// timeline was due (absent on a shared timeline): every later deadline
	// is this plus the event's offset from the first, scaled by the speed
	// (less any idle time --max-idle removed), so a subscriber on the same
	// machine can measure its own lateness against it.
	ScheduleStart *time.Time `json:"schedule_start,omitempty"`
	// Complete says the subscriber has received the whole replay (every
	// pass); CompletedAt is when.
	Complete    bool       `json:"complete"`
	CompletedAt *time.Time `json:"completed_at,omitempty"`
	Close       *CloseInfo `json:"close,omitempty"`
}

// Stats are the server's figures, as served on GET /stats.
type Stats struct {
	Mode    string    `json:"mode"` // "per-subscriber" or "shared"
	Started time.Time `json:"started"`
	Active  int       `json:"active"`
	Total   int64     `json:"total"`
	// Closes counts ended subscriptions by cause (finished, too_slow,
	// stalled, lagging, subscriber, disconnected, rejected, shutdown,
	// capture_error).
	Closes map[string]int64 `json:"closes"`
	// Complete counts the listed subscribers that have received the whole
	// replay (see SubscriberStats.Complete).
	Complete        int   `json:"complete"`
	RepliesAccepted int64 `json:"replies_accepted"`
	RepliesIgnored  int64 `json:"replies_ignored"`
	// Subscribers lists the active subscriptions and the most recently
	// closed ones, oldest first.
	Subscribers []SubscriberStats `json:"subscribers"`
}

func (s *subscriber) stats() SubscriberStats {
	st := SubscriberStats{
		Subscription:   s.id,
		Source:         s.num,
		Transport:      s.transport,
		Remote:         s.remote,
		Negotiated:     s.getTerms().Negotiated,
		State:          "active",
		Started:        s.started,
		Sent:           s.sent.Load(),
		Bytes:          s.bytes.Load(),
		Filtered:       s.filtered.Load(),
		Dropped:        s.dropped.Load(),
		Replies:        s.replies.Load(),
		PositionIndex:  s.lastIndex.Load(),
		PositionOffset: time.Duration(s.lastOffset.Load()),
		Pass:           s.pass.Load(),
		QueueDepth:     s.q.depth(),
		QueueLimit:     s.q.limit,
		Lateness:       s.lat.Summary(),
		Write:          s.write.Summary(),
		Close:          s.getClose(),
	}
	if ns := s.scheduled.Load(); ns != 0 {
		t := time.Unix(0, ns)
		st.ScheduleStart = &t
	}
	if ns := s.completed.Load(); ns != 0 {
		t := time.Unix(0, ns)
		st.Complete, st.CompletedAt = true, &t
	}
	s.mu.Lock()
	st.SubscriberID = s.subscriber
	s.mu.Unlock()
	select {
	case <-s.done:
		st.State = "closed"
	default:
		// Closing, but the writer has not finished yet: still active.
		if st.State == "active" && st.Close != nil && s.ctx.Err() != nil {
			st.State = "closing"
		}
	}
	return st
}

// Stats returns the server's figures now.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	subs := make([]*subscriber, 0, len(s.subs)+len(s.closedS))
	subs = append(subs, s.closedS...)
	for _, sub := range s.subs {
		subs = append(subs, sub)
	}
	st := Stats{
		Mode:    "per-subscriber",
		Started: s.started,
		Active:  len(s.subs),
		Total:   s.total.Load(),
		Closes:  make(map[string]int64, len(s.closes)),
	}
	for k, v := range s.closes {
		st.Closes[k] = v
	}
	s.mu.Unlock()
	if s.opts.Shared {
		st.Mode = "shared"
	}
	st.RepliesAccepted = s.accepted.Load()
	st.RepliesIgnored = s.ignored.Load()
	sort.Slice(subs, func(i, j int) bool { return subs[i].num < subs[j].num })
	st.Subscribers = make([]SubscriberStats, 0, len(subs))
	for _, sub := range subs {
		ss := sub.stats()
		if ss.Complete {
			st.Complete++
		}
		st.Subscribers = append(st.Subscribers, ss)
	}
	return st
}
