package vocab

// Capability defaults of §5.3: what a subscription gets for a capability its
// request leaves out (rate: unlimited; reply support: none). Each function
// returns a fresh slice.

// DefaultVerbosity is the default preferred_verbosity (§5.3.1.2).
const DefaultVerbosity = "normal"

// verbosities are the values of preferred_verbosity and of an event's
// verbosity (§3.3.1, §5.3.1.2).
var verbosities = [...]string{"terse", "normal", "detailed"}

// Verbosities returns the verbosity values, terse, normal and detailed, in
// that order (a fresh slice).
func Verbosities() []string { return append([]string(nil), verbosities[:]...) }

// IsVerbosity reports whether v is one of terse, normal and detailed.
func IsVerbosity(v string) bool {
	for _, w := range verbosities {
		if v == w {
			return true
		}
	}
	return false
}

// DefaultLanguages is the default languages: ["en-US"] (§5.3.1.3).
func DefaultLanguages() []string { return []string{"en-US"} }

// DefaultCoalesce is the default coalesce_boundaries: ["sentence",
// "completion"] (§5.3.1.6).
func DefaultCoalesce() []string { return []string{"sentence", "completion"} }

// DefaultInclude is the default event_filters.include: ["aaep:agent.*"],
// every core event and no extension type (§5.3.1.7). The default exclude is
// empty.
func DefaultInclude() []string { return []string{"aaep:agent.*"} }

// DefaultLevels is the default supported_conformance_levels: [1] (§5.3.1.8).
func DefaultLevels() []int { return []int{1} }

// Reason codes of subscription.rejected (§5.5.3).
const (
	ReasonVersionUnsupported        = "version_unsupported"
	ReasonManifestSignatureRequired = "manifest_signature_required"
	ReasonCapabilitiesIncompatible  = "capabilities_incompatible"
	ReasonRateLimit                 = "rate_limit"
	ReasonAuthenticationRequired    = "authentication_required"
	ReasonAuthorizationDenied       = "authorization_denied"
	ReasonTransportUnavailable      = "transport_unavailable"
	ReasonUnknown                   = "unknown"
)

// reasonCodes are the reason codes of subscription.rejected, in the order
// §5.5.3 lists them.
var reasonCodes = [...]string{ReasonVersionUnsupported, ReasonManifestSignatureRequired, ReasonCapabilitiesIncompatible,
	ReasonRateLimit, ReasonAuthenticationRequired, ReasonAuthorizationDenied, ReasonTransportUnavailable, ReasonUnknown}

// ReasonCodes returns the reason codes of subscription.rejected in the
// order §5.5.3 lists them (a fresh slice).
func ReasonCodes() []string { return append([]string(nil), reasonCodes[:]...) }
