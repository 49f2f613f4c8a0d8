// Package imagecheck tells, as an upload streams past, whether its bytes
// are one whole JPEG or PNG image whose canvas is within bounds, holding
// no more than a few kilobytes of it.
//
// A PNG is walked chunk by chunk to its IEND: every chunk's CRC, the
// header (IHDR, read by the PNG specification's rules), the palette, and
// the compressed pixel data, inflated and counted (nothing kept) to the
// exact size the header announces, every row's filter byte checked. A
// JPEG is walked segment by segment to its EOI: the frame header (SOF,
// read by image/jpeg's own DecodeConfig), every scan header, and the
// entropy-coded data skipped to the next marker. Anything after a JPEG's
// EOI is allowed (cameras append thumbnails and motion photos there);
// nothing is after a PNG's IEND.
//
// Accepted: PNG of any colour type and bit depth, interlaced or not;
// JPEG baseline, extended or progressive, 8-bit, greyscale, YCbCr, RGB,
// CMYK or YCCK, with the subsampling image/jpeg reads. Refused as
// unsupported: animated PNG, lossless, hierarchical, arithmetic-coded and
// 12-bit JPEG.
package imagecheck

import (
	"errors"
	"fmt"
	"strings"
)

// The MIME types of the two formats.
const (
	JPEG = "image/jpeg"
	PNG  = "image/png"
)

// Kinds of refusal; an *Error wraps one.
var (
	// ErrNotImage: the bytes start as neither a JPEG nor a PNG.
	ErrNotImage = errors.New("not a JPEG or PNG image")
	// ErrDamaged: the bytes break the format's rules.
	ErrDamaged = errors.New("a damaged image")
	// ErrTruncated: the bytes end before the image does.
	ErrTruncated = errors.New("an incomplete image")
	// ErrUnsupported: a valid image of a kind not accepted.
	ErrUnsupported = errors.New("a kind of image not accepted")
	// ErrCanvas: the canvas is larger than the limit.
	ErrCanvas = errors.New("a canvas larger than accepted")
)

// Error is a check's refusal of the bytes.
type Error struct {
	Kind error // one of the Err* kinds
	// Reason says what is wrong, as a clause: "it ends before its IEND
	// chunk".
	Reason string
	// Width and Height are the canvas, when the header was read.
	Width, Height int
}

func (e *Error) Error() string { return fmt.Sprintf("%v: %s", e.Kind, e.Reason) }

func (e *Error) Unwrap() error { return e.Kind }

// Image is an accepted image.
type Image struct {
	Type          string // JPEG or PNG
	Width, Height int
}

// format is the walk of one format.
type format interface {
	write(p []byte)
	// close ends the walk and returns the canvas, or why the bytes are no
	// whole image.
	close() (w, h int, err *Error)
}

// Checker checks the bytes written to it; Close gives the verdict.
type Checker struct {
	maxSide int
	head    []byte // the first bytes, until the format is known
	typ     string
	f       format
	closed  bool
}

// New returns a checker that accepts a canvas of at most maxSide pixels
// each way.
func New(maxSide int) *Checker { return &Checker{maxSide: maxSide} }

// Write takes the next bytes of the file. It never fails, so that the
// stream it is tapped from goes on to its end (whose size the caller
// checks first); the verdict waits for Close.
func (c *Checker) Write(p []byte) (int, error) {
	n := len(p)
	for c.f == nil && len(p) > 0 {
		c.head = append(c.head, p[0])
		p = p[1:]
		h := string(c.head)
		switch {
		case h == jpegStart:
			c.typ, c.f = JPEG, newJPEGWalk(c.maxSide)
			c.f.write(c.head)
		case h == pngSignature:
			c.typ, c.f = PNG, newPNGWalk(c.maxSide)
		case !strings.HasPrefix(jpegStart, h) && !strings.HasPrefix(pngSignature, h):
			c.f = refused{&Error{Kind: ErrNotImage, Reason: "it starts as neither a JPEG nor a PNG"}}
		}
	}
	if c.f != nil {
		c.f.write(p)
	}
	return n, nil
}

// Close returns the image the bytes were, or an *Error saying why they
// are not one to accept. It must be called once, also when the stream
// failed, to release what the check holds.
func (c *Checker) Close() (Image, error) {
	if c.closed {
		return Image{}, errors.New("imagecheck: Close called twice")
	}
	c.closed = true
	if c.f == nil {
		// What came is the start of a signature, or nothing.
		return Image{}, &Error{Kind: ErrTruncated, Reason: "it ends before its header"}
	}
	w, h, err := c.f.close()
	if err != nil {
		return Image{}, err
	}
	return Image{Type: c.typ, Width: w, Height: h}, nil
}

// refused is the walk of bytes already refused.
type refused struct{ err *Error }

func (r refused) write([]byte)              {}
func (r refused) close() (int, int, *Error) { return 0, 0, r.err }

// canvas refuses a canvas larger than maxSide either way.
func canvas(w, h, maxSide int) *Error {
	if w > maxSide || h > maxSide {
		return &Error{Kind: ErrCanvas, Width: w, Height: h,
			Reason: fmt.Sprintf("its canvas is %dx%d pixels; the largest accepted is %dx%d", w, h, maxSide, maxSide)}
	}
	return nil
}

// SignatureLen is how many first bytes Sniff needs.
const SignatureLen = len(pngSignature)

// Sniff returns the type and file extension an image's first bytes
// announce, or "" when they are neither a JPEG's nor a PNG's. It decides
// only where an upload is stored and under which type; whether the bytes
// are one whole image is the Checker's verdict.
func Sniff(head []byte) (mimeType, ext string) {
	switch {
	case strings.HasPrefix(string(head), jpegStart):
		return JPEG, "jpg"
	case strings.HasPrefix(string(head), pngSignature):
		return PNG, "png"
	}
	return "", ""
}
