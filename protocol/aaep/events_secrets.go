// Secret scanner for EVT-SECRETS: finds passwords, API keys, tokens, private
// keys, card numbers and social security numbers in human-readable fields.

package aaep

import (
	"bytes"
	"strconv"
	"strings"
)

// secretTextKeys are the human-readable fields scanned for secrets.
var secretTextKeys = [...]key{kArgsSummary, kSummaryTerse, kSummaryNormal, kSummaryDetailed, kRequestText,
	kAction, kConsequence, kQuestion, kDescription, kReason, kErrorMessage, kRemediationHint,
	kPartialResult, kOutputSummary, kContextText, kDefaultResponse, kChunk}

// evtSecrets is the check of evtSecrets (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) evtSecrets() {
	for _, k := range secretTextKeys {
		s, ok := c.ev.text(k)
		if !ok || len(s) < 4 {
			continue
		}
		if what := findSecret(s); what != "" {
			c.report("secret in "+keyNames[k],
				"%s appears to contain %s; events are announced and logged, so they must never carry secrets or sensitive personal data (§4.3.1, §10.5)", keyNames[k], what)
			return
		}
	}
}

// assignedSecretWords are keywords that reveal a secret when a value is
// assigned to them ("password: hunter2", "api_key=...").
var assignedSecretWords = [...]string{"password", "passwd", "api_key", "apikey", "api-key", "secret_key",
	"private_key", "aws_secret", "github_token", "x-api-key", "authorization", "client_secret", "access_token"}

// privateKeyMarkers start PEM private key blocks.
var privateKeyMarkers = [...]string{"begin private key", "begin rsa private key", "begin openssh private key",
	"begin ec private key", "begin dsa private key", "begin encrypted private key"}

// secretStart marks the (lower-cased) first letters of the secret
// markers findSecret looks for.
var secretStart = func() (t [256]bool) {
	for _, c := range "pagxcbs" {
		t[c], t[c-'a'+'A'] = true, true
	}
	return t
}()

// findSecret returns what kind of secret text s seems to hold, or "".
// Markers are only looked for at the start of a word.
func findSecret(s []byte) string {
	digits := 0
	prevAlnum := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if prevAlnum || !secretStart[c] {
			if c >= '0' && c <= '9' {
				digits++
			}
			prevAlnum = alnum[c]
			continue
		}
		prevAlnum = true
		switch b := c | 0x20; b {
		case 'p', 'a', 'g', 'x', 'c':
			for _, w := range assignedSecretWords {
				if w[0] == b && hasPrefixFold(s[i:], w) && assignsValue(s[i+len(w):]) {
					return "a value assigned to " + strconv.Quote(w)
				}
			}
			if b == 'g' && (hasPrefixFold(s[i:], "ghp_") && tokenRun(s[i+4:], 20) || hasPrefixFold(s[i:], "github_pat_") && tokenRun(s[i+11:], 20)) {
				return "a GitHub access token"
			}
			if b == 'a' && i+20 <= len(s) && string(s[i:i+4]) == "AKIA" && upperAlnumRun(s[i+4:]) >= 16 {
				return "an AWS access key id"
			}
		case 'b':
			if hasPrefixFold(s[i:], "bearer ") && tokenRun(s[i+7:], 16) {
				return "a bearer token"
			}
			for _, m := range privateKeyMarkers {
				if hasPrefixFold(s[i:], m) {
					return "a private key"
				}
			}
		case 's':
			if hasPrefixFold(s[i:], "ssh-rsa aaaa") || hasPrefixFold(s[i:], "ssh-ed25519 aaaa") {
				return "an SSH key"
			}
			if hasPrefixFold(s[i:], "sk-") && tokenRun(s[i+3:], 20) {
				return "an API secret key (sk-...)"
			}
		}
	}
	if urlPassword(s) {
		return "a password in a URL's userinfo"
	}
	if digits >= 9 {
		if cardNumber(s) {
			return "a payment card number"
		}
		if ssn(s) {
			return "a social security number"
		}
	}
	return ""
}

// urlPassword reports whether s holds a URL whose userinfo carries a
// password ("postgres://user:pw@host/db"); a bare "user@" carries none, and a
// masked password ("user:****@", "user:<redacted>@") is not a secret.
func urlPassword(s []byte) bool {
	for off := 0; ; {
		k := bytes.Index(s[off:], []byte("://"))
		if k < 0 {
			return false
		}
		start := off + k + 3
		off = start
		colon := -1
		for j := start; j < len(s); j++ {
			c := s[j]
			if c <= ' ' || c == '/' || c == '?' || c == '#' || c == '"' || c == '\'' || c == '<' && colon < 0 {
				break
			}
			if c == ':' && colon < 0 {
				colon = j
			}
			if c == '@' {
				if colon >= 0 && colon > start && !maskedValue(s[colon+1:j]) {
					return true
				}
				break
			}
		}
	}
}

// maskedValue reports whether v is empty or a redaction mask ("****",
// "<redacted>", "[hidden]", "xxxx").
func maskedValue(v []byte) bool {
	masked := true
	for _, c := range v {
		if c != '*' && c != 'x' && c != 'X' && c != '.' && c != '<' && c != '>' && c != '[' && c != ']' {
			masked = false
		}
	}
	if masked {
		return true
	}
	l := strings.ToLower(string(v))
	return strings.Contains(l, "redacted") || strings.Contains(l, "hidden")
}

func hasPrefixFold(s []byte, lower string) bool {
	if len(s) < len(lower) {
		return false
	}
	for i := 0; i < len(lower); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// assignsValue reports whether s starts with an assignment (":" or "=",
// spaces and quotes allowed around it, after any further name characters)
// of a value of at least 4 characters that is not a redaction mask.
func assignsValue(s []byte) bool {
	i := 0
	for i < len(s) && (isAlnum(s[i]) || s[i] == '_' || s[i] == '-') {
		i++
	}
	for i < len(s) && (s[i] == ' ' || s[i] == '"' || s[i] == '\'') {
		i++
	}
	if i >= len(s) || (s[i] != ':' && s[i] != '=') {
		return false
	}
	i++
	for i < len(s) && (s[i] == ' ' || s[i] == '"' || s[i] == '\'') {
		i++
	}
	j := i
	masked := true
	for j < len(s) && s[j] > ' ' && s[j] != '"' && s[j] != '\'' && s[j] != ',' && s[j] != ';' {
		if s[j] != '*' && s[j] != 'x' && s[j] != 'X' && s[j] != '.' && s[j] != '<' && s[j] != '>' && s[j] != '[' && s[j] != ']' {
			masked = false
		}
		j++
	}
	if j-i < 4 || masked {
		return false
	}
	v := strings.ToLower(string(s[i:j]))
	return !strings.Contains(v, "redacted") && !strings.Contains(v, "hidden")
}

// tokenRun reports whether s starts with at least n token characters.
func tokenRun(s []byte, n int) bool {
	i := 0
	for i < len(s) && (isAlnum(s[i]) || strings.IndexByte("-._~+/=", s[i]) >= 0) {
		i++
	}
	return i >= n
}

func upperAlnumRun(s []byte) int {
	i := 0
	for i < len(s) && ((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9')) {
		i++
	}
	return i
}

// cardNumber finds a run of 13 to 19 digits, optionally grouped by single
// spaces or dashes, that starts with 3, 4, 5 or 6 (the major card networks)
// and passes the Luhn check.
func cardNumber(s []byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '3' || s[i] > '6' || (i > 0 && (isAlnum(s[i-1]) || s[i-1] == '.')) {
			continue
		}
		var d [20]byte
		n, j := 0, i
	run:
		for j < len(s) {
			c := s[j]
			switch {
			case c >= '0' && c <= '9':
				if n == len(d) {
					break run
				}
				d[n] = c - '0'
				n++
				j++
			case (c == ' ' || c == '-') && j+1 < len(s) && s[j+1] >= '0' && s[j+1] <= '9':
				j++
			default:
				break run
			}
		}
		if n >= 13 && n <= 19 && (j == len(s) || !isAlnum(s[j])) && luhn(d[:n]) {
			return true
		}
		i = j
	}
	return false
}

func luhn(d []byte) bool {
	sum := 0
	for i := len(d) - 1; i >= 0; i-- {
		v := int(d[i])
		if (len(d)-1-i)%2 == 1 {
			v *= 2
			if v > 9 {
				v -= 9
			}
		}
		sum += v
	}
	return sum%10 == 0
}

// ssn finds a US social security number: ddd-dd-dddd, not inside a longer
// number, with the area, group and serial the SSA never issues excluded
// (000, 666, 9xx; 00; 0000).
func ssn(s []byte) bool {
	dig := func(c byte) bool { return c >= '0' && c <= '9' }
	for i := 0; i+11 <= len(s); i++ {
		w := s[i : i+11]
		if !(dig(w[0]) && dig(w[1]) && dig(w[2]) && w[3] == '-' && dig(w[4]) && dig(w[5]) && w[6] == '-' &&
			dig(w[7]) && dig(w[8]) && dig(w[9]) && dig(w[10])) {
			continue
		}
		if i > 0 && (dig(s[i-1]) || s[i-1] == '-') || i+11 < len(s) && (dig(s[i+11]) || s[i+11] == '-') {
			continue
		}
		area := string(w[0:3])
		if area == "000" || area == "666" || w[0] == '9' || string(w[4:6]) == "00" || string(w[7:11]) == "0000" {
			continue
		}
		return true
	}
	return false
}
