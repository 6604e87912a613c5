// Package recording turns what a user names into recordings, and reads
// them: the layer between the file format (package capfile) and the
// commands.
//
// Open takes names as a command line gives them (files, globs such as
// run-*.aaep, directories, s3://BUCKET/KEY and s3://BUCKET/PREFIX/, "-" for
// standard input) with Options (object storage endpoint, addressing and
// credentials source passed explicitly, never registered globally), reads
// each capture's header, and returns the recordings the names hold:
//
//   - A rotated recording's parts (aaep-capture --rotate-every or
//     --rotate-size, split --records or --duration) are one Recording, in
//     part order, chained by the "part" and "previous" each part's header
//     names, wherever they sort and however they were named. An empty last
//     part (only the connection-closed record) belongs to its recording. A
//     part whose previous part was not given, or that names as its previous
//     part one of another recording, is said in Recording.Problems.
//   - Every other capture, and every JSON Lines file, is a recording of its
//     own part.
//
// A recording has one source table for all its parts (Origins), each
// source with a Replay flag: a recording of a replay (aaep-replay serve
// --record, push --record; its header's replay_of) has its events' original
// timestamps. Its streams are what the analysis driver (package
// protocol/check) checks apart: a recording of a replay has one stream per
// subscription (StreamOf: the record's "subscription" attribute), each
// subscriber having received its own copy of the replay; any other
// recording is one stream, whatever its sources (a multi-endpoint capture's
// sources are told apart by the checker itself).
//
// Reading:
//
//   - Read hands the messages and connection records to a Handler, read,
//     decompressed, decoded and prepared for the protocol engine on a
//     goroutine of their own, a few recycled batches ahead of the handler.
//     A recording's parts are read one after the other; Join makes several
//     recordings one, interleaved by time as merge --join-sources writes
//     them.
//   - Records opens a Reader, a seekable cursor over the parts (SeekTime,
//     SeekRecord, a joint FileIndex) that serve, view, cut and the other
//     edits read as one capture, without merging into a temporary file.
package recording
