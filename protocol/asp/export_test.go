package asp

// MachineEdge is one row of the state machine's table, as the tests see it.
type MachineEdge struct {
	From, To string // To is ToPrevious for the resolution of an escalation
	On       []string
	Timer    string // the clock of a timed edge
	Lenient  bool
	Label    string
}

// ToPrevious is the target of the edge back from ESCALATED.
const ToPrevious = toPrevious

// MachineEdges returns the rows of the table.
func MachineEdges() []MachineEdge {
	var out []MachineEdge
	for _, r := range edges {
		me := MachineEdge{From: r.from, To: r.to, On: r.on, Lenient: r.lenient != "", Label: r.label}
		if r.timer != nil {
			me.Timer = r.timer.name
		}
		out = append(out, me)
	}
	return out
}
