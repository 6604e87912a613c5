package protocol

import (
	"fmt"
	"strings"
)

// Party is whose duty a rule states. A recorded stream holds both sides of
// a conversation (an AAEP producer's events and its subscribers' handshake
// messages and replies), and the specifications put each requirement on
// one of them: "the producer MUST ignore such a reply" (AAEP §6.3.4) is a
// duty of the producer, "subscribers SHOULD remove the prompt" (§6.8) one
// of the subscriber. Every rule declares its party (Rule.Party), every
// finding carries it (Finding.Party), and a report counts findings per
// party (Report.PartyCount), so that a producer is judged on its own
// duties only and a subscriber test judges the subscriber on its own.
//
// The parties are named after AAEP's roles. In a protocol whose messages
// all come from one emitter (a KAHN event file) that emitter is the
// Producer; in one whose peers follow the same rules (ASP agents), a rule
// is Either's.
type Party uint8

// The parties. The zero value is no party: every declared rule has one
// (a test of every model checks it).
const (
	// Producer is the agent that emits the events (AAEP's producer, a
	// KAHN emitter): its events, its handshake answers, what it does with
	// the replies it receives.
	Producer Party = iota + 1
	// Subscriber is the client that receives the events and speaks for
	// the user: its subscription requests and replies.
	Subscriber
	// Either binds whichever party sent the message (both sides share
	// the rule: subscription.close, a handshake message's type, an ASP
	// peer's envelope), or the recording itself (a message no protocol
	// takes, a session the recording cut off).
	Either
)

var partyNames = [...]string{"", "producer", "subscriber", "either"}

// Parties lists the parties in their order, for per-party counts.
var Parties = []Party{Producer, Subscriber, Either}

// String returns "producer", "subscriber" or "either".
func (p Party) String() string {
	if p != 0 && int(p) < len(partyNames) {
		return partyNames[p]
	}
	return fmt.Sprintf("Party(%d)", uint8(p))
}

// MarshalText encodes the party as its name (the zero Party as "").
func (p Party) MarshalText() ([]byte, error) {
	if p == 0 {
		return nil, nil
	}
	return []byte(p.String()), nil
}

// UnmarshalText decodes a party's name (ParseParty).
func (p *Party) UnmarshalText(b []byte) error {
	q, err := ParseParty(string(b))
	if err != nil {
		return err
	}
	*p = q
	return nil
}

// ParseParty parses "producer", "subscriber" or "either" (any case).
func ParseParty(s string) (Party, error) {
	for i, n := range partyNames {
		if i > 0 && strings.EqualFold(s, n) {
			return Party(i), nil
		}
	}
	return 0, fmt.Errorf("unknown party %q (want producer, subscriber or either)", s)
}
