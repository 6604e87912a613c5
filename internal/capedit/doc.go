// Package capedit holds the aaep-replay verbs that read captures and write
// a summary, JSON Lines or new captures: Info and Sum (info), Export and
// Import (JSON Lines), and the edits Cut, Filter, Split, Dedupe and Merge,
// each with a TimeShift (--time-shift). Inputs are opened through package
// recording; every verb streams, holding a bounded number of records
// whatever the size of its inputs.
//
// Outputs go through internal/outfile (Output): never over an input,
// written under a temporary name and renamed into place, "-" for
// Output.Stdout, and an original recording replaced only with Output.Force.
// A selection of nothing is an error wrapping ErrEmptySelection that says
// what the capture holds.
//
// # Damaged inputs
//
// A torn input (capfile.IsTorn) is used up to its last intact record, with
// a Warning. Other damage stops the verb after every record before it is
// written; the error names the file, the byte offset and the record, and is
// marked with outfile.KeepPartial. The repair verb salvages the rest.
//
// # JSON Lines
//
// Export writes one message per line, byte for byte, as the reference
// Python aaep-capture does; with ExportOptions.WithMeta each record is a
// wrapper object (MetaVersion) that Import reads back into an identical
// record.
package capedit
