// Command caplayout measures what the records of a capture would take in
// other layouts than format version 1's, so that a change of format is
// judged by figures before it is made:
//
//	go run ./internal/tools/caplayout FILE.aaep...
//
// For each capture it prints, per record: the file as stored (header,
// records, index and trailer); the payloads alone as JSON Lines in one zstd
// stream (what the records cannot go below); version 1's records written
// again in one stream (length, CRC-32C, time delta and metadata before each
// payload); a columnar layout (every record's time deltas, then lengths,
// then kinds, flags and origins, then session keys, then the payloads, no
// CRC per record), with times in nanoseconds and in microseconds; and the
// index, raw as version 1 stores it and compressed. Each stream is
// compressed alone at the level and window the recorder's compaction uses
// (zstd SpeedDefault, 256 KiB) and, for comparison, at
// SpeedBetterCompression.
//
// Only the figures it prints are its output; it writes no file.
package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"github.com/klauspost/compress/zstd"

	"github.com/aaep-tools/aaepkit/capfile"
)

func main() {
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: caplayout FILE.aaep...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	status := 0
	for _, path := range flag.Args() {
		if err := measure(os.Stdout, path); err != nil {
			fmt.Fprintf(os.Stderr, "caplayout: %s: %v\n", path, err)
			status = 1
		}
	}
	os.Exit(status)
}

// streams are the layouts measured, each as the bytes it would compress.
type streams struct {
	records   int
	jsonl     bytes.Buffer // payloads, one per line
	v1        bytes.Buffer // version 1 records (length, CRC, body)
	colNanos  []bytes.Buffer
	colMicros []bytes.Buffer
}

func measure(w io.Writer, path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	r, err := capfile.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	s, err := collect(r)
	if err != nil {
		return err
	}
	if s.records == 0 {
		return errors.New("no records")
	}
	lay, indexed := r.Layout()
	var indexRaw []byte
	if indexed {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		indexRaw = make([]byte, fi.Size()-lay.DataEnd())
		if _, err := f.ReadAt(indexRaw, lay.DataEnd()); err != nil {
			return fmt.Errorf("reading the index: %w", err)
		}
	}
	n := float64(s.records)
	fmt.Fprintf(w, "%s: %d records, %d bytes, %.1f B/record as stored\n", path, s.records, fi.Size(), float64(fi.Size())/n)
	for _, lvl := range []zstd.EncoderLevel{zstd.SpeedDefault, zstd.SpeedBetterCompression} {
		size := func(parts ...[]byte) float64 { return float64(compressed(lvl, parts...)) / n }
		cols := func(bufs []bytes.Buffer) float64 {
			parts := make([][]byte, len(bufs))
			for i := range bufs {
				parts[i] = bufs[i].Bytes()
			}
			return size(parts...)
		}
		fmt.Fprintf(w, "  %-22v payloads as JSON Lines %.1f, v1 records %.1f, columnar %.1f (times in µs %.1f)", lvl,
			size(s.jsonl.Bytes()), size(s.v1.Bytes()), cols(s.colNanos), cols(s.colMicros))
		if indexed {
			fmt.Fprintf(w, ", index raw %.1f compressed %.1f", float64(len(indexRaw))/n, size(indexRaw))
		}
		fmt.Fprintln(w, " B/record")
	}
	return nil
}

// Columns of the columnar layout, in the order they are written.
const (
	colTime = iota
	colLength
	colMeta
	colSession
	colPayload
	numCols
)

func collect(r *capfile.Reader) (*streams, error) {
	s := &streams{colNanos: make([]bytes.Buffer, numCols), colMicros: make([]bytes.Buffer, numCols)}
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	var prevNanos, prevMicros int64
	var body []byte
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return s, nil
		}
		if err != nil {
			return nil, err
		}
		s.records++
		s.jsonl.Write(rec.Payload)
		s.jsonl.WriteByte('\n')

		// Version 1's record, as FORMAT.md section 5 lays it out.
		body = binary.AppendUvarint(body[:0], uint64(rec.Time-prevNanos))
		body = append(body, byte(rec.Kind), byte(rec.Flags))
		body = binary.LittleEndian.AppendUint16(body, rec.Origin)
		body = appendString(body, rec.Session)
		body = binary.AppendUvarint(body, uint64(len(rec.Attrs)))
		for _, a := range rec.Attrs {
			body = appendString(appendString(body, a.Key), a.Value)
		}
		body = append(body, rec.Payload...)
		s.v1.Write(binary.AppendUvarint(nil, uint64(len(body))))
		s.v1.Write(binary.LittleEndian.AppendUint32(nil, crc32.Checksum(body, castagnoli)))
		s.v1.Write(body)

		micros := rec.Time / 1000
		for _, c := range []struct {
			cols  []bytes.Buffer
			delta uint64
		}{{s.colNanos, uint64(rec.Time - prevNanos)}, {s.colMicros, uint64(micros - prevMicros)}} {
			c.cols[colTime].Write(binary.AppendUvarint(nil, c.delta))
			c.cols[colLength].Write(binary.AppendUvarint(nil, uint64(len(rec.Payload))))
			meta := append([]byte{byte(rec.Kind), byte(rec.Flags)}, binary.LittleEndian.AppendUint16(nil, rec.Origin)...)
			c.cols[colMeta].Write(meta)
			sess := appendString(nil, rec.Session)
			sess = binary.AppendUvarint(sess, uint64(len(rec.Attrs)))
			for _, a := range rec.Attrs {
				sess = appendString(appendString(sess, a.Key), a.Value)
			}
			c.cols[colSession].Write(sess)
			c.cols[colPayload].Write(rec.Payload)
		}
		prevNanos, prevMicros = rec.Time, micros
	}
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// compressed returns the size of parts, concatenated, as one zstd frame.
func compressed(lvl zstd.EncoderLevel, parts ...[]byte) int {
	var out bytes.Buffer
	enc, err := zstd.NewWriter(&out, zstd.WithEncoderLevel(lvl), zstd.WithEncoderConcurrency(1),
		zstd.WithWindowSize(256<<10), zstd.WithEncoderCRC(true))
	if err != nil {
		panic(err) // the options are constants
	}
	for _, p := range parts {
		enc.Write(p)
	}
	enc.Close()
	return out.Len()
}
