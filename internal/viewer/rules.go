package viewer

import (
	"net/http"
	"sort"

	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/models"
)

// ruleDoc is a rule as the page shows it.
type ruleDoc struct {
	ID       string         `json:"id"`
	Level    protocol.Level `json:"level"`
	Summary  string         `json:"summary"`
	Protocol string         `json:"protocol"`
	// Spec says where the rule is stated: the rule's declared
	// protocol.Rule.Spec, as `aaep-replay check --rules` prints it.
	Spec string `json:"spec"`
}

// ruleDocs files the rules of protocol.ListRules, the one rule listing
// (check --rules prints the same), by ID.
func ruleDocs() map[string]ruleDoc {
	docs := map[string]ruleDoc{}
	for _, r := range protocol.ListRules(models.All()) {
		docs[r.ID] = ruleDoc{ID: r.ID, Level: r.Level, Summary: r.Summary, Protocol: r.Protocol, Spec: r.Spec}
	}
	return docs
}

func knownProtocol(name string) (string, bool) {
	for _, n := range models.Names() {
		if n == name {
			return n, true
		}
	}
	return "", false
}

func (s *Server) serveRules(w http.ResponseWriter, r *http.Request) {
	rules := make([]ruleDoc, 0, len(s.rules))
	for _, m := range append([]string{protocol.StreamProtocol}, models.Names()...) {
		for _, rd := range s.rules {
			if rd.Protocol == m {
				rules = append(rules, rd)
			}
		}
	}
	sortRules(rules)
	writeJSON(w, http.StatusOK, map[string]any{"rules": rules})
}

// sortRules orders rules by protocol (as given), then level (MUST first), then ID.
func sortRules(rules []ruleDoc) {
	sort.SliceStable(rules, func(i, j int) bool {
		a, b := rules[i], rules[j]
		if a.Protocol != b.Protocol {
			return false
		}
		if a.Level != b.Level {
			return a.Level > b.Level
		}
		return a.ID < b.ID
	})
}
