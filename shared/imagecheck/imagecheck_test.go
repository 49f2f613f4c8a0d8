package imagecheck_test

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/color/palette"
	"image/jpeg"
	"image/png"
	"io"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/genvideo/gen/shared/imagecheck"
	"github.com/genvideo/gen/shared/testing/imagechecktest"
)

const maxSide = 8192

// check runs a checker over b written step bytes at a time (all at once
// for 0).
func check(b []byte, step, side int) (imagecheck.Image, error) {
	c := imagecheck.New(side)
	for len(b) > 0 {
		n := len(b)
		if step > 0 {
			n = min(n, step)
		}
		c.Write(b[:n])
		b = b[n:]
	}
	return c.Close()
}

// encoded returns images made by Go's encoders, of the kinds a client
// may send beside the fixtures in testdata.
func encoded(t testing.TB) map[string][]byte {
	t.Helper()
	r := image.Rect(0, 0, 37, 21)
	imgs := map[string]image.Image{
		"gray8.png":    image.NewGray(r),
		"gray16.png":   image.NewGray16(r),
		"rgba16.png":   image.NewRGBA64(r),
		"nrgba8.png":   image.NewNRGBA(r),
		"paletted.png": image.NewPaletted(r, palette.Plan9),
		"1x1.png":      image.NewGray(image.Rect(0, 0, 1, 1)),
		"wide.png":     image.NewGray(image.Rect(0, 0, maxSide, 1)),
		"tall.png":     image.NewGray(image.Rect(0, 0, 1, maxSide)),
		"ycbcr.jpeg":   image.NewYCbCr(r, image.YCbCrSubsampleRatio420),
		"gray.jpeg":    image.NewGray(r),
		"1x1.jpeg":     image.NewRGBA(image.Rect(0, 0, 1, 1)),
		"wide.jpeg":    image.NewGray(image.Rect(0, 0, maxSide, 1)),
	}
	out := map[string][]byte{}
	for name, img := range imgs {
		if gi, ok := img.(*image.Gray16); ok {
			gi.Set(3, 4, color.Gray16{Y: 40000})
		}
		var b bytes.Buffer
		var err error
		if filepath.Ext(name) == ".jpeg" {
			err = jpeg.Encode(&b, img, nil)
		} else {
			err = png.Encode(&b, img)
		}
		if err != nil {
			t.Fatal(err)
		}
		out[name] = b.Bytes()
	}
	out["a gradient"] = imagechecktest.PNG(300, 200)
	return out
}

// TestAcceptsWhatDecodes: every image Go's own decoders read whole is
// accepted, with its type and canvas; every one they refuse is refused,
// whether it arrives whole or a byte at a time.
func TestAcceptsWhatDecodes(t *testing.T) {
	all := imagechecktest.Fixtures()
	for k, v := range encoded(t) {
		all[k] = v
	}
	for name, b := range all {
		t.Run(name, func(t *testing.T) {
			img, format, decodeErr := image.Decode(bytes.NewReader(b))
			for _, step := range []int{0, 1, 1000} {
				got, err := check(b, step, maxSide)
				if decodeErr != nil {
					if err == nil {
						t.Errorf("accepted (written %d at a time) what image.Decode refuses: %v", step, decodeErr)
					}
					continue
				}
				want := imagecheck.Image{Type: "image/" + format, Width: img.Bounds().Dx(), Height: img.Bounds().Dy()}
				if err != nil || got != want {
					t.Errorf("written %d at a time: %+v, %v; want %+v", step, got, err, want)
				}
			}
		})
	}
}

// TestRefusesEveryPrefix: an image cut anywhere is refused, as
// incomplete or damaged, never accepted.
func TestRefusesEveryPrefix(t *testing.T) {
	all := imagechecktest.Fixtures()
	for k, v := range encoded(t) {
		all[k] = v
	}
	for name, b := range all {
		if _, err := check(b, 0, maxSide); err != nil {
			continue // refused whole
		}
		step := max(1, len(b)/300)
		for n := 0; n < len(b); n += step {
			if _, err := check(b[:n], 0, maxSide); err == nil {
				t.Errorf("%s cut to %d of %d bytes was accepted", name, n, len(b))
			}
		}
		for n := max(0, len(b)-40); n < len(b); n++ {
			if _, err := check(b[:n], 0, maxSide); err == nil {
				t.Errorf("%s cut to %d of %d bytes was accepted", name, n, len(b))
			}
		}
	}
}

// TestPNGRefusesEveryByteChanged: every chunk carries a CRC, so a PNG
// with any one byte changed is refused.
func TestPNGRefusesEveryByteChanged(t *testing.T) {
	for name, b := range encoded(t) {
		if !bytes.HasPrefix(b, []byte("\x89PNG")) || len(b) > 4000 {
			continue
		}
		for i := range b {
			c := bytes.Clone(b)
			c[i] ^= 0x10
			if _, err := check(c, 0, maxSide); err == nil {
				t.Errorf("%s with byte %d changed was accepted", name, i)
			}
		}
	}
}

// pngOf builds a PNG from chunks (type, data), computing their CRCs.
func pngOf(chunks ...any) []byte {
	b := []byte("\x89PNG\r\n\x1a\n")
	for i := 0; i < len(chunks); i += 2 {
		typ, data := chunks[i].(string), chunks[i+1].([]byte)
		b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
		b = append(b, typ...)
		b = append(b, data...)
		b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(append([]byte(typ), data...)))
	}
	return b
}

func ihdr(w, h uint32, depth, colorType, interlace byte) []byte {
	d := binary.BigEndian.AppendUint32(nil, w)
	d = binary.BigEndian.AppendUint32(d, h)
	return append(d, depth, colorType, 0, 0, interlace)
}

// deflated is the zlib stream of b.
func deflated(b []byte) []byte {
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write(b)
	w.Close()
	return z.Bytes()
}

// TestRefusals: images that are not images, damaged, incomplete, of a
// kind not accepted, or of too large a canvas, each refused with its
// kind.
func TestRefusals(t *testing.T) {
	onePixel := deflated([]byte{0, 7})
	good := pngOf("IHDR", ihdr(1, 1, 8, 0, 0), "IDAT", onePixel, "IEND", []byte{})
	if _, err := check(good, 0, maxSide); err != nil {
		t.Fatalf("the base image is refused: %v", err)
	}
	jpg := imagechecktest.JPEG(16, 16)
	sof := bytes.Index(jpg, []byte{0xff, 0xc0})
	withSOF := func(marker byte, edit func(seg []byte)) []byte {
		b := bytes.Clone(jpg)
		b[sof+1] = marker
		if edit != nil {
			edit(b[sof+4:])
		}
		return b
	}
	huge := imagechecktest.PNG(maxSide+1, 1)
	tests := []struct {
		name string
		data []byte
		kind error
	}{
		{"empty", nil, imagecheck.ErrTruncated},
		{"a GIF", []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"), imagecheck.ErrNotImage},
		{"a WebP", []byte("RIFF\x24\x00\x00\x00WEBPVP8 "), imagecheck.ErrNotImage},
		{"an SVG", []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`), imagecheck.ErrNotImage},
		{"a PNG signature alone", []byte("\x89PNG\r\n\x1a\n"), imagecheck.ErrTruncated},
		{"a PNG signature and garbage", append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte("garbage!"), 100)...), imagecheck.ErrDamaged},
		{"a JPEG signature and garbage", append([]byte("\xff\xd8\xff"), bytes.Repeat([]byte("garbage!"), 100)...), imagecheck.ErrDamaged},
		{"a JPEG signature and zeros", append([]byte("\xff\xd8\xff"), make([]byte, 1000)...), imagecheck.ErrDamaged},
		{"a PNG after its IEND", append(bytes.Clone(good), 0), imagecheck.ErrDamaged},
		{"a PNG without IHDR first", pngOf("gAMA", []byte{0, 0, 0, 1}, "IHDR", ihdr(1, 1, 8, 0, 0), "IDAT", onePixel, "IEND", []byte{}), imagecheck.ErrDamaged},
		{"a zero-width canvas", pngOf("IHDR", ihdr(0, 1, 8, 0, 0), "IDAT", onePixel, "IEND", []byte{}), imagecheck.ErrDamaged},
		{"a zero-height canvas", pngOf("IHDR", ihdr(1, 0, 8, 0, 0), "IDAT", onePixel, "IEND", []byte{}), imagecheck.ErrDamaged},
		{"colour type 2 at 4 bits", pngOf("IHDR", ihdr(1, 1, 4, 2, 0), "IDAT", onePixel, "IEND", []byte{}), imagecheck.ErrDamaged},
		{"interlace method 2", pngOf("IHDR", ihdr(1, 1, 8, 0, 2), "IDAT", onePixel, "IEND", []byte{}), imagecheck.ErrDamaged},
		{"no pixels", pngOf("IHDR", ihdr(1, 1, 8, 0, 0), "IEND", []byte{}), imagecheck.ErrDamaged},
		{"too few pixels", pngOf("IHDR", ihdr(2, 1, 8, 0, 0), "IDAT", onePixel, "IEND", []byte{}), imagecheck.ErrTruncated},
		{"too many pixels", pngOf("IHDR", ihdr(1, 1, 8, 0, 0), "IDAT", deflated([]byte{0, 7, 0, 7}), "IEND", []byte{}), imagecheck.ErrDamaged},
		{"a bad filter byte", pngOf("IHDR", ihdr(1, 1, 8, 0, 0), "IDAT", deflated([]byte{5, 7}), "IEND", []byte{}), imagecheck.ErrDamaged},
		{"data after the zlib stream", pngOf("IHDR", ihdr(1, 1, 8, 0, 0), "IDAT", append(bytes.Clone(onePixel), 1, 2), "IEND", []byte{}), imagecheck.ErrDamaged},
		{"the zlib stream cut", pngOf("IHDR", ihdr(1, 1, 8, 0, 0), "IDAT", onePixel[:len(onePixel)-2], "IEND", []byte{}), imagecheck.ErrTruncated},
		{"IDAT chunks apart", pngOf("IHDR", ihdr(1, 1, 8, 0, 0), "IDAT", onePixel[:3], "tEXt", []byte("a\x00b"), "IDAT", onePixel[3:], "IEND", []byte{}), imagecheck.ErrDamaged},
		{"a palette image without a palette", pngOf("IHDR", ihdr(1, 1, 8, 3, 0), "IDAT", onePixel, "IEND", []byte{}), imagecheck.ErrDamaged},
		{"a palette in a grey image", pngOf("IHDR", ihdr(1, 1, 8, 0, 0), "PLTE", []byte{1, 2, 3}, "IDAT", onePixel, "IEND", []byte{}), imagecheck.ErrDamaged},
		{"a palette of 2 bytes", pngOf("IHDR", ihdr(1, 1, 8, 3, 0), "PLTE", []byte{1, 2}, "IDAT", onePixel, "IEND", []byte{}), imagecheck.ErrDamaged},
		{"transparency beyond the palette", pngOf("IHDR", ihdr(1, 1, 8, 3, 0), "PLTE", []byte{1, 2, 3}, "tRNS", []byte{1, 2}, "IDAT", onePixel, "IEND", []byte{}), imagecheck.ErrDamaged},
		{"transparency in an alpha image", pngOf("IHDR", ihdr(1, 1, 8, 4, 0), "tRNS", []byte{0, 1}, "IDAT", deflated([]byte{0, 7, 7}), "IEND", []byte{}), imagecheck.ErrDamaged},
		{"an unknown critical chunk", pngOf("IHDR", ihdr(1, 1, 8, 0, 0), "ABCD", []byte{}, "IDAT", onePixel, "IEND", []byte{}), imagecheck.ErrUnsupported},
		{"an animated PNG", pngOf("IHDR", ihdr(1, 1, 8, 0, 0), "acTL", []byte{0, 0, 0, 1, 0, 0, 0, 0}, "IDAT", onePixel, "IEND", []byte{}), imagecheck.ErrUnsupported},
		{"a chunk with a digit in its type", pngOf("IHDR", ihdr(1, 1, 8, 0, 0), "tEX1", []byte{}, "IDAT", onePixel, "IEND", []byte{}), imagecheck.ErrDamaged},
		{"a canvas one pixel too wide", huge, imagecheck.ErrCanvas},
		{"a huge canvas in a few bytes", pngOf("IHDR", ihdr(100000, 100000, 8, 0, 0), "IDAT", onePixel, "IEND", []byte{}), imagecheck.ErrCanvas},
		{"the largest canvas PNG allows", pngOf("IHDR", ihdr(1<<31-1, 1<<31-1, 16, 6, 0)), imagecheck.ErrCanvas},
		{"a JPEG without EOI", jpg[:len(jpg)-2], imagecheck.ErrTruncated},
		{"a JPEG cut in its scan", jpg[:len(jpg)*3/4], imagecheck.ErrTruncated},
		{"a JPEG cut in its header", jpg[:sof+6], imagecheck.ErrTruncated},
		{"a JPEG with a second SOI", append(bytes.Clone(jpg[:2]), jpg...), imagecheck.ErrDamaged},
		{"a lossless JPEG", withSOF(0xc3, nil), imagecheck.ErrUnsupported},
		{"an arithmetic-coded JPEG", withSOF(0xc9, nil), imagecheck.ErrUnsupported},
		{"a hierarchical JPEG", withSOF(0xc5, nil), imagecheck.ErrUnsupported},
		{"a 12-bit JPEG", withSOF(0xc1, func(seg []byte) { seg[0] = 12 }), imagecheck.ErrUnsupported},
		{"a JPEG of height 0", withSOF(0xc0, func(seg []byte) { seg[1], seg[2] = 0, 0 }), imagecheck.ErrUnsupported},
		{"a JPEG wider than accepted", withSOF(0xc0, func(seg []byte) { seg[3], seg[4] = 0xff, 0xff }), imagecheck.ErrCanvas},
		{"a JPEG scan before its frame", append([]byte("\xff\xd8\xff\xda\x00\x08\x01\x01\x00\x00\x3f\x00"), jpg[sof:]...), imagecheck.ErrDamaged},
		{"a JPEG with EOI and no scan", []byte("\xff\xd8\xff\xd9"), imagecheck.ErrDamaged},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, step := range []int{0, 1} {
				_, err := check(tt.data, step, maxSide)
				var ce *imagecheck.Error
				if !errors.As(err, &ce) || !errors.Is(err, tt.kind) {
					t.Fatalf("written %d at a time: %v, want %v", step, err, tt.kind)
				}
				if ce.Reason == "" {
					t.Error("a refusal without a reason")
				}
			}
		})
	}
}

// TestCanvasLimit: the limit is inclusive, and named with the canvas.
func TestCanvasLimit(t *testing.T) {
	for _, tt := range []struct {
		w, h int
		ok   bool
	}{{100, 100, true}, {100, 101, false}, {101, 100, false}, {1, 100, true}} {
		got, err := check(imagechecktest.PNG(tt.w, tt.h), 0, 100)
		if tt.ok != (err == nil) {
			t.Errorf("%dx%d under a limit of 100: %+v, %v", tt.w, tt.h, got, err)
		}
		var ce *imagecheck.Error
		if err != nil && (!errors.As(err, &ce) || ce.Width != tt.w || ce.Height != tt.h) {
			t.Errorf("%dx%d refused with %+v, want the canvas named", tt.w, tt.h, err)
		}
	}
}

// TestSizedPNGs: the test helper's PNGs of a given size are images.
func TestSizedPNGs(t *testing.T) {
	for _, n := range []int64{imagechecktest.MinPNGOfSize, 1000, 1 << 20} {
		b, _ := io.ReadAll(imagechecktest.PNGOfSize(n))
		if int64(len(b)) != n {
			t.Errorf("PNGOfSize(%d) has %d bytes", n, len(b))
		}
		if _, err := check(b, 0, maxSide); err != nil {
			t.Errorf("PNGOfSize(%d): %v", n, err)
		}
		if _, err := png.Decode(bytes.NewReader(b)); err != nil {
			t.Errorf("PNGOfSize(%d) does not decode: %v", n, err)
		}
	}
}

// TestMemoryStaysSmall: checking a 20 MiB PNG and a PNG of the largest
// canvas holds a few hundred kilobytes at most, whatever the image.
func TestMemoryStaysSmall(t *testing.T) {
	big := imagechecktest.PNG(maxSide, 2048) // 16 Mi pixels to inflate
	for name, r := range map[string]func() io.Reader{
		"20 MiB":                  func() io.Reader { return imagechecktest.PNGOfSize(20 << 20) },
		"a canvas of 8192 x 2048": func() io.Reader { return bytes.NewReader(big) },
	} {
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		c := imagecheck.New(maxSide)
		io.CopyBuffer(c, r(), make([]byte, 32<<10))
		_, err := c.Close()
		runtime.ReadMemStats(&m1)
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > 1<<20 {
			t.Errorf("%s: checking allocated %d bytes, want under 1 MiB", name, alloc)
		}
	}
}

// FuzzCheck: whatever the bytes, the check does not panic, comes to the
// same verdict however the bytes are cut, and accepts only what Go's
// decoders read: a PNG whole, a JPEG's header.
func FuzzCheck(f *testing.F) {
	for _, b := range imagechecktest.Fixtures() {
		if len(b) < 8000 {
			f.Add(b, uint16(7))
		}
	}
	for _, b := range encoded(f) {
		if len(b) < 8000 {
			f.Add(b, uint16(3))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte, step uint16) {
		const side = 512 // what a decode below may allocate
		got, err := check(b, 0, side)
		got2, err2 := check(b, int(step), side)
		if got != got2 || (err == nil) != (err2 == nil) || err != nil && err.Error() != err2.Error() {
			t.Fatalf("whole: %+v, %v; %d at a time: %+v, %v", got, err, step, got2, err2)
		}
		if err != nil {
			var ce *imagecheck.Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is no *imagecheck.Error", err)
			}
			return
		}
		switch got.Type {
		case imagecheck.PNG:
			img, err := png.Decode(bytes.NewReader(b))
			if err != nil {
				t.Fatalf("accepted a PNG image/png refuses: %v", err)
			}
			if img.Bounds().Dx() != got.Width || img.Bounds().Dy() != got.Height {
				t.Fatalf("canvas %dx%d, image/png reads %v", got.Width, got.Height, img.Bounds())
			}
		case imagecheck.JPEG:
			cfg, err := jpeg.DecodeConfig(bytes.NewReader(b))
			if err != nil || cfg.Width != got.Width || cfg.Height != got.Height {
				t.Fatalf("canvas %dx%d, image/jpeg reads %+v, %v", got.Width, got.Height, cfg, err)
			}
		default:
			t.Fatalf("accepted as %q", got.Type)
		}
	})
}

// BenchmarkLargestCanvas checks a PNG of the largest canvas (8192 x 8192,
// 64 Mi pixels of 8-bit grey to inflate and count). A start function
// checks up to two images of up to this canvas (first-last-frame) before
// it answers, on the CPU share of its memory: Lambda gives a whole vCPU
// at 1,769 MB and proportionally less below, so what one image takes here
// on one core, it takes about 7 times over at 256 MB (template.yaml sizes
// the two upload start functions by it, infra/docs/deploy.md).
func BenchmarkLargestCanvas(b *testing.B) {
	img := imagechecktest.PNG(maxSide, maxSide)
	b.SetBytes(int64(len(img)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := check(img, 1<<20, maxSide); err != nil {
			b.Fatal(err)
		}
	}
}
