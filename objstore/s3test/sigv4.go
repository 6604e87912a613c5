package s3test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"sort"
	"strings"
)

// verify checks the AWS Signature Version 4 of a request (Authorization
// header form) against one key pair. It returns an S3 error code and
// message, or "" when the signature is right.
func verify(r *http.Request, accessKey, secretKey string) (code, msg string) {
	auth := r.Header.Get("Authorization")
	if auth == "" {
		return errUnsigned.Error(), "anonymous access is not allowed"
	}
	algo, rest, _ := strings.Cut(auth, " ")
	if algo != "AWS4-HMAC-SHA256" {
		return "AccessDenied", "unsupported signature algorithm"
	}
	fields := map[string]string{}
	for _, part := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		fields[k] = v
	}
	cred := strings.Split(fields["Credential"], "/")
	if len(cred) != 5 {
		return "AuthorizationHeaderMalformed", "bad Credential"
	}
	if cred[0] != accessKey {
		return "InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records."
	}
	date, region, service := cred[1], cred[2], cred[3]
	amzDate := r.Header.Get("X-Amz-Date")
	if !strings.HasPrefix(amzDate, date) {
		return "AuthorizationHeaderMalformed", "X-Amz-Date does not match the credential scope"
	}
	signed := strings.Split(fields["SignedHeaders"], ";")

	path, query, _ := strings.Cut(r.RequestURI, "?")
	var cr strings.Builder
	cr.WriteString(r.Method + "\n")
	cr.WriteString(path + "\n")
	cr.WriteString(canonicalQuery(query) + "\n")
	for _, h := range signed {
		v := r.Header.Get(h)
		if h == "host" {
			v = r.Host
		}
		if h == "content-length" && v == "" && r.ContentLength >= 0 {
			v = itoa(r.ContentLength)
		}
		cr.WriteString(h + ":" + strings.Join(strings.Fields(v), " ") + "\n")
	}
	cr.WriteString("\n" + strings.Join(signed, ";") + "\n")
	cr.WriteString(r.Header.Get("X-Amz-Content-Sha256"))
	sum := sha256.Sum256([]byte(cr.String()))
	scope := strings.Join(cred[1:], "/")
	toSign := "AWS4-HMAC-SHA256\n" + amzDate + "\n" + scope + "\n" + hex.EncodeToString(sum[:])
	key := mac([]byte("AWS4"+secretKey), date)
	key = mac(key, region)
	key = mac(key, service)
	key = mac(key, "aws4_request")
	want := hex.EncodeToString(mac(key, toSign))
	if !hmac.Equal([]byte(want), []byte(fields["Signature"])) {
		return "SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided. Check your key and signing method."
	}
	return "", ""
}

func mac(key []byte, s string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(s))
	return h.Sum(nil)
}

func itoa(n int64) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// canonicalQuery sorts and re-encodes a raw query string as SigV4 wants.
func canonicalQuery(raw string) string {
	if raw == "" {
		return ""
	}
	var pairs []string
	for _, kv := range strings.Split(raw, "&") {
		k, v, _ := strings.Cut(kv, "=")
		ku, err1 := url.QueryUnescape(k)
		vu, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil {
			ku, vu = k, v
		}
		pairs = append(pairs, awsEscape(ku)+"="+awsEscape(vu))
	}
	sort.Strings(pairs)
	return strings.Join(pairs, "&")
}

// awsEscape percent-encodes everything but the unreserved characters.
func awsEscape(s string) string {
	const hexd = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexd[c>>4])
		b.WriteByte(hexd[c&15])
	}
	return b.String()
}
