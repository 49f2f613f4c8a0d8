package imagecheck

import (
	"bufio"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
)

const pngSignature = "\x89PNG\r\n\x1a\n"

// pngWalk walks a PNG's chunks as they arrive (the signature already
// read).
type pngWalk struct {
	maxSide int
	err     *Error

	// The chunk being read: its 8-byte length and type, its data, its CRC.
	hdr    [8]byte
	nhdr   int
	typ    string
	length uint32
	left   int64 // bytes of data left
	crc    hash.Hash32
	tail   [4]byte
	ntail  int
	inData bool
	inCRC  bool
	data   []byte // the data of IHDR, which is read

	chunks    int
	w, h      int
	colorType byte
	depth     byte
	interlace byte
	palette   bool
	// paletteLen is the palette's length in bytes.
	paletteLen uint32
	idat       int  // 0 before the first IDAT, 1 in the run, 2 after it
	ended      bool // IEND was read
	pixels     *inflater
}

func newPNGWalk(maxSide int) *pngWalk {
	return &pngWalk{maxSide: maxSide, crc: crc32.NewIEEE()}
}

func (p *pngWalk) fail(kind error, format string, args ...any) {
	if p.err == nil {
		p.err = &Error{Kind: kind, Reason: fmt.Sprintf(format, args...), Width: p.w, Height: p.h}
	}
}

func (p *pngWalk) write(b []byte) {
	for len(b) > 0 && p.err == nil {
		switch {
		case p.ended:
			p.fail(ErrDamaged, "it goes on after its IEND chunk")
		case p.inCRC:
			n := copy(p.tail[p.ntail:], b)
			p.ntail += n
			b = b[n:]
			if p.ntail == 4 {
				p.endChunk()
			}
		case p.inData:
			n := int(min(int64(len(b)), p.left))
			p.chunkData(b[:n])
			b = b[n:]
			p.left -= int64(n)
			if p.left == 0 {
				p.inData, p.inCRC, p.ntail = false, true, 0
			}
		default:
			n := copy(p.hdr[p.nhdr:], b)
			p.nhdr += n
			b = b[n:]
			if p.nhdr == 8 {
				p.beginChunk()
			}
		}
	}
}

// beginChunk reads a chunk's length and type.
func (p *pngWalk) beginChunk() {
	p.nhdr = 0
	length := binary.BigEndian.Uint32(p.hdr[:4])
	p.typ = string(p.hdr[4:8])
	for _, c := range []byte(p.typ) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			p.fail(ErrDamaged, "chunk %d has no valid type", p.chunks+1)
			return
		}
	}
	if length > 1<<31-1 {
		p.fail(ErrDamaged, "its %s chunk is longer than a PNG chunk may be", p.typ)
		return
	}
	p.chunks++
	p.length = length
	switch {
	case p.chunks == 1 && p.typ != "IHDR":
		p.fail(ErrDamaged, "it does not start with an IHDR chunk")
		return
	case p.chunks > 1 && p.typ == "IHDR":
		p.fail(ErrDamaged, "it has a second IHDR chunk")
		return
	case p.typ == "IHDR" && length != 13:
		p.fail(ErrDamaged, "its IHDR chunk is %d bytes long, not 13", length)
		return
	}
	if p.typ == "IDAT" {
		if p.idat == 2 {
			p.fail(ErrDamaged, "its IDAT chunks are not consecutive")
			return
		}
		if p.colorType == 3 && !p.palette {
			p.fail(ErrDamaged, "its pixels come before its palette")
			return
		}
		if p.idat == 0 {
			p.pixels = newInflater(p.w, p.h, p.channels()*int(p.depth), p.interlace == 1)
		}
		p.idat = 1
	} else if p.idat == 1 {
		p.idat = 2
	}
	p.crc.Reset()
	p.crc.Write(p.hdr[4:8])
	p.data = p.data[:0]
	p.left = int64(length)
	p.inData = true
	if length == 0 {
		p.inData, p.inCRC, p.ntail = false, true, 0
	}
}

func (p *pngWalk) chunkData(b []byte) {
	p.crc.Write(b)
	switch p.typ {
	case "IHDR":
		p.data = append(p.data, b...)
	case "IDAT":
		p.pixels.write(b)
	}
}

// endChunk checks the CRC and then the chunk.
func (p *pngWalk) endChunk() {
	p.inCRC = false
	if binary.BigEndian.Uint32(p.tail[:]) != p.crc.Sum32() {
		p.fail(ErrDamaged, "the checksum of its %s chunk is wrong", p.typ)
		return
	}
	switch p.typ {
	case "IHDR":
		p.header()
	case "PLTE":
		switch {
		case p.palette:
			p.fail(ErrDamaged, "it has a second palette")
		case p.idat != 0:
			p.fail(ErrDamaged, "its palette comes after its pixels")
		case p.colorType == 0 || p.colorType == 4:
			p.fail(ErrDamaged, "it is greyscale with a palette")
		case p.length == 0 || p.length%3 != 0 || p.length > 3*256:
			p.fail(ErrDamaged, "its palette has a length of %d bytes", p.length)
		}
		p.palette, p.paletteLen = true, p.length
	case "tRNS":
		// Its rules as image/png applies them (PNG specification,
		// section 11.3.2.1).
		switch {
		case p.idat != 0:
			p.fail(ErrDamaged, "its transparency comes after its pixels")
		case p.colorType == 3 && (!p.palette || p.length > p.paletteLen/3):
			p.fail(ErrDamaged, "its transparency does not fit its palette")
		case p.colorType == 0 && p.length != 2, p.colorType == 2 && p.length != 6:
			p.fail(ErrDamaged, "its transparency has a length of %d bytes", p.length)
		case p.colorType == 4 || p.colorType == 6:
			p.fail(ErrDamaged, "it has both an alpha channel and a transparency chunk")
		}
	case "IEND":
		if p.idat == 0 {
			p.fail(ErrDamaged, "it has no pixel data")
			return
		}
		if err := p.pixels.close(); err != nil {
			p.err = err
			return
		}
		p.ended = true
	case "acTL", "fcTL", "fdAT":
		p.fail(ErrUnsupported, "it is an animated PNG")
	default:
		if p.typ[0] >= 'A' && p.typ[0] <= 'Z' && p.typ != "IDAT" {
			// A critical chunk a decoder does not know means it cannot
			// show the image (PNG specification, section 5.4).
			p.fail(ErrUnsupported, "it has a critical chunk %s that PNG does not define", p.typ)
		}
	}
}

// header reads IHDR by the PNG specification's rules (section 11.2.1).
func (p *pngWalk) header() {
	d := p.data
	w, h := binary.BigEndian.Uint32(d[0:4]), binary.BigEndian.Uint32(d[4:8])
	p.depth, p.colorType, p.interlace = d[8], d[9], d[12]
	if w == 0 || h == 0 || w > 1<<31-1 || h > 1<<31-1 {
		p.fail(ErrDamaged, "its IHDR gives a canvas of %dx%d pixels", w, h)
		return
	}
	p.w, p.h = int(w), int(h)
	depths := map[byte][]byte{0: {1, 2, 4, 8, 16}, 2: {8, 16}, 3: {1, 2, 4, 8}, 4: {8, 16}, 6: {8, 16}}[p.colorType]
	ok := false
	for _, v := range depths {
		ok = ok || v == p.depth
	}
	switch {
	case !ok:
		p.fail(ErrDamaged, "its IHDR gives colour type %d with bit depth %d", p.colorType, p.depth)
	case d[10] != 0 || d[11] != 0:
		p.fail(ErrDamaged, "its IHDR names an unknown compression or filter method")
	case p.interlace > 1:
		p.fail(ErrDamaged, "its IHDR names an unknown interlace method")
	default:
		if err := canvas(p.w, p.h, p.maxSide); err != nil {
			p.err = err
		}
	}
}

func (p *pngWalk) channels() int {
	return map[byte]int{0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[p.colorType]
}

func (p *pngWalk) close() (int, int, *Error) {
	if p.pixels != nil && !p.ended {
		// Stop the inflater whatever its state.
		p.pixels.close()
	}
	switch {
	case p.err != nil:
		return 0, 0, p.err
	case !p.ended:
		return 0, 0, &Error{Kind: ErrTruncated, Reason: "it ends before its IEND chunk", Width: p.w, Height: p.h}
	}
	return p.w, p.h, nil
}

// inflater inflates a PNG's pixel data as it comes, in a goroutine of its
// own (compress/zlib reads; the walk is written to), keeping nothing but
// the count and the place in the current row.
type inflater struct {
	pw   *io.PipeWriter
	done chan *Error
	err  *Error // once the goroutine reported
}

// rows is one pass of an image's rows: how many, and the bytes of each
// (its filter byte included).
type rows struct{ n, size int64 }

func newInflater(w, h, bitsPerPixel int, interlaced bool) *inflater {
	var passes []rows
	rowSize := func(w int) int64 { return 1 + (int64(w)*int64(bitsPerPixel)+7)/8 }
	if !interlaced {
		passes = []rows{{int64(h), rowSize(w)}}
	} else {
		// Adam7: each pass's x and y start and step (section 8.2).
		for _, a := range [7][4]int{{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4}, {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}} {
			pw, ph := (w-a[0]+a[2]-1)/a[2], (h-a[1]+a[3]-1)/a[3]
			if pw > 0 && ph > 0 {
				passes = append(passes, rows{int64(ph), rowSize(pw)})
			}
		}
	}
	pr, pw := io.Pipe()
	f := &inflater{pw: pw, done: make(chan *Error, 1)}
	go func() {
		err := inflate(bufio.NewReader(pr), passes)
		if err != nil {
			pr.CloseWithError(err) // the walk's writes fail from now on
		}
		f.done <- err
	}()
	return f
}

func (f *inflater) write(b []byte) {
	if f.err == nil {
		f.pw.Write(b) // fails once the goroutine gave up; close reports why
	}
}

// close ends the pixel data and returns its verdict.
func (f *inflater) close() *Error {
	if f.err == nil {
		f.pw.Close()
		f.err = <-f.done
		if f.err == nil {
			f.err = &Error{} // reported: nothing wrong
		}
	}
	if f.err.Kind == nil {
		return nil
	}
	return f.err
}

// inflate reads a zlib stream of filtered rows and checks it against the
// passes: every row's filter byte is 0 to 4, the data ends where the
// rows do, the stream itself ends there, whole (its checksum right), and
// nothing follows it. r is read byte by byte by the decompressor (a
// bufio.Reader is a flate.Reader), so that what follows the stream is
// still in r.
func inflate(r *bufio.Reader, passes []rows) *Error {
	zr, err := zlib.NewReader(r)
	if err != nil {
		return zlibError(err)
	}
	buf := make([]byte, 32<<10)
	pass, row, inRow := 0, int64(0), int64(0) // where the next byte goes
	for {
		n, err := zr.Read(buf)
		b := buf[:n]
		for len(b) > 0 {
			if pass == len(passes) {
				return &Error{Kind: ErrDamaged, Reason: "it has more pixel data than its canvas holds"}
			}
			if inRow == 0 && b[0] > 4 {
				return &Error{Kind: ErrDamaged, Reason: fmt.Sprintf("a row of its pixels has the unknown filter %d", b[0])}
			}
			k := min(int64(len(b)), passes[pass].size-inRow)
			b = b[k:]
			inRow += k
			if inRow == passes[pass].size {
				inRow, row = 0, row+1
				if row == passes[pass].n {
					row, pass = 0, pass+1
				}
			}
		}
		if err == io.EOF {
			if pass != len(passes) {
				return &Error{Kind: ErrTruncated, Reason: "its pixel data ends before its last row"}
			}
			if n, _ := io.Copy(io.Discard, r); n > 0 {
				return &Error{Kind: ErrDamaged, Reason: "its IDAT chunks go on after the compressed pixel data"}
			}
			return nil
		}
		if err != nil {
			return zlibError(err)
		}
	}
}

func zlibError(err error) *Error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, io.EOF) {
		return &Error{Kind: ErrTruncated, Reason: "its compressed pixel data ends before the stream does"}
	}
	return &Error{Kind: ErrDamaged, Reason: "its compressed pixel data is damaged"}
}
