package httpapi_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/httpapi"
	"github.com/genvideo/gen/shared/testing/httpapitest"
	"github.com/genvideo/gen/shared/testing/imagechecktest"
	"github.com/genvideo/gen/shared/testing/openapitest"
)

// TestImageTooLargeIsRefusedWhileStreaming sends an image larger than
// 20 MiB over a raw connection and stops sending just past the limit,
// without ever finishing the body. The 413 must arrive anyway: the server
// refused the file while it streamed instead of waiting for (or
// buffering) the whole body. The partial upload must be gone.
func TestImageTooLargeIsRefusedWhileStreaming(t *testing.T) {
	for _, path := range []string{"/api/gen/image-to-video", "/api/gen/first-last-frame"} {
		t.Run(path, func(t *testing.T) {
			e := newEnv(t, nil)
			c := e.caller(10000)
			before := e.state(c.AccountID)

			const limit = httpapi.DefaultMaxImageBytes
			boundary := "streamingboundary"
			role := "image"
			if strings.HasSuffix(path, "first-last-frame") {
				role = "firstFrame"
			}
			head := "--" + boundary + "\r\nContent-Disposition: form-data; name=\"prompt\"\r\n\r\na big picture\r\n" +
				"--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + role + "\"; filename=\"huge.png\"\r\nContent-Type: image/png\r\n\r\n"
			// What the body would be if it were ever finished: 30 MiB of image.
			declared := len(head) + 30<<20 + len("\r\n--"+boundary+"--\r\n")

			u, _ := url.Parse(e.Server.URL)
			conn, err := net.Dial("tcp", u.Host)
			if err != nil {
				t.Fatalf("dial: %v", err)
			}
			defer conn.Close()
			fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nX-API-Key: %s\r\nContent-Type: multipart/form-data; boundary=%s\r\nContent-Length: %d\r\n\r\n%s",
				path, u.Host, c.Key, boundary, declared, head)

			sent := make(chan int64, 1)
			go func() {
				// Send the limit plus 64 KiB of image, then stop: the rest
				// of the declared body never comes.
				n, _ := io.Copy(conn, io.LimitReader(pngStream(), limit+64<<10))
				sent <- n
			}()
			res, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("read response: %v", err)
			}
			defer res.Body.Close()
			raw, err := io.ReadAll(res.Body)
			if err != nil {
				t.Fatalf("read body: %v", err)
			}
			var body map[string]any
			if err := json.Unmarshal(raw, &body); err != nil {
				t.Fatalf("decode: %v", err)
			}
			conn.Close()
			openapitest.CheckResponse(t, httptest.NewRequest(http.MethodPost, path, nil), res.StatusCode, res.Header, raw)
			if n := <-sent; n >= int64(declared-len(head)) {
				t.Fatalf("client sent the whole image (%d bytes); the test proves nothing", n)
			}
			r := response{status: res.StatusCode, header: res.Header, body: body}
			wantError(t, r, 413, "FILE_TOO_LARGE")
			if got := num(t, obj(t, body, "details"), "maxBytes"); got != limit {
				t.Errorf("details.maxBytes = %d, want %d", got, limit)
			}
			if body["field"] != role {
				t.Errorf("field = %v, want %s", body["field"], role)
			}
			e.assertUnchanged(before, c.AccountID, "a too large image")
		})
	}
}

// pngStream yields a PNG signature and then zeros forever.
func pngStream() io.Reader {
	return io.MultiReader(bytes.NewReader(pngData[:8]), zeros{})
}

type zeros struct{}

func (zeros) Read(b []byte) (int, error) {
	clear(b)
	return len(b), nil
}

func TestImageLimitIsConfigurable(t *testing.T) {
	e := newEnv(t, func(c *httpapitest.Config) {
		c.HTTP.MaxImageBytes = 1000
		c.HTTP.ImageLimitMessage = "This deployment accepts at most 1000 bytes."
	})
	c := e.caller(10000)
	exact, _ := io.ReadAll(imagechecktest.PNGOfSize(1000)) // a whole image of 1000 bytes
	tests := []struct {
		name   string
		path   string
		parts  []part
		status int
	}{
		{"at the limit", "/api/gen/image-to-video", []part{field("prompt", "x"), file("image", "a.png", exact)}, 202},
		{"one byte over", "/api/gen/image-to-video", []part{field("prompt", "x"), file("image", "a.png", append(exact, 0))}, 413},
		// The first frame was stored before the second proved too large:
		// it must go too.
		{"second frame over", "/api/gen/first-last-frame", []part{field("prompt", "x"), file("firstFrame", "a.png", exact), file("lastFrame", "b.png", append(exact, 1, 2))}, 413},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := e.state(c.AccountID)
			r := e.postForm(tt.path, c.Key, tt.parts...)
			if tt.status == 202 {
				wantStarted(t, r, 190, before.Credits-190)
				return
			}
			wantError(t, r, 413, "FILE_TOO_LARGE")
			if got, _ := r.body["message"].(string); !strings.HasSuffix(got, " This deployment accepts at most 1000 bytes.") {
				t.Errorf("message = %q, want it to end with the configured sentence", got)
			}
			if got := num(t, obj(t, r.body, "details"), "maxBytes"); got != 1000 {
				t.Errorf("details.maxBytes = %d, want 1000", got)
			}
			e.assertUnchanged(before, c.AccountID, tt.name)
		})
	}
}
