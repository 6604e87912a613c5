package otlpexport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"
)

// TracesPath is where an OTLP/HTTP receiver takes traces.
const TracesPath = "/v1/traces"

// Client posts requests to an OTLP/HTTP receiver: protobuf, gzip, with
// retries and backoff on the answers the OTLP specification calls
// retryable (429, 502, 503, 504) and on connection errors.
type Client struct {
	// URL is where requests go: the endpoint's base URL with TracesPath.
	URL string
	// Header is added to every request (authorization, tenant).
	Header http.Header
	// HTTP sends the requests; nil is a client with a 30 s timeout.
	HTTP *http.Client
	// Attempts is how many times a request is tried; 0 is 5.
	Attempts int
	// Backoff is the wait after the first failure, doubled after each
	// next one up to MaxBackoff; 0 is 500 ms (MaxBackoff 0 is 8 s). A
	// Retry-After answer waits as it says, up to MaxBackoff.
	Backoff, MaxBackoff time.Duration
	// MaxRequestBytes bounds a request's protobuf encoding: a larger one
	// is sent as two, of about half its spans each (0 is
	// DefaultMaxRequestBytes). A receiver that refuses a request for its
	// size (413, or a Collector's 400 "request body too large") lowers the
	// bound to half the refused request's for the rest of the export and
	// gets that request as two.
	MaxRequestBytes int
	// Rejected counts the spans the receiver said it rejected (a partial
	// success), and Warning holds its last message.
	Rejected int64
	Warning  string
	// Split counts the requests sent as two (MaxRequestBytes), TooLarge
	// the receiver's refusals for size among them, and Bytes the gzip
	// bytes of the requests the receiver took.
	Split, TooLarge int
	Bytes           int64

	// raw, body and zw are kept from one Send to the next (requests are
	// sent one at a time): the encoding, its gzip, the compressor.
	raw  []byte
	body bytes.Buffer
	zw   *gzip.Writer
}

// DefaultMaxRequestBytes is Client.MaxRequestBytes' default: well below
// the 20 MiB an OpenTelemetry Collector's OTLP/HTTP receiver (Jaeger's,
// Tempo's) takes by default, and above the 5.5 MB of a request of
// DefaultPostSpans spans of make bench's recording.
const DefaultMaxRequestBytes = 8 << 20

// TracesURL returns the URL traces are posted to for endpoint: its base
// URL (http://HOST:4318) with TracesPath, or the URL as given when its
// path ends with TracesPath. Only http and https are accepted.
func TracesURL(endpoint string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", fmt.Errorf("OTLP endpoint %q: %w", endpoint, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "", fmt.Errorf("OTLP endpoint %q: want http://HOST:PORT or https://HOST:PORT (OTLP/HTTP, port 4318 by default)", endpoint)
	}
	if !strings.HasSuffix(u.Path, TracesPath) {
		u.Path = strings.TrimSuffix(u.Path, "/") + TracesPath
	}
	return u.String(), nil
}

// ParseHeader parses "K=V" (--otlp-header) into h.
func ParseHeader(h http.Header, kv string) error {
	k, v, ok := strings.Cut(kv, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		return fmt.Errorf("header %q: want KEY=VALUE", kv)
	}
	if strings.ContainsAny(k, " \t\r\n:") || strings.ContainsAny(v, "\r\n\x00") {
		return fmt.Errorf("header %q: a name without spaces or colons, a value without line breaks", k)
	}
	h.Add(k, v)
	return nil
}

// retryable reports whether an answer's status says to try again.
func retryable(code int) bool {
	switch code {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// Send posts req, retrying as Client says. The error names the URL.
func (c *Client) Send(ctx context.Context, req *coltracepb.ExportTraceServiceRequest) error {
	raw, err := MarshalProto(c.raw[:0], req)
	if err != nil {
		return fmt.Errorf("encoding OTLP request: %w", err)
	}
	c.raw = raw
	limit := c.MaxRequestBytes
	if limit <= 0 {
		limit = DefaultMaxRequestBytes
	}
	if len(raw) > limit && spanCount(req) > 1 {
		return c.sendHalves(ctx, req)
	}
	body := &c.body
	body.Reset()
	if c.zw == nil {
		c.zw, _ = gzip.NewWriterLevel(body, gzip.BestSpeed)
	} else {
		c.zw.Reset(body)
	}
	c.zw.Write(raw)
	if err := c.zw.Close(); err != nil {
		return err
	}
	attempts := c.Attempts
	if attempts <= 0 {
		attempts = 5
	}
	wait := c.Backoff
	if wait <= 0 {
		wait = 500 * time.Millisecond
	}
	maxWait := c.MaxBackoff
	if maxWait <= 0 {
		maxWait = 8 * time.Second
	}
	for try := 1; ; try++ {
		after, err := c.post(ctx, body.Bytes())
		if err == nil {
			c.Bytes += int64(body.Len())
			return nil
		}
		var perm *permanentError
		if errors.As(err, &perm) && perm.tooLarge {
			c.TooLarge++
			if spanCount(req) < 2 {
				return fmt.Errorf("%w: a request of one span, %d bytes encoded, is more than it takes", err, len(raw))
			}
			c.MaxRequestBytes = len(raw) / 2
			return c.sendHalves(ctx, req)
		}
		if errors.As(err, &perm) || try >= attempts || ctx.Err() != nil {
			if !errors.As(err, &perm) && try > 1 {
				return fmt.Errorf("%w (gave up after %d attempts)", err, try)
			}
			return err
		}
		d := wait
		if after > 0 {
			d = min(after, maxWait)
		}
		wait = min(wait*2, maxWait)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

// sendHalves sends req as two requests of about half its spans each.
func (c *Client) sendHalves(ctx context.Context, req *coltracepb.ExportTraceServiceRequest) error {
	c.Split++
	a, b := halves(req)
	if err := c.Send(ctx, a); err != nil {
		return err
	}
	return c.Send(ctx, b)
}

// permanentError is an answer that trying again does not change;
// tooLarge says the receiver refused the request for its size.
type permanentError struct {
	error
	tooLarge bool
}

func (e *permanentError) Unwrap() error { return e.error }

// post sends one attempt; a retryable failure comes with how long the
// receiver asked to wait (0: not said).
func (c *Client) post(ctx context.Context, body []byte) (time.Duration, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return 0, &permanentError{error: fmt.Errorf("OTLP endpoint %s: %w", c.URL, err)}
	}
	for k, vs := range c.Header {
		for _, v := range vs {
			hreq.Header.Add(k, v)
		}
	}
	hreq.Header.Set("Content-Type", "application/x-protobuf")
	hreq.Header.Set("Content-Encoding", "gzip")
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := hc.Do(hreq)
	if err != nil {
		return 0, fmt.Errorf("cannot reach OTLP endpoint %s: %w", c.URL, err)
	}
	defer resp.Body.Close()
	data, rerr := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	ctype, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	isProto := ctype == "application/x-protobuf"
	if resp.StatusCode/100 == 2 {
		if rerr != nil {
			return 0, fmt.Errorf("OTLP endpoint %s: reading the answer: %w", c.URL, rerr)
		}
		if len(data) == 0 {
			return 0, nil
		}
		if !isProto {
			return 0, &permanentError{error: fmt.Errorf("OTLP endpoint %s answered %s with %s, not an OTLP response: is it an OTLP/HTTP receiver (http://HOST:4318)?", c.URL, resp.Status, describeType(ctype))}
		}
		var ans coltracepb.ExportTraceServiceResponse
		if err := proto.Unmarshal(data, &ans); err != nil {
			return 0, &permanentError{error: fmt.Errorf("OTLP endpoint %s answered %s with an undecodable response: %w", c.URL, resp.Status, err)}
		}
		if ps := ans.GetPartialSuccess(); ps != nil {
			c.Rejected += ps.GetRejectedSpans()
			if ps.GetErrorMessage() != "" {
				c.Warning = ps.GetErrorMessage()
			}
		}
		return 0, nil
	}
	msg := ""
	if isProto {
		var st status.Status
		if proto.Unmarshal(data, &st) == nil {
			msg = st.GetMessage()
		}
	} else if ctype == "text/plain" || ctype == "application/json" {
		msg = strings.TrimSpace(string(data))
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
	}
	err = fmt.Errorf("OTLP endpoint %s answered %s", c.URL, resp.Status)
	if msg != "" {
		err = fmt.Errorf("%w: %s", err, msg)
	}
	if retryable(resp.StatusCode) {
		return retryAfter(resp.Header.Get("Retry-After")), err
	}
	if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed || resp.StatusCode == http.StatusUnsupportedMediaType {
		err = fmt.Errorf("%w: is it an OTLP/HTTP receiver (http://HOST:4318, traces at %s)?", err, TracesPath)
	}
	return 0, &permanentError{err, tooLarge(resp.StatusCode, msg)}
}

// tooLarge reports whether an answer refuses a request for its size: 413
// (Content Too Large), or the 400 an OpenTelemetry Collector's OTLP/HTTP
// receiver (Jaeger's, Tempo's) answers past its max_request_body_size,
// whose message is Go's http.MaxBytesReader error.
func tooLarge(code int, msg string) bool {
	return code == http.StatusRequestEntityTooLarge ||
		code == http.StatusBadRequest && strings.Contains(msg, "request body too large")
}

func describeType(ctype string) string {
	if ctype == "" {
		return "no content type"
	}
	return ctype
}

// retryAfter reads a Retry-After header's seconds (0: none or a date).
func retryAfter(v string) time.Duration {
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	return 0
}
