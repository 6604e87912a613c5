// Package serve replays AAEP captures to subscribers the way a live producer
// would: over WebSocket (/aaep/v1/ws, subprotocol aaep.v1) and Server-Sent
// Events (/aaep/v1/events and /events), with the subscription handshake of
// AAEP chapter 5, reply endpoints for confirmations and clarifications
// (chapter 6), and health and statistics endpoints. Push connects out to a
// listening subscriber instead.
//
// # Timelines
//
// By default every subscriber gets its own replay from the start of the
// selected range, paced by package timing from the moment it subscribes.
// With Options.Shared all subscribers follow one timeline that starts when
// the first one arrives; later subscribers join it live.
//
// # Payloads
//
// Only records of kind capfile.KindReceived (messages the recorder received
// from the producer) are replayed. Their payloads go out byte for byte: one
// WebSocket text frame each (binary when the capture flags the payload as
// invalid UTF-8), or one SSE event whose data is the payload (a payload with
// line breaks becomes several data: lines, as SSE requires).
//
// # Slow subscribers
//
// Each subscriber has a queue bounded in events and bytes, and a writer that
// batches whatever is queued into one write. A subscriber never slows
// another: on a paced shared timeline a subscriber whose queue is full is
// closed at once; on its own timeline a subscriber only delays itself. Either
// way a subscriber is closed when nothing could be written to it for
// Options.WriteTimeout (stalled), or when it falls more than Options.MaxLag
// behind its schedule. Stalled means it stopped reading, not that it reads
// slowly: every byte the kernel takes renews a WebSocket's write timeout
// (an SSE stream's, every 8 KiB), and on a connection accepted by Listener
// the kernel holds at most 128 KiB unsent (on Linux), so that it takes
// more as soon as the subscriber reads some, rather than once several MB
// of send buffer have drained. WebSocket subscribers are closed with code 4004 and a
// reason saying which limit was hit; every close is counted by cause in the
// statistics. The one exception to independence is a shared timeline with
// NoDelay, which has no schedule of its own: it runs as fast as its slowest
// live subscriber reads, waiting at most the write timeout for one whose
// queue is full before closing it.
//
// # Handshake
//
// A subscriber that sends a subscription.request (the first WebSocket
// message, or POST /aaep/v1/subscriptions before an SSE stream) gets
// subscription.accepted with the terms a replay can keep: its event filters,
// its max_events_per_second (non-critical events are held back, never
// merged), and its supports_confirmation_reply/supports_clarification_reply
// (without them, awaiting.confirmation/clarification events are withheld, as
// §5.3.1.4 requires). Verbosity, languages and coalescing are echoed but the
// payloads stay as captured. Critical events bypass filters and take no
// rate-limit token, but keep their place in the order (§8.2.3), so they wait
// for held events ahead of them. A subscriber that sends nothing within
// Options.Grace gets every event, unfiltered (Level 1, §9.3.3).
//
// A subscription.request that comes later (the grace is over and events are
// flowing), like a renegotiation, is answered as the next frame: between
// two events, ahead of every event not yet written, never in place of one;
// its terms govern every event after the answer and none before. Each
// subscriber's writer is where this is put in order: timelines queue every
// event, and the writer judges each one under the terms in force when it
// gets to it. On a subscriber's own timeline no event is lost, repeated or
// reordered by a handshake, whenever it comes; on a shared timeline a
// subscriber joins live, and the same holds from the moment it joins. A
// rejected request or renegotiation closes the subscription right after
// the answer (4001), dropping what was queued.
//
// # Resuming and replies
//
// An SSE subscriber's Last-Event-ID resumes its own timeline after that
// event (from the start when the id is not in the range; with 204 No
// Content, which stops an EventSource, when nothing follows it). Reply
// tokens are those of the awaiting events already written to the
// subscription (to any subscriber on a shared timeline); the first valid
// reply uses a token, and replies that fail validation are answered with a
// generic 400 that does not say why (§6.3.4), while the operator's notice
// does. Expiry (timeout_seconds) is not checked: a replay does not rewrite
// the captured timestamps.
//
// # Recording
//
// Options.Record receives the replay as seen on the wire, from the
// subscribers' side, so that the recording reads like a capture made by
// them and can be checked with the same rules: what the replay sent
// (events, subscription.accepted/rejected) is capfile.KindReceived, what a
// subscriber sent (subscription.request, replies, renegotiation, close) is
// capfile.KindSent, and connections opening and closing are capfile.KindConn.
// Each subscriber is one source id (1, 2, ... in order of arrival; 0 is the
// server itself, for replies that name no subscription), and every record
// carries the attribute "subscription" with its subscription id. What the
// replay sends is recorded as it is handed to the connection, so a
// subscriber's answer always comes after the message it answers (a write
// that then fails leaves its last messages recorded but undelivered, and
// the subscription closed).
package serve
