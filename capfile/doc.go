// Package capfile reads and writes AAEP capture files: a versioned,
// crash-safe record of the messages an agent endpoint sent and received, with
// their receive times. FORMAT.md in this directory is the format's
// specification.
//
// A capture is one valid zstd file. A header (magic, version, start time,
// tool, origin table) sits in a zstd skippable frame; records follow in
// ordinary zstd frames; an index of frames, times and sessions and a small
// fixed trailer end the file, again in skippable frames. So `zstd -t` checks a
// capture and `zstd -dc` prints its record stream.
//
// Every record carries a Kind, Flags, an origin id, a monotonic receive time
// in nanoseconds since the capture's start, a session key, transport
// attributes and the payload exactly as received, under a CRC-32C. Lengths
// are checked against fixed maxima before anything is allocated. The names
// of kinds, flags, connection events, tools and meta keys are this
// package's (Kind.String, Flags.Names, ConnConnected, ToolCapture,
// MetaReplayOf, ...).
//
// # Writing
//
//	w, err := capfile.Create("run.aaep", capfile.Header{
//		Start:   time.Now(),
//		Tool:    capfile.ToolCapture + "/0.1.0",
//		Origins: []capfile.Origin{{ID: 0, Transport: "sse", Endpoint: "https://agent.example/events"}},
//	}, nil)
//	if err != nil { ... }
//	start := time.Now()
//	for msg := range messages {
//		err := w.Append(&capfile.Record{
//			Kind: capfile.KindReceived, Time: int64(time.Since(start)),
//			Session: msg.SessionID, Payload: msg.Bytes,
//		})
//		if err != nil { ... } // write errors are sticky
//	}
//	err = w.Close() // writes the index; the file is complete only after Close
//
// A timer flushes the compressor WriterOptions.FlushInterval (100 ms) after
// an Append, so a killed recorder loses at most that much, without ending
// the zstd frame; frames end after WriterOptions.FrameSize bytes of records.
//
// # Reading
//
//	r, err := capfile.Open("run.aaep")
//	if err != nil { ... } // errors.Is(err, capfile.ErrNotCapture) for other files
//	defer r.Close()
//	for {
//		rec, err := r.Next()
//		if err == io.EOF {
//			break // clean end
//		}
//		if err != nil {
//			// *capfile.CorruptionError: capfile.IsTorn(err) for a capture
//			// that was not closed (all records before it are intact).
//			return err
//		}
//		use(rec) // rec and its slices are valid until the next Next
//	}
//
// Open reads the index from the end of the file (FileIndex rebuilds it for
// a capture that was not closed), which SeekTime, SeekRecord and
// SeekSession use. NewReader reads a stream front to back.
//
// # End versus damage
//
// Next returns io.EOF only at a clean end, the index and trailer verified.
// A capture that stops earlier (a crash, a full disk, a file still being
// written) ends with a torn tail: a *CorruptionError that IsTorn reports.
// Anything else wrong (a checksum, a length out of range, an undecodable
// frame, a time going backwards, bytes after the trailer) is a
// *CorruptionError with the damaged frame's byte offset and the record's
// number. Reading never repairs; Repair writes a clean copy of every intact
// record.
package capfile
