package aaep

// How a subscription.accepted is judged against its request: the level-2
// reply declaration, honored capabilities no looser than requested, the
// accepted version and the signed manifest (NEG-L2-*, NEG-HONORED-*,
// NEG-VERSION, NEG-SIGNED-MANIFEST*).

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/aaep/vocab"
)

// checkL2: NEG-L2-DECLARES-REPLY.
func (n *negChecker) checkL2(sub *subscription, m *protocol.Message, c capsJSON) {
	if c.Levels == nil {
		return
	}
	l2 := false
	for _, l := range *c.Levels {
		if l == 2 || l == 3 {
			l2 = true
		}
	}
	if l2 && (c.ConfReply == nil || !*c.ConfReply) {
		n.s.report(negL2DeclaresReply, sub.key, m, "Level 2 without reply support",
			"the subscriber claims conformance levels %v but does not declare supports_confirmation_reply: true; Level 2 and 3 subscribers must", *c.Levels)
	}
}

// checkHonored: NEG-HONORED-* (§5.4.4): honored terms are no more
// permissive than requested. A field absent from honored_capabilities reads
// as the requested value (the suite treats it the same way), so it is not
// reported. Languages match when equal or when one is the other's bare
// language (en and en-US, Ch. 11).
func (n *negChecker) checkHonored(sub *subscription, m *protocol.Message, h capsJSON, req terms) {
	k := sub.key
	if h.MaxEPS != nil && req.rate > 0 && *h.MaxEPS > req.rate {
		n.s.report(negHonoredRate, k, m, "honored rate above request",
			"the producer honors max_events_per_second %d but the subscriber asked for at most %d; honored capabilities must not be more permissive", *h.MaxEPS, req.rate)
	}
	if h.Languages != nil {
		reqLangs := vocab.NewLanguages(req.languages)
		for i, l := range *h.Languages {
			if i < 64 && !reqLangs.Has(l) {
				n.s.report(negHonoredLanguages, k, m, "language not requested",
					"the producer honors language %q, which is not among the requested languages %s (the default is [en-US]); honored languages must be a subset", l, clipList(req.languages))
			}
		}
	}
	if h.Coalesce != nil {
		want := map[string]bool{}
		for _, b := range req.coalesce {
			want[b] = true
		}
		for i, b := range *h.Coalesce {
			if i < 8 && !want[b] {
				n.s.report(negHonoredCoalesce, k, m, "coalesce boundary not requested",
					"the producer honors coalesce boundary %q, which is not among the requested %s (the default is [sentence completion]); honored boundaries must be a subset", b, clipList(req.coalesce))
			}
		}
	}
	if h.Filters != nil {
		hon := h.resolve(req)
		reported := 0
		for _, inc := range hon.include {
			if reported < 8 && !req.inc().Covers(inc) {
				reported++
				n.s.report(negHonoredFilters, k, m, "filter widened",
					"the honored include pattern %q is not covered by the requested includes %s; honored filters must be at least as restrictive", inc, clipList(req.include))
			}
		}
		for _, exc := range req.exclude {
			if reported < 8 && !hon.exc().Covers(exc) && hon.inc().Overlaps(exc) {
				reported++
				n.s.report(negHonoredFilters, k, m, "exclude dropped",
					"the subscriber excluded %q but the honored filters no longer exclude it; every requested exclude must stay excluded", exc)
			}
		}
	}
	hon := h.resolve(req)
	var loose []string
	if h.Levels != nil {
		want := map[int]bool{}
		for _, l := range req.levels {
			want[l] = true
		}
		var extra []int
		for _, l := range hon.levels {
			if !want[l] && len(extra) < 8 {
				extra = append(extra, l)
			}
		}
		if len(extra) > 0 {
			loose = append(loose, fmt.Sprintf("conformance levels %v were not requested (requested %v, default [1])", extra, req.levels))
		}
	}
	if h.Extensions != nil {
		want := map[string]bool{}
		for _, e := range req.extensions {
			want[e] = true
		}
		var extra []string
		for _, e := range hon.extensions {
			if !want[e] && len(extra) < 8 {
				extra = append(extra, e)
			}
		}
		if len(extra) > 0 {
			loose = append(loose, fmt.Sprintf("extensions %v were not requested", extra))
		}
	}
	if h.ConfReply != nil && *h.ConfReply && !req.confReply {
		loose = append(loose, "supports_confirmation_reply is true although the request says false (or leaves it out)")
	}
	if h.ClarReply != nil && *h.ClarReply && !req.clarReply {
		loose = append(loose, "supports_clarification_reply is true although the request says false (or leaves it out)")
	}
	if h.SignedOnly != nil && !*h.SignedOnly && req.signedOnly {
		loose = append(loose, "accept_signed_manifests_only is false although the subscriber requires signed manifests")
	}
	for _, why := range loose {
		n.s.report(negHonoredOther, k, m, "honored more than requested",
			"in honored_capabilities, %s; honored capabilities should not be more permissive than requested", why)
	}
}

// checkVersion: NEG-VERSION.
func (n *negChecker) checkVersion(sub *subscription, m *protocol.Message, ev *Event) {
	v, ok := ev.Str("aaep_version")
	if !ok {
		return
	}
	switch {
	case !vocab.IsPublished(v):
		n.s.report(negVersion, sub.key, m, "unsupported version",
			"the producer accepts with aaep_version %q, which is not a published AAEP version (%v); an unsupported version should be rejected with version_unsupported", v, publishedVersions)
	case sub.reqVer != "" && vocab.CompareVersions(v, sub.reqVer) > 0:
		n.s.report(negVersion, sub.key, m, "version above request",
			"the producer accepts with aaep_version %s, higher than the requested %s; the accepted version may be lower than requested but must be supported by both sides", v, sub.reqVer)
	}
}

// checkSignedManifest: NEG-SIGNED-MANIFEST and NEG-SIGNED-MANIFEST-CONTENT.
// The accepted schema's description wants signed_manifest inline when the
// subscriber requires signed manifests, while the prose (§10.4.1(3)) also
// allows a JWS published at manifest_uri. Prose wins over schema (§3.0,
// §4.7), in both profiles: a manifest_uri (on the message or its producer)
// satisfies the rule; whether it really serves a JWS is beyond a recording.
func (n *negChecker) checkSignedManifest(sub *subscription, m *protocol.Message, ev *Event, req terms) {
	jws, hasJWS := ev.Str("signed_manifest")
	if req.signedOnly && !hasJWS {
		_, hasURI := ev.Str("manifest_uri")
		if !hasURI {
			if p, ok := ev.Object("producer"); ok {
				_, hasURI = p["manifest_uri"].Str()
			}
		}
		if !hasURI {
			n.s.report(negSignedManifest, sub.key, m, "no signed manifest",
				"the subscriber accepts signed manifests only, but subscription.accepted carries neither signed_manifest nor a manifest_uri publishing one; the producer must provide one or reject with manifest_signature_required")
		}
	}
	if !hasJWS {
		return
	}
	why := n.manifestProblem(jws, ev)
	if why != "" {
		n.s.report(negSignedManifestContent, sub.key, m, "signed manifest inconsistent",
			"the signed_manifest %s; its claims must match the producer that accepted (signature verification needs keys and is not done here)", why)
	}
}

func (n *negChecker) manifestProblem(jws string, ev *Event) string {
	parts := strings.Split(jws, ".")
	if len(parts) != 3 {
		return "is not a JWS in compact form (three base64url parts)"
	}
	var header struct {
		Alg string `json:"alg"`
	}
	hb, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[0], "="))
	if err != nil || json.Unmarshal(hb, &header) != nil {
		return "has an unreadable JWS header"
	}
	if header.Alg == "" || strings.EqualFold(header.Alg, "none") {
		return fmt.Sprintf("is not signed (alg %q)", header.Alg)
	}
	pb, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return "has an undecodable payload"
	}
	var claims struct {
		AgentID  *string  `json:"agent_id"`
		Versions []string `json:"aaep_versions_supported"`
		Levels   []int    `json:"conformance_levels_supported"`
	}
	if json.Unmarshal(pb, &claims) != nil {
		return "has a payload that is not a JSON object"
	}
	agent := ""
	if p, ok := ev.Object("producer"); ok {
		agent, _ = p["agent_id"].Str()
	}
	if claims.AgentID != nil && agent != "" && *claims.AgentID != agent {
		return fmt.Sprintf("names agent_id %q but the accepting producer is %q", *claims.AgentID, agent)
	}
	if v, ok := ev.Str("aaep_version"); ok && claims.Versions != nil && !containsString(claims.Versions, v) {
		return fmt.Sprintf("lists aaep_versions_supported %v without the accepted version %s", claims.Versions, v)
	}
	return ""
}
