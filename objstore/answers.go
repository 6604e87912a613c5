package objstore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"regexp"
	"strings"
	"unicode"
)

// ErrNotS3 reports an answer no S3 server gives: an error answered with a
// web page or with a body that is not an S3 error document (a web server
// or a login portal at the endpoint), or an upload accepted without an
// ETag. (A server error answered so, a proxy's 502 page, is an error of
// its own that names the page, as transient as any 5xx.) The S3 client would read such an
// answer's status alone (a 404 page as "no such object", a 403 page as
// "access denied", a 200 page as a stored upload), so it is refused
// instead.
var ErrNotS3 = errors.New("not an S3 server")

// notS3Error is ErrNotS3 with what was answered. (The request is named
// by the error around it: the client's url.Error, or the upload's.) A
// server error (5xx) answered so is a proxy's or a load balancer's page
// in front of the server, perhaps for a while: it says so, and is not
// ErrNotS3.
type notS3Error struct {
	status  string
	code    int
	what    string // "with an HTML page", "without an ETag", ...
	excerpt string // the page's title or first words, if any
}

func (e *notS3Error) Error() string {
	s := fmt.Sprintf("%v: it answered %s", ErrNotS3, e.status)
	if e.code >= 500 {
		s = "the server answered " + e.status
	}
	if e.what != "" {
		s += " " + e.what
	}
	if e.excerpt != "" {
		s += fmt.Sprintf(" (%q)", e.excerpt)
	}
	if e.code >= 500 {
		s += ", not an S3 error: a proxy or load balancer in front of it?"
	}
	return s
}

func (e *notS3Error) Unwrap() error {
	if e.code >= 500 {
		return nil
	}
	return ErrNotS3
}

// s3Answers refuses answers that cannot come from an S3 server (ErrNotS3).
// S3 answers an error with an XML document (or, to HEAD, with no body),
// never with HTML; an answer that is not an error passes unread.
type s3Answers struct {
	base http.RoundTripper
}

// answerPeek is how much of an error answer's body is read to judge it;
// the client reads the rest as before.
const answerPeek = 512

func (t *s3Answers) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	if resp.StatusCode < 300 || resp.StatusCode == http.StatusNotModified {
		return t.success(req, resp)
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	var head []byte
	if req.Method != http.MethodHead && resp.Body != nil {
		head, err = io.ReadAll(io.LimitReader(resp.Body, answerPeek))
		if err != nil {
			resp.Body.Close()
			return nil, err
		}
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
	}
	body := bytes.TrimLeftFunc(head, unicode.IsSpace)
	var what string
	switch {
	case strings.Contains(ct, "html") || looksHTML(body):
		what = "with an HTML page"
	case len(body) > 0 && body[0] != '<':
		what = "with a body that is not an S3 error document"
		if ct != "" {
			what += " (" + ct + ")"
		}
	default:
		return resp, nil
	}
	resp.Body.Close()
	return nil, &notS3Error{status: resp.Status, code: resp.StatusCode, what: what, excerpt: excerpt(body)}
}

// success refuses a success answer to a read that no S3 server gives: a
// web page (a catch-all, a portal) answered 200 to a HEAD or GET of an
// object, without the ETag and Last-Modified every object's answer has
// (the client would read it as an object, and fail on its headers: "Last-
// Modified time format is invalid"). Any other answer passes unread,
// objects whose own content is HTML included.
func (t *s3Answers) success(req *http.Request, resp *http.Response) (*http.Response, error) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		return resp, nil
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if !strings.Contains(ct, "html") {
		return resp, nil
	}
	if _, err := http.ParseTime(resp.Header.Get("Last-Modified")); err == nil && resp.Header.Get("ETag") != "" {
		return resp, nil // an object (that holds HTML)
	}
	var head []byte
	if req.Method != http.MethodHead && resp.Body != nil {
		head, _ = io.ReadAll(io.LimitReader(resp.Body, answerPeek))
	}
	if resp.Body != nil {
		resp.Body.Close()
	}
	body := bytes.TrimLeftFunc(head, unicode.IsSpace)
	return nil, &notS3Error{status: resp.Status, code: resp.StatusCode, what: "with an HTML page", excerpt: excerpt(body)}
}

func looksHTML(b []byte) bool {
	lower := bytes.ToLower(b[:min(len(b), 64)])
	return bytes.HasPrefix(lower, []byte("<!doctype html")) || bytes.HasPrefix(lower, []byte("<html"))
}

var titleRE = regexp.MustCompile(`(?is)<title[^>]*>\s*([^<]{1,80})`)

// excerpt returns an HTML page's title, or the first words of any other
// body, printable and short.
func excerpt(b []byte) string {
	s := string(b)
	if m := titleRE.FindStringSubmatch(s); m != nil {
		s = m[1]
	} else if len(b) > 0 && b[0] == '<' {
		return ""
	}
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) || unicode.IsSpace(r) }), " ")
	if r := []rune(s); len(r) > 60 {
		s = string(r[:60]) + "..."
	}
	return s
}
