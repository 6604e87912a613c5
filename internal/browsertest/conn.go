package browsertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/gorilla/websocket"
)

// conn is a DevTools protocol connection: JSON commands with ids, answered
// out of order, and events, some of them addressed to a flattened session.
type conn struct {
	ws *websocket.Conn

	writeMu sync.Mutex

	mu       sync.Mutex
	nextID   int64
	pending  map[int64]chan response
	sessions map[string]func(eventMsg)
	err      error         // why the connection ended; set once
	done     chan struct{} // closed when the read loop ends
}

type response struct {
	Result json.RawMessage
	Err    *cdpError
}

// cdpError is an error answered by the browser to a command.
type cdpError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    string `json:"data,omitempty"`
}

func (e *cdpError) Error() string {
	if e.Data != "" {
		return fmt.Sprintf("%s (%d): %s", e.Message, e.Code, e.Data)
	}
	return fmt.Sprintf("%s (%d)", e.Message, e.Code)
}

// errClosed is returned for commands on a connection that has ended.
var errClosed = errors.New("browsertest: DevTools connection closed")

func dial(ctx context.Context, url string) (*conn, error) {
	d := websocket.Dialer{ReadBufferSize: 64 << 10, WriteBufferSize: 64 << 10}
	ws, _, err := d.DialContext(ctx, url, nil)
	if err != nil {
		return nil, err
	}
	ws.SetReadLimit(256 << 20) // screenshots and large evaluations
	c := &conn{
		ws:       ws,
		pending:  make(map[int64]chan response),
		sessions: make(map[string]func(eventMsg)),
		done:     make(chan struct{}),
	}
	go c.readLoop()
	return c, nil
}

func (c *conn) addSession(id string, fn func(eventMsg)) {
	c.mu.Lock()
	c.sessions[id] = fn
	c.mu.Unlock()
}

func (c *conn) removeSession(id string) {
	c.mu.Lock()
	delete(c.sessions, id)
	c.mu.Unlock()
}

func (c *conn) readLoop() {
	defer close(c.done)
	for {
		var msg struct {
			ID        int64           `json:"id"`
			Method    string          `json:"method"`
			Params    json.RawMessage `json:"params"`
			Result    json.RawMessage `json:"result"`
			Error     *cdpError       `json:"error"`
			SessionID string          `json:"sessionId"`
		}
		if err := c.ws.ReadJSON(&msg); err != nil {
			c.fail(err)
			return
		}
		if msg.ID != 0 {
			c.mu.Lock()
			ch := c.pending[msg.ID]
			delete(c.pending, msg.ID)
			c.mu.Unlock()
			if ch != nil {
				ch <- response{Result: msg.Result, Err: msg.Error}
			}
			continue
		}
		if msg.Method == "" {
			continue
		}
		c.mu.Lock()
		fn := c.sessions[msg.SessionID]
		c.mu.Unlock()
		if fn != nil {
			fn(eventMsg{Method: msg.Method, Params: msg.Params})
		}
	}
}

// fail ends every pending command with err.
func (c *conn) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = fmt.Errorf("%w: %v", errClosed, err)
	}
	for id, ch := range c.pending {
		ch <- response{Err: &cdpError{Code: -1, Message: c.err.Error()}}
		delete(c.pending, id)
	}
}

// call sends one command (to the browser when session is empty) and waits
// for its answer or the end of ctx.
func (c *conn) call(ctx context.Context, session, method string, params, result any) error {
	if params == nil {
		params = struct{}{}
	}
	ch := make(chan response, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return fmt.Errorf("%s: %w", method, err)
	}
	c.nextID++
	id := c.nextID
	c.pending[id] = ch
	c.mu.Unlock()

	req := struct {
		ID        int64  `json:"id"`
		Method    string `json:"method"`
		Params    any    `json:"params"`
		SessionID string `json:"sessionId,omitempty"`
	}{id, method, params, session}
	c.writeMu.Lock()
	err := c.ws.WriteJSON(req)
	c.writeMu.Unlock()
	if err != nil {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case r := <-ch:
		if r.Err != nil {
			return fmt.Errorf("%s: %w", method, r.Err)
		}
		if result != nil && len(r.Result) > 0 {
			if err := json.Unmarshal(r.Result, result); err != nil {
				return fmt.Errorf("%s: decode result: %w", method, err)
			}
		}
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return fmt.Errorf("%s: %w", method, context.Cause(ctx))
	}
}

func (c *conn) close() {
	_ = c.ws.Close()
	<-c.done
}
