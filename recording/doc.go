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
// A recording has one origin table for all its parts (Origins), each
// origin with a Replay flag: a recording of a replay (serve --record, push
// --record: capfile.MetaReplayOf) holds its events' original timestamps.
// Its streams are what the analysis driver (protocol/check) checks apart:
// one per subscription for a recording of a replay (StreamOf, by the
// "subscription" attribute), one for any other recording, whatever its
// origins.
//
// Reading:
//
//   - Read hands the messages and connection records to a Handler, read,
//     decompressed, decoded and prepared for the protocol engine on a
//     goroutine of their own, a few recycled batches ahead of the handler.
//     A recording's parts are read one after the other; Join makes several
//     recordings one, interleaved by time as merge --join-sources writes
//     them.
//   - Records opens a Reader that serve, view and the edits read as one
//     capture, seeking through the parts' indexes (SeekTime, SeekRecord, a
//     joint FileIndex) without merging into a temporary file. Merge is the
//     one time-merge, used by Read, the Reader of joined recordings and
//     capedit's merge.
package recording
