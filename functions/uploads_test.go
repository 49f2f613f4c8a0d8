package functions_test

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/png"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"testing"

	"github.com/genvideo/gen/shared/testing/awsstacktest"
	"github.com/genvideo/gen/shared/workflow"
)

// largePNG is a PNG of about 19 MiB: noise, stored uncompressed, so that
// its size is what the pixels make it (opaque: 3 bytes a pixel).
func largePNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, 2880, 2306))
	r := rand.New(rand.NewPCG(12, 1))
	for i := range img.Pix {
		img.Pix[i] = byte(r.Uint32())
	}
	for i := 3; i < len(img.Pix); i += 4 {
		img.Pix[i] = 255
	}
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.NoCompression}).Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// signedUpload is the body of POST /api/gen/uploads.
type signedUpload struct {
	UploadID  string
	UploadURL string
	Fields    map[string]string
	FileField string
	MaxBytes  int64
}

// postUpload sends data through a signed upload as a client does: the
// fields, then the file, straight to (the fake) S3.
func postUpload(t *testing.T, up signedUpload, data []byte) (int, string) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range up.Fields {
		mw.WriteField(k, v)
	}
	fw, _ := mw.CreateFormFile(up.FileField, "large.png")
	fw.Write(data)
	mw.Close()
	resp, err := http.Post(up.UploadURL, mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// testDirectUpload: an image of 19 MiB, five times what a request through
// API Gateway and Lambda can carry, goes through POST /api/gen/uploads
// (the uploads function signs an S3 POST with the function's role), to the
// fake S3, which enforces the POST policy, into an image-to-video start
// that names it, and through mark-processing and generate into a video.
func testDirectUpload(t *testing.T, h *harness) {
	env := h.env
	sign := func() signedUpload {
		t.Helper()
		var up signedUpload
		resp := response(t, h.fn(t, "uploads").Invoke(t, readEvent(t, "uploads")), &up)
		if resp.StatusCode != http.StatusCreated || up.UploadID == "" || up.MaxBytes != 20<<20 {
			t.Fatalf("uploads: %d %s, want 201 with a signed upload of up to 20 MiB", resp.StatusCode, resp.Body)
		}
		return up
	}
	img := largePNG(t)
	if len(img) < 19<<20 || len(img) > 20<<20 {
		t.Fatalf("test image is %d bytes, want 19 to 20 MiB", len(img))
	}

	// The policy holds: one byte over 20 MiB is refused by S3 itself.
	over := sign()
	if status, body := postUpload(t, over, append(bytes.Repeat([]byte{0}, 20<<20), 0)); status != http.StatusBadRequest ||
		!bytes.Contains([]byte(body), []byte("EntityTooLarge")) {
		t.Errorf("upload of 20 MiB + 1 byte: %d %s, want 400 EntityTooLarge", status, body)
	}

	up := sign()
	if status, body := postUpload(t, up, img); status != http.StatusNoContent {
		t.Fatalf("upload of %d bytes: %d %s, want 204", len(img), status, body)
	}

	// The start names the upload instead of carrying the file.
	ev := proxyEvent(t, "image-to-video")
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	for k, v := range map[string]string{"prompt": "A harbour at dusk", "model": "gen-3.1-lite-generate-001",
		"durationSeconds": "4", "imageUploadId": up.UploadID} {
		mw.WriteField(k, v)
	}
	mw.Close()
	ev.Body, ev.IsBase64Encoded = base64.StdEncoding.EncodeToString(form.Bytes()), true
	for _, hs := range []map[string]string{ev.Headers} {
		for k := range hs {
			if http.CanonicalHeaderKey(k) == "Content-Type" {
				delete(hs, k)
			}
		}
	}
	for k := range ev.MultiValueHeaders {
		if http.CanonicalHeaderKey(k) == "Content-Type" || http.CanonicalHeaderKey(k) == "Content-Length" {
			delete(ev.MultiValueHeaders, k)
		}
	}
	ev.Headers["Content-Type"] = mw.FormDataContentType()
	ev.MultiValueHeaders["Content-Type"] = []string{mw.FormDataContentType()}
	var started struct {
		TaskID    string
		ImageInfo struct {
			Size     int64
			MimeType string
		}
	}
	resp := response(t, h.fn(t, "image-to-video").Invoke(t, mustJSON(t, ev)), &started)
	if resp.StatusCode != http.StatusAccepted || started.ImageInfo.Size != int64(len(img)) || started.ImageInfo.MimeType != "image/png" {
		t.Fatalf("image-to-video with the upload: %d %s, want 202 with the %d-byte PNG", resp.StatusCode, resp.Body, len(img))
	}
	data, _, ok := env.S3.Object(t, awsstacktest.Bucket, "inputs/"+started.TaskID+"/image.png")
	if !ok || !bytes.Equal(data, img) {
		t.Fatalf("the task's input in S3: %d bytes (present %v), want the uploaded image", len(data), ok)
	}
	// The upload stays (until the bucket's inputs/ expiry), so that a
	// start retried under its Idempotency-Key is replayed.
	if left := env.S3.Keys(t, awsstacktest.Bucket, "inputs/uploads/"); len(left) != 1 {
		t.Errorf("uploads after the start: %v, want the one uploaded", left)
	}

	res := h.fn(t, "mark-processing").Invoke(t, mustJSON(t, workflow.TaskRef{TaskID: started.TaskID}))
	var state workflow.TaskState
	stepResult(t, res, &state)
	var generated workflow.Generated
	res = h.fn(t, "generate").Invoke(t, mustJSON(t, map[string]any{"taskId": started.TaskID, "timeoutSeconds": 600}))
	stepResult(t, res, &generated)
	if len(generated.Videos) != 1 {
		t.Fatalf("generate = %+v, want one video", generated)
	}
	video, ct, ok := env.S3.Object(t, awsstacktest.Bucket, generated.Videos[0].Key)
	if !ok || ct != "video/mp4" || len(video) < 12 || string(video[4:8]) != "ftyp" {
		t.Errorf("video of the uploaded image: %d bytes of %q (present %v), want an MP4", len(video), ct, ok)
	}
}
