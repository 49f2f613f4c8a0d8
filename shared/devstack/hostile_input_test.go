package devstack

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"mime/multipart"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/testing/imagechecktest"
)

// Issue 10, items 3, 4 and 5: bodies that parse one way to a careless
// reader and another to the service, through Serve.

// post sends a request with the Go client; chunked sends the body with
// no length, as a client streaming a file does.
func (s *served) post(path, key, contentType string, body []byte, chunked bool) (int, map[string]any) {
	s.t.Helper()
	var r io.Reader = bytes.NewReader(body)
	if chunked {
		r = io.MultiReader(r) // hides the length: the client sends it chunked
	}
	req, err := http.NewRequest(http.MethodPost, s.url+path, r)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("X-API-Key", key)
	req.Header.Set("Content-Type", contentType)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("POST %s: %v", path, err)
	}
	defer res.Body.Close()
	var out map[string]any
	raw, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(raw, &out); err != nil {
		s.t.Fatalf("POST %s answered %d %q: %v", path, res.StatusCode, raw, err)
	}
	return res.StatusCode, out
}

// form is a multipart body of text fields and files (by field name, each
// file named <field>.png).
func form(t *testing.T, fields map[string]string, files map[string][]byte) (string, []byte) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for k, v := range fields {
		w.WriteField(k, v)
	}
	for k, v := range files {
		fw, _ := w.CreateFormFile(k, k+".png")
		fw.Write(v)
	}
	w.Close()
	return w.FormDataContentType(), b.Bytes()
}

// inputs lists the uploaded images in the data directory.
func (s *served) inputs() []string {
	s.t.Helper()
	var out []string
	filepath.WalkDir(filepath.Join(s.dir, "blobs", "data", "inputs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// TestRepeatedJSONKeyIsRefused (item 3): a start naming two models was
// charged for the second. A key given twice is a VALIDATION_ERROR naming
// it, however it is spelt, and nothing is charged.
func TestRepeatedJSONKeyIsRefused(t *testing.T) {
	s := serve(t, "", nil)
	k := s.key(10000)
	before := s.books(k.AccountID)
	for _, body := range []string{
		`{"prompt":"[slow:600] x","model":"gen-3.1-lite-generate-001","model":"gen-3.1-generate-001"}`,
		`{"prompt":"[slow:600] x","model":"gen-3.1-lite-generate-001","mod\u0065l":"gen-3.1-generate-001"}`,
		`{"prompt":"[slow:600] x","model":"gen-3.1-lite-generate-001","model":null}`,
	} {
		status, b := s.post("/api/gen/text-to-video", k.APIKey, "application/json", []byte(body), false)
		if status != http.StatusBadRequest || b["error"] != "VALIDATION_ERROR" || b["field"] != "model" {
			t.Errorf("%s: answered %d %v, want 400 VALIDATION_ERROR on model", body, status, b)
		}
	}
	if after := s.books(k.AccountID); after != before {
		t.Errorf("books %+v, want %+v", after, before)
	}
}

// TestRepeatedJSONKeyIsRefusedEverywhere: the other JSON bodies (a
// webhook endpoint, a direct upload) follow a start's rules. A webhook
// registered with two urls went to the second, which the client that
// wrote the first never knew; now nothing is registered or signed.
func TestRepeatedJSONKeyIsRefusedEverywhere(t *testing.T) {
	s := serve(t, "", func(c *Config) { c.WebhookAllowPrivate = true })
	k := s.key(10000)
	for _, tc := range []struct{ path, body, field string }{
		{"/api/gen/webhooks", `{"url":"http://127.0.0.1:9/a","url":"http://127.0.0.1:9/b"}`, "url"},
		{"/api/gen/webhooks", `{"url":"http://127.0.0.1:9/a","events":["generation.failed"],"even\u0074s":[]}`, "events"},
		{"/api/gen/uploads", `{"contentType":"image/png","contentType":"image/jpeg"}`, "contentType"},
	} {
		status, b := s.post(tc.path, k.APIKey, "application/json", []byte(tc.body), false)
		if status != http.StatusBadRequest || b["error"] != "VALIDATION_ERROR" || b["field"] != tc.field ||
			!strings.Contains(fmt.Sprint(b["message"]), "more than once") {
			t.Errorf("POST %s %s: answered %d %v, want 400 VALIDATION_ERROR on %s given more than once", tc.path, tc.body, status, b, tc.field)
		}
	}
	for _, body := range []string{`{"url":"http://127.0.0.1:9/a"} {}`, `{"url":"http://127.0.0.1:9/a"}]`} {
		status, b := s.post("/api/gen/webhooks", k.APIKey, "application/json", []byte(body), false)
		if status != http.StatusBadRequest || b["error"] != "VALIDATION_ERROR" {
			t.Errorf("POST /api/gen/webhooks %s: answered %d %v, want 400 VALIDATION_ERROR", body, status, b)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, s.url+"/api/gen/webhooks", nil)
	req.Header.Set("X-API-Key", k.APIKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var list struct{ Webhooks []any }
	if err := json.NewDecoder(res.Body).Decode(&list); err != nil || len(list.Webhooks) != 0 {
		t.Errorf("webhooks after refused bodies: %+v, %v; want none", list.Webhooks, err)
	}
}

// TestNotAnImageIsNotCharged (items 4 and 5): a file with a PNG or JPEG
// signature and garbage after it, an image cut short, a canvas larger
// than the renderer takes: each was charged and then failed as "please
// try again". Each is now refused at upload, uncharged, its bytes gone.
func TestNotAnImageIsNotCharged(t *testing.T) {
	s := serve(t, "", nil)
	k := s.key(10000)
	whole := imagechecktest.PNG(64, 36)
	jpg := imagechecktest.JPEG(64, 36)
	huge := imagechecktest.PNG(10000, 10000)
	for _, tt := range []struct {
		name  string
		image []byte
		code  string
		about string
	}{
		{"a PNG signature and garbage", append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte("garbage"), 1000)...), "INVALID_IMAGE_TYPE", "not a whole JPEG or PNG"},
		{"a JPEG signature and garbage", append([]byte("\xff\xd8\xff\xe0"), bytes.Repeat([]byte("garbage"), 1000)...), "INVALID_IMAGE_TYPE", "not a whole JPEG or PNG"},
		{"a PNG cut short", whole[:len(whole)-20], "INVALID_IMAGE_TYPE", "ends before its IEND chunk"},
		{"a JPEG cut short", jpg[:len(jpg)-100], "INVALID_IMAGE_TYPE", "ends before its EOI marker"},
		{fmt.Sprintf("a 10000 x 10000 PNG of %d KB", len(huge)>>10), huge, "VALIDATION_ERROR", "the largest accepted is 8192x8192 pixels"},
	} {
		for _, chunked := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/chunked=%v", tt.name, chunked), func(t *testing.T) {
				before := s.books(k.AccountID)
				ct, body := form(t, map[string]string{"prompt": "[slow:600] x", "model": "gen-3.1-lite-generate-001"}, map[string][]byte{"image": tt.image})
				status, b := s.post("/api/gen/image-to-video", k.APIKey, ct, body, chunked)
				if status != http.StatusBadRequest || b["error"] != tt.code || b["field"] != "image" {
					t.Fatalf("answered %d %v, want 400 %s on image", status, b, tt.code)
				}
				if msg, _ := b["message"].(string); !strings.Contains(msg, tt.about) {
					t.Errorf("message %q does not say %q", msg, tt.about)
				}
				if after := s.books(k.AccountID); after != before {
					t.Errorf("books %+v, want %+v", after, before)
				}
				if left := s.inputs(); len(left) != 0 {
					t.Errorf("uploads left behind: %v", left)
				}
			})
		}
	}
}

// TestUnusualImagesRender: images of the kinds a check could wrongly
// refuse or the renderer could fail on (CMYK and progressive JPEG, 16-bit
// and interlaced PNG, the largest canvas, a line of pixels) are accepted
// and make a video.
func TestUnusualImagesRender(t *testing.T) {
	s := serve(t, "", nil)
	k := s.key(100000)
	images := map[string][]byte{
		"CMYK JPEG":          imagechecktest.Fixture("video-001.cmyk.jpeg"),
		"progressive JPEG":   imagechecktest.Fixture("video-001.separate.dc.progression.progressive.jpeg"),
		"16-bit RGBA PNG":    imagechecktest.Fixture("basn6a16.png"),
		"interlaced PNG":     imagechecktest.Fixture("benchRGB-interlace.png"),
		"8192 x 8192 PNG":    imagechecktest.PNG(8192, 8192),
		"8192 x 1 PNG":       imagechecktest.PNG(8192, 1),
		"palette and tRNS":   imagechecktest.Fixture("basn3p08-trns.png"),
		"greyscale 1-bit":    imagechecktest.Fixture("basn0g01.png"),
		"JPEG with restarts": imagechecktest.Fixture("video-001.restart2.jpeg"),
	}
	ids := map[string]string{}
	for name, img := range images {
		ct, body := form(t, map[string]string{"prompt": name, "model": "gen-3.1-lite-generate-001", "durationSeconds": "4", "generateAudio": "false"},
			map[string][]byte{"image": img})
		status, b := s.post("/api/gen/image-to-video", k.APIKey, ct, body, name == "8192 x 8192 PNG")
		if status != http.StatusAccepted {
			t.Fatalf("%s: answered %d %v, want 202", name, status, b)
		}
		ids[name] = b["taskId"].(string)
	}
	deadline := time.Now().Add(5 * time.Minute)
	for name, id := range ids {
		for {
			req, _ := http.NewRequest(http.MethodGet, s.url+"/api/gen/status/"+id, nil)
			req.Header.Set("X-API-Key", k.APIKey)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var st map[string]any
			json.NewDecoder(res.Body).Decode(&st)
			res.Body.Close()
			if st["status"] == "completed" {
				break
			}
			if st["status"] == "failed" || time.Now().After(deadline) {
				t.Errorf("%s: task %s is %v: %v", name, id, st["status"], st["error"])
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}
