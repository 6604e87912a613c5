package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// minPartSize is the smallest part S3 accepts in a multipart upload.
const minPartSize = 5 << 20

// s3Store is a bucket of an S3-compatible server.
type s3Store struct {
	c        minio.Core
	bucket   string
	partSize uint64
	// chain is the credential chain (nil with Anonymous): it says whether
	// requests went unsigned because it found nothing.
	chain *unsignedWarning
}

// newS3 connects to bucket. It makes no request: credentials are looked up
// when the first request is signed.
func newS3(_ context.Context, bucket string, o Options) (Store, error) {
	endpoint := o.Endpoint
	if endpoint == "" {
		endpoint = firstEnv("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")
	}
	custom := endpoint != ""
	host, secure := "s3.amazonaws.com", true
	if custom {
		u, err := url.Parse(endpoint)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, fmt.Errorf("S3 endpoint %q: want http://HOST[:PORT] or https://HOST[:PORT]", redactURL(endpoint))
		}
		if u.User != nil {
			return nil, fmt.Errorf("S3 endpoint %q: credentials do not go in the endpoint URL; use AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY", redactURL(endpoint))
		}
		host, secure = u.Host, u.Scheme == "https"
	}
	region := o.Region
	if region == "" {
		region = firstEnv("AWS_REGION", "AWS_DEFAULT_REGION")
	}
	if region == "" && custom {
		region = "us-east-1"
	}
	lookup := minio.BucketLookupAuto
	switch {
	case o.VirtualHost:
		lookup = minio.BucketLookupDNS
	case o.PathStyle || (custom && !strings.HasSuffix(strings.Split(host, ":")[0], ".amazonaws.com")):
		lookup = minio.BucketLookupPath
	}
	stall := o.StallTimeout
	if stall <= 0 {
		stall = DefaultStallTimeout
	}
	tr := &s3Answers{base: newTransport(o.Transport, stall)}
	warnf := o.Warnf
	if warnf == nil {
		warnf = func(format string, args ...any) { fmt.Fprintf(os.Stderr, "warning: "+format+"\n", args...) }
	}
	var creds *credentials.Credentials
	var chain *unsignedWarning
	if o.Anonymous {
		creds = credentials.NewStatic("", "", "", credentials.SignatureAnonymous)
		warnf("requests to s3://%s go unsigned (anonymous), as asked: only a bucket that allows anyone answers them", bucket)
	} else {
		// The standard AWS chain: environment, the shared credentials
		// file (AWS_PROFILE, AWS_SHARED_CREDENTIALS_FILE), then the
		// instance, task or web-identity role.
		chain = &unsignedWarning{
			Chain: credentials.Chain{Providers: []credentials.Provider{
				&credentials.EnvAWS{},
				&credentials.FileAWSCredentials{},
				&credentials.IAM{Client: &http.Client{Transport: newTransport(nil, stall), Timeout: 2 * stall}},
			}},
			warn: func() {
				warnf("no credentials found for s3://%s (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, the shared credentials file, an instance, task or web-identity role): requests go unsigned; only a bucket that allows anyone answers them", bucket)
			},
		}
		creds = credentials.New(chain)
	}
	retries := 1 + 3 // minio-go counts the first attempt
	if o.Retries < 0 {
		retries = 1
	} else if o.Retries > 0 {
		retries = 1 + o.Retries
	}
	c, err := minio.NewCore(host, &minio.Options{
		Creds:        creds,
		Secure:       secure,
		Region:       region,
		BucketLookup: lookup,
		Transport:    tr,
		MaxRetries:   retries,
	})
	if err != nil {
		return nil, fmt.Errorf("S3 client for %s: %w", host, err)
	}
	part := uint64(max(o.PartSize, minPartSize))
	return &s3Store{c: *c, bucket: bucket, partSize: part, chain: chain}, nil
}

// unsignedWarning is the credential chain, warning once when it finds no
// credentials: the client then sends its requests unsigned.
type unsignedWarning struct {
	credentials.Chain
	once sync.Once
	warn func()
	// none is set while the chain finds no credentials.
	none atomic.Bool
}

// unsigned reports whether the chain found no credentials, so that
// requests go unsigned though nobody asked for it.
func (u *unsignedWarning) unsigned() bool { return u != nil && u.none.Load() }

func (u *unsignedWarning) RetrieveWithCredContext(cc *credentials.CredContext) (credentials.Value, error) {
	v, err := u.Chain.RetrieveWithCredContext(cc)
	u.check(v)
	return v, err
}

func (u *unsignedWarning) Retrieve() (credentials.Value, error) {
	v, err := u.Chain.Retrieve()
	u.check(v)
	return v, err
}

func (u *unsignedWarning) check(v credentials.Value) {
	none := v.SignerType.IsAnonymous() || v.AccessKeyID == ""
	u.none.Store(none)
	if none {
		u.once.Do(u.warn)
	}
}

func firstEnv(names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}

func (s *s3Store) Describe(key string) string { return "s3://" + s.bucket + "/" + key }

// wrap turns a client error into one that names the object and matches
// ErrNotFound or ErrAccess where it applies. The server's message is kept;
// it never holds the secret key.
func (s *s3Store) wrap(op, key string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s %s: %w", op, s.Describe(key), err)
	}
	resp := minio.ToErrorResponse(err)
	switch {
	case resp.StatusCode == http.StatusPreconditionFailed || resp.Code == "PreconditionFailed":
		return fmt.Errorf("%s %s: %w", op, s.Describe(key), ErrExists)
	case resp.Code == "NoSuchKey" || resp.Code == "NoSuchBucket" || resp.StatusCode == http.StatusNotFound:
		if resp.Code == "NoSuchBucket" {
			return fmt.Errorf("%s %s: %w %s", op, s.Describe(key), ErrNoBucket, s.bucket)
		}
		return fmt.Errorf("%s %s: %w", op, s.Describe(key), ErrNotFound)
	case s.chain.unsigned() && (resp.Code == "AccessDenied" || resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusUnauthorized):
		// Not a key's policy: there is no key.
		return fmt.Errorf("%s %s: %w: no credentials were found, so the request went unsigned and the server refused it; give credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE (the shared credentials file), or an instance, task or web-identity role", op, s.Describe(key), ErrAccess)
	case resp.Code == "AccessDenied":
		// The keys are valid; this key may not do this.
		return fmt.Errorf("%s %s: %w (AccessDenied): this key's policy does not allow it", op, s.Describe(key), ErrDenied)
	case resp.Code == "InvalidAccessKeyId" || resp.Code == "SignatureDoesNotMatch" ||
		resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusUnauthorized:
		code := resp.Code
		if code == "" {
			code = strconv.Itoa(resp.StatusCode)
		}
		return fmt.Errorf("%s %s: %w: the server refused the credentials (%s); check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY or AWS_PROFILE", op, s.Describe(key), ErrAccess, code)
	}
	return fmt.Errorf("%s %s: %w", op, s.Describe(key), err)
}

func (s *s3Store) ReadRange(ctx context.Context, key string, off int64, p []byte) (int, int64, error) {
	if len(p) == 0 {
		o, err := s.Stat(ctx, key)
		return 0, o.Size, err
	}
	var opts minio.GetObjectOptions
	if err := opts.SetRange(off, off+int64(len(p))-1); err != nil {
		return 0, 0, fmt.Errorf("read %s: %w", s.Describe(key), err)
	}
	body, _, hdr, err := s.c.GetObject(ctx, s.bucket, key, opts)
	if err != nil {
		if minio.ToErrorResponse(err).Code == "InvalidRange" {
			// At or past the end (an empty object included).
			o, serr := s.Stat(ctx, key)
			return 0, o.Size, serr
		}
		return 0, 0, s.wrap("read", key, err)
	}
	defer body.Close()
	size, err := totalSize(hdr)
	if err != nil {
		return 0, 0, fmt.Errorf("read %s: %w", s.Describe(key), err)
	}
	want := min(int64(len(p)), max(size-off, 0))
	n, err := io.ReadFull(body, p[:want])
	if err != nil {
		return n, size, s.wrap("read", key, err)
	}
	return n, size, nil
}

// totalSize reads the object's size from a ranged response's Content-Range
// ("bytes 0-99/12345"), or from Content-Length for a whole-object answer.
func totalSize(h http.Header) (int64, error) {
	if cr := h.Get("Content-Range"); cr != "" {
		_, total, ok := strings.Cut(cr, "/")
		if n, err := strconv.ParseInt(total, 10, 64); ok && err == nil && n >= 0 {
			return n, nil
		}
		return 0, fmt.Errorf("server sent an unreadable Content-Range %q", cr)
	}
	n, err := strconv.ParseInt(h.Get("Content-Length"), 10, 64)
	if err != nil || n < 0 {
		return 0, errors.New("server sent neither Content-Range nor Content-Length")
	}
	return n, nil
}

func (s *s3Store) Put(ctx context.Context, key string, r io.ReaderAt, size int64) error {
	return s.put(ctx, key, r, size, false)
}

func (s *s3Store) PutNew(ctx context.Context, key string, r io.ReaderAt, size int64) error {
	return s.put(ctx, key, r, size, true)
}

func (s *s3Store) put(ctx context.Context, key string, r io.ReaderAt, size int64, onlyNew bool) error {
	opts := minio.PutObjectOptions{
		ContentType: "application/vnd.aaep.capture",
		PartSize:    s.partSize,
		NumThreads:  1, // one part buffer at a time: a recorder stays small
		// Integrity by Content-MD5, checked by the server, rather than
		// by chunk signatures (aws-chunked), which not every
		// S3-compatible server decodes in multipart uploads.
		DisableContentSha256: true,
		SendContentMd5:       true,
	}
	if onlyNew {
		// On the PUT, or on CompleteMultipartUpload for a large object.
		opts.SetMatchETagExcept("*")
	}
	info, err := s.c.Client.PutObject(ctx, s.bucket, key, io.NewSectionReader(r, 0, size), size, opts)
	if err == nil && info.ETag == "" {
		// Every S3 server tags what it stored; a web server that
		// answers 200 to anything has stored nothing.
		err = fmt.Errorf("PUT %s: %w", s.c.EndpointURL().JoinPath(s.bucket, key), &notS3Error{status: "200 OK", what: "without an ETag"})
	}
	if err != nil {
		if uint64(size) > s.partSize {
			// A multipart upload that failed is not an object; drop its
			// parts, for a few seconds at most, even when ctx has ended
			// (what is left, the bucket's lifecycle rule for incomplete
			// multipart uploads removes).
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupGrace)
			_ = s.c.Client.RemoveIncompleteUpload(cctx, s.bucket, key)
			cancel()
		}
		return s.wrap("upload", key, err)
	}
	return nil
}

func (s *s3Store) Stat(ctx context.Context, key string) (Object, error) {
	info, err := s.c.Client.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{})
	if err != nil {
		return Object{}, s.wrap("stat", key, err)
	}
	return Object{Key: info.Key, Size: info.Size, Modified: info.LastModified, ETag: strings.Trim(info.ETag, `"`)}, nil
}

func (s *s3Store) List(ctx context.Context, prefix string) ([]Object, error) {
	var out []Object
	for info := range s.c.Client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if info.Err != nil {
			return nil, s.wrap("list", prefix, info.Err)
		}
		out = append(out, Object{Key: info.Key, Size: info.Size, Modified: info.LastModified, ETag: strings.Trim(info.ETag, `"`)})
	}
	return out, nil
}

func (s *s3Store) Delete(ctx context.Context, key string) error {
	err := s.c.Client.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{})
	if err != nil && !errors.Is(s.wrap("delete", key, err), ErrNotFound) {
		return s.wrap("delete", key, err)
	}
	return nil
}
