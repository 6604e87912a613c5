package objstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aaep-tools/aaepkit/objstore"
	"github.com/aaep-tools/aaepkit/objstore/s3test"
)

// A server at the endpoint that is not S3 (a web server's error pages, a
// login portal, a catch-all that answers 200 to anything) is ErrNotS3,
// never the status it answered read as S3's: a 404 page is not "no such
// object", a 403 page not "access denied", a 200 to an upload not a
// stored object.
func TestNotS3(t *testing.T) {
	const page = "<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head><body><h1>Not Found</h1></body></html>\n"
	tests := []struct {
		name    string
		handler http.HandlerFunc
		op      string // "exists", "stat" or "put"
		want    []string
	}{
		{name: "HTML 404", op: "exists", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, page)
		}, want: []string{`/caps/run.aaep": not an S3 server`, "404 Not Found", "with an HTML page", `"404 Not Found"`}},
		{name: "HTML 404 to HEAD", op: "stat", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, page)
		}, want: []string{`Head "http://`, `/caps/run.aaep": not an S3 server`, "with an HTML page"}},
		{name: "HTML page without its type", op: "exists", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/octet-stream")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, "\n  <html><title>Sign in</title></html>")
		}, want: []string{"403 Forbidden", "with an HTML page", `"Sign in"`}},
		{name: "plain text 404", op: "exists", handler: http.NotFound,
			want: []string{"404 Not Found", "with a body that is not an S3 error document (text/plain)", `"404 page not found"`}},
		{name: "JSON 404", op: "exists", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"error":"no route"}`)
		}, want: []string{"404 Not Found", "(application/json)", `no route`}},
		// A catch-all page answered 200 to a read: not an object's answer
		// (no ETag, no Last-Modified); it was read as one, and failed as
		// "Last-Modified time format is invalid" (issue 34).
		{name: "HTML 200 to HEAD", op: "stat", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, "<!DOCTYPE html><html><head><title>Welcome</title></head></html>")
		}, want: []string{"not an S3 server: it answered 200 OK with an HTML page"}},
		{name: "HTML 200 to GET", op: "exists", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<!DOCTYPE html><html><head><title>Welcome</title></head></html>")
		}, want: []string{"not an S3 server: it answered 200 OK with an HTML page", `"Welcome"`}},
		{name: "200 to anything", op: "put", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html>ok</html>")
		}, want: []string{"PUT http://", `/caps/run.aaep: not an S3 server: it answered 200 OK without an ETag`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			setCredentials(t)
			var warned []string
			st, err := objstore.Open(context.Background(), objstore.URL{Scheme: "s3", Bucket: "caps"},
				objstore.Options{Endpoint: srv.URL, Retries: -1, Warnf: func(f string, a ...any) { warned = append(warned, fmt.Sprintf(f, a...)) }})
			if err != nil {
				t.Fatal(err)
			}
			switch tt.op {
			case "exists":
				_, err = objstore.Exists(context.Background(), st, "run.aaep")
			case "stat":
				_, err = st.Stat(context.Background(), "run.aaep")
			case "put":
				err = st.PutNew(context.Background(), "run.aaep", bytes.NewReader([]byte("part")), 4)
			}
			if !errors.Is(err, objstore.ErrNotS3) {
				t.Fatalf("%s = %v, want ErrNotS3", tt.op, err)
			}
			if errors.Is(err, objstore.ErrNotFound) || errors.Is(err, objstore.ErrAccess) || errors.Is(err, objstore.ErrExists) {
				t.Errorf("%s = %v: read as an S3 answer too", tt.op, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s = %q, want it to say %q", tt.op, err, w)
				}
			}
			if len(warned) != 0 {
				t.Errorf("warnings with credentials: %q", warned)
			}
		})
	}

	// A proxy's error page for a server error is transient, as any 5xx:
	// not ErrNotS3, but it names the page.
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		fmt.Fprint(w, "<html><head><title>502 Bad Gateway</title></head></html>")
	}))
	defer proxy.Close()
	setCredentials(t)
	st, err := objstore.Open(context.Background(), objstore.URL{Scheme: "s3", Bucket: "caps"}, objstore.Options{Endpoint: proxy.URL, Retries: -1,
		Warnf: func(f string, a ...any) { t.Errorf("warning with credentials: "+f, a...) }})
	if err != nil {
		t.Fatal(err)
	}
	_, err = objstore.Exists(context.Background(), st, "run.aaep")
	if err == nil || errors.Is(err, objstore.ErrNotS3) || errors.Is(err, objstore.ErrNotFound) ||
		!strings.Contains(err.Error(), `the server answered 502 Bad Gateway with an HTML page ("502 Bad Gateway"), not an S3 error`) {
		t.Errorf("Exists behind a proxy's 502 page = %v, want an error naming the page, not ErrNotS3", err)
	}

	// An S3 server's own error answers stay what they are.
	srv := s3test.Start(t, "caps")
	st = openStore(t, srv, "caps")
	if _, err := st.Stat(context.Background(), "none.aaep"); !errors.Is(err, objstore.ErrNotFound) || errors.Is(err, objstore.ErrNotS3) {
		t.Errorf("Stat of a missing object on S3 = %v, want ErrNotFound", err)
	}
	if ok, err := objstore.Exists(context.Background(), st, "none.aaep"); ok || err != nil {
		t.Errorf("Exists of a missing object on S3 = %v, %v; want false, nil", ok, err)
	}
	if _, err := objstore.Exists(context.Background(), openStore(t, srv, "nobucket"), "x.aaep"); !errors.Is(err, objstore.ErrNoBucket) {
		t.Errorf("Exists in a missing bucket on S3 = %v, want ErrNoBucket", err)
	}
}

// setCredentials gives the process valid-looking keys in the environment,
// so the credential chain stops there.
func setCredentials(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", s3test.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s3test.SecretKey)
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_REGION", s3test.Region)
}

// No request goes out unsigned unannounced: Anonymous says so when the
// Store opens, and a credential chain that finds nothing says so at the
// first request (once). The chain's last link, the task or instance role,
// is pointed at a loopback server that has no credentials, so that no
// cloud metadata address is asked.
func TestUnsignedWarns(t *testing.T) {
	srv := s3test.Start(t, "caps")
	srv.SetEnv(t)

	var mu sync.Mutex
	var warned []string
	warnf := func(f string, a ...any) {
		mu.Lock()
		warned = append(warned, fmt.Sprintf(f, a...))
		mu.Unlock()
	}
	st, err := objstore.Open(context.Background(), objstore.URL{Scheme: "s3", Bucket: "caps"}, objstore.Options{Anonymous: true, Warnf: warnf})
	if err != nil {
		t.Fatal(err)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "requests to s3://caps go unsigned (anonymous), as asked") {
		t.Fatalf("warnings %q, want one that requests go unsigned", warned)
	}
	// The server refuses anonymous requests: this one went unsigned.
	before := len(srv.Requests())
	if _, err := objstore.Exists(context.Background(), st, "x.aaep"); !errors.Is(err, objstore.ErrDenied) {
		t.Fatalf("an unsigned read = %v, want AccessDenied", err)
	}
	if reqs := srv.Requests()[before:]; len(reqs) == 0 || reqs[0].Status != http.StatusForbidden {
		t.Errorf("requests %+v, want one refused with 403", reqs)
	}

	// No credentials anywhere in the chain.
	var roleAsked atomic.Int64
	role := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		roleAsked.Add(1)
		http.Error(w, "no role here", http.StatusNotFound)
	}))
	defer role.Close()
	none := filepath.Join(t.TempDir(), "none")
	for _, kv := range [][2]string{
		{"AWS_ACCESS_KEY_ID", ""}, {"AWS_SECRET_ACCESS_KEY", ""}, {"AWS_ACCESS_KEY", ""}, {"AWS_SECRET_KEY", ""},
		{"AWS_SESSION_TOKEN", ""}, {"AWS_PROFILE", ""}, {"AWS_SHARED_CREDENTIALS_FILE", none}, {"AWS_CONFIG_FILE", none},
		{"AWS_WEB_IDENTITY_TOKEN_FILE", ""}, {"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", ""},
		{"AWS_CONTAINER_AUTHORIZATION_TOKEN", ""}, {"AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", ""},
		{"AWS_CONTAINER_CREDENTIALS_FULL_URI", role.URL + "/credentials"},
	} {
		t.Setenv(kv[0], kv[1])
	}
	if _, err := os.Stat(none); !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	warned = nil
	st, err = objstore.Open(context.Background(), objstore.URL{Scheme: "s3", Bucket: "caps"}, objstore.Options{Retries: -1, Warnf: warnf})
	if err != nil {
		t.Fatal(err)
	}
	if len(warned) != 0 {
		t.Fatalf("warnings before any request: %q", warned)
	}
	for range 2 {
		// Refused for want of credentials, not by a key's policy (which a
		// recorder would take for a key that may only write).
		_, err := objstore.Exists(context.Background(), st, "x.aaep")
		if !errors.Is(err, objstore.ErrAccess) || errors.Is(err, objstore.ErrDenied) || !strings.Contains(err.Error(), "no credentials were found") ||
			!strings.Contains(err.Error(), "AWS_ACCESS_KEY_ID") {
			t.Fatalf("a read without credentials = %v, want an authorization failure naming the missing credentials", err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(warned) != 1 || !strings.Contains(warned[0], "no credentials found for s3://caps") || !strings.Contains(warned[0], "requests go unsigned") {
		t.Errorf("warnings %q, want one saying no credentials were found and requests go unsigned", warned)
	}
	if roleAsked.Load() == 0 {
		t.Error("the chain never asked the role endpoint: the test did not reach the chain's end")
	}
}
