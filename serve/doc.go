// Package serve replays AAEP captures to subscribers as a live producer
// would: over WebSocket (/aaep/v1/ws, subprotocol aaep.v1) and Server-Sent
// Events (/aaep/v1/events, /events), with the subscription handshake (AAEP
// chapter 5), reply endpoints (chapter 6), health and statistics. Push
// connects out to a listening subscriber instead.
//
// # Timelines
//
// Each subscriber gets its own replay of the range, paced by package timing
// from when it subscribes. With Options.Shared all follow one timeline,
// started by the first subscriber and joined live by the others.
//
// # Payloads
//
// Only capfile.KindReceived records are replayed, byte for byte: one
// WebSocket text frame each (binary for a payload flagged invalid UTF-8),
// or one SSE event (a payload with line breaks takes several data: lines).
//
// # Slow subscribers
//
// Each subscriber has a bounded queue and a writer that batches it, so
// none slows another: on a paced shared timeline a full queue closes its
// subscriber at once; on its own timeline a subscriber delays only itself.
// A subscriber is closed when nothing could be written to it for
// Options.WriteTimeout (it stopped reading) or when it falls Options.MaxLag
// behind (WebSocket code 4004, the limit in the reason; every close counted
// by cause). Every byte the kernel takes renews the timeout (every 8 KiB on
// SSE), and Listener's connections hold at most 128 KiB unsent on Linux,
// so a slow reader is not taken for a stalled one. The exception is a
// shared timeline with NoDelay: it runs at its slowest live subscriber's
// pace, waiting at most the write timeout for a full queue.
//
// # Handshake
//
// A subscription.request (the first WebSocket message, or POST
// /aaep/v1/subscriptions before an SSE stream) gets subscription.accepted
// with the terms a replay can keep: event filters, max_events_per_second
// (non-critical events held back, never merged) and the reply supports
// (without them awaiting.confirmation/clarification events are withheld,
// §5.3.1.4). Verbosity, languages and coalescing are echoed; payloads stay
// as captured. Critical events bypass filters and rate limits but keep
// their place in the order (§8.2.3). A subscriber that sends nothing within
// Options.Grace gets every event (§9.3.3).
//
// A later request, or a renegotiation, is answered between two events and
// governs every event after its answer: each subscriber's writer judges an
// event under the terms in force when it writes it, so a handshake never
// loses, repeats or reorders an event. A rejection closes the subscription
// after the answer (4001), dropping what was queued.
//
// # Resuming and replies
//
// An SSE Last-Event-ID resumes the subscriber's own timeline after that
// event (from the start for an id not in the range; 204 No Content when
// nothing follows). Reply tokens are those of awaiting events already
// written to the subscription (to any subscriber, on a shared timeline),
// each good for one reply. An invalid reply gets a generic 400 (§6.3.4);
// the operator's notice says why. Expiry is not checked: the captured
// timestamps are not rewritten.
//
// # Recording
//
// Options.Record receives the replay as the subscribers saw it, so that it
// is checked like a capture of theirs: what the replay sent is
// capfile.KindReceived, what a subscriber sent is capfile.KindSent,
// connections are capfile.KindConn. Each subscriber is one origin (1, 2,
// ... by arrival; 0 is the server), each record carries the attribute
// "subscription", and a message is recorded as it is handed to the
// connection, so an answer always comes after what it answers.
package serve
