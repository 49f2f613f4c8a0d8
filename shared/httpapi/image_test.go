package httpapi_test

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/png"
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/service"
	"github.com/genvideo/gen/shared/testing/httpapitest"
	"github.com/genvideo/gen/shared/testing/imagechecktest"
)

// Issue 10, items 4 and 5: an upload is one whole JPEG or PNG of an
// accepted canvas, checked as it streams in, before anything is charged.
// Each refusal leaves the account, the ledger, the tasks and blob storage
// as they were; in first-last-frame the frame already stored goes too.

// withChunk inserts a PNG chunk after the IHDR of b.
func withChunk(b []byte, typ string, data []byte) []byte {
	c := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
	c = append(c, typ...)
	c = append(c, data...)
	c = binary.BigEndian.AppendUint32(c, crc32.ChecksumIEEE(append([]byte(typ), data...)))
	at := 8 + 25
	return append(append(bytes.Clone(b[:at]), c...), b[at:]...)
}

func TestImagesAreCheckedBeforeTheCharge(t *testing.T) {
	e := newEnv(t, nil)
	c := e.caller(1000000)
	jpg := imagechecktest.JPEG(64, 36)
	huge := imagechecktest.PNG(10000, 10000)
	// A header that announces 100000 x 100000 pixels, and one pixel.
	tiny := imagechecktest.PNG(1, 1)
	binary.BigEndian.PutUint32(tiny[16:], 100000)
	binary.BigEndian.PutUint32(tiny[20:], 100000)
	binary.BigEndian.PutUint32(tiny[29:], crc32.ChecksumIEEE(tiny[12:29]))
	zero := imagechecktest.PNG(1, 1)
	binary.BigEndian.PutUint32(zero[16:], 0)
	binary.BigEndian.PutUint32(zero[29:], crc32.ChecksumIEEE(zero[12:29]))
	tests := []struct {
		name  string
		data  []byte
		code  string // "" when accepted
		about string // in the message
	}{
		{"a PNG signature and garbage", append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte("garbage!"), 200)...), "INVALID_IMAGE_TYPE", "not a whole JPEG or PNG"},
		{"a JPEG signature and garbage", append([]byte("\xff\xd8\xff\xe0"), bytes.Repeat([]byte("garbage!"), 200)...), "INVALID_IMAGE_TYPE", "not a whole JPEG or PNG"},
		{"a PNG cut short", pngData[:len(pngData)/2], "INVALID_IMAGE_TYPE", "ends before"},
		{"a PNG without its last chunk", pngData[:len(pngData)-12], "INVALID_IMAGE_TYPE", "ends before its IEND"},
		{"a JPEG cut short", jpg[:len(jpg)/2], "INVALID_IMAGE_TYPE", "ends before its EOI"},
		{"a progressive JPEG cut in a scan", imagechecktest.Fixture("video-001.progressive.jpeg")[:15000], "INVALID_IMAGE_TYPE", "ends before its EOI"},
		{"a PNG with a byte changed", append(append(bytes.Clone(pngData[:100]), pngData[100]^1), pngData[101:]...), "INVALID_IMAGE_TYPE", "checksum"},
		{"a PNG and more after it", append(bytes.Clone(pngData), pngData...), "INVALID_IMAGE_TYPE", "after its IEND"},
		{"an animated PNG", withChunk(pngData, "acTL", []byte{0, 0, 0, 1, 0, 0, 0, 0}), "INVALID_IMAGE_TYPE", "animated"},
		{"a zero-width canvas", zero, "INVALID_IMAGE_TYPE", "0x1"},
		{"a 10000 x 10000 canvas", huge, "VALIDATION_ERROR", "10000x10000 pixels; the largest accepted is 8192x8192"},
		{"a 100000 x 100000 header on a few bytes", tiny, "VALIDATION_ERROR", "the largest accepted is 8192x8192"},
		{"a canvas one pixel too tall", imagechecktest.PNG(1, 8193), "VALIDATION_ERROR", "1x8193"},
		{"the largest canvas", imagechecktest.PNG(8192, 8192), "", ""},
		{"a line of pixels", imagechecktest.PNG(8192, 1), "", ""},
		{"one pixel", imagechecktest.PNG(1, 1), "", ""},
		{"a CMYK JPEG", imagechecktest.Fixture("video-001.cmyk.jpeg"), "", ""},
		{"a progressive JPEG", imagechecktest.Fixture("video-001.progressive.jpeg"), "", ""},
		// Whole, with fewer scans than it might have had: a blurrier picture.
		{"a progressive JPEG without its last scans", imagechecktest.Fixture("video-001.progressive.truncated.jpeg"), "", ""},
		{"a greyscale JPEG", imagechecktest.Fixture("video-005.gray.jpeg"), "", ""},
		{"a JPEG with restart markers", imagechecktest.Fixture("video-001.restart2.jpeg"), "", ""},
		{"a JPEG and a thumbnail after it", append(bytes.Clone(jpg), jpg...), "", ""},
		{"a 16-bit PNG with alpha", imagechecktest.Fixture("basn6a16.png"), "", ""},
		{"an interlaced PNG", imagechecktest.Fixture("benchRGB-interlace.png"), "", ""},
		{"a palette PNG with transparency", imagechecktest.Fixture("basn3p08-trns.png"), "", ""},
		{"a 1-bit PNG", imagechecktest.Fixture("basn0g01.png"), "", ""},
	}
	for _, tt := range tests {
		for _, endpoint := range []string{"image-to-video", "first-last-frame"} {
			t.Run(endpoint+"/"+tt.name, func(t *testing.T) {
				before := e.state(c.AccountID)
				parts := []part{field("prompt", "x"), file("image", "a.png", tt.data)}
				role := "image"
				if endpoint == "first-last-frame" {
					// A good first frame is stored before the last is read.
					parts = []part{field("prompt", "x"), file("firstFrame", "a.png", pngData), file("lastFrame", "b.png", tt.data)}
					role = "lastFrame"
				}
				r := e.postForm("/api/gen/"+endpoint, c.Key, parts...)
				if tt.code == "" {
					wantStarted(t, r, 190, before.Credits-190)
					return
				}
				wantError(t, r, 400, tt.code)
				if r.body["field"] != role {
					t.Errorf("field = %v, want %s", r.body["field"], role)
				}
				if msg, _ := r.body["message"].(string); !strings.Contains(msg, tt.about) {
					t.Errorf("message %q does not say %q", msg, tt.about)
				}
				if tt.code == "VALIDATION_ERROR" {
					d := obj(t, r.body, "details")
					if num(t, d, "maxWidth") != service.DefaultMaxImageSide || num(t, d, "maxHeight") != service.DefaultMaxImageSide {
						t.Errorf("details = %v, want maxWidth and maxHeight %d", d, service.DefaultMaxImageSide)
					}
				}
				e.assertUnchanged(before, c.AccountID, tt.name)
			})
		}
	}
}

// TestImageSideIsConfigurable: a deployment may accept smaller canvases.
func TestImageSideIsConfigurable(t *testing.T) {
	e := newEnv(t, func(c *httpapitest.Config) { c.MaxImageSide = 100 })
	c := e.caller(10000)
	for _, tt := range []struct {
		w, h   int
		status int
	}{{100, 100, 202}, {101, 100, 400}, {100, 101, 400}} {
		before := e.state(c.AccountID)
		r := e.postForm("/api/gen/image-to-video", c.Key, field("prompt", "x"), file("image", "a.png", imagechecktest.PNG(tt.w, tt.h)))
		if tt.status == 202 {
			wantStarted(t, r, 190, before.Credits-190)
			continue
		}
		wantError(t, r, 400, "VALIDATION_ERROR")
		if d := obj(t, r.body, "details"); num(t, d, "width") != int64(tt.w) || num(t, d, "maxWidth") != 100 {
			t.Errorf("%dx%d: details = %v", tt.w, tt.h, d)
		}
		e.assertUnchanged(before, c.AccountID, "a canvas over 100")
	}
}

// The images the tests upload are images to image/png too.
func TestTestImagesDecode(t *testing.T) {
	for _, b := range [][]byte{pngData, imagechecktest.PNG(10, 10)} {
		if _, _, err := image.Decode(bytes.NewReader(b)); err != nil {
			t.Errorf("a test image does not decode: %v", err)
		}
	}
	if _, err := png.DecodeConfig(bytes.NewReader(pngData)); err != nil {
		t.Error(err)
	}
}
