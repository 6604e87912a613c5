// Package visualize draws each session of a checked stream as its path
// through its protocol's state machine, with every rule violation in red.
//
// It works in three separate stages, so that each can be used and tested on
// its own:
//
//  1. Collect: a Collector receives the Steps, Findings and SessionSummaries
//     of a protocol.Engine run (Collector.Sink) and keeps one Trace per
//     session. A Trace merges repeated transitions as they arrive, so its
//     size is bounded by Limits, not by the session's length: a session of a
//     million events takes no more memory than one of a hundred.
//  2. DOT: DOT turns traces into Graphviz DOT text. It is a pure,
//     deterministic function: the same traces always give the same bytes.
//  3. Render: SVG is produced by Graphviz (github.com/goccy/go-graphviz, a
//     WebAssembly build) in a separate helper process, aaep-render (see
//     Renderer); PNG is rasterised from that SVG with rsvg-convert
//     (RasterizePNG), because go-graphviz's own PNG renderer draws broken
//     edges.
//
// Why a helper process: go-graphviz compiles its WebAssembly module in a
// package init function, so every program that links it pays that start-up
// (about 0.5 s and 50 MB the first time on a machine, 20 ms and 20 MB after,
// plus a compilation cache written under the temporary directory) whether it
// draws or not. This package does not import go-graphviz, so commands that do
// not draw never pay that cost; the subpackage render, which does, runs only
// inside aaep-render (and in tests and benchmarks of render itself). The
// helper runs with its TMPDIR in a private directory of the user's
// (HelperTempDir), so that its compiled code is never in a directory another
// user made or can write to.
//
// Drawing conventions (the legend in every drawing repeats them): states are
// rounded boxes; a small black dot points at the state a session started
// from; terminal states have a double border, error states are double
// octagons; the state a session ended in has a bold border. Faint dashed
// states and dotted edges are the protocol model's exits the session did not
// take. Edges are transitions, numbered in the order they happened with the
// time since the session's first message ("3. tool.invoked web_search
// +1.204s"); repeated transitions are one edge with a count ("×12, first #3
// +1.200s"), and the transitions that leave a state unchanged are listed on
// one loop. Edge colour and arrowhead say what kind of step it was (tool,
// confirmation, clarification, reply, streaming output, ...); inferred
// (synthetic) steps such as timeouts are dashed. A step that breaks a rule
// is red and labelled with the rule ID and a short reason; findings about
// messages that caused no step are a red note on the state the session was
// in, and findings about the end of a session a red note on the state it
// ended in.
//
// Memory: a Trace keeps at most Limits.MaxStates states, about
// 2×Limits.MaxEdges transitions and Limits.MaxNotes findings per element,
// whatever the session's length; a Collector traces at most
// CollectorOptions.MaxSessions sessions.
package visualize
