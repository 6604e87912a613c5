package capfile

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Kind says what a record holds.
type Kind uint8

// Record kinds. The numeric values are part of the file format.
const (
	// KindReceived is a message received from an origin, payload exactly as received.
	KindReceived Kind = 1
	// KindSent is a message the recorder (or a replaying producer) sent to its peer.
	KindSent Kind = 2
	// KindConn is a connection event. Its payload is a small JSON object
	// whose "event" member is one of the Conn* names; capfile does not read it.
	KindConn Kind = 3
	// KindMarker is an annotation added by a person or a tool.
	KindMarker Kind = 4
)

// Kinds lists the record kinds this version defines, in numeric order.
var Kinds = []Kind{KindReceived, KindSent, KindConn, KindMarker}

var kindNames = [...]string{KindReceived: "received", KindSent: "sent", KindConn: "conn", KindMarker: "marker"}

// String returns the kind's name ("received", "sent", "conn", "marker"),
// or "kind:N" for a kind this version does not define.
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "kind:" + strconv.Itoa(int(k))
}

// ParseKind is the inverse of Kind.String.
func ParseKind(s string) (Kind, error) {
	for k, name := range kindNames {
		if name != "" && name == s {
			return Kind(k), nil
		}
	}
	if rest, ok := strings.CutPrefix(s, "kind:"); ok {
		if n, err := strconv.ParseUint(rest, 10, 8); err == nil {
			return Kind(n), nil
		}
	}
	return 0, fmt.Errorf("unknown kind %q", s)
}

// Connection events: the "event" member of a KindConn record's payload.
const (
	ConnConnected    = "connected"    // a connection (or child process, or file) is open
	ConnDisconnected = "disconnected" // the connection was lost without a clean close
	ConnClosed       = "closed"       // the connection ended cleanly (close frame, HTTP 204, EOF, exit)
	ConnRefused      = "refused"      // a message was not recorded (too large)
	ConnFailed       = "failed"       // a connection attempt failed
	ConnGaveUp       = "gave_up"      // retries exhausted or a permanent failure; the transport stops
)

// Flags qualify a record's payload. The numeric values are part of the file format.
type Flags uint8

const (
	// FlagInvalidJSON marks a payload that is not valid JSON.
	FlagInvalidJSON Flags = 1 << iota
	// FlagInvalidUTF8 marks a payload that is not valid UTF-8.
	FlagInvalidUTF8
	// FlagRedacted marks a payload whose fields were redacted before writing.
	FlagRedacted
	// FlagNoRecvTime marks a record whose Time was derived from the payload's own
	// timestamp (an import), not from a monotonic receive clock.
	FlagNoRecvTime
)

var flagNames = [...]string{"invalid_json", "invalid_utf8", "redacted", "no_recv_time"}

// Names returns the names of the flags set in f, lowest bit first:
// "invalid_json", "invalid_utf8", "redacted", "no_recv_time", or "bit:N"
// for a bit this version does not define.
func (f Flags) Names() []string {
	var out []string
	for bit := range 8 {
		if f&(1<<bit) == 0 {
			continue
		}
		if bit < len(flagNames) {
			out = append(out, flagNames[bit])
		} else {
			out = append(out, "bit:"+strconv.Itoa(bit))
		}
	}
	return out
}

// ParseFlags is the inverse of Flags.Names.
func ParseFlags(names []string) (Flags, error) {
	var f Flags
next:
	for _, s := range names {
		for bit, name := range flagNames {
			if name == s {
				f |= 1 << bit
				continue next
			}
		}
		if rest, ok := strings.CutPrefix(s, "bit:"); ok {
			if n, err := strconv.ParseUint(rest, 10, 3); err == nil {
				f |= 1 << n
				continue
			}
		}
		return 0, fmt.Errorf("unknown flag %q", s)
	}
	return f, nil
}

// Attr is one transport attribute kept with a record, such as the SSE "id" and
// "event" fields or a JSON-RPC method.
type Attr struct {
	Key, Value string
}

// Record is one entry of a capture.
type Record struct {
	Kind  Kind
	Flags Flags
	// Origin is the id of the record's origin in the header's origin table
	// (the endpoint it was received from).
	Origin uint16
	// Time is the monotonic receive time in nanoseconds since the capture's
	// start. It never decreases from one record to the next.
	Time int64
	// Session is the session key the writer indexes this record under
	// (empty when unknown). The caller supplies it; capfile never parses payloads.
	Session string
	// Attrs are transport attributes (may be nil).
	Attrs []Attr
	// Payload is the message bytes exactly as received.
	Payload []byte
}

// Offset returns the record's receive time as a duration since the capture's start.
func (r *Record) Offset() time.Duration { return time.Duration(r.Time) }

// Attr returns the value of the attribute named key, or "".
func (r *Record) Attr(key string) string {
	for _, a := range r.Attrs {
		if a.Key == key {
			return a.Value
		}
	}
	return ""
}

// Origin describes one endpoint a capture was recorded from (an entry of
// the header's origin table, stored as "sources" in the format). It never holds
// credentials: URLs are stored without user info, and header values are not stored.
type Origin struct {
	ID          uint16 `json:"id"`
	Transport   string `json:"transport"` // "sse", "websocket", "unix", "stdio", "file", "replay", ...
	Endpoint    string `json:"endpoint"`
	Subprotocol string `json:"subprotocol,omitempty"`
}

// Describe names the origin as reports list it: its transport and endpoint,
// and the subprotocol in brackets ("grpc grpc://127.0.0.1:8766",
// "websocket ws://127.0.0.1:8765/aaep/v1/ws (aaep.v1)").
func (o Origin) Describe() string {
	s := o.Transport
	if o.Endpoint != "" {
		s += " " + o.Endpoint
	}
	if o.Subprotocol != "" {
		s += " (" + o.Subprotocol + ")"
	}
	return s
}

// DescribeOrigins lists origins on one line, each with its id:
// "#0 grpc grpc://127.0.0.1:8766; #1 sse http://127.0.0.1:8765/events"
// ("" for none).
func DescribeOrigins(origins []Origin) string {
	var b strings.Builder
	for i, o := range origins {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString("#" + strconv.Itoa(int(o.ID)) + " " + o.Describe())
	}
	return b.String()
}

// Header is the metadata at the start of every capture.
type Header struct {
	// Version is the format version (set by the writer).
	Version int `json:"version"`
	// Start is the wall-clock time of the capture's start; Start plus a
	// record's Time gives the record's absolute receive time.
	Start time.Time `json:"start"`
	// Tool names the recording tool and its version, e.g. "aaep-capture/0.1.0".
	Tool string `json:"tool"`
	// Origins is the origin table ("sources" in the format).
	Origins []Origin `json:"sources"`
	// Redacted lists the JSON fields whose values were replaced before writing
	// (empty when payloads are byte-exact).
	Redacted []string `json:"redacted,omitempty"`
	// Meta holds free-form annotations (never credentials).
	Meta map[string]string `json:"meta,omitempty"`
}

// Clone returns a deep copy of r, whose slices stay valid after the
// Reader moves on.
func (r *Record) Clone() Record {
	c := *r
	c.Payload = append([]byte(nil), r.Payload...)
	if r.Attrs != nil {
		c.Attrs = append([]Attr(nil), r.Attrs...)
	}
	return c
}

// Tools that write captures; Header.Tool is one of them, "/" and its version.
const (
	ToolCapture = "aaep-capture" // records live endpoints
	ToolReplay  = "aaep-replay"  // records replays (MetaReplayOf), imports and edits
)

// Header meta keys with a meaning of their own.
const (
	// MetaDerivedFrom names the input of a cut, filter, split or dedupe.
	MetaDerivedFrom = "derived_from"
	// MetaMergedFrom lists the inputs of a merge.
	MetaMergedFrom = "merged_from"
	// MetaReplayOf names the capture a serve --record (or push --record)
	// recording replayed: its origins recorded a replay.
	MetaReplayOf = "replay_of"
)

// Original reports whether h is the header of an original recording, one
// no command can make again: ToolCapture's, or ToolReplay's recording of a
// replay (MetaReplayOf). Derived (MetaDerivedFrom), merged (MetaMergedFrom)
// and imported captures are not; a repair keeps its input's header.
// Commands never replace an original recording without --force.
func (h *Header) Original() bool {
	if h.Meta[MetaDerivedFrom] != "" || h.Meta[MetaMergedFrom] != "" {
		return false
	}
	tool, _, _ := strings.Cut(h.Tool, "/")
	return tool == ToolCapture || tool == ToolReplay && h.Meta[MetaReplayOf] != ""
}

// The times a capture can hold. Readers place a record at its absolute
// time, the header's Start plus the record's Time, counted in nanoseconds
// since 1970 in an int64 (time.Time.UnixNano): from 1677-09-21 to
// 2262-04-11. A writer of captures from timestamps (an import) refuses a
// time outside it instead of clamping it.
var (
	MinTime = time.Unix(0, math.MinInt64).UTC()
	MaxTime = time.Unix(0, math.MaxInt64).UTC()
)

// InRange reports whether t is a time a capture can hold (MinTime to
// MaxTime).
func InRange(t time.Time) bool { return !t.Before(MinTime) && !t.After(MaxTime) }
