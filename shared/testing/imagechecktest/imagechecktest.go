// Package imagechecktest has images for tests: a PNG of any canvas, a PNG
// of any size in bytes (built as it is read, so that a test of a 20 MiB
// upload holds none of it), and Fixtures, images of every kind from the
// Go distribution's own tests, some broken on purpose.
package imagechecktest

import (
	"bytes"
	"compress/zlib"
	"embed"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"io"
)

const signature = "\x89PNG\r\n\x1a\n"

//go:embed testdata/*.png testdata/*.jpeg
var fixtures embed.FS

// Fixture returns the image of testdata/name (see testdata/README).
func Fixture(name string) []byte {
	b, err := fixtures.ReadFile("testdata/" + name)
	if err != nil {
		panic("imagechecktest: no fixture " + name)
	}
	return b
}

// Fixtures returns every image of testdata, by name.
func Fixtures() map[string][]byte {
	entries, _ := fixtures.ReadDir("testdata")
	out := map[string][]byte{}
	for _, e := range entries {
		out[e.Name()] = Fixture(e.Name())
	}
	return out
}

// chunk returns a PNG chunk of type typ holding data.
func chunk(typ string, data []byte) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.BigEndian, uint32(len(data)))
	b.WriteString(typ)
	b.Write(data)
	binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(typ), data...)))
	return b.Bytes()
}

// ihdr is the header of an 8-bit greyscale canvas.
func ihdr(w, h int) []byte {
	d := make([]byte, 13)
	binary.BigEndian.PutUint32(d[0:], uint32(w))
	binary.BigEndian.PutUint32(d[4:], uint32(h))
	d[8] = 8 // bit depth; colour type 0, the rest 0
	return chunk("IHDR", d)
}

// PNG returns a valid 8-bit greyscale PNG of w x h pixels, a gradient. It
// compresses row by row: a 10000 x 10000 canvas takes a few hundred
// kilobytes and as much memory.
func PNG(w, h int) []byte { return grey(w, h, 0, zlib.BestSpeed) }

// Uncompressed returns a valid 8-bit greyscale PNG of w x h pixels whose
// pixel data is stored, not compressed: its size depends on its canvas
// alone, so that two shades make two images of the same size.
func Uncompressed(w, h int, shade byte) []byte { return grey(w, h, shade, zlib.NoCompression) }

func grey(w, h int, shade byte, level int) []byte {
	var idat bytes.Buffer
	z, _ := zlib.NewWriterLevel(&idat, level)
	row := make([]byte, 1+w)
	for y := 0; y < h; y++ {
		for x := 1; x <= w; x++ {
			row[x] = byte((x+y)/64) + shade
		}
		z.Write(row)
	}
	z.Close()
	var b bytes.Buffer
	b.WriteString(signature)
	b.Write(ihdr(w, h))
	for d := idat.Bytes(); len(d) > 0; {
		n := min(len(d), 1<<20)
		b.Write(chunk("IDAT", d[:n]))
		d = d[n:]
	}
	b.Write(chunk("IEND", nil))
	return b.Bytes()
}

// MinPNGOfSize is the smallest size PNGOfSize makes.
var MinPNGOfSize = int64(len(signature) + len(ihdr(1, 1)) + len(onePixel()) + 12 + 12)

func onePixel() []byte {
	var idat bytes.Buffer
	z := zlib.NewWriter(&idat)
	z.Write([]byte{0, 128})
	z.Close()
	return chunk("IDAT", idat.Bytes())
}

// PNGOfSize returns a valid PNG of exactly n bytes (at least
// MinPNGOfSize): one grey pixel and a private ancillary chunk of zeros,
// which decoders skip, written as it is read.
func PNGOfSize(n int64) io.Reader {
	pad := n - MinPNGOfSize
	if pad < 0 {
		panic("imagechecktest: a PNG is at least MinPNGOfSize bytes")
	}
	// The padding chunk's CRC covers its type and its zeros.
	crc := crc32.NewIEEE()
	crc.Write([]byte("paDd"))
	io.Copy(crc, io.LimitReader(zeros{}, pad))
	var head, tail bytes.Buffer
	head.WriteString(signature)
	head.Write(ihdr(1, 1))
	binary.Write(&head, binary.BigEndian, uint32(pad))
	head.WriteString("paDd")
	binary.Write(&tail, binary.BigEndian, crc.Sum32())
	tail.Write(onePixel())
	tail.Write(chunk("IEND", nil))
	return io.MultiReader(&head, io.LimitReader(zeros{}, pad), &tail)
}

type zeros struct{}

func (zeros) Read(b []byte) (int, error) {
	clear(b)
	return len(b), nil
}

// JPEG returns a valid baseline JPEG of w x h pixels.
func JPEG(w, h int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), 128, 255})
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, nil); err != nil {
		panic(err) // into memory
	}
	return b.Bytes()
}
