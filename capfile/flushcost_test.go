package capfile

import (
	"encoding/binary"
	"fmt"
	"io"
	"sort"
	"testing"
	"time"
)

// layoutParts splits a capture into what its bytes are: the header, the
// index and trailer (skippable frames), and inside the data frames the
// frame headers, block headers, literals headers, Huffman tree
// descriptions, literals (raw or Huffman-coded), sequences section headers,
// sequences (FSE table descriptions and bitstream), raw and RLE blocks and
// checksums (RFC 8878). Its parts add up to len(b); blocks is the number
// of data blocks.
func layoutParts(b []byte) (parts map[string]int, blocks int, err error) {
	parts = map[string]int{}
	p := 0
	need := func(n int) error {
		if n < 0 || p+n > len(b) {
			return fmt.Errorf("a part of %d bytes at %d overruns the %d bytes", n, p, len(b))
		}
		return nil
	}
	for p < len(b) {
		if err := need(8); err != nil {
			return nil, 0, err
		}
		magic := binary.LittleEndian.Uint32(b[p:])
		if isSkippable(magic) {
			n := 8 + int(binary.LittleEndian.Uint32(b[p+4:]))
			if err := need(n); err != nil {
				return nil, 0, err
			}
			name := map[uint32]string{headerMagic: "header", indexMagic: "index", trailerMagic: "trailer"}[magic]
			parts[name+" (skippable frame)"] += n
			p += n
			continue
		}
		if magic != zstdFrameMagic {
			return nil, 0, fmt.Errorf("no frame at %d", p)
		}
		fhd := b[p+4]
		hl := 5 + [4]int{0, 1, 2, 4}[fhd&3] + [4]int{0, 2, 4, 8}[fhd>>6]
		if fhd&0x20 == 0 {
			hl++ // window descriptor
		} else if fhd>>6 == 0 {
			hl++ // one-byte content size
		}
		parts["frame header"] += hl
		p += hl
		for last := false; !last; {
			if err := need(3); err != nil {
				return nil, 0, err
			}
			h := uint32(b[p]) | uint32(b[p+1])<<8 | uint32(b[p+2])<<16
			last = h&1 != 0
			size := int(h >> 3)
			parts["block header"] += 3
			p += 3
			blocks++
			switch (h >> 1) & 3 {
			case 0:
				parts["raw block"] += size
			case 1:
				size = 1
				parts["RLE block"]++
			case 2:
				if err := need(size); err != nil {
					return nil, 0, err
				}
				if err := compressedBlockParts(b[p:p+size], parts); err != nil {
					return nil, 0, fmt.Errorf("block at %d: %w", p-3, err)
				}
			default:
				return nil, 0, fmt.Errorf("reserved block type at %d", p-3)
			}
			if err := need(size); err != nil {
				return nil, 0, err
			}
			p += size
		}
		if fhd&4 != 0 {
			if err := need(4); err != nil {
				return nil, 0, err
			}
			parts["frame checksum"] += 4
			p += 4
		}
	}
	return parts, blocks, nil
}

// compressedBlockParts adds up the sections of one compressed block.
func compressedBlockParts(blk []byte, parts map[string]int) error {
	if len(blk) < 2 {
		return fmt.Errorf("a compressed block of %d bytes", len(blk))
	}
	typ, sf := blk[0]&3, (blk[0]>>2)&3
	var lh, lsz int
	switch typ {
	case 0, 1: // raw, RLE
		switch sf {
		case 0, 2:
			lh, lsz = 1, int(blk[0]>>3)
		case 1:
			lh, lsz = 2, int(blk[0]>>4)+int(blk[1])<<4
		default:
			lh, lsz = 3, int(blk[0]>>4)+int(blk[1])<<4+int(blk[2])<<12
		}
		if typ == 1 {
			lsz = 1
		}
		parts["literals, raw"] += lsz
	default: // Huffman-coded, with a tree (2) or the previous one (3)
		var v uint64
		for i := 0; i < 5 && i < len(blk); i++ {
			v |= uint64(blk[i]) << (8 * i)
		}
		switch sf {
		case 0, 1:
			lh, lsz = 3, int((v>>14)&0x3ff)
		case 2:
			lh, lsz = 4, int((v>>18)&0x3fff)
		default:
			lh, lsz = 5, int((v>>22)&0x3ffff)
		}
		tree := 0
		if typ == 2 && lh < len(blk) {
			tree = 1 + int(blk[lh])
			if blk[lh] >= 128 {
				tree = 1 + (int(blk[lh])-127+1)/2
			}
		}
		parts["Huffman tree"] += tree
		parts["literals, Huffman-coded"] += lsz - tree
	}
	parts["literals header"] += lh
	q := lh + lsz
	if q >= len(blk) {
		return fmt.Errorf("literals of %d bytes overrun the block of %d", lsz, len(blk))
	}
	sh := 1
	switch n := blk[q]; {
	case n == 0:
		sh = 1
	case n < 128:
		sh = 2 // count, modes
	case n < 255:
		sh = 3
	default:
		sh = 4
	}
	if q+sh > len(blk) {
		return fmt.Errorf("sequences header overruns the block")
	}
	parts["sequences header"] += sh
	parts["sequences (tables, bitstream)"] += len(blk) - q - sh
	return nil
}

// liveLayout writes n records of testdata/demo.aaep's payloads (cycled)
// 100 ms apart with the low-rate encoder, with a timed flush after each as
// a live recorder at 10 events/s does (or none), and returns the capture.
func liveLayout(tb testing.TB, n int, flush bool) []byte {
	r, err := Open("../testdata/demo.aaep")
	if err != nil {
		tb.Fatal(err)
	}
	defer r.Close()
	var pool []Record
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			tb.Fatal(err)
		}
		c := *rec
		c.Payload = append([]byte(nil), rec.Payload...)
		c.Attrs = append([]Attr(nil), rec.Attrs...)
		pool = append(pool, c)
	}
	var m memWriter
	w, err := NewWriter(&m, testHeader(), &WriterOptions{FlushInterval: -1})
	if err != nil {
		tb.Fatal(err)
	}
	w.slowMode = true // the encoder a live recorder uses at this rate, flushed or not
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		rec := pool[i%len(pool)]
		rec.Time = int64(i) * int64(100*time.Millisecond)
		if err := w.Append(&rec); err != nil {
			tb.Fatal(err)
		}
		if flush {
			now = now.Add(100 * time.Millisecond)
			w.flushTick(now)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return m.b
}

type memWriter struct{ b []byte }

func (m *memWriter) Write(p []byte) (int, error) { m.b = append(m.b, p...); return len(p), nil }

// TestLayoutPartsAddUp: the layout's parts are the whole capture, flushed
// record by record or not, and a flushed capture has a block per flush.
func TestLayoutPartsAddUp(t *testing.T) {
	for _, flush := range []bool{false, true} {
		data := liveLayout(t, 200, flush)
		parts, blocks, err := layoutParts(data)
		if err != nil {
			t.Fatal(err)
		}
		sum := 0
		for _, v := range parts {
			sum += v
		}
		if sum != len(data) {
			t.Errorf("flush %v: parts add up to %d bytes, the capture has %d: %v", flush, sum, len(data), parts)
		}
		if flush && blocks < 200 {
			t.Errorf("flushed after each of 200 records: %d blocks", blocks)
		}
	}
}

// BenchmarkLiveLayout reports where the bytes of a capture of 200 events
// written live at 10 events/s go (a block per 100 ms flush), per event,
// beside the same events written by the same encoder without flushes:
//
//	go test -run '^$' -bench LiveLayout -benchtime=1x ./capfile
func BenchmarkLiveLayout(b *testing.B) {
	for _, flush := range []bool{true, false} {
		name := "10ev_s"
		if !flush {
			name = "unflushed"
		}
		b.Run(name, func(b *testing.B) {
			var data []byte
			for i := 0; i < b.N; i++ {
				data = liveLayout(b, 200, flush)
			}
			parts, blocks, err := layoutParts(data)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(len(data))/200, "B/event")
			b.ReportMetric(float64(blocks), "blocks")
			var names []string
			for k := range parts {
				names = append(names, k)
			}
			sort.Strings(names)
			for _, k := range names {
				b.Logf("%-32s %6d bytes  %5.1f B/event", k, parts[k], float64(parts[k])/200)
			}
		})
	}
}
