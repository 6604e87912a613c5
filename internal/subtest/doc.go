// Package subtest tests an AAEP subscriber: it plays a scenario (a capture
// and what the subscriber is expected to do with it) to the subscriber over
// serve's shared, controlled timeline, records the exchange, and judges what
// the subscriber sent back: the scenario's expectations, and the
// subscriber-side rules of the AAEP checker (the same rule ids and levels
// `check` reports), read from the recording.
//
// # Scenario files
//
// A scenario is a YAML file beside its capture:
//
//	name: confirmation-default-reject     # defaults to the file's base name
//	level: 2                              # the conformance level it tests (1, 2 or 3)
//	sections: ["§6.4", "§9.4.2(3)"]       # what it tests
//	description: A confirmation the user rejects.
//	user: Press "reject" on the confirmation.   # the scripted user's decision, in words
//	decisions:                            # and for a harness (AAEP_TEST_DECISIONS)
//	  - {token: rpl_abc, decision: reject, delay: 300ms}            # action: reply (the default)
//	  - {action: renegotiate, after: evt_a10000, capabilities: {preferred_verbosity: terse}}
//	  - {action: shutdown, after: evt_a10007}                        # quit: subscription.close
//	capture: refund.jsonl                 # a capture or JSON Lines file, relative to this file
//	speed: 1                              # or no_delay: true
//	keepalive: 15s                        # the silence after which the stream gets a keepalive
//	linger: 2s                            # how long replies are awaited after the last event
//	reject: version_unsupported           # answer every subscription.request with subscription.rejected
//	faults:
//	  - {cut: 3}                          # cut the connection after the 3rd event
//	  - {pause: 40s, after: 5}            # hold the stream (keepalives only) after the 5th event
//	  - {redeliver: 4}                    # cut after the 4th event, then send it again
//	  - {slow: 0.2, after: 2}             # from the 2nd event on, play at 0.2x
//	expect:
//	  - reply: {token: rpl_abc, decision: reject, within: 30s, once: true}
//	  - no_reply: {}                      # or {token: rpl_abc}: no reply (to it)
//	  - request: {capabilities: {supports_confirmation_reply: true}}
//	  - sends: {type: subscription.renegotiate}
//	  - stays_connected: {}
//	  - resumes: {within: 10s}
//	    required: true                    # an advisory expectation made required
//	  - announce: {type: session.errored, session: sess_b2, contains: [error, fail], politeness: assertive}
//
// Every key is checked: an unknown key, a value of the wrong kind or a
// missing required field is an error that names the file and line.
//
// # Required and advisory
//
// reply, no_reply, request, sends and announce are required unless marked
// `required: false`: they are what §9.4.2 and §9.5.2 demand of a subscriber.
// stays_connected and resumes are advisory unless marked `required: true`:
// resumption is a MAY (B.1.5) and surviving silence is robustness. A failed
// advisory expectation is reported as a warning and does not fail the run.
//
// # What the user is told
//
// announce expectations judge what the subscriber announced (§9.3.2), as
// heard in a web page's ARIA live regions in headless Chromium
// (Options.Page, page.go) or as a native subscriber reports it on
// descriptor 3 (Options.Announcements, heard.go); see announce.go. Where
// nothing observes it they are not observable, neither passed nor failed.
package subtest
