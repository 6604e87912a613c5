// Package objstore reads and writes captures in object storage. Store is the
// one small interface every backend implements (ranged reads, uploads of a
// local file, listing, deletion); URL names an object or a prefix; Remote
// turns an object into an io.ReaderAt that reads through ranged GETs with a
// small cache, so capfile seeks through a capture's index without
// downloading it.
//
// The S3 backend (s3.go) speaks to AWS S3 and every S3-compatible server
// (MinIO, Ceph, R2, GCS's S3 API) with github.com/minio/minio-go/v7. A later
// backend (GCS native, Azure Blob) is one more file that registers its URL
// scheme in Open.
//
// Every request of a Store is bounded twice: by the caller's context (every
// method and every opener takes one, so Ctrl-C cancels a read or an upload)
// and by Options.StallTimeout, which abandons a request that made no
// progress for that long: a server or load balancer that accepts
// connections and never answers cannot hang a caller.
//
// Credentials come from the backend's standard chain (for S3: environment,
// the shared credentials file, the instance or task role) and never appear
// in an error, a log line or a capture file. Requests that go unsigned
// (Options.Anonymous, or a chain that found nothing) are announced through
// Options.Warnf. An answer no S3 server gives (a web page at the endpoint)
// is ErrNotS3, never read as the status it carries.
package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/minio/minio-go/v7/pkg/s3utils"
)

// ErrNotFound reports an object (or bucket) that does not exist.
var ErrNotFound = errors.New("no such object")

// ErrNoBucket reports a bucket that does not exist; it matches ErrNotFound too.
var ErrNoBucket = fmt.Errorf("no such bucket: %w", ErrNotFound)

// ErrExists reports an object that PutNew did not replace: the server
// answered 412 Precondition Failed to its If-None-Match: * condition.
var ErrExists = errors.New("object exists")

// ErrAccess reports a request the server refused for its credentials or
// permissions (wrong keys, no access to the bucket).
var ErrAccess = errors.New("access denied")

// ErrDenied reports a request refused by the permissions of valid
// credentials (AccessDenied), not for the credentials themselves; it
// matches ErrAccess too.
var ErrDenied = fmt.Errorf("%w by the bucket's or the key's policy", ErrAccess)

// Object describes a stored object.
type Object struct {
	Key      string
	Size     int64
	Modified time.Time
	// ETag is the server's tag of the content, without quotes: for S3,
	// the MD5 of an object uploaded in one request, or of the parts'
	// MD5s followed by -N for one uploaded in N parts (ETagMatches).
	ETag string
}

// Store is a bucket of objects. Methods are safe for concurrent use.
type Store interface {
	// ReadRange reads up to len(p) bytes of object key starting at off
	// into p, and returns how many it read and the object's total size.
	// It reads fewer than len(p) bytes only at the end of the object; an
	// off at or past the end reads nothing and is no error.
	ReadRange(ctx context.Context, key string, off int64, p []byte) (n int, size int64, err error)
	// Put stores size bytes read from r as object key, replacing any
	// object of that name only once the whole of it is stored: a failed
	// Put leaves no partial object behind. Large objects are uploaded in
	// parts.
	Put(ctx context.Context, key string, r io.ReaderAt, size int64) error
	// PutNew is Put that never replaces: the upload carries the
	// condition If-None-Match: *, and an existing object of that name
	// fails it with ErrExists. A server that ignores the condition
	// replaces, as Put does.
	PutNew(ctx context.Context, key string, r io.ReaderAt, size int64) error
	// Stat describes object key.
	Stat(ctx context.Context, key string) (Object, error)
	// List returns the objects whose keys start with prefix, in key order.
	List(ctx context.Context, prefix string) ([]Object, error)
	// Delete removes object key; removing a missing object is no error.
	Delete(ctx context.Context, key string) error
	// Describe names an object for messages: "s3://bucket/key".
	Describe(key string) string
}

// Options configure how a Store reaches its server. The zero value uses the
// backend's defaults and environment.
type Options struct {
	// Endpoint is the server's URL (http://127.0.0.1:9000 for a local
	// MinIO); empty for the backend's default (AWS S3, or the
	// AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL environment variables).
	Endpoint string
	// PathStyle addresses buckets as https://host/bucket/key instead of
	// https://bucket.host/key. Servers other than AWS usually need it; it
	// is used for any Endpoint that is not an AWS one unless VirtualHost.
	PathStyle bool
	// VirtualHost forces bucket.host addressing.
	VirtualHost bool
	// Region of the bucket; default AWS_REGION, AWS_DEFAULT_REGION, then
	// us-east-1 for a custom endpoint (AWS asks the bucket where it is).
	Region string
	// Transport carries the requests; default a clone of
	// http.DefaultTransport. Tests and measurements count requests with it.
	Transport http.RoundTripper
	// Retries is how many times a failed request is tried again inside
	// the client, with a short backoff (default 3; negative: never). A
	// caller that retries on its own, and wants to say so, sets -1.
	Retries int
	// PartSize is the size of the parts of a multipart upload (default and
	// minimum 5 MiB); objects up to this size go up in one request.
	PartSize int64
	// StallTimeout abandons a request (and lets the retries try again)
	// when nothing moved for this long: no connection, no byte of the
	// request taken, no byte of the answer received. Default
	// DefaultStallTimeout. A slow transfer that keeps moving is never cut
	// off; the caller's context still bounds the whole call.
	StallTimeout time.Duration
	// Anonymous sends every request unsigned, without looking for
	// credentials: for a bucket that anyone may read (or write). Warnf
	// says so when the Store is opened.
	Anonymous bool
	// Warnf receives the Store's warnings: that its requests go unsigned,
	// because Anonymous asks for it or because the credential chain found
	// nothing. Nil writes them to standard error: no request goes out
	// unsigned unannounced.
	Warnf func(format string, args ...any)
}

// URL names an object or a prefix: scheme://bucket/key.
type URL struct {
	Scheme string // "s3"
	Bucket string
	// Key is the object's key, or a prefix: empty (the whole bucket) or
	// ending in "/".
	Key string
}

// schemes are the URL schemes with a backend.
var schemes = map[string]func(ctx context.Context, bucket string, o Options) (Store, error){
	"s3": newS3,
}

// IsURL reports whether s names object storage (s3://...) rather than a
// local path.
func IsURL(s string) bool {
	scheme, _, ok := strings.Cut(s, "://")
	if !ok {
		return false
	}
	_, known := schemes[strings.ToLower(scheme)]
	return known
}

// Parse parses "s3://bucket/key" or "s3://bucket/prefix/".
func Parse(s string) (URL, error) {
	scheme, rest, ok := strings.Cut(s, "://")
	scheme = strings.ToLower(scheme)
	if !ok {
		return URL{}, fmt.Errorf("%q is not an object storage URL (want s3://BUCKET/KEY)", s)
	}
	if _, known := schemes[scheme]; !known {
		return URL{}, fmt.Errorf("%q: unknown storage scheme %q (want s3://BUCKET/KEY)", s, scheme)
	}
	bucket, key, _ := strings.Cut(rest, "/")
	if bucket == "" {
		return URL{}, fmt.Errorf("%q: no bucket (want %s://BUCKET/KEY)", s, scheme)
	}
	if strings.ContainsAny(bucket, "@:?#") {
		return URL{}, fmt.Errorf("%q: %q is not a bucket name (credentials and endpoints go in the environment or --s3-endpoint, never in the URL)", redactURL(s), redactURL(bucket))
	}
	if err := s3utils.CheckValidBucketName(bucket); err != nil {
		// minio-go's own rule, which every request would break: refused
		// here, before anything is recorded or read.
		return URL{}, fmt.Errorf("%q: %q is not a valid bucket name: %v", s, bucket, err)
	}
	if strings.Contains(key, "//") {
		return URL{}, fmt.Errorf("%q: empty path segment in the key", s)
	}
	return URL{Scheme: scheme, Bucket: bucket, Key: key}, nil
}

// redactURL hides anything that looks like user information.
func redactURL(s string) string {
	if at := strings.LastIndex(s, "@"); at >= 0 {
		return "[REDACTED]@" + s[at+1:]
	}
	return s
}

// IsPrefix reports whether u names a prefix (a "directory") rather than one
// object: its key is empty or ends in "/".
func (u URL) IsPrefix() bool { return u.Key == "" || strings.HasSuffix(u.Key, "/") }

func (u URL) String() string { return u.Scheme + "://" + u.Bucket + "/" + u.Key }

// Join returns the URL of key in u's bucket.
func (u URL) Join(key string) URL { return URL{Scheme: u.Scheme, Bucket: u.Bucket, Key: key} }

// Open returns the Store of u's bucket.
func Open(ctx context.Context, u URL, o Options) (Store, error) {
	open, ok := schemes[u.Scheme]
	if !ok {
		return nil, fmt.Errorf("unknown storage scheme %q", u.Scheme)
	}
	return open(ctx, u.Bucket, o)
}

// Exists reports whether object key exists, with one request that proves
// the credentials: it reads one byte rather than asking for the object's
// metadata, because an answer with a body says why credentials were refused
// (a metadata answer has none). A missing bucket is an error (ErrNoBucket).
func Exists(ctx context.Context, s Store, key string) (bool, error) {
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var b [1]byte
	_, _, err := s.ReadRange(pctx, key, 0, b[:])
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrNoBucket):
		return false, err
	case errors.Is(err, ErrNotFound):
		return false, nil
	}
	return false, err
}
