package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/procgroup"
	"github.com/aaep-tools/aaepkit/payload"
)

// stopGrace is how long a child gets to exit after SIGTERM before SIGKILL.
const stopGrace = 2 * time.Second

// stdioSource runs a producer as a child process speaking JSON-RPC 2.0 over
// its standard input and output, one message per line (AAEP Appendix B.6).
//
// What is recorded: the unwrapped AAEP message of every notification or
// request (its "params", attribute "method"), the "result" of the response
// to aaep.subscribe (attribute "method" aaep.subscribe), and, for any line
// that is not such an envelope (invalid JSON, an error response, a request
// without params), the whole line. The child's standard error passes
// through; it is never recorded.
type stdioSource struct {
	opts Options
	args []string
}

// NewExec returns a source that starts args as a child process.
func NewExec(args []string, opts Options) (Source, error) {
	if opts.Clock == nil {
		return nil, errors.New("source: no clock")
	}
	if len(args) == 0 || args[0] == "" {
		return nil, errors.New("exec: no command")
	}
	return &stdioSource{opts: opts, args: args}, nil
}

func (s *stdioSource) Info() Info {
	return Info{Transport: "stdio", Endpoint: "exec:" + strings.Join(safeArgs(s.args), " ")}
}

// Run starts the child, subscribes and records until the child exits (nil
// for exit status 0, an ErrFailed error otherwise) or ctx ends (the child
// is then sent aaep.close, its stdin closed, SIGTERM, and SIGKILL after a
// grace period).
func (s *stdioSource) Run(ctx context.Context, emit Emit) error {
	e := newEmitter(s.opts.Clock, emit)
	e.url = s.Info().Endpoint
	cmd := exec.Command(s.args[0], s.args[1:]...)
	cmd.Stderr = stderrOr(s.opts.Stderr)
	cmd.WaitDelay = stopGrace
	procgroup.Set(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("exec: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("exec: %w", err)
	}
	if err := cmd.Start(); err != nil {
		if cerr := e.conn(ConnEvent{Event: capfile.ConnFailed, Error: err.Error()}); cerr != nil {
			return cerr
		}
		return fmt.Errorf("%w: start %s: %w", ErrFailed, s.args[0], err)
	}
	waited := false
	defer func() {
		if !waited {
			_ = stdin.Close()
			terminate(cmd)
		}
	}()
	if err := e.conn(ConnEvent{Event: capfile.ConnConnected}); err != nil {
		return err
	}
	rpc := &rpcConn{e: e, w: stdin}
	stopRead := context.AfterFunc(ctx, func() {
		if d, ok := stdout.(interface{ SetReadDeadline(time.Time) error }); ok {
			_ = d.SetReadDeadline(time.Now())
		}
	})
	defer stopRead()

	if err := rpc.call("aaep.subscribe", s.opts.request()); err != nil {
		if e.err != nil {
			return e.err
		}
		// The child may have exited already; its exit status tells why.
	}
	fr := newFrameReader(stdout, FramingNDJSON, s.opts.maxMessageSize())
	o := outcome{connected: true}
	var rerr error
	for {
		line, err := fr.next()
		t := e.clock.Now()
		var tooLarge *FrameTooLargeError
		if errors.As(err, &tooLarge) {
			if err := e.conn(ConnEvent{Event: capfile.ConnRefused, Size: tooLarge.Size, Limit: tooLarge.Limit, Reason: "message too large"}); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			if err != io.EOF {
				rerr = err
				o.ev.Partial = fr.partial
			}
			break
		}
		if err := rpc.received(t, line); err != nil {
			return err
		}
	}

	if ctx.Err() != nil {
		rpc.close()
		_ = stdin.Close()
		waited = true
		terminate(cmd)
		return e.conn(ConnEvent{Event: capfile.ConnClosed, Reason: "capture stopped"})
	}
	_ = stdin.Close()
	waitErr := waitTimeout(cmd, stopGrace)
	waited = true
	code := cmd.ProcessState.ExitCode()
	ev := ConnEvent{Event: capfile.ConnClosed, Code: code, Reason: "process exited", Partial: o.ev.Partial}
	if rerr != nil {
		ev.Error = errText(rerr)
	}
	if err := e.conn(ev); err != nil {
		return err
	}
	if waitErr != nil || code != 0 {
		if waitErr == nil {
			waitErr = fmt.Errorf("exit status %d", code)
		}
		return fmt.Errorf("%w: %s: %w", ErrFailed, e.url, waitErr)
	}
	return nil
}

// waitTimeout waits for the child, killing it (and its process group) when
// it has not exited after d.
func waitTimeout(cmd *exec.Cmd, d time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		procgroup.Kill(cmd)
		return <-done
	}
}

// terminate asks the child to stop (SIGTERM to its process group), kills it
// after the grace period, and reaps it.
func terminate(cmd *exec.Cmd) {
	procgroup.Interrupt(cmd)
	_ = waitTimeout(cmd, stopGrace)
}

// rpcConn is the JSON-RPC side of a stdio source.
type rpcConn struct {
	e            *emitter
	w            io.Writer
	nextID       int
	subscribeID  string
	subscription string
	attr         [1]capfile.Attr
}

// call sends a request whose params are an AAEP message and records it.
func (c *rpcConn) call(method string, params []byte) error {
	c.nextID++
	id := fmt.Sprint(c.nextID)
	if method == "aaep.subscribe" {
		c.subscribeID = id
	}
	line := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`+"\n", id, method, params)
	if _, err := c.w.Write(line); err != nil {
		return fmt.Errorf("send %s: %w", method, err)
	}
	return c.e.message(capfile.KindSent, c.e.clock.Now(), params, []capfile.Attr{{Key: "method", Value: method}})
}

// close sends an aaep.close notification when a subscription is known.
func (c *rpcConn) close() {
	if c.subscription == "" {
		return
	}
	params, _ := json.Marshal(struct {
		Type           string `json:"type"`
		SubscriptionID string `json:"subscription_id"`
		ReasonCode     string `json:"reason_code"`
	}{"subscription.close", c.subscription, "subscriber_shutdown"})
	line := fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"aaep.close","params":%s}`+"\n", params)
	if _, err := c.w.Write(line); err == nil {
		_ = c.e.message(capfile.KindSent, c.e.clock.Now(), params, []capfile.Attr{{Key: "method", Value: "aaep.close"}})
	}
}

// received records one line from the child.
func (c *rpcConn) received(t int64, line []byte) error {
	env, ok := parseEnvelope(line)
	switch {
	case !ok:
		return c.e.message(capfile.KindReceived, t, line, nil)
	case env.method != "" && env.id != nil:
		// A request to us: answer so the child never waits on the recorder.
		if err := c.e.message(capfile.KindReceived, t, line, c.method(env.method)); err != nil {
			return err
		}
		var reply []byte
		if env.method == "aaep.ping" {
			reply = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":{}}`, env.id)
		} else {
			reply = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, env.id)
		}
		if _, err := c.w.Write(append(reply, '\n')); err != nil {
			return nil // the child is going away; its exit status will tell
		}
		return c.e.message(capfile.KindSent, c.e.clock.Now(), reply, nil)
	case env.method != "" && env.params != nil:
		return c.e.message(capfile.KindReceived, t, env.params, c.method(env.method))
	case env.result != nil && string(env.id) == c.subscribeID:
		if d := payload.Decode(env.result); d.IsObject() && d.Routing.Type == "subscription.accepted" {
			c.subscription, _ = d.Get("subscription_id").Str()
		}
		return c.e.message(capfile.KindReceived, t, env.result, c.method("aaep.subscribe"))
	default:
		return c.e.message(capfile.KindReceived, t, line, nil)
	}
}

func (c *rpcConn) method(m string) []capfile.Attr {
	c.attr[0] = capfile.Attr{Key: "method", Value: m}
	return c.attr[:]
}

// envelope holds the raw top-level members of a JSON-RPC message that the
// recorder looks at. Raw slices point into the line.
type envelope struct {
	method string
	id     []byte
	params []byte
	result []byte
}

// parseEnvelope reads a JSON-RPC 2.0 envelope. It returns false for a line
// that is not a valid JSON object with "jsonrpc":"2.0".
func parseEnvelope(line []byte) (envelope, bool) {
	var env envelope
	if !json.Valid(line) {
		return env, false
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(line, &fields); err != nil {
		return env, false
	}
	if v, ok := fields["jsonrpc"]; !ok || string(v) != `"2.0"` {
		return env, false
	}
	if m, ok := fields["method"]; ok {
		if err := json.Unmarshal(m, &env.method); err != nil {
			return env, false
		}
	}
	if v, ok := fields["id"]; ok && string(v) != "null" {
		env.id = v
	}
	if v, ok := fields["params"]; ok {
		env.params = v
	}
	if v, ok := fields["result"]; ok {
		env.result = v
	}
	return env, true
}
