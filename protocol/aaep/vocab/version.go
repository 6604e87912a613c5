package vocab

import (
	"regexp"
	"slices"
	"strings"
)

// Version is the AAEP version this toolkit speaks when it plays the producer
// (aaep-replay serve).
const Version = "1.0.0"

// publishedVersions are the published AAEP versions (CHANGELOG: only 1.0.0).
var publishedVersions = []string{"1.0.0"}

// PublishedVersions returns the published AAEP versions, oldest first.
func PublishedVersions() []string { return slices.Clone(publishedVersions) }

// IsPublished reports whether v names a published AAEP version exactly.
func IsPublished(v string) bool { return slices.Contains(publishedVersions, v) }

// VersionPattern is the aaep_version pattern of the schemas (catalog
// §1.2; AAEP §3.4.4, §5.2), as findings quote it.
const VersionPattern = `^[0-9]+\.[0-9]+\.[0-9]+(-[A-Za-z0-9.-]+)?$`

var reVersion = regexp.MustCompile(VersionPattern)

// ValidVersion reports whether v is a semantic version as aaep_version
// must be: MAJOR.MINOR.PATCH with an optional pre-release ("0.1.0-draft").
func ValidVersion(v string) bool { return reVersion.MatchString(v) }

// ValidVersionBytes is ValidVersion for a value not yet made a string.
func ValidVersionBytes(v []byte) bool { return reVersion.Match(v) }

// CompareVersions compares versions a and b by semantic-version precedence
// (§3.4.4 makes aaep_version a semantic version): -1, 0 or 1 as a is lower
// than, equal to or higher than b. MAJOR, MINOR and PATCH compare as numbers
// of any length; a version with a pre-release is lower than the same version
// without one (1.0.0-draft < 1.0.0); pre-releases compare identifier by
// identifier, numeric ones as numbers and below alphanumeric ones, and a
// shorter list of equal identifiers is lower. Input that is not a valid
// version is read leniently: a missing or non-numeric part counts as 0.
func CompareVersions(a, b string) int {
	ca, pa := splitVersion(a)
	cb, pb := splitVersion(b)
	for i := range 3 {
		if c := compareNumbers(ca[i], cb[i]); c != 0 {
			return c
		}
	}
	switch {
	case pa == pb:
		return 0
	case pa == "":
		return 1
	case pb == "":
		return -1
	}
	ia, ib := strings.Split(pa, "."), strings.Split(pb, ".")
	for i := 0; i < len(ia) && i < len(ib); i++ {
		if c := compareIdentifiers(ia[i], ib[i]); c != 0 {
			return c
		}
	}
	return cmpInt(len(ia), len(ib))
}

// Serves reports whether a producer speaking version speaks can accept a
// subscription that requested version requested: requested is a valid
// version of the same major version, not lower than speaks (the accepted
// version may be lower than requested but never higher: the accepted schema, §5.5.3).
func Serves(speaks, requested string) bool {
	if !ValidVersion(requested) {
		return false
	}
	cs, _ := splitVersion(speaks)
	cr, _ := splitVersion(requested)
	return compareNumbers(cs[0], cr[0]) == 0 && CompareVersions(speaks, requested) <= 0
}

// splitVersion returns the three numeric parts of v (lenient: absent or
// non-numeric parts as "0") and its pre-release ("" when none).
func splitVersion(v string) (core [3]string, pre string) {
	if i := strings.IndexByte(v, '+'); i >= 0 {
		v = v[:i] // build metadata does not take part in precedence
	}
	if i := strings.IndexByte(v, '-'); i >= 0 {
		v, pre = v[:i], v[i+1:]
	}
	core = [3]string{"0", "0", "0"}
	for i, p := range strings.SplitN(v, ".", 3) {
		if isNumber(p) {
			core[i] = p
		}
	}
	return core, pre
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// compareNumbers compares two decimal digit strings as numbers, whatever
// their length.
func compareNumbers(a, b string) int {
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(a) != len(b) {
		return cmpInt(len(a), len(b))
	}
	return strings.Compare(a, b)
}

// compareIdentifiers compares two pre-release identifiers.
func compareIdentifiers(a, b string) int {
	na, nb := isNumber(a), isNumber(b)
	switch {
	case na && nb:
		return compareNumbers(a, b)
	case na:
		return -1
	case nb:
		return 1
	}
	return strings.Compare(a, b)
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
