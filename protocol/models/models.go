// Package models lists the protocol models the toolkit knows, in the order
// they are tried.
package models

import (
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/aaep"
	"github.com/aaep-tools/aaepkit/protocol/asp"
	"github.com/aaep-tools/aaepkit/protocol/kahn"
)

// All returns a fresh instance of every known model: AAEP, ASP, KAHN agent
// events and KAHN CI events.
func All() []protocol.Model {
	return []protocol.Model{aaep.New(), asp.New(), kahn.New(), kahn.NewCI()}
}

// Names returns the names of the known models.
func Names() []string {
	var names []string
	for _, m := range All() {
		names = append(names, m.Name())
	}
	return names
}
