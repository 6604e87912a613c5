// Package capedit holds the everyday operations on capture files: a summary
// (Info), conversion to and from JSON Lines (Export, Import), and editing
// into a new capture (Cut, Filter, Merge).
//
// Every operation streams: it holds a bounded number of records in memory
// whatever the size of its inputs. Outputs go through internal/outfile: an
// output that is, or resolves to, one of the inputs is refused; a regular
// file is written under a temporary name in its directory, fsynced and
// renamed into place (its mode kept), and the temporary file is removed when
// anything fails; a symbolic link's target is written; a device, FIFO or
// socket is written in place; "-" is standard output when the caller gives
// one (the options' Stdout). A range, session or filter that selects nothing
// is an error wrapping ErrEmptySelection that says what the capture holds.
//
// # Damaged inputs
//
// A capture whose writer did not finish (a torn tail, see capfile.IsTorn) is
// processed up to its last intact record, and the operation returns a
// Warning saying where the tail was cut. Any other damage (a bad checksum, an
// impossible length) stops the operation: every record read before it is
// written (the output is closed on a record or line boundary and kept), then
// the operation returns an error naming the file, the byte offset and the
// record, marked with outfile.KeepPartial; capfile.Repair (the repair verb)
// salvages the rest of such files.
//
// # JSON Lines
//
// Export writes one message per line, byte for byte as recorded: the format
// the reference Python aaep-capture writes and its aaep-validate reads. With
// ExportOptions.WithMeta every record becomes a wrapper object instead (see
// the package-level documentation of MetaVersion), which Import reads back
// into identical records.
package capedit
