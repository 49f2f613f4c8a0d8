package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/httpapi"
	"github.com/genvideo/gen/shared/testing/httpapitest"
	"github.com/genvideo/gen/shared/testing/imagechecktest"
)

// Hostile input, each refused with the contract's error and no change of
// state (issue 4, item 4); the fuzz targets in fuzz_test.go explore the
// same inputs at random.

// TestImageBytesDecideTheType: whatever the declared type and the file
// name, only the bytes of a JPEG or a PNG are an image.
func TestImageBytesDecideTheType(t *testing.T) {
	notImages := []struct {
		name string
		data string
	}{
		{"GIF87a", "GIF87a\x01\x00\x01\x00\x00\x00\x00;"},
		{"GIF89a", "GIF89a\x01\x00\x01\x00\x00\x00\x00;"},
		{"WebP", "RIFF\x24\x00\x00\x00WEBPVP8 \x18\x00\x00\x00"},
		{"BMP", "BM\x3a\x00\x00\x00\x00\x00\x00\x00\x36\x00"},
		{"TIFF", "II*\x00\x08\x00\x00\x00"},
		{"HEIC", "\x00\x00\x00\x18ftypheic\x00\x00\x00\x00"},
		{"JPEG 2000", "\x00\x00\x00\x0cjP  \r\n\x87\n"},
		{"PDF", "%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"},
		{"SVG", `<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>`},
		{"HTML", "<!doctype html><script>alert(1)</script>"},
		{"ZIP", "PK\x03\x04\x14\x00\x00\x00"},
		{"gzip", "\x1f\x8b\x08\x00\x00\x00\x00\x00"},
		{"ELF", "\x7fELF\x02\x01\x01\x00"},
		{"JPEG magic cut to two bytes", "\xff\xd8"},
		{"JPEG magic, wrong third byte", "\xff\xd8\x00\xe0JFIF"},
		{"PNG signature, last byte wrong", "\x89PNG\r\n\x1a\x0bIHDR"},
		{"PNG signature cut short", "\x89PNG\r\n\x1a"},
		{"PNG signature after a space", " \x89PNG\r\n\x1a\nIHDR"},
		{"PNG signature after a byte order mark", "\xef\xbb\xbf\x89PNG\r\n\x1a\nIHDR"},
		{"PNG as base64", "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"},
		{"PNG as a data URL", "data:image/png;base64,iVBORw0KGgo="},
		{"text", "hello"},
		{"NUL bytes", "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"},
	}
	declared := []struct{ filename, contentType string }{
		{"photo.png", "image/png"},
		{"photo.jpg", "image/jpeg"},
		{"photo", "application/octet-stream"},
		{"photo.gif", ""},
	}
	e := newEnv(t, nil)
	c := e.caller(100000)
	for n, img := range notImages {
		// Two of the declared types for each kind of bytes, in turn.
		for i, d := range []struct{ filename, contentType string }{declared[n%4], declared[(n+1)%4]} {
			// The bad image in each position a file field can have.
			path, role, parts := "/api/gen/image-to-video", "image", []part{field("prompt", "x")}
			bad := part{name: role, filename: d.filename, contentType: d.contentType, data: []byte(img.data)}
			switch i % 2 {
			case 0:
				parts = append(parts, bad)
			case 1:
				path, role = "/api/gen/first-last-frame", "lastFrame"
				bad.name = role
				parts = append(parts, file("firstFrame", "a.png", pngData), bad)
			}
			t.Run(img.name+" as "+d.contentType+" "+d.filename, func(t *testing.T) {
				before := e.state(c.AccountID)
				r := e.postForm(path, c.Key, parts...)
				wantError(t, r, 400, "INVALID_IMAGE_TYPE")
				if r.body["field"] != role {
					t.Errorf("field = %v, want %s", r.body["field"], role)
				}
				e.assertUnchanged(before, c.AccountID, "a "+img.name+" upload")
			})
		}
	}

	// A real image is one whatever it is declared as; its type and the
	// extension of its stored key come from its bytes.
	for _, tt := range []struct {
		name, filename, contentType string
		data                        []byte
		mime, ext                   string
	}{
		{"PNG declared as GIF", "a.gif", "image/gif", pngData, "image/png", "png"},
		{"JPEG declared as PNG", "a.png", "image/png", jpegData, "image/jpeg", "jpg"},
		// Only the base of a file name is kept, and nothing is stored
		// under it.
		{"PNG named like a path", "../../etc/passwd", "text/plain", pngData, "image/png", "png"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := e.postForm("/api/gen/image-to-video", c.Key, field("prompt", "x"),
				part{name: "image", filename: tt.filename, contentType: tt.contentType, data: tt.data})
			if r.status != http.StatusAccepted {
				t.Fatalf("status = %d %s, want 202", r.status, r.raw)
			}
			info := obj(t, r.body, "imageInfo")
			id := r.body["taskId"].(string)
			key := "inputs/" + id + "/image." + tt.ext
			if info["mimeType"] != tt.mime || info["originalName"] != path.Base(tt.filename) {
				t.Errorf("imageInfo = %v, want %s named %q", info, tt.mime, path.Base(tt.filename))
			}
			if _, ct, ok := e.Blobs.Object(key); !ok || ct != tt.mime {
				t.Errorf("blob %s: present %v, type %q; want it stored as %s", key, ok, ct, tt.mime)
			}
		})
	}
}

// discardBlobs is a blob store that keeps no bytes, so that memory
// measurements see only what the server holds.
type discardBlobs struct {
	mu   sync.Mutex
	keys map[string]int64
}

func (b *discardBlobs) Put(ctx context.Context, key string, r io.Reader, contentType string) (int64, error) {
	n, err := io.Copy(io.Discard, r)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.keys[key] = n
	return n, err
}

// Get is never called: the API does not read what it stored.
func (b *discardBlobs) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	return nil, errors.New("discardBlobs keeps no bytes")
}

func (b *discardBlobs) Delete(ctx context.Context, key string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.keys, key)
	return nil
}

func (b *discardBlobs) SignURL(ctx context.Context, key string, expires time.Time) (string, error) {
	return "https://storage.test/" + key, nil
}

func (b *discardBlobs) stored() map[string]int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]int64{}
	for k, v := range b.keys {
		out[k] = v
	}
	return out
}

// countingBody is a request body that counts what the server reads.
type countingBody struct {
	r io.Reader
	n int64
}

func (c *countingBody) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// TestImageLimitStreams sends images of exactly 20 MiB and of 20 MiB + 1
// byte, generated as they are read, to a server whose blob store keeps
// nothing. The server must not buffer an image: the bytes it allocates
// while serving stay far below the image's size. The image one byte over
// is refused after reading at most a little past the limit of a body that
// goes on for 100 MiB more.
func TestImageLimitStreams(t *testing.T) {
	const limit = httpapi.DefaultMaxImageBytes
	// What serving may allocate, all in all: about 60 KB are needed.
	const budget = 1 << 20
	for _, tt := range []struct {
		name, path, role string
		size             int64
		trailing         int64 // bytes of the body after the image's part
		status           int
	}{
		{"image-to-video, at the limit", "/api/gen/image-to-video", "image", limit, 0, 202},
		{"first-last-frame, one byte over", "/api/gen/first-last-frame", "firstFrame", limit + 1, 100 << 20, 413},
	} {
		t.Run(tt.name, func(t *testing.T) {
			blobs := &discardBlobs{keys: map[string]int64{}}
			e := newEnv(t, func(c *httpapitest.Config) { c.Blobs = blobs })
			c := e.caller(10000)
			before := e.state(c.AccountID)

			const b = "streamingboundary"
			head := "--" + b + "\r\nContent-Disposition: form-data; name=\"prompt\"\r\n\r\nbig\r\n" +
				"--" + b + "\r\nContent-Disposition: form-data; name=\"" + tt.role + "\"; filename=\"big.png\"\r\n\r\n"
			tail := "\r\n"
			if tt.role == "firstFrame" {
				tail += "--" + b + "\r\nContent-Disposition: form-data; name=\"lastFrame\"; filename=\"l.png\"\r\n\r\n" + string(pngData) + "\r\n"
			}
			tail += "--" + b + "--\r\n"
			body := &countingBody{r: io.MultiReader(strings.NewReader(head),
				imagechecktest.PNGOfSize(tt.size), // generated, never held
				io.LimitReader(zeros{}, tt.trailing), strings.NewReader(tail))}
			total := int64(len(head)) + tt.size + tt.trailing + int64(len(tail))

			req := httptest.NewRequest(http.MethodPost, tt.path, body)
			req.ContentLength = total
			req.Header.Set("X-API-Key", c.Key)
			req.Header.Set("Content-Type", "multipart/form-data; boundary="+b)
			rec := httptest.NewRecorder()
			runtime.GC()
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			e.API.Handler().ServeHTTP(rec, req)
			runtime.ReadMemStats(&m1)

			if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > budget {
				t.Errorf("serving a %d-byte image allocated %d bytes, want under %d: the image was buffered", tt.size, alloc, budget)
			}
			r := response{status: rec.Code, header: rec.Result().Header, raw: rec.Body.Bytes()}
			if tt.status == 202 {
				if r.status != 202 {
					t.Fatalf("status = %d %s, want 202", r.status, r.raw)
				}
				for k, n := range blobs.stored() {
					if strings.HasSuffix(k, "/image.png") && n != tt.size {
						t.Errorf("stored %s of %d bytes, want %d", k, n, tt.size)
					}
				}
				return
			}
			if err := json.Unmarshal(r.raw, &r.body); err != nil {
				t.Fatalf("body %q: %v", r.raw, err)
			}
			wantError(t, r, 413, "FILE_TOO_LARGE")
			if r.body["field"] != tt.role {
				t.Errorf("field = %v, want %s", r.body["field"], tt.role)
			}
			if body.n > limit+1<<20 {
				t.Errorf("the server read %d bytes of a %d-byte body, want it to stop soon after the %d-byte limit", body.n, total, limit)
			}
			if s := blobs.stored(); len(s) != 0 {
				t.Errorf("blobs left behind: %v", s)
			}
			e.assertUnchanged(before, c.AccountID, "an image over the limit")
		})
	}
}

// TestPromptLengths: lengths are characters, not bytes, through both
// kinds of start; the JSON body and each form field have a byte bound
// well above the longest valid text.
func TestPromptLengths(t *testing.T) {
	const emoji = "🎬"
	e := newEnv(t, nil)
	c := e.caller(1000000)
	tests := []struct {
		name   string
		fields map[string]string
		status int
		code   string
		field  string
	}{
		{"2000 emoji", map[string]string{"prompt": strings.Repeat(emoji, 2000)}, 202, "", ""},
		{"2001 emoji", map[string]string{"prompt": strings.Repeat(emoji, 2001)}, 400, "INVALID_PROMPT", "prompt"},
		{"2000 letters and white space", map[string]string{"prompt": " \n" + strings.Repeat("a", 2000) + "\t "}, 202, "", ""},
		{"2001 letters", map[string]string{"prompt": strings.Repeat("a", 2001)}, 400, "INVALID_PROMPT", "prompt"},
		{"1000 emoji of negative prompt", map[string]string{"prompt": "x", "negativePrompt": strings.Repeat(emoji, 1000)}, 202, "", ""},
		{"1001 emoji of negative prompt", map[string]string{"prompt": "x", "negativePrompt": strings.Repeat(emoji, 1001)}, 400, "VALIDATION_ERROR", "negativePrompt"},
		{"4097 emoji (16 KiB)", map[string]string{"prompt": strings.Repeat(emoji, 4097)}, 400, "", "prompt"},
	}
	for _, tt := range tests {
		for _, kind := range []string{"json", "form"} {
			t.Run(kind+"/"+tt.name, func(t *testing.T) {
				before := e.state(c.AccountID)
				var r response
				if kind == "json" {
					body := map[string]any{}
					for k, v := range tt.fields {
						body[k] = v
					}
					r = e.postJSON("/api/gen/text-to-video", c.Key, body)
				} else {
					parts := []part{file("image", "a.png", pngData)}
					for k, v := range tt.fields {
						parts = append(parts, field(k, v))
					}
					r = e.postForm("/api/gen/image-to-video", c.Key, parts...)
				}
				if tt.status == 202 {
					id := wantStarted(t, r, 190, before.Credits-190)
					got := e.task(id)
					if got.Prompt != tt.fields["prompt"] || got.Params.NegativePrompt != tt.fields["negativePrompt"] {
						t.Errorf("stored prompt (%d bytes) and negative prompt (%d bytes) differ from what was sent",
							len(got.Prompt), len(got.Params.NegativePrompt))
					}
					return
				}
				code := tt.code
				if code == "" {
					// Over 16 KiB a form field is refused before the
					// validator counts characters; a JSON prompt reaches it.
					code = map[string]string{"json": "INVALID_PROMPT", "form": "VALIDATION_ERROR"}[kind]
				}
				wantError(t, r, tt.status, code)
				if r.body["field"] != tt.field {
					t.Errorf("field = %v, want %s", r.body["field"], tt.field)
				}
				e.assertUnchanged(before, c.AccountID, tt.name)
			})
		}
	}
}

// TestUnicodeRoundTrip: text with format characters, combining marks and
// joined emoji is accepted through both kinds of start and comes back
// from the status endpoint exactly as it was sent; text that is not UTF-8
// is refused by both alike.
func TestUnicodeRoundTrip(t *testing.T) {
	e := newEnv(t, nil)
	c := e.caller(1000000)
	accepted := []string{
		"\u200fمرحبا بالعالم\u200e and \u202bembedded\u202c",
		"👨\u200d👩\u200d👧 family, 🏳️\u200d🌈 flag",
		"e\u0301 a\u0308 n\u0303 Z\u0351\u0352\u0353algo",
		"\ufeffbyte order mark, zero\u200bwidth space, line\u2028separator",
		"quotes \" and backslash \\ and <b>html</b> & 'sql' --",
	}
	for i, prompt := range accepted {
		for _, kind := range []string{"json", "form"} {
			t.Run(fmt.Sprintf("%s/accepted %d", kind, i), func(t *testing.T) {
				var r response
				if kind == "json" {
					r = e.postJSON("/api/gen/text-to-video", c.Key, map[string]any{"prompt": prompt})
				} else {
					r = e.postForm("/api/gen/image-to-video", c.Key, file("image", "a.png", pngData), field("prompt", prompt))
				}
				if r.status != 202 {
					t.Fatalf("status = %d %s, want 202", r.status, r.raw)
				}
				st := e.get("/api/gen/status/"+r.body["taskId"].(string), c.Key)
				if st.body["prompt"] != prompt {
					t.Errorf("status prompt = %+q, want %+q", st.body["prompt"], prompt)
				}
			})
		}
	}
	refused := []struct{ name, json, form string }{
		{"invalid byte", "{\"prompt\":\"a\xffb\"}", "a\xffb"},
		{"UTF-8 encoded surrogate", "{\"prompt\":\"a\xed\xb0\x80b\"}", "a\xed\xb0\x80b"},
		{"lone surrogate escape", `{"prompt":"a\udc00b"}`, ""},
	}
	for _, tt := range refused {
		t.Run("refused "+tt.name, func(t *testing.T) {
			before := e.state(c.AccountID)
			r := e.postJSON("/api/gen/text-to-video", c.Key, tt.json)
			wantError(t, r, 400, "INVALID_PROMPT")
			if tt.form != "" {
				r = e.postForm("/api/gen/image-to-video", c.Key, file("image", "a.png", pngData), field("prompt", tt.form))
				wantError(t, r, 400, "INVALID_PROMPT")
			}
			e.assertUnchanged(before, c.AccountID, tt.name)
		})
	}
}

// TestNumbersOutOfRangeOrOfTheWrongType: integer and boolean fields take
// exactly their JSON type (or, in a form, their decimal or true/false
// spelling) within their range.
func TestNumbersOutOfRangeOrOfTheWrongType(t *testing.T) {
	e := newEnv(t, nil)
	c := e.caller(1000000)
	type fieldCase struct {
		field, value string
		ok           bool
	}
	jsonCases := []fieldCase{ // value is JSON
		{"sampleCount", `0`, false}, {"sampleCount", `3`, false}, {"sampleCount", `-1`, false},
		{"sampleCount", `1.5`, false}, {"sampleCount", `1.0`, false}, {"sampleCount", `1e0`, false},
		{"sampleCount", `"1"`, false}, {"sampleCount", `true`, false}, {"sampleCount", `[1]`, false},
		{"sampleCount", `{"n":1}`, false}, {"sampleCount", `9223372036854775808`, false},
		{"sampleCount", `-9223372036854775809`, false}, {"sampleCount", `1e400`, false},
		{"sampleCount", `null`, true}, {"sampleCount", `2`, true},
		{"durationSeconds", `5`, false}, {"durationSeconds", `8.0`, false}, {"durationSeconds", `"8"`, false},
		{"durationSeconds", `0`, false}, {"durationSeconds", `4`, true},
		{"seed", `-1`, false}, {"seed", `4294967296`, false}, {"seed", `1e10`, false}, {"seed", `"5"`, false},
		{"seed", `4294967295`, true}, {"seed", `0`, true}, {"seed", `-0`, true},
		{"generateAudio", `"true"`, false}, {"generateAudio", `1`, false}, {"generateAudio", `false`, true},
		{"enhancePrompt", `0`, false}, {"enhancePrompt", `"false"`, false},
	}
	formCases := []fieldCase{
		{"sampleCount", "+1", false}, {"sampleCount", "0x1", false}, {"sampleCount", "1.0", false},
		{"sampleCount", "1e0", false}, {"sampleCount", "\u0661", false}, {"sampleCount", "\uff11", false},
		{"sampleCount", "", false}, {"sampleCount", "3", false}, {"sampleCount", " 2 ", true},
		{"seed", "4294967296", false}, {"seed", "-1", false}, {"seed", "99999999999999999999", false},
		{"seed", "4294967295", true},
		{"durationSeconds", "6.0", false}, {"durationSeconds", "six", false},
		{"generateAudio", "True", false}, {"generateAudio", "1", false}, {"generateAudio", "yes", false},
		{"generateAudio", "false", true},
	}
	for _, k := range []struct {
		name  string
		cases []fieldCase
		post  func(name, value string) response
	}{
		{"json", jsonCases, func(name, value string) response {
			return e.postJSON("/api/gen/text-to-video", c.Key, `{"prompt":"x","`+name+`":`+value+`}`)
		}},
		{"form", formCases, func(name, value string) response {
			return e.postForm("/api/gen/image-to-video", c.Key, file("image", "a.png", pngData), field("prompt", "x"), field(name, value))
		}},
	} {
		for _, tt := range k.cases {
			t.Run(k.name+"/"+tt.field+"="+tt.value, func(t *testing.T) {
				before := e.state(c.AccountID)
				r := k.post(tt.field, tt.value)
				if tt.ok {
					if r.status != 202 {
						t.Errorf("status = %d %s, want 202", r.status, r.raw)
					}
					return
				}
				wantError(t, r, 400, "VALIDATION_ERROR")
				if r.body["field"] != tt.field {
					t.Errorf("field = %v, want %s", r.body["field"], tt.field)
				}
				e.assertUnchanged(before, c.AccountID, tt.field+"="+tt.value)
			})
		}
	}
}

// TestHostileMultipart: bodies a careless parser would mishandle.
func TestHostileMultipart(t *testing.T) {
	const i2v = "/api/gen/image-to-video"
	e := newEnv(t, nil)
	c := e.caller(100000)
	img := "--b\r\nContent-Disposition: form-data; name=\"image\"; filename=\"a.png\"\r\n\r\n" + string(pngData) + "\r\n"
	prompt := "--b\r\nContent-Disposition: form-data; name=\"prompt\"\r\n\r\nx\r\n"
	var many strings.Builder
	for i := 0; i < 10000; i++ {
		fmt.Fprintf(&many, "--b\r\nContent-Disposition: form-data; name=\"f%d\"\r\n\r\n1\r\n", i)
	}
	tests := []struct {
		name, contentType, body string
		status                  int
		code                    string
	}{
		{"ten thousand fields after the image", "multipart/form-data; boundary=b", img + many.String() + "--b--\r\n", 400, "VALIDATION_ERROR"},
		{"ten thousand headers", "multipart/form-data; boundary=b",
			img + "--b\r\nContent-Disposition: form-data; name=\"prompt\"\r\n" + strings.Repeat("X-A: b\r\n", 10000) + "\r\nx\r\n--b--\r\n", 400, "VALIDATION_ERROR"},
		{"truncated after the image", "multipart/form-data; boundary=b", prompt + img, 400, "VALIDATION_ERROR"},
		{"truncated in the image", "multipart/form-data; boundary=b", prompt + img[:len(img)-100], 400, "VALIDATION_ERROR"},
		{"boundary of another body", "multipart/form-data; boundary=c", prompt + img + "--b--\r\n", 400, "VALIDATION_ERROR"},
		{"boundary too long", "multipart/form-data; boundary=" + strings.Repeat("b", 71), prompt + img + "--b--\r\n", 400, "VALIDATION_ERROR"},
		{"empty boundary", "multipart/form-data; boundary=", prompt + img + "--b--\r\n", 400, "VALIDATION_ERROR"},
		{"two boundary parameters", "multipart/form-data; boundary=b; boundary=c", prompt + img + "--b--\r\n", 400, "VALIDATION_ERROR"},
		{"file as a text field", "multipart/form-data; boundary=b", img + "--b\r\nContent-Disposition: form-data; name=\"prompt\"; filename=\"p.txt\"\r\n\r\nx\r\n--b--\r\n", 400, "VALIDATION_ERROR"},
		{"nameless part", "multipart/form-data; boundary=b", img + "--b\r\nContent-Disposition: form-data\r\n\r\nx\r\n--b--\r\n", 400, "VALIDATION_ERROR"},
		{"image in a nested multipart", "multipart/form-data; boundary=b", prompt + "--b\r\nContent-Disposition: form-data; name=\"image\"; filename=\"a.png\"\r\nContent-Type: multipart/mixed; boundary=c\r\n\r\n--c\r\n\r\n" + string(pngData) + "\r\n--c--\r\n--b--\r\n", 400, "INVALID_IMAGE_TYPE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := e.state(c.AccountID)
			r := e.do(http.MethodPost, i2v, c.Key, tt.contentType, strings.NewReader(tt.body))
			wantError(t, r, tt.status, tt.code)
			e.assertUnchanged(before, c.AccountID, tt.name)
		})
	}
}

// TestNonCanonicalPaths: a path with dot segments or repeated slashes is
// no route: a 404 NOT_FOUND in the contract's body, not a redirect.
func TestNonCanonicalPaths(t *testing.T) {
	e := newEnv(t, nil)
	c := e.caller(1000)
	for _, p := range []string{
		"/api/gen/status/..", "/api/gen/status/.", "/api/gen/history/../models",
		"/api/gen//models", "//api/gen/history", "/api/gen/./models",
	} {
		t.Run(p, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			req.URL.Path = p
			req.Header.Set("X-API-Key", c.Key)
			rec := httptest.NewRecorder()
			e.API.Handler().ServeHTTP(rec, req)
			r := e.decode(rec)
			wantError(t, r, http.StatusNotFound, "NOT_FOUND")
			if loc := r.header.Get("Location"); loc != "" {
				t.Errorf("Location = %q, want no redirect", loc)
			}
		})
	}
}
