package imagecheck

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image/jpeg"
)

// jpegStart is SOI and the first byte of the next marker.
const jpegStart = "\xff\xd8\xff"

// What a JPEG walk is reading.
const (
	jpegSOI     = iota // the two bytes of SOI
	jpegMarker         // 0xFF (and fill bytes), then a marker
	jpegLength         // a segment's two-byte length
	jpegSegment        // a segment's data
	jpegScan           // entropy-coded data, up to the next marker
	jpegEnd            // after EOI: anything
)

// jpegWalk walks a JPEG's markers as they arrive (ITU T.81, annex B).
type jpegWalk struct {
	maxSide int
	err     *Error

	state  int
	n      int // bytes of SOI or of the length read
	sawFF  bool
	marker byte
	length [2]byte
	left   int    // bytes of the segment's data left
	seg    []byte // the data of SOF and SOS segments, which are read

	w, h  int
	frame bool // SOF was read
	scans int
}

func newJPEGWalk(maxSide int) *jpegWalk { return &jpegWalk{maxSide: maxSide} }

func (j *jpegWalk) fail(kind error, format string, args ...any) {
	if j.err == nil {
		j.err = &Error{Kind: kind, Reason: fmt.Sprintf(format, args...), Width: j.w, Height: j.h}
	}
}

func (j *jpegWalk) write(b []byte) {
	for len(b) > 0 && j.err == nil {
		switch j.state {
		case jpegEnd:
			return
		case jpegSOI:
			if b[0] != "\xff\xd8"[j.n] {
				j.fail(ErrNotImage, "it does not start with a JPEG's SOI marker")
				return
			}
			b = b[1:]
			if j.n++; j.n == 2 {
				j.state = jpegMarker
			}
		case jpegMarker:
			c := b[0]
			b = b[1:]
			switch {
			case !j.sawFF && c != 0xff:
				j.fail(ErrDamaged, "it has bytes between its segments that are no marker")
			case c == 0xff:
				j.sawFF = true // a fill byte, or the marker's first byte
			default:
				j.sawFF = false
				j.beginSegment(c)
			}
		case jpegLength:
			j.length[j.n] = b[0]
			b = b[1:]
			if j.n++; j.n == 2 {
				j.lengthRead()
			}
		case jpegSegment:
			k := min(len(b), j.left)
			if j.marker == 0xda || isSOF(j.marker) {
				j.seg = append(j.seg, b[:k]...)
			}
			b = b[k:]
			if j.left -= k; j.left == 0 {
				j.endSegment()
			}
		case jpegScan:
			b = j.scan(b)
		}
	}
}

// beginSegment handles the marker just read.
func (j *jpegWalk) beginSegment(m byte) {
	j.marker = m
	switch {
	case m == 0xd9: // EOI
		if j.scans == 0 {
			j.fail(ErrDamaged, "it ends before any image data")
			return
		}
		j.state = jpegEnd
	case m >= 0xd0 && m <= 0xd7 || m == 0x01:
		// RST outside a scan (some encoders write one after the last)
		// and TEM stand alone; image/jpeg skips them too.
	case m == 0xd8:
		j.fail(ErrDamaged, "it has a second SOI marker")
	case m < 0xc0:
		j.fail(ErrDamaged, "it has the reserved marker 0x%02X", m)
	default:
		j.state, j.n = jpegLength, 0
	}
}

func (j *jpegWalk) lengthRead() {
	n := int(binary.BigEndian.Uint16(j.length[:]))
	if n < 2 {
		j.fail(ErrDamaged, "a segment's length is %d", n)
		return
	}
	m := j.marker
	switch {
	case isSOF(m) && j.frame:
		j.fail(ErrDamaged, "it has a second frame header")
		return
	case isSOF(m) && m > 0xc2:
		j.fail(ErrUnsupported, "it is a lossless, hierarchical or arithmetic-coded JPEG")
		return
	case m == 0xde || m == 0xdf:
		j.fail(ErrUnsupported, "it is a hierarchical JPEG")
		return
	case m == 0xda && !j.frame:
		j.fail(ErrDamaged, "its image data comes before its frame header")
		return
	case (isSOF(m) || m == 0xda) && n > 2+6+3*4:
		// Longer than any frame or scan header of at most 4 components.
		j.fail(ErrUnsupported, "it has more than 4 colour components")
		return
	}
	j.seg = j.seg[:0]
	j.left = n - 2
	j.state = jpegSegment
	if j.left == 0 {
		j.endSegment()
	}
}

func isSOF(m byte) bool { return m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc }

func (j *jpegWalk) endSegment() {
	j.state = jpegMarker
	switch {
	case isSOF(j.marker):
		j.frameHeader()
	case j.marker == 0xda:
		// SOS: Ns components, then 2 bytes each and 3 more (B.2.3).
		if len(j.seg) == 0 || int(j.seg[0]) < 1 || int(j.seg[0]) > 4 || len(j.seg) != 1+2*int(j.seg[0])+3 {
			j.fail(ErrDamaged, "a scan header is malformed")
			return
		}
		j.scans++
		j.state = jpegScan
	}
}

// frameHeader reads SOF0, SOF1 or SOF2 with image/jpeg's own rules, by
// giving DecodeConfig the segment alone after a JFIF marker (with which
// it stops at the frame header).
func (j *jpegWalk) frameHeader() {
	j.frame = true
	var synth bytes.Buffer
	synth.WriteString("\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00")
	synth.Write([]byte{0xff, j.marker})
	binary.Write(&synth, binary.BigEndian, uint16(len(j.seg)+2))
	synth.Write(j.seg)
	cfg, err := jpeg.DecodeConfig(&synth)
	var unsupported jpeg.UnsupportedError
	switch {
	case errors.As(err, &unsupported):
		j.fail(ErrUnsupported, "it is a JPEG of a kind not accepted (%s)", string(unsupported))
		return
	case err != nil:
		j.fail(ErrDamaged, "its frame header is malformed")
		return
	}
	j.w, j.h = cfg.Width, cfg.Height
	switch {
	case j.w == 0 || j.h == 0:
		// A height of 0 is given later, in a DNL segment, which few
		// decoders read.
		j.fail(ErrUnsupported, "its frame header gives a canvas of %dx%d pixels", j.w, j.h)
	default:
		if err := canvas(j.w, j.h, j.maxSide); err != nil {
			j.err = err
		}
	}
}

// scan skips entropy-coded data up to the next marker: 0xFF followed by
// anything but 0x00 (a stuffed byte), a restart marker or another 0xFF.
// It returns what follows the marker.
func (j *jpegWalk) scan(b []byte) []byte {
	for len(b) > 0 {
		if !j.sawFF {
			i := bytes.IndexByte(b, 0xff)
			if i < 0 {
				return nil
			}
			b, j.sawFF = b[i+1:], true
			continue
		}
		c := b[0]
		b = b[1:]
		switch {
		case c == 0xff:
		case c == 0x00 || c >= 0xd0 && c <= 0xd7:
			j.sawFF = false
		default:
			j.sawFF = false
			j.state = jpegMarker
			j.beginSegment(c)
			return b
		}
	}
	return nil
}

func (j *jpegWalk) close() (int, int, *Error) {
	switch {
	case j.err != nil:
		return 0, 0, j.err
	case j.state != jpegEnd:
		return 0, 0, &Error{Kind: ErrTruncated, Reason: "it ends before its EOI marker", Width: j.w, Height: j.h}
	}
	return j.w, j.h, nil
}
