// Package capedit holds the everyday operations on capture files: a summary
// (Info), conversion to and from JSON Lines (Export, Import), and editing
// into a new capture (Cut, Filter, Merge).
//
// Every operation streams: it holds a bounded number of records in memory
// whatever the size of its inputs. Operations that write a capture never
// touch their inputs: they refuse an output that is one of the inputs (by
// path or by os.SameFile), write under a temporary name in the output's
// directory, fsync, rename into place and fsync the directory, and remove the
// temporary file when anything fails, so a failed run leaves no partial
// output behind.
//
// # Damaged inputs
//
// A capture whose writer did not finish (a torn tail, see capfile.IsTorn) is
// processed up to its last intact record, and the operation returns a
// Warning saying where the tail was cut. Any other damage (a bad checksum, an
// impossible length) stops the operation with an error naming the file, the
// byte offset and the record; capfile.Repair (the repair verb) salvages such
// files.
//
// # JSON Lines
//
// Export writes one message per line, byte for byte as recorded: the format
// the reference Python aaep-capture writes and its aaep-validate reads. With
// ExportOptions.WithMeta every record becomes a wrapper object instead (see
// the package-level documentation of MetaVersion), which Import reads back
// into identical records.
package capedit
