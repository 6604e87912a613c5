package transporttest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// childArg is the first argument that turns a test binary into a stdio
// producer (see RunChild).
const childArg = "aaep-sourcetest-child"

// StdioChild is a producer that speaks stdio JSON-RPC 2.0 (AAEP Appendix
// B.6) as a child process. The child is the test binary itself: its
// TestMain must call RunChild first.
type StdioChild struct {
	// Events is the number of aaep.event notifications (Event(0)...).
	Events int `json:"events"`
	// Ping sends an aaep.ping request before the events and waits for the
	// answer.
	Ping bool `json:"ping,omitempty"`
	// Invalid adds, after the events, a line that is not JSON and an event
	// whose params hold invalid UTF-8.
	Invalid bool `json:"invalid,omitempty"`
	// Wait keeps the child running after the events until its stdin closes.
	Wait bool `json:"wait,omitempty"`
	// IgnoreTerm makes the child ignore SIGTERM (and stdin closing): only
	// SIGKILL stops it.
	IgnoreTerm bool `json:"ignore_term,omitempty"`
	// Exit is the exit status.
	Exit int `json:"exit,omitempty"`
	// Stderr is written to standard error at start.
	Stderr string `json:"stderr,omitempty"`
	// Interval paces the events.
	Interval time.Duration `json:"interval,omitempty"`
}

// Args returns the command line that starts the current test binary as
// this child.
func (c StdioChild) Args() []string {
	cfg, _ := json.Marshal(c)
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	return []string{exe, childArg, string(cfg)}
}

// InvalidJSONLine and InvalidUTF8Params are what a child with Invalid sends.
var (
	InvalidJSONLine   = []byte(`{"jsonrpc":"2.0","method":"aaep.event","params":{"type":`)
	InvalidUTF8Params = []byte("{\"type\":\"aaep:agent.output.streaming\",\"chunk\":\"caf\xe9\"}")
)

// RunChild runs the stdio producer and exits when the process was started
// by StdioChild.Args; otherwise it returns at once. Call it first in TestMain.
func RunChild() {
	if len(os.Args) < 3 || os.Args[1] != childArg {
		return
	}
	var c StdioChild
	if err := json.Unmarshal([]byte(os.Args[2]), &c); err != nil {
		fmt.Fprintln(os.Stderr, "sourcetest child:", err)
		os.Exit(99)
	}
	os.Exit(c.run(os.Stdin, os.Stdout, os.Stderr))
}

func (c StdioChild) run(stdin io.Reader, stdout, stderr io.Writer) int {
	if c.IgnoreTerm {
		signal.Ignore(syscall.SIGTERM)
	}
	if c.Stderr != "" {
		fmt.Fprintln(stderr, c.Stderr)
	}
	in := bufio.NewReader(stdin)
	out := bufio.NewWriter(stdout)
	send := func(line []byte) {
		out.Write(line)
		out.WriteByte('\n')
		out.Flush()
	}
	line, err := in.ReadBytes('\n')
	if err != nil {
		fmt.Fprintln(stderr, "sourcetest child: no request:", err)
		return 98
	}
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.Unmarshal(line, &req); err != nil || req.Method != "aaep.subscribe" {
		fmt.Fprintf(stderr, "sourcetest child: bad request %q\n", line)
		return 97
	}
	send(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":{"type":"subscription.accepted","subscription_id":"sub_stdio","aaep_version":"1.0.0","producer":{"agent_id":"retirement-planner"},"honored_capabilities":{}}}`, req.ID))
	if c.Ping {
		send([]byte(`{"jsonrpc":"2.0","id":"ping-1","method":"aaep.ping"}`))
		if _, err := in.ReadBytes('\n'); err != nil {
			return 96
		}
	}
	for i := 0; i < c.Events; i++ {
		send(fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"aaep.event","params":%s}`, Event(i)))
		if c.Interval > 0 {
			time.Sleep(c.Interval)
		}
	}
	if c.Invalid {
		send(InvalidJSONLine)
		send(fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"aaep.event","params":%s}`, InvalidUTF8Params))
	}
	if c.IgnoreTerm {
		select {}
	}
	if c.Wait {
		_, _ = io.Copy(io.Discard, in)
	}
	return c.Exit
}
