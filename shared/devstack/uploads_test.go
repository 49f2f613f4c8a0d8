package devstack

import (
	"bytes"
	"encoding/json"
	"image/color"
	"io"
	"mime/multipart"
	"net/http"
	"testing"

	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/testing/imagechecktest"
)

// createUpload signs a direct upload for key and sends data through it,
// as a client does: the signed fields, then the file, to uploadUrl. It
// returns the upload id and the storage's answer.
func (e *env) createUpload(key, contentType string, data []byte) (string, int) {
	e.t.Helper()
	r := e.postJSON("/api/gen/uploads", key, `{"contentType":"`+contentType+`"}`)
	if r.status != http.StatusCreated {
		e.t.Fatalf("POST /api/gen/uploads = %d: %s", r.status, r.raw)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range r.body["fields"].(map[string]any) {
		mw.WriteField(k, str(v))
	}
	fw, _ := mw.CreateFormFile(str(r.body["fileField"]), "big.png")
	fw.Write(data)
	mw.Close()
	resp, err := http.Post(str(r.body["uploadUrl"]), mw.FormDataContentType(), &body)
	if err != nil {
		e.t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return str(r.body["uploadId"]), resp.StatusCode
}

// An image uploaded directly to the local server starts an image-to-video
// generation by its id, once; the id is the uploading account's only,
// and the bytes are checked when a start uses them.
func TestDirectUploadIntoImageToVideo(t *testing.T) {
	e := startEnv(t, "", nil)
	k := e.key(10000, store.KeyLimits{})
	other := e.key(10000, store.KeyLimits{})
	img := testImage(t, 640, 360, color.RGBA{200, 30, 30, 255}, color.RGBA{20, 40, 220, 255})

	id, status := e.createUpload(k.APIKey, "image/png", img)
	if status != http.StatusNoContent {
		t.Fatalf("upload = %d, want 204", status)
	}
	fields := map[string]string{"prompt": "the flag waves", "durationSeconds": "4", "model": "gen-3.1-lite-generate-001"}
	// Another account cannot use it.
	r := e.postForm("/api/gen/image-to-video", other.APIKey, with(fields, "imageUploadId", id), nil)
	if r.status != http.StatusBadRequest || r.body["error"] != "MISSING_IMAGE" {
		t.Errorf("another account's upload = %d %s, want 400 MISSING_IMAGE", r.status, r.raw)
	}
	r = e.postFormIdem("/api/gen/image-to-video", k.APIKey, "upload-start-1", with(fields, "imageUploadId", id))
	if r.status != http.StatusAccepted {
		t.Fatalf("start with the upload = %d: %s", r.status, r.raw)
	}
	info, _ := r.body["imageInfo"].(map[string]any)
	if info["mimeType"] != "image/png" || num(info["size"]) != int64(len(img)) {
		t.Errorf("imageInfo = %v, want image/png of %d bytes", info, len(img))
	}
	taskID := str(r.body["taskId"])
	// A retry under the same Idempotency-Key is the same start.
	again := e.postFormIdem("/api/gen/image-to-video", k.APIKey, "upload-start-1", with(fields, "imageUploadId", id))
	if again.status != http.StatusAccepted || str(again.body["taskId"]) != taskID || again.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("retried start with the upload = %d %s, want the replay of %s", again.status, again.raw, taskID)
	}
	if done := e.wait(k.APIKey, taskID); done.body["status"] != "completed" {
		t.Fatalf("ended %s", done.raw)
	}
	dl := e.do(http.MethodGet, "/api/gen/download/"+taskID, k.APIKey, "", nil)
	path := e.fetch(str(dl.body["videos"].([]any)[0].(map[string]any)["url"]))
	if d := frameDiff(t, path, "first", img); d > 12 {
		t.Errorf("first frame differs from the uploaded image by %.1f on average", d)
	}

	// Bytes that are no image are refused when used, and charge nothing.
	before := e.balance(k.AccountID)
	bad, status := e.createUpload(k.APIKey, "image/png", []byte("<html>not an image</html>"))
	if status != http.StatusNoContent {
		t.Fatalf("upload = %d", status)
	}
	if r := e.postForm("/api/gen/image-to-video", k.APIKey, with(fields, "imageUploadId", bad), nil); r.status != http.StatusBadRequest || r.body["error"] != "INVALID_IMAGE_TYPE" {
		t.Errorf("start with a non-image upload = %d %s, want 400 INVALID_IMAGE_TYPE", r.status, r.raw)
	}
	if got := e.balance(k.AccountID); got != before {
		t.Errorf("balance %d after a refused start, want %d", got, before)
	}
	// The bytes are checked whole, as a streamed image is: a signature
	// over garbage, an image cut short and too large a canvas are refused
	// uncharged.
	whole := imagechecktest.PNG(64, 64)
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"signature over garbage", append(append([]byte{}, whole[:8]...), bytes.Repeat([]byte("garbage!"), 64)...), "INVALID_IMAGE_TYPE"},
		{"cut short", whole[:len(whole)-20], "INVALID_IMAGE_TYPE"},
		{"canvas too wide", imagechecktest.PNG(9000, 1), "VALIDATION_ERROR"},
	} {
		id, status := e.createUpload(k.APIKey, "image/png", c.data)
		if status != http.StatusNoContent {
			t.Fatalf("%s: upload = %d", c.name, status)
		}
		if r := e.postForm("/api/gen/image-to-video", k.APIKey, with(fields, "imageUploadId", id), nil); r.status != http.StatusBadRequest || r.body["error"] != c.want {
			t.Errorf("%s: start = %d %s, want 400 %s", c.name, r.status, r.raw, c.want)
		}
	}
	if got := e.balance(k.AccountID); got != before {
		t.Errorf("balance %d after refused starts, want %d", got, before)
	}
	for _, c := range []struct{ name, fields, want string }{
		{"another type", `{"contentType":"image/gif"}`, "INVALID_IMAGE_TYPE"},
		{"no type", `{}`, "INVALID_IMAGE_TYPE"},
		{"not JSON", `contentType=image/png`, "VALIDATION_ERROR"},
	} {
		if r := e.postJSON("/api/gen/uploads", k.APIKey, c.fields); r.status != http.StatusBadRequest || r.body["error"] != c.want {
			t.Errorf("%s: POST /api/gen/uploads = %d %s, want 400 %s", c.name, r.status, r.raw, c.want)
		}
	}
	if r := e.postForm("/api/gen/image-to-video", k.APIKey, with(fields, "imageUploadId", "upl_nope"), nil); r.status != http.StatusBadRequest || r.body["error"] != "MISSING_IMAGE" {
		t.Errorf("a malformed upload id = %d %s, want 400 MISSING_IMAGE", r.status, r.raw)
	}
}

// postFormIdem posts text fields with an Idempotency-Key.
func (e *env) postFormIdem(path, key, idem string, fields map[string]string) response {
	e.t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		w.WriteField(k, v)
	}
	w.Close()
	req, err := http.NewRequest(http.MethodPost, e.url+path, &buf)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("X-API-Key", key)
	req.Header.Set("Idempotency-Key", idem)
	req.Header.Set("Content-Type", w.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := response{status: resp.StatusCode, header: resp.Header, raw: raw}
	json.Unmarshal(raw, &r.body)
	return r
}

func with(fields map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for name, val := range fields {
		out[name] = val
	}
	return out
}

// TestDeletedTaskTakesItsUploadsWithIt (issue 20, 3): once a task made
// from direct uploads is deleted, a new start naming the same upload ids
// is refused as an unknown upload (400 MISSING_IMAGE) and charged
// nothing: the delete removed the uploads, as infra/docs/contract.md
// says ("Cancel, delete and credits"), for image-to-video's image and for
// both of first-last-frame's frames.
func TestDeletedTaskTakesItsUploadsWithIt(t *testing.T) {
	e := startEnv(t, "", nil)
	k := e.key(10000, store.KeyLimits{})
	img := testImage(t, 640, 360, color.RGBA{200, 30, 30, 255}, color.RGBA{20, 40, 220, 255})
	upload := func() string {
		id, status := e.createUpload(k.APIKey, "image/png", img)
		if status != http.StatusNoContent {
			t.Fatalf("upload = %d, want 204", status)
		}
		return id
	}
	for _, c := range []struct {
		path   string
		fields map[string]string
		roles  []string
	}{
		{"/api/gen/image-to-video", map[string]string{"prompt": "the flag waves", "durationSeconds": "4",
			"model": "gen-3.1-lite-generate-001"}, []string{"image"}},
		{"/api/gen/first-last-frame", map[string]string{"prompt": "day turns to night", "durationSeconds": "4",
			"resolution": "720p"}, []string{"firstFrame", "lastFrame"}},
	} {
		f := c.fields
		for _, role := range c.roles {
			f = with(f, role+"UploadId", upload())
		}
		r := e.postForm(c.path, k.APIKey, f, nil)
		if r.status != http.StatusAccepted {
			t.Fatalf("%s with uploads = %d: %s", c.path, r.status, r.raw)
		}
		id := str(r.body["taskId"])
		e.wait(k.APIKey, id)
		if d := e.do(http.MethodDelete, "/api/gen/tasks/"+id, k.APIKey, "", nil); d.status != http.StatusNoContent {
			t.Fatalf("DELETE %s = %d %s", id, d.status, d.raw)
		}
		before := e.balance(k.AccountID)
		again := e.postForm(c.path, k.APIKey, f, nil)
		if again.status != http.StatusBadRequest || again.body["error"] != "MISSING_IMAGE" {
			t.Errorf("%s naming the deleted task's uploads = %d %s, want 400 MISSING_IMAGE", c.path, again.status, again.raw)
		}
		if got := e.balance(k.AccountID); got != before {
			t.Errorf("%s: balance %d after the refused start, want %d", c.path, got, before)
		}
	}
}
